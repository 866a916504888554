#!/usr/bin/env bash
# The libFuzzer targets of Flipbook: one runner for all of them (make fuzz, fuzz-list, fuzz-smoke).
#
#   fuzz/run.sh list                  target names, one a line
#   fuzz/run.sh build [TARGET...]     build the targets (all when none is named)
#   fuzz/run.sh run TARGET SECONDS    fuzz one target for SECONDS seconds
#   fuzz/run.sh smoke SECONDS         build all, fuzz each for SECONDS seconds; exit 1 on any finding
#   fuzz/run.sh repro TARGET FILE...  run a target once on each FILE (a finding, a regression input)
#
# A target is a directory fuzz/NAME/ with a `target.conf` (what it links, its seeds, dictionary
# and input size) and Swift files that define `LLVMFuzzerTestOneInput`. Targets link one library
# of Flipbook sources (below), built once with `-sanitize=fuzzer,address` and `-enable-testing`,
# so a target reaches internal API through `@testable import`. UndefinedBehaviorSanitizer is not
# used: swiftc refuses `-sanitize=undefined` on Linux, and Swift code traps on overflow, bad
# indices and bad unwraps by itself (-O, not -Ounchecked). The system C libraries (giflib, libpng,
# libwebp, zlib, libdeflate) are Debian's, not instrumented: ASan sees their allocations and what
# they copy through its interceptors, not their insides, and coverage is Flipbook's code.
#
# Seeds: each target's own `fuzz/NAME/seeds/` (if any) plus the files of ../shared/corpus (or
# $FLIPBOOK_CORPUS) whose first bytes are a format the target's SEEDS names. Seeds are read, never
# written; new corpus entries go to .build-fuzz/NAME/corpus. A finding (crash, sanitizer report,
# leak, timeout, out-of-memory) is written to .build-fuzz/NAME/ as crash-*, leak-*, timeout-* or
# oom-*, and makes `run` and `smoke` fail. Each run's log is .build-fuzz/NAME/last-run.log.
#
# Environment: FUZZ_FLAGS (extra libFuzzer flags, e.g. "-jobs=2 -workers=2"), FUZZ_PARALLEL
# (targets fuzzed at once by `smoke`; default: one per core, at most 4), FUZZ_OUT (build and
# output directory, default .build-fuzz), FLIPBOOK_CORPUS.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${FUZZ_OUT:-.build-fuzz}"
# A finding traps; libFuzzer prints its stack and writes the input. Swift's own backtracer would
# then run under ASan, which reports the backtracer's reads of the stack as a second, false error.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"
CORPUS_ROOT="${FLIPBOOK_CORPUS:-../shared/corpus}"
# -package-name: the libraries' `package` declarations (HTTPParsing's, for HTTPServer) reach the targets.
SWIFT_FLAGS=(-O -g -swift-version 6 -parse-as-library -package-name flipbook -sanitize=fuzzer,address)
C_MODULES=(-I Sources/CGIF -I Sources/CWebP -I Sources/CPNG -I Sources/CZlib -I Sources/CDeflate
  -I Sources/CLinux -I Sources/CMalloc -I Sources/CResample/include -I Sources/CAVIF)
# CResample (the resampler; pixman enlarges) is C: compiled by cc into libCResample.a.
C_LIBRARIES=(-lgif -lwebp -lwebpdemux -lwebpmux -lpng16 -lz -ldeflate -lCResample -lpixman-1 -lavif -lm)

die() { echo "fuzz: $*" >&2; exit 2; }

