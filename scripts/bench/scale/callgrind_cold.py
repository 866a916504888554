#!/usr/bin/env python3
"""Instructions per cold frame 0 request with ~100 and with ~N images cached (issue 37), counted by
valgrind's callgrind: repeatable on a shared, noisy machine where times are not.

Starts `flipbook serve` under callgrind (instrumentation off) over a data directory holding at
least N images (a kept `make bench-scale` directory: `KEEP=1`), with a cache budget that holds N
images' frames (`BUDGET`, default 2 GiB: no eviction, so "cached" means cached), lists the first N
ids, then asks frame 0 of each, one request at a time on one connection, in listing order (waiting,
before each counted block, until the server is idle: start-up's reconciliation walks every image's
file once, minutes under valgrind at a million): the
server's instructions (every thread: the request, the record read, the decode, the PNG, the
decode-ahead of frame 1 it starts) are counted over requests 50–150 and over the last 1,000, each
divided by its number of requests.

  FLIPBOOK_BIN=.build-playback/release/flipbook IMAGES=100000 DATA=bench-out/scale/data \\
      PYTHONPATH=scripts python3 -m bench.scale.callgrind_cold
"""
import glob
import json
import os
import subprocess
import tempfile
import time

from benchlib import REPO, log
from benchlib.machine import loadavg
from benchlib.ports import free_port, wait_until_listening
from benchlib.server import Server
from bench.scale.__main__ import wait_until_idle
from bench.serve.callgrind_requests import (callgrind, run_requests, stop_under_callgrind, total_instructions,
                                            under_callgrind)

IMAGES = int(os.environ.get("IMAGES", "100000"))
DATA = os.path.abspath(os.environ.get("DATA", os.path.join(REPO, "bench-out", "scale", "data")))
BUDGET = int(os.environ.get("BUDGET", str(2 << 30)))


def counted(proc, out_dir, port, paths):
    """The server's instructions per request over `paths`, one request each."""
    before = set(glob.glob(os.path.join(out_dir, "callgrind.out.*")))
    callgrind(proc.pid, "--zero")
    callgrind(proc.pid, "--instr=on")
    started = time.perf_counter()
    statuses = run_requests(port, paths, len(paths))
    seconds = time.perf_counter() - started
    callgrind(proc.pid, "--instr=off")
    callgrind(proc.pid, "--dump")
    time.sleep(1)
    total, _ = total_instructions(out_dir, before)
    if statuses != {200: len(paths)}:
        raise RuntimeError(f"statuses {statuses}")
    return {"requests": len(paths), "instructionsPerRequest": round(total / len(paths)),
            "msPerRequestUnderValgrind": round(seconds * 1000 / len(paths), 2)}


def main():
    work = tempfile.mkdtemp(prefix="flipbook-callgrind-cold.")
    valgrind, shim, out_dir = under_callgrind(work)
    port = free_port()
    args = valgrind + ["serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", DATA,
                       "--cache-max-bytes", str(BUDGET), "--set", "log.accessLog=false",
                       "--set", "storage.libraryDirs=", "--log-level", "warning"]
    server_log = open(os.path.join(work, "server.log"), "wb")
    proc = subprocess.Popen(args, stdout=server_log, stderr=subprocess.STDOUT, cwd=REPO,
                            env=dict(os.environ, LD_PRELOAD=shim))
    result = {"images": IMAGES, "budget": BUDGET, "data": os.path.relpath(DATA, REPO), "loadBefore": loadavg()}
    try:
        wait_until_listening(proc, port, 600, "server", server_log.name)
        server = Server.__new__(Server)
        server.port = port
        ids, cursor = [], None
        while len(ids) < IMAGES:
            status, _, body = server.request("GET", "/images?limit=1000" + (f"&after={cursor}" if cursor else ""),
                                             timeout=600)
            if status != 200:
                raise RuntimeError(f"GET /images: {status}")
            page = json.loads(body)
            ids += [image["id"] for image in page["images"]]
            cursor = page["next"]
            if cursor is None:
                break
        if len(ids) < IMAGES:
            raise SystemExit(f"{DATA} holds {len(ids)} images, fewer than {IMAGES}")
        paths = [f"/frames/{i}/0" for i in ids[:IMAGES]]
        run_requests(port, paths[:50], 50)
        wait_until_idle(proc.pid)
        result["first"] = counted(proc, out_dir, port, paths[50:150])
        result["first"]["entries"] = server.json("/stats")["entries"]
        log(f"callgrind_cold: ~100 cached: {result['first']}")
        for start in range(150, IMAGES - 1000, 5000):
            run_requests(port, paths[start:min(start + 5000, IMAGES - 1000)], min(5000, IMAGES - 1000 - start))
            log(f"callgrind_cold: {min(start + 5000, IMAGES - 1000):,} asked for")
        wait_until_idle(proc.pid)
        result["last"] = counted(proc, out_dir, port, paths[-1000:])
        result["last"]["entries"] = server.json("/stats")["entries"]
        result["ratio"] = round(result["last"]["instructionsPerRequest"] / result["first"]["instructionsPerRequest"], 3)
        result["loadAfter"] = loadavg()
        print(json.dumps(result))
    finally:
        stop_under_callgrind(proc, server_log, work, "callgrind_cold", 120)


if __name__ == "__main__":
    main()
