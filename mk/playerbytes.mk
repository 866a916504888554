# `make bench-player-bytes`: the bytes <flipbook-player> pulls over the wire for one loop of the
# decode-bench GIFs (large.gif, small.gif) with its defaults, 320 CSS px wide at DPR 1, in headless
# Chromium, against the files' sizes; and full-size lossless WebP frames against PNG frames over
# the decode-bench inputs (scripts/bench/playerbytes). Not part of `make test`.
#   make bench-player-bytes                                builds the release flipbook first
#   make bench-player-bytes FLIPBOOK_BIN=path/to/flipbook  uses that binary (bytes do not depend on the build)
#   make bench-player-bytes FULL_SIZE=0 QUALITY=70 CSS_WIDTH=320 PLAYER_INPUTS="large.gif small.gif"
.PHONY: bench-player-bytes

BROWSER_VENV ?= .build-browser-venv

bench-player-bytes: $(BROWSER_VENV)/.stamp
	@scripts/install-deps.sh browser
	@[ -s bench-out/inputs/large.gif ] && [ -s bench-out/inputs/small.gif ] || { command -v ffmpeg >/dev/null \
	  && command -v gifsicle >/dev/null && command -v img2webp >/dev/null && command -v apngasm >/dev/null \
	  || scripts/install-deps.sh bench; scripts/make-bench-inputs.sh; }
	$(if $(FLIPBOOK_BIN),FLIPBOOK_BIN="$(FLIPBOOK_BIN)") $(SCRIPTS_PATH) $(BROWSER_VENV)/bin/python -m bench.playerbytes.run
