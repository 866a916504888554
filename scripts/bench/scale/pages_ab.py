#!/usr/bin/env python3
"""`GET /images?limit=100` at two library sizes side by side (issue 37's listing goal): one server
over each data directory, running at once, measured once idle (start-up's reconciliation done); rounds of requests at random cursors alternate between
them, so that both see the same load. Prints each size's p50/p99 and the ratio of p50s; with
CALLGRIND=1 instead, each server runs under callgrind in turn and its instructions per page are
counted (repeatable where times are not).

  FLIPBOOK_BIN=.build-playback/release/flipbook PYTHONPATH=scripts python3 -m bench.scale.pages_ab \\
      bench-out/scale/data-1k bench-out/scale/data [ROUNDS] [PER_ROUND]
"""
import glob
import json
import os
import random
import subprocess
import sys
import tempfile
import time

from benchlib import REPO, log
from benchlib.machine import loadavg
from benchlib.ports import free_port, wait_until_listening
from benchlib.server import Server
from benchlib.stats import percentile
from bench.scale.__main__ import Connection, SERVER_SETTINGS, start, wait_until_idle
from bench.serve.callgrind_requests import (callgrind, run_requests, stop_under_callgrind, total_instructions,
                                            under_callgrind)


def cursors(rng, count):
    return [f"/images?limit=100&after={rng.getrandbits(256):064x}" for _ in range(count)]


def timed(dirs, rounds, per_round):
    scratch = tempfile.mkdtemp(prefix="flipbook-pages-ab-", dir=os.path.join(REPO, "bench-out"))
    servers = [start(d, scratch)[0] for d in dirs]
    try:
        for s in servers:
            wait_until_idle(s.pid)
        conns = [Connection(s.port) for s in servers]
        for c in conns:
            for _ in range(20):
                c.request("GET", "/images?limit=100")
        times = [[] for _ in dirs]
        rng = random.Random(37)
        load = [loadavg()]
        for r in range(rounds):
            paths = cursors(rng, per_round)
            order = range(len(dirs)) if r % 2 == 0 else reversed(range(len(dirs)))
            for i in order:
                for path in paths:
                    status, _, seconds = conns[i].request("GET", path)
                    assert status == 200, status
                    times[i].append(seconds * 1000)
        load.append(loadavg())
        result = {"load": load, "rounds": rounds, "perRound": per_round}
        for d, t in zip(dirs, times):
            result[os.path.relpath(d, REPO)] = {"p50": round(percentile(t, 50), 3), "p99": round(percentile(t, 99), 3),
                                               "n": len(t)}
        result["ratio p50"] = round(percentile(times[1], 50) / percentile(times[0], 50), 3)
        return result
    finally:
        for s in servers:
            s.stop()


def counted(data, requests):
    work = tempfile.mkdtemp(prefix="flipbook-pages-cg.")
    valgrind, shim, out_dir = under_callgrind(work)
    port = free_port()
    args = valgrind + ["serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", data,
                       "--set", "log.accessLog=false", "--log-level", "warning"] + SERVER_SETTINGS
    server_log = open(os.path.join(work, "server.log"), "wb")
    proc = subprocess.Popen(args, stdout=server_log, stderr=subprocess.STDOUT, cwd=REPO,
                            env=dict(os.environ, LD_PRELOAD=shim))
    try:
        wait_until_listening(proc, port, 600, "server", server_log.name)
        paths = cursors(random.Random(37), requests)
        run_requests(port, paths[:20], 20)
        wait_until_idle(proc.pid)
        before = set(glob.glob(os.path.join(out_dir, "callgrind.out.*")))
        callgrind(proc.pid, "--zero")
        callgrind(proc.pid, "--instr=on")
        statuses = run_requests(port, paths, requests)
        callgrind(proc.pid, "--instr=off")
        callgrind(proc.pid, "--dump")
        time.sleep(1)
        total, _ = total_instructions(out_dir, before)
        assert statuses == {200: requests}, statuses
        return round(total / requests)
    finally:
        stop_under_callgrind(proc, server_log, work, "pages_ab", 120)


def main():
    dirs = [os.path.abspath(d) for d in sys.argv[1:3]]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    per_round = int(sys.argv[4]) if len(sys.argv) > 4 else 50
    if os.environ.get("CALLGRIND") == "1":
        result = {os.path.relpath(d, REPO): counted(d, rounds * per_round) for d in dirs}
        values = list(result.values())
        result["ratio"] = round(values[1] / values[0], 3)
        result["requests"] = rounds * per_round
    else:
        result = timed(dirs, rounds, per_round)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
