# Sourced by the derived-product benchmarks: the repository (made the working directory), the
# flipbook binary (FLIPBOOK_BIN, default the release build), RUNS (default 3) and the decode-bench
# inputs (made by scripts/make-bench-inputs.sh when missing); `best` times a command.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$repo"
bin="${FLIPBOOK_BIN:-.build/release/flipbook}"
runs="${RUNS:-3}"
inputs="$repo/bench-out/inputs"
[ -f "$inputs/large.gif" ] && [ -f "$inputs/small.gif" ] || scripts/make-bench-inputs.sh "$inputs"

# best COMMAND…: runs it RUNS times and prints "seconds peak_kib" of the fastest run (GNU time;
# the caller sets $out, where the timing and stderr files go).
best() {
  local best_s="" best_m=""
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$out/time.txt" "$@" >/dev/null 2>"$out/stderr.txt" || { cat "$out/stderr.txt" >&2; return 1; }
    read -r s m < "$out/time.txt"
    if [ -z "$best_s" ] || awk "BEGIN{exit !($s < $best_s)}"; then best_s=$s; best_m=$m; fi
  done
  echo "$best_s $best_m"
}
