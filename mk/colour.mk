# `make colour-check`: served frames show in headless Chromium (colour management on) exactly
# as the originals' frames do — ICC profiles, gAMA, cHRM — against a real `flipbook serve`
# (Tests/browser/colour_check.py; inputs made by Tests/browser/colour_inputs.py with img2webp,
# cwebp and webpmux). Shares the browser tests' virtualenv (mk/browser.mk), not their fixtures.
#   make colour-check                               builds .build/debug/flipbook first
#   make colour-check FLIPBOOK_BIN=path/to/flipbook  uses that binary
.PHONY: colour-check

BROWSER_VENV ?= .build-browser-venv

colour-check: $(BROWSER_VENV)/.stamp
	@scripts/install-deps.sh build test browser
	$(if $(FLIPBOOK_BIN),,$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build --product flipbook $(SWIFT_FLAGS))
	FLIPBOOK_BIN="$(or $(FLIPBOOK_BIN),.build/debug/flipbook)" \
		$(TIMEOUT) 10m $(BROWSER_VENV)/bin/python -m pytest -q -rs -p no:cacheprovider --noconftest \
		Tests/browser/colour_check.py
