# Deployment: the loopback topology test and the lint of the container files.
#   make topology-test          nginx + three replicas on loopback (scripts/topology-test.sh)
#   make topology-test FAKE=1   the same against fake replicas (no Swift build)
#   make deploy-lint            Dockerfile, compose, nginx.conf rules; static-binary library check
#   make docker-runtime-check   the Dockerfile's runtime stage executed in a chroot of Debian
#                               bookworm minbase (root, debootstrap, network; not part of CI)
.PHONY: topology-test deploy-lint docker-runtime-check

DEPLOY_VENV   ?= .build-deploy-venv
DEPLOY_STATIC ?= .build-deploy-static

topology-test:
	scripts/topology-test.sh $(if $(FAKE),--fake)

$(DEPLOY_VENV)/.stamp: Tests/deploy/requirements.txt
	@scripts/install-deps.sh deploy
	rm -rf $(DEPLOY_VENV)
	python3 -m venv $(DEPLOY_VENV)
	$(DEPLOY_VENV)/bin/pip install -q --disable-pip-version-check -r Tests/deploy/requirements.txt
	touch $@

# The release binary exactly as the Dockerfile builds it, so `ldd` can prove the runtime package
# list; DEPLOY_STATIC_BIN=path checks a binary you have instead, DEPLOY_SKIP_STATIC=1 skips that
# one test (.ci/run does when too little of its time budget is left for a release build).
DEPLOY_STATIC_BIN_USED = $(if $(DEPLOY_SKIP_STATIC),,$(or $(DEPLOY_STATIC_BIN),$(DEPLOY_STATIC)/release/flipbook))

deploy-lint: $(DEPLOY_VENV)/.stamp
	@scripts/install-deps.sh deploy
	$(if $(DEPLOY_STATIC_BIN)$(DEPLOY_SKIP_STATIC),,$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build -c release \
		--static-swift-stdlib --product flipbook --scratch-path $(DEPLOY_STATIC))
	PATH="$(CURDIR)/$(DEPLOY_VENV)/bin:$$PATH" FLIPBOOK_STATIC_BIN="$(DEPLOY_STATIC_BIN_USED)" \
		$(DEPLOY_VENV)/bin/python -m pytest -q -rs -p no:cacheprovider Tests/deploy

docker-runtime-check: $(DEPLOY_VENV)/.stamp
	@scripts/install-deps.sh rootfs
	$(if $(DEPLOY_STATIC_BIN),,$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build -c release \
		--static-swift-stdlib --product flipbook --scratch-path $(DEPLOY_STATIC))
	PYTHONPATH="$(CURDIR)/Tests/deploy" $(DEPLOY_VENV)/bin/python scripts/topology/runtime_rootfs_check.py \
		--binary "$(or $(DEPLOY_STATIC_BIN),$(DEPLOY_STATIC)/release/flipbook)"
