# Deployment: the loopback topology test and the lint of the container files. (The image built
# and run by a real engine: mk/container.mk.)
#   make topology-test          nginx + three replicas on loopback (scripts/topology-test.sh)
#   make topology-test FAKE=1   the same against fake replicas (no Swift build)
#   make deploy-lint            Dockerfile, compose, nginx.conf rules
.PHONY: topology-test deploy-lint

DEPLOY_VENV   ?= .build-deploy-venv

topology-test:
	scripts/topology-test.sh $(if $(FAKE),--fake)

$(DEPLOY_VENV)/.stamp: Tests/deploy/requirements.txt
	@scripts/install-deps.sh deploy
	rm -rf $(DEPLOY_VENV)
	python3 -m venv $(DEPLOY_VENV)
	$(DEPLOY_VENV)/bin/pip install -q --disable-pip-version-check -r Tests/deploy/requirements.txt
	touch $@

deploy-lint: $(DEPLOY_VENV)/.stamp
	@scripts/install-deps.sh deploy
	PATH="$(CURDIR)/$(DEPLOY_VENV)/bin:$$PATH" $(DEPLOY_VENV)/bin/python -m pytest -q -rs -p no:cacheprovider Tests/deploy
