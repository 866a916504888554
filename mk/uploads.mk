# `make bench-uploads`: upload sessions (issue 23). large.gif sent to PUT /uploads/{id} at 1 MB/s
# while 5 readers wait on the next frame: the time from a frame's last byte going out to that
# frame's answer, p50/p90/p99 (RUNS=3 uploads). CUTS=1 adds the frame counts at 20 cut points of
# small.gif, small.apng and the small WebPs against headless Chromium's (../shared/tools/browser-frames),
# and the frames served during the upload against the finished image's bytes.
# Release build in .build-playback (or FLIPBOOK_BIN=…). Not part of `make test`.
.PHONY: bench-uploads
bench-uploads:
	@[ -s bench-out/inputs/large.gif ] && [ -s bench-out/inputs/small.apng ] || scripts/make-bench-inputs.sh
	$(SCRIPTS_PATH) python3 -m bench.uploads --runs $(or $(RUNS),3) $(if $(filter 1,$(CUTS)),--cuts)
