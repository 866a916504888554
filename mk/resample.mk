# `make bench-resample`: libvips vs pixman scaling the same RGBA frames (issue 21, item 2) —
# speed, PSNR against Pillow's LANCZOS on premultiplied data, and the runtime image's added size.
# Prints a markdown table; the "Resampling library" section of BENCHMARKS.md sums up one run (docs/benchmarks/history/resampling.md).
#   RESAMPLE_REPS=15 ...   timed repetitions per method and size (default 15)
#   RESAMPLE_CPU=1 ...     the CPU the timing is pinned to with taskset (default 1)
.PHONY: bench-resample

RESAMPLE_BIN  := bench-out/resample/resample-bench
RESAMPLE_REPS ?= 15
RESAMPLE_CPU  ?= 1

$(RESAMPLE_BIN): Benchmarks/resample/resample-bench.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -o $@ $< $$(pkg-config --cflags --libs vips pixman-1 libpng) -lm

bench-resample:
	@scripts/install-deps.sh build bench
	@dpkg-query -W -f='$${Status}\n' libpixman-1-dev python3-numpy 2>/dev/null | grep -c "install ok installed" | grep -qx 2 \
		|| { echo "bench-resample: installing libpixman-1-dev python3-numpy" >&2; \
		     $$([ "$$(id -u)" -eq 0 ] || echo sudo) apt-get install -y -qq --no-install-recommends libpixman-1-dev python3-numpy >/dev/null; }
	@$(MAKE) --no-print-directory $(RESAMPLE_BIN)
	@scripts/make-bench-inputs.sh >&2
	PYTHONPATH=scripts /usr/bin/python3 -m bench.resample.compare --bin $(RESAMPLE_BIN) \
		--reps $(RESAMPLE_REPS) --cpu $(RESAMPLE_CPU)
