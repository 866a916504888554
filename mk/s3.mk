# The S3 backend's test tools: moto's S3 server (the endpoint the `s3` runs of the end-to-end suite
# and `make topology-test`'s multi-host run use) and boto3 (reads back what Flipbook wrote), in a
# virtualenv of their own. `make test` makes it; the tests find it as .build-s3-venv/bin/….
.PHONY: s3-test-tools

S3_VENV ?= .build-s3-venv

s3-test-tools: $(S3_VENV)/.stamp

$(S3_VENV)/.stamp: tests/s3/requirements.txt
	rm -rf $(S3_VENV)
	python3 -m venv $(S3_VENV)
	$(S3_VENV)/bin/pip install -q --disable-pip-version-check -r tests/s3/requirements.txt
	touch $@