targets() {
  local conf
  for conf in fuzz/*/target.conf; do basename "$(dirname "$conf")"; done
}

# Reads fuzz/NAME/target.conf into LIBRARY, SEEDS, DICT, SOURCES, MAX_LEN, TIMEOUT, RSS_LIMIT_MB.
load_target() {
  local name="$1"
  [ -f "fuzz/$name/target.conf" ] || die "no target '$name' (fuzz/run.sh list)"
  LIBRARY="" SEEDS="" DICT="" SOURCES="" MAX_LEN=65536 TIMEOUT=10 RSS_LIMIT_MB=2048
  # shellcheck disable=SC1090
  source "fuzz/$name/target.conf"
  [ -n "$LIBRARY" ] || die "fuzz/$name/target.conf sets no LIBRARY"
}

library_sources() {
  case "$1" in
    SystemResources) find Sources/SystemResources -name '*.swift' | LC_ALL=C sort ;;
    AnimatedImage) find Sources/AnimatedImage -name '*.swift' | LC_ALL=C sort ;;
    HTTPParsing) find Sources/HTTPParsing -name '*.swift' | LC_ALL=C sort ;;
    SourceRules) find Sources/SourceRules -name '*.swift' | LC_ALL=C sort ;;
    *) die "unknown library '$1'" ;;
  esac
}

# The libraries a library imports (as in Package.swift), built and linked before it.
library_dependencies() {
  case "$1" in
    AnimatedImage) echo SystemResources ;;
  esac
}

# Builds .build-fuzz/lib/libCResample.a from Sources/CResample when it changed (not instrumented,
# like the system libraries it calls).
build_c_resample() {
  local dir="$OUT/lib" archive="$OUT/lib/libCResample.a"
  if [ -f "$archive" ] && [ -z "$(find Sources/CResample -newer "$archive" | head -1)" ]; then return; fi
  mkdir -p "$dir"
  local source objects=()
  for source in Sources/CResample/*.c; do
    objects+=("$dir/$(basename "$source" .c).o")
    cc -O2 -g -fPIC -I Sources/CResample/include $(pkg-config --cflags-only-I pixman-1) \
      -c "$source" -o "${objects[-1]}"
  done
  rm -f "$archive"
  ar rcs "$archive" "${objects[@]}"
}

# Builds .build-fuzz/lib/lib$1.a and its module (and its dependencies first) when a source (or
# the flags) changed.
build_library() {
  local library="$1" dir="$OUT/lib" archive="$OUT/lib/lib$1.a" stamp="$OUT/lib/$1.flags"
  local -a sources dependencies inputs
  local dependency
  [ "$library" = AnimatedImage ] && build_c_resample
  mapfile -t dependencies < <(library_dependencies "$library")
  for dependency in "${dependencies[@]}"; do
    build_library "$dependency"
    inputs+=("$dir/lib$dependency.a")
  done
  mapfile -t sources < <(library_sources "$library")
  inputs+=("${sources[@]}")
  mkdir -p "$dir"
  local flags="${SWIFT_FLAGS[*]}"
  if [ -f "$archive" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$flags" ] \
     && [ -z "$(find "${inputs[@]}" Sources/C*/ -newer "$archive" | head -1)" ]; then
    return
  fi
  echo "fuzz: building $archive (${#sources[@]} files)" >&2
  swiftc "${SWIFT_FLAGS[@]}" -wmo -enable-testing -module-name "$library" "${C_MODULES[@]}" \
    -I "$dir" -emit-library -static -emit-module -emit-module-path "$dir/$library.swiftmodule" \
    "${sources[@]}" -o "$archive"
  echo "$flags" > "$stamp"
}

binary() { echo "$OUT/$1/fuzz-$1"; }

