# Containers built and run for real, by podman (issue 32; docs/DEPLOYMENT.md "Podman").
#   make container-base-images   the Dockerfile's two base images made here from Debian bookworm
#                                (debootstrap) and the installed Swift toolchain; reused when they
#                                exist (scripts/container/base-images.sh; --force: FORCE=1)
#   make container-image         the project's Dockerfile built with those as SWIFT_IMAGE and
#                                RUNTIME_IMAGE into localhost/flipbook:latest; prints its size
#                                and layers.
#                                `--format docker`: the OCI format has no HEALTHCHECK.
#                                CONTAINER_BUILD_FLAGS (default --layers=false: each stage one
#                                layer, no layer cache) — in podman's vfs store every cached
#                                step is a full copy of the 3 GB build stage, which filled this
#                                machine's disk; pass CONTAINER_BUILD_FLAGS= to keep the cache
#   make container-test          builds the image if need be, then runs Tests/container against it
#                                (CONTAINER_TESTS="-k limits" passes arguments to pytest)
# PODMAN is podman with the flags these machines need; every podman call with them finds the image.
.PHONY: container-base-images container-image container-test

PODMAN          ?= podman --runtime runc --cgroup-manager cgroupfs --storage-driver vfs
CONTAINER_IMAGE ?= localhost/flipbook:latest
CONTAINER_VENV  ?= .build-container-venv
SWIFT_BASE      ?= localhost/flipbook-swift:bookworm
RUNTIME_BASE    ?= localhost/flipbook-debian:bookworm-slim
CONTAINER_BUILD_FLAGS ?= --layers=false

container-base-images:
	@scripts/install-deps.sh container
	PODMAN="$(PODMAN)" scripts/container/base-images.sh $(if $(FORCE),--force)

container-image: container-base-images
	$(PODMAN) build --format docker $(CONTAINER_BUILD_FLAGS) --network host --build-arg SWIFT_IMAGE=$(SWIFT_BASE) --build-arg RUNTIME_IMAGE=$(RUNTIME_BASE) \
		--tag $(CONTAINER_IMAGE) .
	@echo "container-image: $(CONTAINER_IMAGE) $$($(PODMAN) image inspect --format '{{.Size}}' $(CONTAINER_IMAGE)) bytes; layers:"
	@$(PODMAN) history --format '{{.Size}}\t{{.CreatedBy}}' $(CONTAINER_IMAGE) | cut -c1-150

$(CONTAINER_VENV)/.stamp: Tests/container/requirements.txt
	@scripts/install-deps.sh container
	rm -rf $(CONTAINER_VENV)
	python3 -m venv $(CONTAINER_VENV)
	$(CONTAINER_VENV)/bin/pip install -q --disable-pip-version-check -r Tests/container/requirements.txt
	touch $@

container-test: container-image $(CONTAINER_VENV)/.stamp
	PODMAN="$(PODMAN)" FLIPBOOK_IMAGE="$(CONTAINER_IMAGE)" RUNTIME_BASE="$(RUNTIME_BASE)" \
		PATH="$(CURDIR)/$(CONTAINER_VENV)/bin:$$PATH" PYTHONPATH="$(CURDIR)/scripts:$(CURDIR)/scripts/topology" \
		$(TIMEOUT) 40m $(CONTAINER_VENV)/bin/python -m pytest -q -rs -s -p no:cacheprovider Tests/container $(CONTAINER_TESTS)
