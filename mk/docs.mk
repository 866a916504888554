# Documentation that is generated or checked (docs/development.md, "Documentation that is checked").
#   make docs         rewrites the generated parts: the module graph of docs/architecture.md (from
#                     `swift package dump-package`) and the settings tables of docs/configuration.md
#                     (from `flipbook settings --markdown`, so it builds the debug flipbook first)
#   make docs-check   fails when the module graph is not current, a module is not described, a
#                     relative link or #anchor of README.md, BENCHMARKS.md or docs/ points nowhere,
#                     README.md / BENCHMARKS.md outgrow their limits, or a comment, script or page
#                     cites a section BENCHMARKS.md does not have. `make test` runs it first;
#                     the settings tables are checked by SettingsTests, which `make test` runs too.
.PHONY: docs docs-check
docs:
	python3 scripts/docs/architecture.py
	$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build --product flipbook $(SWIFT_FLAGS)
	.build/debug/flipbook settings --markdown | python3 scripts/docs/settings.py

docs-check:
	python3 scripts/docs/architecture.py --check
	python3 scripts/docs/links.py
	python3 scripts/docs/citations.py
