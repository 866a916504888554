#!/usr/bin/env bash
# make bench-http: nginx and http-bench-server (HTTPServer) serving the same 100 PNG-like
# payloads (5–60 KB) from tmpfs / memory, measured with wrk on loopback, side by side.
# Each concurrency is measured REPEAT times, alternating which server goes first; the table has
# the medians, and the servers' CPU time per request (from /proc) as a load-independent measure.
# BODIES=file (default) sends the server's bodies with sendfile from a tmpfs file, as Flipbook
# sends cached frames; BODIES=memory copies them from [UInt8] into the socket.
#   DURATION=10 CONNECTIONS="8 64 512" WRK_THREADS=2 REPEAT=3 BODIES=file scripts/bench-http.sh
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION="${DURATION:-10}"
CONNECTIONS="${CONNECTIONS:-8 64 512}"
WRK_THREADS="${WRK_THREADS:-2}"
REPEAT="${REPEAT:-3}"
NGINX_PORT="${NGINX_PORT:-18480}"
FLIPBOOK_PORT="${FLIPBOOK_PORT:-18481}"
LOOPS="${LOOPS:-2}"
BODIES="${BODIES:-file}"
OUT="${OUT:-bench-out/http.md}"

command -v nginx >/dev/null && command -v wrk >/dev/null || scripts/install-deps.sh bench
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

echo "bench-http: building http-bench-server (release)" >&2
timeout 1800 swift build -c release --scratch-path .build-http --product http-bench-server >&2
SERVER_BIN=".build-http/release/http-bench-server"

for port in "$NGINX_PORT" "$FLIPBOOK_PORT"; do
  if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"; then
    echo "bench-http: port $port is already taken (set NGINX_PORT / FLIPBOOK_PORT)" >&2
    exit 1
  fi
done

WORK="$(mktemp -d /dev/shm/flipbook-bench-http.XXXXXX)"
PAYLOADS="$WORK/payloads"
mkdir -p "$PAYLOADS" "$WORK/nginx/logs" "$WORK/nginx/tmp"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# 100 distinct PNG-like payloads: a real signature and IHDR, then random IDAT data, 5–60 KB.
python3 - "$PAYLOADS" <<'PY'
import os, random, struct, sys, zlib
out = sys.argv[1]
rng = random.Random(20261123)
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
for i in range(100):
    size = rng.randint(5 * 1024, 60 * 1024)
    head = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64 + i, 64, 8, 6, 0, 0, 0))
    tail = chunk(b"IEND", b"")
    body = rng.randbytes(max(0, size - len(head) - len(tail) - 12))
    with open(os.path.join(out, f"frame-{i:03d}.png"), "wb") as f:
        f.write(head + chunk(b"IDAT", body) + tail)
PY

