# openapi.yaml: validate it, and optionally check a running server against it.
#   make openapi-check                                   validate the spec (OpenAPI 3.1)
#   make openapi-check FLIPBOOK_BIN=.build/debug/flipbook  + conformance cases and schemathesis
#   make openapi-check OPENAPI_BUILD=1                   build flipbook into .build-openapi first
# Options: OPENAPI_EXAMPLES (schemathesis cases per operation, default 50), OPENAPI_SEED (default
# 1, or random). The Python tools go in .build-openapi-venv/.
.PHONY: openapi-check

OPENAPI_SCRATCH ?= .build-openapi
OPENAPI_BIN = $(or $(FLIPBOOK_BIN),$(if $(OPENAPI_BUILD),$(OPENAPI_SCRATCH)/debug/flipbook))

openapi-check:
	$(if $(OPENAPI_BUILD),@scripts/install-deps.sh build)
	$(if $(OPENAPI_BUILD),$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build --scratch-path $(OPENAPI_SCRATCH) --product flipbook $(SWIFT_FLAGS))
	Tests/openapi/check.sh $(if $(OPENAPI_BIN),--flipbook $(OPENAPI_BIN) \
		--max-examples $(or $(OPENAPI_EXAMPLES),50) --seed $(or $(OPENAPI_SEED),1))
