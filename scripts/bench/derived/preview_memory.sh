#!/usr/bin/env bash
# Peak VmRSS of `flipbook serve` while it builds one preview of a 7000×7000 (49 MP) 4-frame GIF
# (made with Pillow on first use), against its RSS idle after the upload: issue 24's memory goal,
# RSS ≤ baseline + 1.1 × cache.maxBytes + limits.maxDecodeBytes.
#
# Usage: scripts/bench/derived/preview_memory.sh [QUERY]   (default width=320&quality=75)
#   FLIPBOOK_BIN (default .build/release/flipbook), BUDGET (limits.maxDecodeBytes, default 1 GiB),
#   CACHE (cache.maxBytes, default 64 MiB), PORT (default 18791), GIF (another input).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
bin="${FLIPBOOK_BIN:-$repo/.build/release/flipbook}"
query="${1:-width=320&quality=75}"
budget="${BUDGET:-1073741824}"
cache="${CACHE:-67108864}"
port="${PORT:-18791}"
out="$repo/bench-out/derived-memory"
mkdir -p "$out"
gif="${GIF:-$out/big49.gif}"
[ -f "$gif" ] || /usr/bin/python3 - "$gif" <<'PY'
import sys
import numpy as np
from PIL import Image
y, x = np.mgrid[0:7000, 0:7000]
frames = []
for k in range(4):
    im = Image.fromarray(((x // (50 + 10 * k) + y // (70 + 5 * k) + 3 * k) % 200).astype(np.uint8), "P")
    im.putpalette([v for i in range(256) for v in ((i * 7 + k * 40) % 256, (i * 13) % 256, (i * 29 + k * 9) % 256)])
    frames.append(im)
frames[0].save(sys.argv[1], save_all=True, append_images=frames[1:], duration=100, loop=0)
PY
data=$(mktemp -d "$out/data.XXXX")
"$bin" serve --port "$port" --data-dir "$data" --cache-max-bytes "$cache" --set limits.maxDecodeBytes="$budget" \
  --set derived.maxWaitSeconds=300 --set limits.maxFileBytes=104857600 --log-level error >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do curl -sf "localhost:$port/healthz" >/dev/null && break; sleep 0.1; done
rss() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }
id=$(curl -sf -X POST --data-binary @"$gif" "localhost:$port/images" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
sleep 1
base=$(rss)
peak=$base
curl -s -o "$out/preview.body" -w "%{http_code} %{size_download} %{time_total}\n" "localhost:$port/images/$id/preview?$query" >"$out/answer.txt" &
client=$!
while kill -0 $client 2>/dev/null; do r=$(rss); [ "$r" -gt "$peak" ] && peak=$r; sleep 0.02; done
wait $client
read -r status bytes seconds <"$out/answer.txt"
reserved=$(curl -s "localhost:$port/metrics" | awk '/^flipbook_decode_memory_peak_bytes/ {print $2}')
echo "query $query: HTTP $status, $bytes bytes, ${seconds}s; RSS baseline $((base / 1024)) MiB, peak $((peak / 1024)) MiB" \
  "(+$(((peak - base) / 1024)) MiB); decode memory reserved at most $((reserved / 1048576)) MiB;" \
  "goal: ≤ +$(((cache * 11 / 10 + budget) / 1048576)) MiB"
