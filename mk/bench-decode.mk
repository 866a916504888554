# `make bench-decode`: flipbook vs ImageMagick, libvips, ffmpeg and Pillow on GIF, WebP and APNG;
# writes the "## Decoding" section of docs/benchmarks/decoding.md. Not part of `make test` (benchmarks are not
# tests). BENCH_RUNS, BENCH_SLOW_RUNS, BENCH_ONLY and BENCH_WRITE are passed through (see scripts/bench/decode/bench-decode.sh).
.PHONY: bench-decode bench-decode-inputs

bench-decode:
	@scripts/bench/decode/bench-decode.sh

bench-decode-inputs:
	@scripts/make-bench-inputs.sh
