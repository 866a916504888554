#!/usr/bin/env bash
# Checks openapi.yaml: always validates it (openapi-spec-validator, OpenAPI 3.1); given a flipbook
# binary, also checks it against running servers: Tests/openapi/conformance.py (hand-made cases:
# uploads, tokens, 304s, HTTP-layer errors; renditions: sizes, 400s, negotiation, presets) and
# schemathesis (generated requests) on a fresh server with the samples uploaded.
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
seed_args=(--seed "$seed"); [ "$seed" = random ] && seed_args=()
"$py" Tests/openapi/schemathesis_run.py --flipbook "$flipbook" --st "$venv/bin/st" --spec openapi.yaml \
  --samples Samples --max-examples "$max_examples" "${seed_args[@]}" --reports "$reports" \
  --keep-log "$work/server.log" || status=1
if [ "$status" -eq 0 ]; then
  rm -rf "$work"
  echo "openapi-check: passed"
else
  echo "openapi-check: kept $work (server log, reports)" >&2
  echo "openapi-check: FAILED" >&2
fi
exit "$status"
