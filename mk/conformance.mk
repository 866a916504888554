# `make conformance-matrix`: animations made by every encoder Debian has (ImageMagick,
# GraphicsMagick, gifsicle, ffmpeg, img2webp/gif2webp/cwebp+webpmux, apngasm, apngopt, Pillow,
# libvips) with their options, plus cut and bit-flipped copies, decoded by Chromium
# (../shared/tools/browser-frames) and by Flipbook and compared frame by frame. Writes the
# encoder × option table into docs/CONFORMANCE.md. Not in CI: it needs Chromium and takes
# tens of minutes on two cores (run it with nice on a shared machine).
#   make conformance-matrix                        all cases (release build of flipbook)
#   make conformance-matrix FLIPBOOK_BIN=path      that binary instead (e.g. .build/debug/flipbook)
#   make conformance-matrix ONLY=gifsicle          the cases whose name contains ONLY (docs untouched)
#   make conformance-matrix JOBS=4                 decodes at once
.PHONY: conformance-matrix

JOBS ?= 2

conformance-matrix:
	@scripts/install-deps.sh build test conformance
	$(if $(FLIPBOOK_BIN),,$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build -c release --product flipbook $(SWIFT_FLAGS))
	/usr/bin/python3 scripts/conformance/matrix.py --flipbook "$(or $(FLIPBOOK_BIN),.build/release/flipbook)" \
		--jobs $(JOBS) $(if $(ONLY),--only '$(ONLY)',--update-docs)
