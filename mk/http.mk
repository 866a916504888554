# HTTPServer: benchmark against nginx, and the parser fuzz target.
.PHONY: bench-http fuzz-http

bench-http:
	scripts/bench-http.sh

# make fuzz-http SECONDS=600
fuzz-http:
	FUZZ_SECONDS=$(or $(SECONDS),60) fuzz/http/run.sh
