# The S3 backend's test tools: moto's S3 server (the endpoint the `s3` runs of the end-to-end suite
# and `make topology-test`'s multi-host run use) and boto3 (reads back what Flipbook wrote), in a
# virtualenv of their own. `make test` makes it; the tests find it as .build-s3-venv/bin/….
.PHONY: s3-test-tools

S3_VENV ?= .build-s3-venv

s3-test-tools: $(S3_VENV)/.stamp

$(S3_VENV)/.stamp: Tests/s3/requirements.txt
	rm -rf $(S3_VENV)
	python3 -m venv $(S3_VENV)
	$(S3_VENV)/bin/pip install -q --disable-pip-version-check -r Tests/s3/requirements.txt
	touch $@

# `make bench-cold-replica`: a replica's first frame of an image it never saw, storage.backend=s3
# (moto on loopback) against fs, with a release build; and the S3 calls of cached frames.
# RUNS=15 trials per input (new bytes each). Not part of `make test` (benchmarks are not tests).
.PHONY: bench-cold-replica
bench-cold-replica: s3-test-tools
	@scripts/install-deps.sh build
	$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build -c release --product flipbook $(SWIFT_FLAGS)
	@[ -f bench-out/inputs/large.gif ] || scripts/make-bench-inputs.sh
	$(SCRIPTS_PATH) python3 -m bench.cold_replica --binary .build/release/flipbook --moto $(S3_VENV)/bin/moto_server \
		--runs $(or $(RUNS),15)
