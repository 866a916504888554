#!/usr/bin/env bash
# `make bench-decode`: flipbook side by side with ImageMagick, libvips, ffmpeg and Pillow on
# GIF, animated WebP and APNG inputs; writes the "## Decoding" section of docs/benchmarks/decoding.md.
#
#   make bench-decode                       everything (≈ 1 h on 2 cores)
#   BENCH_RUNS=3 ...                        fewer timed runs per command (default 5)
#   BENCH_SLOW_RUNS=2 ...                   timed runs of commands slower than 20 s (default 3)
#   BENCH_ONLY=small.gif,small.apng ...     a subset of the inputs (file names in bench-out/inputs)
#   BENCH_WRITE=0 ...                       print the section without touching docs/benchmarks/decoding.md
#
# Non-interactive; safe to re-run (inputs and the build are reused when up to date).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$repo"
die() { echo "bench-decode: $*" >&2; exit 1; }

runs="${BENCH_RUNS:-5}"
slow_runs="${BENCH_SLOW_RUNS:-3}"
only="${BENCH_ONLY:-}"
write="${BENCH_WRITE:-1}"
inputs="$repo/bench-out/inputs"
work="$repo/bench-out/decode"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer, not '$runs'"
[[ "$slow_runs" =~ ^[1-9][0-9]*$ ]] || die "BENCH_SLOW_RUNS must be a positive integer, not '$slow_runs'"

# 1. Peers and encoders (ImageMagick, libvips, ffmpeg, Pillow, gifsicle, img2webp, apngasm, GNU time).
scripts/install-deps.sh build bench || die "could not install the benchmark's packages"
for tool in /usr/bin/convert /usr/bin/python3 /usr/bin/time vips ffmpeg gifsicle img2webp apngasm; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' is still missing after scripts/install-deps.sh bench"
done
/usr/bin/python3 -c 'import PIL' 2>/dev/null || die "Pillow is missing for /usr/bin/python3 (python3-pil)"
command -v swift >/dev/null 2>&1 || die "no Swift toolchain on PATH (swift build is needed)"

# 2. flipbook, release build, in its own scratch directory.
echo "bench-decode: building flipbook (release)" >&2
timeout 1800 swift build -c release --product flipbook --scratch-path .build-bench >&2 \
  || die "swift build -c release failed or timed out"
bin="$(swift build -c release --scratch-path .build-bench --show-bin-path)/flipbook"
[ -x "$bin" ] || die "no flipbook binary at $bin"

# 3. Inputs (deterministic; reused when up to date).
scripts/make-bench-inputs.sh "$inputs" >&2

# 4. The benchmark. ImageMagick gets our raised resource policy.
export MAGICK_CONFIGURE_PATH="$repo/scripts/bench/imagemagick"
args=(--flipbook "$bin" --inputs "$inputs" --work "$work" --runs "$runs" --slow-runs "$slow_runs")
[ -n "$only" ] && args+=(--only "$only")
[ "$write" = 1 ] && args+=(--benchmarks "$repo/docs/benchmarks/decoding.md")
PYTHONPATH="$repo/scripts" /usr/bin/python3 -m bench.decode.decode_bench "${args[@]}"
