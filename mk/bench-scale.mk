# `make bench-scale`: a million images (issue 37). Distinct 8×8 two-frame GIFs stored through
# POST /images (the first and the last 10,000) and `flipbook import` (the rest); at 1,000,
# 100,000 and 1,000,000 images: restart until ready, a page of GET /images, every page, cold frame
# 0 of 100,000 images one at a time, RSS with a 256 MiB cache budget. Writes the "A million
# images" section of docs/benchmarks/scale.md with BENCH_WRITE=1. Takes hours at a million and
# about 9 GB of disk under bench-out/scale (removed at the end; KEEP=1 keeps it).
#   make bench-scale SIZES=1000,100000 JOBS=2 BENCH_WRITE=1
# SKIP_BUILD=1 reuses .build-playback/release/flipbook; COLD=N asks frame 0 of N images (default
# 100,000); KEEP=1 then REUSE=N measures again the N images an earlier run kept; DATA=DIR uses
# another data directory than bench-out/scale/data (removed first unless REUSE). Not part of `make test`.
.PHONY: bench-scale
bench-scale:
	$(SCRIPTS_PATH) python3 -m bench.scale --sizes $(or $(SIZES),1000,100000,1000000) --jobs $(or $(JOBS),2) \
	  $(if $(COLD),--cold $(COLD)) $(if $(REUSE),--reuse $(REUSE)) $(if $(filter 1,$(KEEP)),--keep) \
	  $(if $(DATA),--data $(DATA))
