# Documentation that is generated or checked (docs/development.md, "Documentation that is checked").
#   make docs         rewrites the generated parts: the module graph of docs/architecture.md
#                     (from `swift package dump-package`)
#   make docs-check   fails when a generated part is not current, a module is not described, a
#                     relative link or #anchor of README.md, BENCHMARKS.md or docs/ points nowhere,
#                     or README.md / BENCHMARKS.md outgrow their limits. `make test` runs it first.
.PHONY: docs docs-check
docs:
	python3 scripts/docs/architecture.py

docs-check:
	python3 scripts/docs/architecture.py --check
	python3 scripts/docs/links.py
