# HTTPServer: benchmark against nginx. (Its parser's fuzz target is `make fuzz TARGET=http`, in mk/fuzz.mk.)
.PHONY: bench-http

bench-http:
	scripts/bench-http.sh
