# libFuzzer targets (fuzz/NAME/, one runner: fuzz/run.sh). Not part of `make test`; CI runs fuzz-smoke.
#   make fuzz-list                       the target names, one a line
#   make fuzz TARGET=decode-frames SECONDS=1200
#   make fuzz-smoke SECONDS=60           every target for SECONDS seconds; exit 1 on any finding
#   make fuzz-repro TARGET=… FILES="…"   run a target once on each file (a finding, say)
#   make fuzz-http SECONDS=600           = make fuzz TARGET=http
# FUZZ_FLAGS adds libFuzzer flags; FUZZ_PARALLEL sets how many targets fuzz-smoke runs at once.
.PHONY: fuzz fuzz-list fuzz-smoke fuzz-repro fuzz-http

fuzz:
	@test -n "$(TARGET)" || { echo "usage: make fuzz TARGET=name SECONDS=N (names: make fuzz-list)" >&2; exit 2; }
	@scripts/install-deps.sh build
	fuzz/run.sh run $(TARGET) $(or $(SECONDS),60)

fuzz-list:
	@fuzz/run.sh list

fuzz-smoke:
	@scripts/install-deps.sh build
	fuzz/run.sh smoke $(or $(SECONDS),60)

fuzz-repro:
	fuzz/run.sh repro $(TARGET) $(FILES)

fuzz-http:
	@scripts/install-deps.sh build
	fuzz/run.sh run http $(or $(SECONDS),60)
