# Swift formatting with the toolchain's swift-format and the committed .swift-format (rules and why
# some are off: docs/development.md).
#   make format         rewrite every Swift file of the project in place
#   make format-check   report what `make format` would change or cannot fix; exit 1 on any finding
.PHONY: format format-check

FORMAT_PATHS ?= Package.swift Sources Tests Benchmarks fuzz

format:
	$(SWIFT) format format --in-place --recursive --parallel $(FORMAT_PATHS)

format-check:
	$(SWIFT) format lint --strict --recursive --parallel $(FORMAT_PATHS)
