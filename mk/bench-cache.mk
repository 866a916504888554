# `make bench-cache-scale`: what a cold frame costs the frame cache as it holds more images (issue
# 37), in process, no HTTP (Benchmarks/CacheBench): frame 0 of new 8×8 two-frame GIFs asked for one
# request at a time, timed in blocks at 100, 1,000, 10,000 and 100,000 images cached, then once
# every image has gone idle; prints one JSON line per block and the ratios to the first. Not part
# of `make test` (benchmarks are not tests). Figures: BENCHMARKS.md, "Frame cache with many images".
#   make bench-cache-scale CACHE_BENCH_ARGS="--images 100000 --block 1000 --threads 2"
.PHONY: bench-cache-scale

CACHE_BENCH_ARGS ?= --images 100000 --block 1000

bench-cache-scale:
	$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build -c release --product cache-bench $(SWIFT_FLAGS)
	.build/release/cache-bench $(CACHE_BENCH_ARGS)
