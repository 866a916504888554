#!/usr/bin/env bash
# Build times of storyboards and previews as the service's users get them — one cold
# `GET /images/{id}/storyboard` or `/preview`, which builds the product — side by side with
# ffmpeg and vips making the same files (the commands of run.sh):
#
#   storyboard  ?tile=160&columns=10&format=png   (every frame of large.gif on one 1600×2700 sheet)
#   preview     ?width=320&quality=75
#
# Each run starts `flipbook serve` with its defaults (access log on) on an empty data directory,
# uploads the input, waits until the upload's work is done (for half a second no decode job
# queued and no decode memory reserved, in /stats), then times the request with curl (time_total: the build, writing the product
# and sending the manifest or the WebP). An uploaded image is verified once when it arrives; a
# build does not verify it again, which is why these times are below the command line's.
# RUNS runs (default 3), best time reported; peers' best wall time of RUNS runs.
#
# Usage: FLIPBOOK_BIN=… scripts/bench/derived/service.sh   (hold /tmp/flipbook-bench.lock)
# Writes bench-out/derived-service/result.md.
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
out="$repo/bench-out/derived-service"
rm -rf "$out" && mkdir -p "$out"
port="${PORT:-18950}"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; true' EXIT

# service_time INPUT PATH_AND_QUERY: seconds of one cold request on a fresh service.
service_time() {
  local in=$1 query=$2 data="$out/data" id
  rm -rf "$data"
  "$bin" serve --port "$port" --data-dir "$data" >"$out/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do curl -sf "localhost:$port/healthz" >/dev/null 2>&1 && break; sleep 0.05; done
  id=$(curl -sf -X POST --data-binary @"$in" "localhost:$port/images" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  python3 - "$port" <<'EOF'
import json, sys, time, urllib.request
quiet_since = None
for _ in range(400):
    stats = json.load(urllib.request.urlopen(f"http://localhost:{sys.argv[1]}/stats"))
    busy = stats["queueDepth"] or stats["decodeMemory"]["usedBytes"]
    now = time.monotonic()
    if busy:
        quiet_since = None
    elif quiet_since is None:
        quiet_since = now
    elif now - quiet_since >= 0.5:
        break
    time.sleep(0.05)
EOF
  curl -sf -o "$out/answer" -w "%{time_total}\n" "localhost:$port/images/$id/$query"
  kill "$server" && wait "$server" 2>/dev/null || true
  server=""
}

best_of() {  # best_of COMMAND…: the smallest number COMMAND prints over RUNS runs
  local best=""
  for _ in $(seq "$runs"); do
    local t
    t=$("$@")
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
  done
  echo "$best"
}

wall() {  # wall COMMAND…: wall seconds of one run
  /usr/bin/time -f "%e" -o "$out/time.txt" "$@" >/dev/null 2>"$out/stderr.txt" || { cat "$out/stderr.txt" >&2; return 1; }
  cat "$out/time.txt"
}

in="$inputs/large.gif"
rows=30
{
  echo "large.gif, load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, flipbook $(git rev-parse --short HEAD)"
  echo
  echo "| product | flipbook service s | ffmpeg s | vips s | fastest peer ÷ flipbook |"
  echo "|---|---:|---:|---:|---:|"
  f=$(best_of service_time "$in" "storyboard?tile=160&columns=10&format=png")
  ff=$(best_of wall ffmpeg -y -v error -i "$in" -vf "scale=160:-1,tile=10x$rows" -frames:v 1 "$out/ffmpeg.png")
  v=$(best_of wall bash -c "vips thumbnail '$in[n=-1]' '$out/strip.v' 160 && vips grid '$out/strip.v' '$out/vips.png' 90 10 $rows")
  echo "| storyboard 160 px, 10 columns, PNG | $f | $ff | $v | $(awk "BEGIN{m = $ff < $v ? $ff : $v; printf \"%.2f×\", m / $f}") |"
  f=$(best_of service_time "$in" "preview?width=320&quality=75")
  ff=$(best_of wall ffmpeg -y -v error -i "$in" -vf scale=320:-1 -c:v libwebp_anim -q:v 75 -loop 0 "$out/ffmpeg.webp")
  v=$(best_of wall vips thumbnail "$in[n=-1]" "$out/vips.webp[Q=75]" 320)
  echo "| preview 320 px, quality 75 | $f | $ff | $v | $(awk "BEGIN{m = $ff < $v ? $ff : $v; printf \"%.2f×\", m / $f}") |"
} | tee "$out/result.md"
