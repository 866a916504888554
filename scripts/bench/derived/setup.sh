# Sourced by the derived-product benchmarks: the repository (made the working directory), the
# flipbook binary (FLIPBOOK_BIN, default the release build), RUNS (default 3) and the decode-bench
# inputs (made by scripts/make-bench-inputs.sh when missing).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$repo"
bin="${FLIPBOOK_BIN:-.build/release/flipbook}"
runs="${RUNS:-3}"
inputs="$repo/bench-out/inputs"
[ -f "$inputs/large.gif" ] && [ -f "$inputs/small.gif" ] || scripts/make-bench-inputs.sh "$inputs"
