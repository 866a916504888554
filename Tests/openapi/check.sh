#!/usr/bin/env bash
# Checks openapi.yaml: always validates it (openapi-spec-validator, OpenAPI 3.1); given a flipbook
# binary, also checks it against running servers: Tests/openapi/conformance.py (hand-made cases:
# uploads, tokens, 304s, HTTP-layer errors) and schemathesis (generated requests) on a fresh
# server with the samples uploaded.
#
#   Tests/openapi/check.sh                                  validate the spec only
#   Tests/openapi/check.sh --flipbook .build/debug/flipbook validate, then check the server
#
# Options after --flipbook: --max-examples N (schemathesis, per operation; default 50),
# --seed N (default 1; "random" for a new one).
# Environment: OPENAPI_VENV (default .build-openapi-venv), OPENAPI_REPORTS (where schemathesis
# writes its JUnit report; default a temporary directory, removed unless the run fails).
# Needs python3 with venv (installed with apt-get when missing) and PyPI for the first run.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
venv="$(realpath -m "${OPENAPI_VENV:-.build-openapi-venv}")"
flipbook=""
max_examples=50
seed=1
while [ $# -gt 0 ]; do
  case "$1" in
    --flipbook) flipbook="$2"; shift 2 ;;
    --max-examples) max_examples="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    *) echo "check.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

# --- the virtual environment --------------------------------------------------------------
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "openapi-check: installing python3 and python3-venv" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null
fi
case "$venv" in /|"$root"|"$HOME") echo "check.sh: refusing to use $venv as the virtual environment" >&2; exit 2 ;; esac
stamp="$venv/.openapi-stamp"
want="$(sha256sum Tests/openapi/requirements.txt | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "openapi-check: creating $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r Tests/openapi/requirements.txt
  echo "$want" > "$stamp"
fi
py="$venv/bin/python"

# --- the spec ---------------------------------------------------------------------------------
"$venv/bin/openapi-spec-validator" openapi.yaml
[ -n "$flipbook" ] || { echo "openapi-check: spec valid (no --flipbook: the server was not checked)"; exit 0; }
flipbook="$(cd "$(dirname "$flipbook")" && pwd)/$(basename "$flipbook")"
[ -x "$flipbook" ] || { echo "check.sh: $flipbook is not an executable" >&2; exit 2; }

# --- hand-made cases ----------------------------------------------------------------------------
status=0
"$py" Tests/openapi/conformance.py --spec openapi.yaml --flipbook "$flipbook" --samples Samples || status=1

# --- schemathesis against a fresh server ----------------------------------------------------
work="$(mktemp -d /tmp/flipbook-openapi-st.XXXXXX)"
reports="${OPENAPI_REPORTS:-$work/reports}"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  if [ "$status" -eq 0 ]; then rm -rf "$work"; else echo "openapi-check: kept $work (server log, reports)" >&2; fi
}
trap cleanup EXIT

token="openapi-admin"
"$flipbook" serve --host 127.0.0.1 --port 0 --data-dir "$work/data" --library-dir "$root/Samples" \
  --instance-name openapi-check --log-format text --set auth.adminToken="$token" >"$work/server.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 300); do
  port="$(sed -n 's/.*port=\([0-9][0-9]*\) .*HTTP server listening.*/\1/p' "$work/server.log" | head -n1)"
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; status=1; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "openapi-check: the server did not start" >&2; status=1; exit 1; }

# Give the generated requests real images to find: every sample under its content id and a name.
"$py" - "$port" Samples <<'PY'
import os, sys, urllib.request
port, samples = sys.argv[1], sys.argv[2]
for name in sorted(os.listdir(samples)):
    data = open(os.path.join(samples, name), "rb").read()
    for method, path in (("POST", "/images"), ("PUT", f"/images/named-{name}")):
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
        with urllib.request.urlopen(request) as response:
            assert response.status in (200, 201), (method, path, response.status)
PY

seed_args=(--seed "$seed"); [ "$seed" = random ] && seed_args=()
mkdir -p "$reports"
set +e
(cd "$work" && "$venv/bin/st" --no-color run "$root/openapi.yaml" --url "http://127.0.0.1:$port" \
  -H "Authorization: Bearer $token" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance \
  --max-examples "$max_examples" "${seed_args[@]}" --generation-database none \
  --report junit --report-dir "$reports")
st_status=$?
set -e
if grep -E '^[^ ]+ (error|critical) ' "$work/server.log" >/dev/null; then
  echo "openapi-check: the server logged errors during the schemathesis run:" >&2
  grep -E '^[^ ]+ (error|critical) ' "$work/server.log" | head -20 >&2
  status=1
fi
[ "$st_status" -eq 0 ] || status=1
if [ "$status" -eq 0 ]; then echo "openapi-check: passed"; else echo "openapi-check: FAILED" >&2; fi
exit "$status"