cat > "$WORK/paths.lua" <<'LUA'
-- Spreads requests over the 100 payload paths, a different order per wrk thread.
local paths = {}
for i = 0, 99 do paths[#paths + 1] = string.format("/frame-%03d.png", i) end
local counter = 0
function init(args)
  counter = math.random(0, 99)
end
function request()
  counter = counter + 1
  return wrk.format("GET", paths[(counter % #paths) + 1])
end
LUA

# nginx as operators run it for static files: sendfile, tcp_nopush and open_file_cache (without
# it nginx opens, stats and closes each file per request).
cat > "$WORK/nginx/nginx.conf" <<NGINX
worker_processes 2;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  open_file_cache max=1000 inactive=60s;
  keepalive_timeout 65;
  keepalive_requests 100000000;
  client_body_temp_path $WORK/nginx/tmp/body;
  proxy_temp_path $WORK/nginx/tmp/proxy;
  fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
  uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
  scgi_temp_path $WORK/nginx/tmp/scgi;
  server {
    listen 127.0.0.1:$NGINX_PORT reuseport backlog=4096;
    root $PAYLOADS;
    location / { }
  }
}
NGINX

ulimit -n 65536 2>/dev/null || true
chmod -R a+rX "$WORK"
"$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g "daemon off;" &
NGINX_PID=$!
pids+=($!)
"$SERVER_BIN" "$PAYLOADS" "$FLIPBOOK_PORT" "$LOOPS" "$BODIES" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
pids+=($!)

for port in "$NGINX_PORT" "$FLIPBOOK_PORT"; do
  for _ in $(seq 1 100); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/frame-000.png" && break
    sleep 0.1
  done
  cmp <(curl -sf "http://127.0.0.1:$port/frame-042.png") "$PAYLOADS/frame-042.png" \
    || { echo "bench-http: server on $port does not serve the payloads" >&2; exit 1; }
done

# wrk's latency figures → milliseconds.
to_ms() {
  awk '{ v = $1; if (v ~ /us$/) { sub(/us$/, "", v); printf "%.3f", v / 1000 }
         else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.3f", v }
         else if (v ~ /s$/) { sub(/s$/, "", v); printf "%.3f", v * 1000 } else print v }'
}
# CPU seconds (user + system) used so far by a process and its threads (nginx: all its workers).
cpu_seconds() { # pid...
  local total=0 pid
  for pid in "$@"; do
    total=$(awk -v t="$total" -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); split($0, f, " "); printf "%.3f", t + (f[12] + f[13]) / hz }' "/proc/$pid/stat")
  done
  echo "$total"
}
server_pids() { # name → the pids whose CPU counts for it
  if [ "$1" = nginx ]; then pgrep -P "$NGINX_PID" | tr '\n' ' '; echo "$NGINX_PID"; else echo "$SERVER_PID"; fi
}
run_wrk() { # name port connections round → "rps p50 p99 cpu_us_per_request errors"
  local log="$WORK/wrk-$1-$3-$4.txt" before after
  wrk -t"$WRK_THREADS" -c"$3" -d2s -s "$WORK/paths.lua" "http://127.0.0.1:$2/" >/dev/null 2>&1 || true
  # shellcheck disable=SC2046
  before=$(cpu_seconds $(server_pids "$1"))
  wrk -t"$WRK_THREADS" -c"$3" -d"${DURATION}s" --latency -s "$WORK/paths.lua" "http://127.0.0.1:$2/" >"$log" 2>&1
  # shellcheck disable=SC2046
  after=$(cpu_seconds $(server_pids "$1"))
  local rps p50 p99 errors requests cpu
  rps=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$log")
  requests=$(awk '/requests in/ { print $1 }' "$log")
  p50=$(awk '$1 == "50%" { print $2 }' "$log" | to_ms)
  p99=$(awk '$1 == "99%" { print $2 }' "$log" | to_ms)
  cpu=$(awk -v a="$before" -v b="$after" -v n="$requests" 'BEGIN { printf "%.1f", (b - a) * 1e6 / n }')
  errors=$(awk '/Socket errors|Non-2xx/ { print }' "$log" | tr '\n' ' ' | tr ' ' '_')
  echo "$rps $p50 $p99 $cpu ${errors:-none}"
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

mkdir -p "$(dirname "$OUT")"
{
  echo "| connections | nginx req/s | flipbook req/s | ratio | nginx p50 ms | flipbook p50 ms | nginx p99 ms | flipbook p99 ms | p99 ratio | nginx CPU µs/req | flipbook CPU µs/req |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
} >"$OUT"
for c in $CONNECTIONS; do
  : >"$WORK/rounds-nginx" ; : >"$WORK/rounds-flipbook"
  for round in $(seq 1 "$REPEAT"); do
    # Alternate which server goes first, so that load from elsewhere hits both alike.
    order="nginx flipbook"; [ $((round % 2)) -eq 0 ] && order="flipbook nginx"
    for name in $order; do
      port="$NGINX_PORT"; [ "$name" = flipbook ] && port="$FLIPBOOK_PORT"
      result="$(run_wrk "$name" "$port" "$c" "$round")"
      echo "$result" >>"$WORK/rounds-$name"
      echo "bench-http: $name c=$c round $round: $result" >&2
    done
  done
  col() { awk -v k="$2" '{ print $k }' "$WORK/rounds-$1" | median; }
  n_rps=$(col nginx 1); f_rps=$(col flipbook 1)
  n_p50=$(col nginx 2); f_p50=$(col flipbook 2)
  n_p99=$(col nginx 3); f_p99=$(col flipbook 3)
  n_cpu=$(col nginx 4); f_cpu=$(col flipbook 4)
  ratio=$(awk -v a="$f_rps" -v b="$n_rps" 'BEGIN { printf "%.2f", a / b }')
  p99ratio=$(awk -v a="$f_p99" -v b="$n_p99" 'BEGIN { printf "%.2f", a / b }')
  printf "| %s | %.0f | %.0f | %s× | %.2f | %.2f | %.2f | %.2f | %s× | %.1f | %.1f |\n" \
    "$c" "$n_rps" "$f_rps" "$ratio" "$n_p50" "$f_p50" "$n_p99" "$f_p99" "$p99ratio" "$n_cpu" "$f_cpu" >>"$OUT"
  grep -v ' none$' "$WORK/rounds-nginx" | sed "s/^/bench-http: nginx errors at $c connections: /" >&2 || true
  grep -v ' none$' "$WORK/rounds-flipbook" | sed "s/^/bench-http: flipbook errors at $c connections: /" >&2 || true
done

echo
echo "HTTP serving: median of $REPEAT rounds of ${DURATION}s, wrk -t$WRK_THREADS, keep-alive, 100 payloads of 5–60 KB, flipbook's bodies from $BODIES, nginx with open_file_cache; $(nproc) cores ($(lscpu | awk -F: '/Model name/ { gsub(/^ +/, "", $2); print $2; exit }'))"
cat "$OUT"
