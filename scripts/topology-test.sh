#!/usr/bin/env bash
# make topology-test: nginx with deploy/nginx.conf (rendered for loopback: addresses and paths
# only) in front of three `flipbook serve` replicas sharing one data directory; see
# scripts/topology/topology_test.py for the checks. Exits non-zero on any failed check.
#
#   scripts/topology-test.sh              the real service (reuses .build/debug/flipbook when it
#                                         is newer than the sources, else `swift build`)
#   scripts/topology-test.sh --fake       dry run against scripts/topology/fake_replica.py
#   FLIPBOOK_BIN=path scripts/topology-test.sh     a given binary (e.g. a release build)
# Other arguments go to topology_test.py (--images N, --threads N, --phases ..., --keep).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh topology

fake=0
args=()
for arg in "$@"; do
  case "$arg" in
    --fake) fake=1 ;;
    *) args+=("$arg") ;;
  esac
done

mkdir -p out
summary=out/topology-summary.json
if [ "$fake" = 1 ]; then
  exec python3 scripts/topology/topology_test.py --fake --binary none --summary "$summary" ${args[@]+"${args[@]}"}
fi

bin="${FLIPBOOK_BIN:-}"
if [ -z "$bin" ]; then
  bin=.build/debug/flipbook
  if [ ! -x "$bin" ] || [ -n "$(find Sources Package.swift -newer "$bin" -print -quit)" ]; then
    echo "topology-test: building flipbook (debug)" >&2
    timeout "${BUILD_LIMIT:-40m}" swift build --product flipbook
  fi
fi
if ! "$bin" serve --help >/dev/null 2>&1; then
  echo "topology-test: $bin has no 'serve' subcommand" >&2
  exit 1
fi
echo "topology-test: replicas run $bin" >&2
exec python3 scripts/topology/topology_test.py --binary "$bin" --summary "$summary" ${args[@]+"${args[@]}"}
