# `make bench-resample`: Flipbook's resampler (Sources/CResample), libvips and pixman scaling the
# same RGBA frames (issue 21, item 2) — speed, PSNR against Pillow's LANCZOS on premultiplied data,
# and the runtime image's added size. Prints a markdown table; the "Resampling library" section of
# BENCHMARKS.md sums up one run (docs/benchmarks/history/resampling.md). libvips is a peer here
# only (the bench group installs it).
#   RESAMPLE_REPS=15 ...   timed repetitions per method and size (default 15)
#   RESAMPLE_CPU=1 ...     the CPU the timing is pinned to with taskset (default 1)
#   RESAMPLE_BASELINE=DIR  also time DIR's Sources/CResample (another checkout, e.g. main) as
#                          `flipbook-before`, its runs alternating with this tree's
#   RESAMPLE_ARGS=...      more flags for scripts/bench/resample/compare.py (--cpu-time, --rounds)
.PHONY: bench-resample

RESAMPLE_BIN      := bench-out/resample/resample-bench
RESAMPLE_REPS     ?= 15
RESAMPLE_CPU      ?= 1
RESAMPLE_BASELINE ?=
RESAMPLE_ARGS     ?=
# clang, as SwiftPM compiles CResample (the bench compiles the same files).
RESAMPLE_CC       ?= $(shell command -v clang || echo cc)

# The bench program with the resampler of the checkout at $(1), into $(2).
define resample_bench_build
	@mkdir -p $(dir $(2))
	$(RESAMPLE_CC) -O2 -Wall -Wextra -I$(1)/Sources/CResample/include -o $(2) Benchmarks/resample/resample-bench.c \
		$(1)/Sources/CResample/*.c $$(pkg-config --cflags --libs vips pixman-1 libpng) -lm -ldl
endef

$(RESAMPLE_BIN): Benchmarks/resample/resample-bench.c $(wildcard Sources/CResample/*.[ch] Sources/CResample/include/*.h)
	$(call resample_bench_build,.,$@)

bench-resample:
	@scripts/install-deps.sh build bench
	@dpkg-query -W -f='$${Status}\n' libpixman-1-dev python3-numpy 2>/dev/null | grep -c "install ok installed" | grep -qx 2 \
		|| { echo "bench-resample: installing libpixman-1-dev python3-numpy" >&2; \
		     $$([ "$$(id -u)" -eq 0 ] || echo sudo) apt-get install -y -qq --no-install-recommends libpixman-1-dev python3-numpy >/dev/null; }
	@$(MAKE) --no-print-directory $(RESAMPLE_BIN)
	$(if $(RESAMPLE_BASELINE),$(call resample_bench_build,$(RESAMPLE_BASELINE),$(RESAMPLE_BIN)-baseline))
	@scripts/make-bench-inputs.sh >&2
	PYTHONPATH=scripts /usr/bin/python3 -m bench.resample.compare --bin $(RESAMPLE_BIN) \
		$(if $(RESAMPLE_BASELINE),--baseline $(RESAMPLE_BIN)-baseline) \
		--reps $(RESAMPLE_REPS) --cpu $(RESAMPLE_CPU) $(RESAMPLE_ARGS)
