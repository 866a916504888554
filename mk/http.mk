# HTTPServer: benchmark against nginx. (Its parser's fuzz target is `make fuzz TARGET=http`, in mk/fuzz.mk.)
.PHONY: bench-http

#   make bench-http DURATION=10 CONNECTIONS="8 64 512" WRK_THREADS=2 REPEAT=3 BODIES=file|memory
#   (scripts/bench/http; writes bench-out/http.md)
bench-http:
	@PATH="$$PATH:/usr/sbin" command -v nginx >/dev/null && command -v wrk >/dev/null || scripts/install-deps.sh bench
	$(SCRIPTS_PATH) python3 -m bench.http
