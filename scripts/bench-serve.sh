#!/usr/bin/env bash
# make bench-serve: (a) cached frames — flipbook serving 100 frames from its cache vs nginx serving
# the same PNG bytes from tmpfs (open_file_cache, sendfile), access logs on and off, GET 200 / GET
# 304 / HEAD, side by side at 8/64/256 connections; (b) cold first frame
# after upload — POST time and GET /frames/{id}/0 on a fresh server per run vs ImageMagick
# `convert 'IN[0]' out.png` and libvips `vips copy 'IN[page=0]' out.png`.
# Writes bench-out/serve/ and the sections "Serving cached frames vs nginx" and "Cold first frames
# after upload" of BENCHMARKS.md (BENCH_WRITE=0 to skip; ONLY=a or ONLY=b runs one part).
#   DURATION=5 CONNECTIONS="8 64 256" WRK_THREADS=2 MODES="on off" KINDS="200 304 HEAD" RUNS=5 SKIP_BUILD=1 scripts/bench-serve.sh
# With --body-paths: the body paths alone (scripts/bench/serve/body_paths.py, `make bench-body-paths`).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in nginx wrk convert vips ffmpeg gifsicle img2webp apngasm; do
  command -v "$tool" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin" command -v "$tool" >/dev/null 2>&1 \
    || { scripts/install-deps.sh bench; break; }
done

if [ "${SKIP_BUILD:-0}" != 1 ] || [ ! -x .build-playback/release/flipbook ]; then
  echo "bench-serve: building flipbook (release, .build-playback)" >&2
  timeout 1800 swift build -c release --scratch-path .build-playback --product flipbook >&2
fi
scripts/make-bench-inputs.sh bench-out/inputs >&2

ulimit -n 65536 2>/dev/null || true
export SKIP_BUILD=1
if [ "${1:-}" = "--body-paths" ]; then
  exec python3 scripts/bench/serve/body_paths.py
fi
exec python3 scripts/bench/serve/serve_bench.py "$@"
