# `make browser-test`: the pages and the <flipbook-player> component in headless Chromium
# (Debian's chromium + chromium-driver, driven by Selenium from PyPI) against a real
# `flipbook serve` with the samples (Tests/browser). Screenshots go to build/screenshots/.
#   make browser-test                               builds .build/debug/flipbook first
#   make browser-test FLIPBOOK_BIN=path/to/flipbook  uses that binary
#   make browser-test BROWSER_TESTS="-k timing"     passes arguments to pytest
.PHONY: browser-test

BROWSER_VENV ?= .build-browser-venv

$(BROWSER_VENV)/.stamp: Tests/browser/requirements.txt
	@scripts/install-deps.sh browser
	rm -rf $(BROWSER_VENV)
	python3 -m venv $(BROWSER_VENV)
	$(BROWSER_VENV)/bin/pip install -q --disable-pip-version-check -r Tests/browser/requirements.txt
	touch $@

browser-test: $(BROWSER_VENV)/.stamp
	@scripts/install-deps.sh build browser
	$(if $(FLIPBOOK_BIN),,$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build --product flipbook $(SWIFT_FLAGS))
	FLIPBOOK_BIN="$(or $(FLIPBOOK_BIN),.build/debug/flipbook)" SCREENSHOTS_DIR="$(CURDIR)/build/screenshots" $(SCRIPTS_PATH) \
		$(TIMEOUT) 15m $(BROWSER_VENV)/bin/python -m pytest -q -rs -p no:cacheprovider Tests/browser $(BROWSER_TESTS)
