# Hardening runs, not part of `make test` or CI (they take minutes and want a quiet machine):
#   make soak MINUTES=30      a mixed load for N minutes (players, polling, uploads of valid,
#                             damaged and bomb files, deletes, pressure signals, a non-reader and
#                             slowloris alongside), per-minute table and plot; writes "## Soak"
#                             of docs/benchmarks/soak.md and docs/soak.png (scripts/bench/soak)
#   make kill-test ROUNDS=20  concurrent uploads under SIGKILL: no acknowledged upload lost, no
#                             orphan left after the next start (scripts/bench/kill_test)
#   make bench-backpressure   a normal client's latency and the server's RSS while 50 clients
#                             pipeline and never read; writes "## Clients that never read" of
#                             docs/benchmarks/hardening.md (scripts/bench/backpressure; CLIENTS, REQUESTS)
#   make bench-hostile        uploads and first frames of 49 MP frames with 4x and 16x the decode
#                             threads: peak RSS within baseline + cache x 1.1 + decode budget;
#                             writes "## Hostile files" (scripts/bench/hostile)
.PHONY: soak kill-test bench-backpressure bench-hostile

# Debian's own python3, which has the apt-installed packages (a pyenv or venv python may not).
HARDENING_PYTHON ?= $(firstword $(wildcard /usr/bin/python3) python3)

soak:
	@command -v ffmpeg >/dev/null && command -v gifsicle >/dev/null && command -v gif2webp >/dev/null \
	  && command -v apngasm >/dev/null && $(HARDENING_PYTHON) -c 'import matplotlib' 2>/dev/null \
	  || scripts/install-deps.sh soak
	MINUTES=$(or $(MINUTES),30) $(SCRIPTS_PATH) $(HARDENING_PYTHON) -m bench.soak

kill-test:
	@command -v gif2webp >/dev/null || scripts/install-deps.sh soak
	ROUNDS=$(or $(ROUNDS),20) $(SCRIPTS_PATH) $(HARDENING_PYTHON) -m bench.kill_test

bench-backpressure:
	@command -v ffmpeg >/dev/null && command -v gifsicle >/dev/null && command -v img2webp >/dev/null \
	  && command -v apngasm >/dev/null || scripts/install-deps.sh soak
	$(SCRIPTS_PATH) $(HARDENING_PYTHON) -m bench.backpressure

bench-hostile:
	@command -v convert >/dev/null && command -v cwebp >/dev/null || scripts/install-deps.sh test
	$(SCRIPTS_PATH) $(HARDENING_PYTHON) -m bench.hostile
