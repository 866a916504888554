#!/usr/bin/env bash
# make fuzz-http SECONDS=N: builds the HTTPRequestParser libFuzzer target (parser-core sources of
# Sources/HTTPServer + fuzz/http/FuzzParser.swift, -sanitize=fuzzer,address) and runs it for
# FUZZ_SECONDS seconds. New corpus entries go to .build-fuzz-http/corpus (the seeds in
# fuzz/http/seeds are read, never written); crashes are written to .build-fuzz-http/ and make the
# run fail. Extra libFuzzer flags: FUZZ_FLAGS="-jobs=2 -workers=2".
set -euo pipefail
cd "$(dirname "$0")/../.."

FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
OUT=".build-fuzz-http"
BIN="$OUT/fuzz-http-parser"
mkdir -p "$OUT/corpus"

# The parser core compiles with the standard library alone (each file says so in its first line).
CORE=(
  Sources/HTTPServer/HTTPRequestParser.swift
  Sources/HTTPServer/HTTPRequestParser+Chunked.swift
  Sources/HTTPServer/HTTPRequestParser+FieldValues.swift
  Sources/HTTPServer/HTTPParseError.swift
  Sources/HTTPServer/HTTPParserLimits.swift
  Sources/HTTPServer/HTTPRequestHead.swift
  Sources/HTTPServer/HTTPVersion.swift
  Sources/HTTPServer/HTTPHeaders.swift
  Sources/HTTPServer/HTTPMethod.swift
  Sources/HTTPServer/RequestTarget.swift
)
for file in "${CORE[@]}"; do
  head -1 "$file" | grep -q "Parser-core file" || { echo "fuzz-http: $file is not marked parser-core" >&2; exit 1; }
done

if [ ! -x "$BIN" ] || [ -n "$(find "${CORE[@]}" fuzz/http/FuzzParser.swift -newer "$BIN")" ]; then
  echo "fuzz-http: building $BIN" >&2
  swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name FuzzHTTP \
    "${CORE[@]}" fuzz/http/FuzzParser.swift -o "$BIN"
fi

echo "fuzz-http: fuzzing for ${FUZZ_SECONDS}s" >&2
# shellcheck disable=SC2086
"$BIN" -max_total_time="$FUZZ_SECONDS" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -dict=fuzz/http/http.dict -artifact_prefix="$OUT/" -print_final_stats=1 ${FUZZ_FLAGS:-} \
  "$OUT/corpus" fuzz/http/seeds
