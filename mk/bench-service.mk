# `make bench-playback` and `make bench-serve`: the Flipbook service measured end to end (frame
# cache under real-time playback; cached-frame serving vs nginx; cold first frames vs ImageMagick
# and libvips). They write their sections of BENCHMARKS.md. Not part of `make test`.
#   make bench-playback DURATION=60 CLIENTS=50 BUDGETS="0.25 0.25+canvases" BENCH_WRITE=1
#   make bench-serve    DURATION=5 CONNECTIONS="8 64 256" MODES="on off" KINDS="200 304 HEAD" RUNS=5 BENCH_WRITE=1
#                       (ONLY=a: cached frames vs nginx alone, ~10 min; ONLY=b: cold first frames alone)
#   make bench-body-paths DURATION=5 ROUNDS=5 CONNECTIONS=64 BENCH_WRITE=1   (writev vs sendfile vs MSG_ZEROCOPY)
# SKIP_BUILD=1 reuses .build-playback/release/flipbook.
.PHONY: bench-playback bench-serve bench-body-paths

bench-playback:
	@command -v ffmpeg >/dev/null && command -v gifsicle >/dev/null && command -v img2webp >/dev/null \
	  && command -v apngasm >/dev/null || scripts/install-deps.sh bench
	python3 scripts/bench-playback.py

bench-serve:
	@command -v nginx >/dev/null && command -v wrk >/dev/null && command -v convert >/dev/null \
	  && command -v vips >/dev/null || scripts/install-deps.sh bench
	scripts/bench-serve.sh

bench-body-paths:
	@command -v wrk >/dev/null && command -v cc >/dev/null || scripts/install-deps.sh bench
	SKIP_BUILD=1 scripts/bench-serve.sh --body-paths
