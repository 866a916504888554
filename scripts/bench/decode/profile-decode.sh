#!/usr/bin/env bash
# Where flipbook's time goes: perf profile of `flipbook frames` (or `frame IN LAST`) on one input.
#   scripts/bench/decode/profile-decode.sh IN [frames|last] [FLIPBOOK]
# Prints the share of CPU samples per library and the top functions (Swift names demangled).
# Needs perf (linux-perf); run `make bench-decode` (or scripts/make-bench-inputs.sh) first.
set -euo pipefail
in="${1:?usage: profile-decode.sh IN [frames|last] [FLIPBOOK]}"
mode="${2:-frames}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
fb="${3:-$repo/.build-bench/release/flipbook}"
command -v perf >/dev/null || { echo "profile-decode: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
[ -x "$fb" ] || { echo "profile-decode: no flipbook at $fb (make bench-decode builds it)" >&2; exit 1; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
if [ "$mode" = last ]; then
  last=$(( $("$fb" info "$in" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["frameCount"])') - 1 ))
  cmd=("$fb" frame "$in" "$last" --output "$tmp/last.png")
else
  cmd=("$fb" frames "$in" --output "$tmp/out")
fi
perf record -q -F 4000 -g -o "$tmp/perf.data" -- "${cmd[@]}" >/dev/null 2>&1
demangle() { if command -v swift-demangle >/dev/null; then swift-demangle --simplified; else cat; fi; }
echo "== $(basename "$in") ($mode): CPU samples by library"
perf report -i "$tmp/perf.data" --no-children --sort dso --stdio -g none 2>/dev/null | grep '%' | grep -v '^#' | head -12
echo "== top functions (self time)"
perf report -i "$tmp/perf.data" --no-children --sort dso,symbol --stdio -g none 2>/dev/null \
  | grep '%' | grep -v '^#' | head -25 | demangle | cut -c1-200