build_target() {
  local name="$1" bin
  load_target "$name"
  # Every target links libCResample.a (C_LIBRARIES), whichever library it fuzzes.
  build_c_resample
  build_library "$LIBRARY"
  bin="$(binary "$name")"
  mkdir -p "$OUT/$name/corpus"
  local -a files=(fuzz/"$name"/*.swift)
  [ "$LIBRARY" = AnimatedImage ] && files+=(fuzz/support/*.swift)
  # Files of a module that cannot be built here whole (FlipbookService), compiled into the target.
  [ -n "$SOURCES" ] && files+=($SOURCES)
  if [ -x "$bin" ] && [ -z "$(find "${files[@]}" "$OUT/lib/lib$LIBRARY.a" -newer "$bin" | head -1)" ]; then
    return
  fi
  echo "fuzz: building $bin" >&2
  swiftc "${SWIFT_FLAGS[@]}" -module-name "Fuzz_${name//-/_}" -I "$OUT/lib" "${C_MODULES[@]}" \
    "${files[@]}" -L "$OUT/lib" "-l$LIBRARY" $(library_dependencies "$LIBRARY" | sed 's/^/-l/') \
    "${C_LIBRARIES[@]}" -use-ld=lld -o "$bin"
}

# The shared corpus's files of one format, linked into .build-fuzz/seeds/FORMAT/. Targets run in
# parallel, so each builds its own partial directory and the first to finish renames it into place.
seed_directory() {
  local format="$1" dir="$OUT/seeds/$1"
  if [ ! -d "$dir" ]; then
    [ -d "$CORPUS_ROOT" ] || die "no corpus at $CORPUS_ROOT (set FLIPBOOK_CORPUS)"
    local root file magic partial="$dir.partial.$BASHPID"
    root="$(cd "$CORPUS_ROOT" && pwd)"
    rm -rf "$partial"
    mkdir -p "$partial"
    while IFS= read -r -d '' file; do
      magic="$(od -An -tx1 -N12 "$root/$file" | tr -d ' \n')"
      case "$format:$magic" in
        gif:474946383[79]61*|png:89504e470d0a1a0a*|webp:52494646????????57454250) ;;
        *) continue ;;
      esac
      ln -s "$root/$file" "$partial/$(echo "${file#./}" | tr / _)"
    done < <(cd "$root" && find . -type f -not -path './chromium/*' -print0)
    mv -T "$partial" "$dir" 2>/dev/null || rm -rf "$partial"
  fi
  echo "$dir"
}

seed_directories() {
  local name="$1" format
  [ -d "fuzz/$name/seeds" ] && echo "fuzz/$name/seeds"
  for format in $SEEDS; do seed_directory "$format"; done
}

# Fuzzes one target for $2 seconds; the exit status is libFuzzer's (0 = no finding).
run_target() {
  local name="$1" seconds="$2" bin log
  build_target "$name"
  bin="$(binary "$name")"
  log="$OUT/$name/last-run.log"
  local -a seeds dict=()
  mapfile -t seeds < <(seed_directories "$name")
  [ -n "$DICT" ] && dict=("-dict=$DICT")
  echo "fuzz: $name for ${seconds}s (seeds: ${seeds[*]:-none})" >&2
  local status=0
  # shellcheck disable=SC2086
  "$bin" -max_total_time="$seconds" -max_len="$MAX_LEN" -timeout="$TIMEOUT" \
    -rss_limit_mb="$RSS_LIMIT_MB" "${dict[@]}" -artifact_prefix="$OUT/$name/" \
    -print_final_stats=1 ${FUZZ_FLAGS:-} "$OUT/$name/corpus" "${seeds[@]}" >"$log" 2>&1 || status=$?
  summary "$name" "$status"
  return "$status"
}

# One line per run: executions, coverage (edges), features, corpus, peak RSS, and the verdict.
summary() {
  local name="$1" status="$2" log="$OUT/$1/last-run.log" done execs rss
  done="$(grep -E '^#[0-9]+.*(DONE|cov:)' "$log" | tail -1 || true)"
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  rss="$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)"
  local cov ft corp verdict=ok
  cov="$(echo "$done" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')"
  ft="$(echo "$done" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')"
  corp="$(echo "$done" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')"
  [ "$status" = 0 ] || verdict="FINDING (exit $status; see $log and $OUT/$name/)"
  printf 'fuzz: %-18s executions %-10s coverage %-6s features %-7s corpus %-6s peak RSS %s MB  %s\n' \
    "$name" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "${rss:-?}" "$verdict"
}

smoke() {
  local seconds="$1" parallel="${FUZZ_PARALLEL:-}"
  [ -n "$parallel" ] || parallel=$(( $(nproc) < 4 ? $(nproc) : 4 ))
  local -a names
  mapfile -t names < <(targets)
  local name
  for name in "${names[@]}"; do build_target "$name"; done
  for name in "${names[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
    rm -f "$OUT/$name/last-status"
    ( status=0; run_target "$name" "$seconds" || status=$?; echo "$status" > "$OUT/$name/last-status" ) &
  done
  wait
  local failed=0
  for name in "${names[@]}"; do
    if [ "$(cat "$OUT/$name/last-status" 2>/dev/null)" != 0 ]; then
      echo "fuzz: $name: finding or failure (see $OUT/$name/last-run.log)" >&2
      failed=1
    fi
  done
  return "$failed"
}

repro() {
  local name="$1"; shift
  build_target "$name"
  "$(binary "$name")" -rss_limit_mb="$RSS_LIMIT_MB" -timeout="$TIMEOUT" "$@"
}

command="${1:-}"
shift || true
case "$command" in
  list) targets ;;
  build) if [ $# -eq 0 ]; then mapfile -t names < <(targets); set -- "${names[@]}"; fi
         for name in "$@"; do build_target "$name"; done ;;
  run) [ $# -eq 2 ] || die "usage: fuzz/run.sh run TARGET SECONDS"; run_target "$1" "$2" ;;
  smoke) [ $# -eq 1 ] || die "usage: fuzz/run.sh smoke SECONDS"; smoke "$1" ;;
  repro) [ $# -ge 2 ] || die "usage: fuzz/run.sh repro TARGET FILE..."; repro "$@" ;;
  *) die "usage: fuzz/run.sh list | build [TARGET...] | run TARGET SECONDS | smoke SECONDS | repro TARGET FILE..." ;;
esac
