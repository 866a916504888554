#!/usr/bin/env bash
# make topology-test, two runs:
#  1. loopback: nginx with deploy/nginx.conf (rendered for loopback: addresses and paths only) in
#     front of three `flipbook serve` replicas sharing one data directory
#     (scripts/topology/topology_test.py);
#  2. multi-host: three replicas on storage.backend=s3, nginx and an S3 server (moto) each in a
#     network namespace of its own, no shared directory (scripts/topology/multihost_test.py).
#     Needs root (ip netns); without it the run fails, it is not skipped.
# Exits non-zero on any failed check.
#
#   scripts/topology-test.sh              the real service (reuses .build/debug/flipbook when it
#                                         is newer than the sources, else `swift build`)
#   scripts/topology-test.sh --fake       dry run of the loopback checks against fake replicas
#   scripts/topology-test.sh --loopback-only | --multihost-only
#   FLIPBOOK_BIN=path scripts/topology-test.sh     a given binary (e.g. a release build)
# Other arguments go to topology_test.py (--images N, --threads N, --phases ..., --keep).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh topology
# The harness shares scripts/benchlib (gifgen, free ports) with the benchmarks.
export PYTHONPATH="$PWD/scripts${PYTHONPATH:+:$PYTHONPATH}"

fake=0
loopback=1
multihost=1
args=()
for arg in "$@"; do
  case "$arg" in
    --fake) fake=1 ;;
    --loopback-only) multihost=0 ;;
    --multihost-only) loopback=0 ;;
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
status=0
if [ "$loopback" = 1 ]; then
  python3 scripts/topology/topology_test.py --binary "$bin" --summary "$summary" ${args[@]+"${args[@]}"} || status=1
fi
if [ "$multihost" = 1 ]; then
  make --no-print-directory s3-test-tools
  python3 scripts/topology/multihost_test.py --binary "$bin" --moto .build-s3-venv/bin/moto_server \
    --summary out/topology-multihost-summary.json || status=1
fi
exit "$status"
