# Signed URLs: what verifying one request's signature costs (Benchmarks/SignBench, release build).
# Not part of `make test` (benchmarks are not tests). The number goes to BENCHMARKS.md by hand.
.PHONY: bench-sign

bench-sign:
	@scripts/install-deps.sh build
	$(TIMEOUT) $(BUILD_LIMIT) $(SWIFT) build -c release --product sign-bench $(SWIFT_FLAGS)
	.build/release/sign-bench
