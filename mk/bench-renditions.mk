# `make bench-renditions`: scaled and WebP frames (issue 21) side by side (scripts/bench/renditions):
# all frames of typical.gif at 320 px by the CLI vs ffmpeg, vips and Pillow (hyperfine); frame 150
# of large.gif at 320 px from cold through the API vs `vips thumbnail`; PSNR of every scaled frame of
# the shared corpus vs Pillow's LANCZOS and lossless WebP = PNG pixels; lossless WebP bytes vs PNG.
# Writes docs/benchmarks/renditions.md's "Renditions: speed and quality (issue 21)". Not part of `make test`.
#   make bench-renditions FLIPBOOK_BIN=path/to/flipbook   measure that binary (else the release build
#                                                          of benchlib.server; SKIP_BUILD=1 reuses it)
#   make bench-renditions RUNS=10 WARMUP=2 COLD_RUNS=10 PARTS="cli cold stages" BENCH_WRITE=1
#   make bench-renditions RENDITIONS_STEPS="speed quality sizes report"   (any subset, in order)
# Timed runs take `flock /tmp/flipbook-bench.lock` (BENCH_LOCK), as the machine's other benchmarks do.
.PHONY: bench-renditions

RENDITIONS_STEPS ?= speed quality sizes report
RENDITIONS_PY    := /usr/bin/python3

bench-renditions:
	@for tool in hyperfine ffmpeg vips gifsicle img2webp apngasm flock; do command -v $$tool >/dev/null \
	  || { scripts/install-deps.sh bench; break; }; done
	@$(RENDITIONS_PY) -c 'import PIL, numpy' 2>/dev/null \
	  || { echo "bench-renditions: installing python3-pil python3-numpy" >&2; \
	       $$([ "$$(id -u)" -eq 0 ] || echo sudo) apt-get install -y -qq --no-install-recommends python3-pil python3-numpy >/dev/null; }
	@for step in $(RENDITIONS_STEPS); do \
	  echo "bench-renditions: $$step" >&2; \
	  $(if $(FLIPBOOK_BIN),FLIPBOOK_BIN="$(FLIPBOOK_BIN)") $(SCRIPTS_PATH) $(RENDITIONS_PY) -m bench.renditions.$$step || exit 1; \
	done
