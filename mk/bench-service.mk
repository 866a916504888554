# `make bench-playback` and `make bench-serve`: the Flipbook service measured end to end (frame
# cache under real-time playback; cached-frame serving vs nginx; cold first frames vs ImageMagick
# and libvips). They write their sections of docs/benchmarks/*.md. Not part of `make test`.
#   make bench-playback DURATION=60 CLIENTS=50 BUDGETS="0.25 0.25+canvases" BENCH_WRITE=1
#   make bench-serve    DURATION=5 CONNECTIONS="8 64 256" MODES="on off" KINDS="200 304 HEAD" RUNS=5 BENCH_WRITE=1
#                       (ONLY=a: cached frames vs nginx alone, ~10 min; ONLY=b: cold first frames alone)
#   make bench-body-paths DURATION=5 ROUNDS=5 CONNECTIONS=64 BENCH_WRITE=1   (writev vs sendfile vs MSG_ZEROCOPY)
# SKIP_BUILD=1 reuses .build-playback/release/flipbook.
.PHONY: bench-playback bench-serve bench-body-paths

bench-playback:
	@command -v ffmpeg >/dev/null && command -v gifsicle >/dev/null && command -v img2webp >/dev/null \
	  && command -v apngasm >/dev/null || scripts/install-deps.sh bench
	$(SCRIPTS_PATH) python3 -m bench.playback

# bench-serve also needs the encoders of scripts/make-bench-inputs.sh.
BENCH_SERVE_TOOLS = nginx wrk convert vips ffmpeg gifsicle img2webp apngasm cc

bench-serve:
	@for tool in $(BENCH_SERVE_TOOLS); do PATH="$$PATH:/usr/sbin" command -v $$tool >/dev/null \
	  || { scripts/install-deps.sh bench; break; }; done
	$(SCRIPTS_PATH) python3 -m bench.serve

bench-body-paths:
	@for tool in $(BENCH_SERVE_TOOLS); do PATH="$$PATH:/usr/sbin" command -v $$tool >/dev/null \
	  || { scripts/install-deps.sh bench; break; }; done
	SKIP_BUILD=1 $(SCRIPTS_PATH) python3 -m bench.serve.body_paths
