# Flipbook — `make run` and `make test` set up a fresh Debian/Ubuntu machine and run or test.
SWIFT        ?= swift
TIMEOUT      ?= timeout
BUILD_LIMIT  ?= 40m
TEST_LIMIT   ?= 40m
CONFIG       ?= debug
SWIFT_FLAGS  ?=
# Test cases run at once. Swift Testing otherwise starts every case together (~2,100 here), all
# sharing the cooperative pool's one thread per core: each case then waits behind all the others
# at every suspension, and a wait of one test that spans one (an origin's gate, a request held
# until bytes land) outlasts its deadline under load. See docs/development.md.
TEST_WIDTH   ?= 8

.PHONY: all deps build release test run samples clean

all: build

deps:
	@scripts/install-deps.sh build

build: deps
	$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build -c $(CONFIG) $(SWIFT_FLAGS)

release: deps
	$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build -c release $(SWIFT_FLAGS)

test:
	@scripts/install-deps.sh build test
	@$(MAKE) --no-print-directory docs-check
	@$(MAKE) --no-print-directory s3-test-tools
	$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(TIMEOUT) $(TEST_LIMIT) $(SWIFT) test --skip-build --xunit-output .build/test-results.xml \
		--experimental-maximum-parallelization-width $(TEST_WIDTH) $(SWIFT_FLAGS)
	@python3 scripts/test-counts.py Package.swift .build/test-results-swift-testing.xml

# Serves on :8080 (override: make run ARGS="--port 9000"); Samples/ are registered at start-up.
run: release
	$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build -c release --product flipbook $(SWIFT_FLAGS)
	exec .build/release/flipbook serve $(ARGS)

# Regenerates Samples/ with real encoders (ImageMagick, gifsicle, img2webp, apngasm).
samples:
	@scripts/install-deps.sh build test
	scripts/make-samples.sh

clean:
	rm -rf .build

# Per-area targets (bench-*, fuzz-*, topology-test) live in mk/*.mk. The Python under scripts/
# runs with scripts/ on its import path (the benchmarks as `python3 -m bench.NAME`, sharing
# scripts/benchlib); nothing there inserts into sys.path.
SCRIPTS_PATH = PYTHONPATH="$(CURDIR)/scripts"
-include mk/*.mk
