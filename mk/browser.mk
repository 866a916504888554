# `make browser-test`: the pages and the <flipbook-player> component in headless Chromium
# (Debian's chromium + chromium-driver, driven by Selenium from PyPI) and headless Firefox ESR
# (Debian's firefox-esr, driven by Mozilla's marionette-driver from PyPI, no geckodriver) against
# a real `flipbook serve` with the samples (Tests/browser): every test in Chromium, and those
# that need nothing only Chromium has in Firefox as well, one browser at a time; the last lines
# count each engine's tests. Screenshots go to build/screenshots/.
#   make browser-test                               builds .build/debug/flipbook first
#   make browser-test FLIPBOOK_BIN=path/to/flipbook  uses that binary
#   make browser-test BROWSERS=firefox              one engine (chromium, firefox; both by default)
#   make browser-test BROWSER_TESTS="-k timing"     passes arguments to pytest
.PHONY: browser-test

BROWSER_VENV ?= .build-browser-venv
BROWSERS ?= chromium firefox

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
		FLIPBOOK_BROWSERS="$(strip $(BROWSERS))" \
		$(TIMEOUT) 20m $(BROWSER_VENV)/bin/python -m pytest -q -rs -p no:cacheprovider Tests/browser $(BROWSER_TESTS)
