#!/usr/bin/env python3
"""Server CPU per hostile connection (issue 34's hostile-clients phases, seen from the server):
`perf stat -e task-clock,context-switches -p PID` around CONNECTIONS one-shot connections of one
phase of `hostile_p99` (chunk-zeros, chunk-extension, big-head, garbage), sent by THREADS client
threads, each connection read until the server closes it.

`flipbook serve` runs as `hostile_p99` runs it (access log on, to a file; no images needed: every
payload is refused); PEER=nginx runs nginx as `make bench-serve` does (its workers measured).
BINARIES (space-separated, default FLIPBOOK_BIN) are measured in turn, RUNS times alternated, so
that drifting load falls on each alike; reports each run and the median per binary.

  BINARIES="/tmp/a/flipbook /tmp/b/flipbook" KIND=chunk-zeros CONNECTIONS=3000 RUNS=3 \
      PYTHONPATH=scripts python3 -m bench.serve.hostile_cpu

Run it under `/work/coord/freeze.sh`-like quiet and report the load it prints.
"""
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import threading

from benchlib import log
from benchlib.machine import loadavg
from benchlib.nginx import Nginx
from benchlib.server import BINARY
import benchlib.server as server_module
from bench.serve.hostile_p99 import PAYLOADS, send_and_drain

CONNECTIONS = int(os.environ.get("CONNECTIONS", "3000"))
THREADS = int(os.environ.get("THREADS", "4"))
RUNS = int(os.environ.get("RUNS", "3"))
KIND = os.environ.get("KIND", "garbage")
PEER = os.environ.get("PEER", "")
# More perf events to count per connection, e.g. syscalls:sys_enter_read,raw_syscalls:sys_enter.
EVENTS = [e for e in os.environ.get("EVENTS", "").split(",") if e]


def payloads():
    """The payload maker of phase KIND (one-shot phases only)."""
    if KIND not in PAYLOADS:
        raise SystemExit(f"KIND={KIND}: one of {', '.join(PAYLOADS)}")
    return PAYLOADS[KIND]


def drive(port, payload_of, count):
    """`count` connections over THREADS threads."""
    left = [count]
    lock = threading.Lock()

    def worker():
        rng = random.Random()
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            send_and_drain(port, payload_of(rng))

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def perf_around(pids, action):
    """The counts of `pids` (task-clock in milliseconds) while `action` runs, by event name."""
    out = tempfile.NamedTemporaryFile(delete=False, suffix=".perf")
    out.close()
    perf = subprocess.Popen(["perf", "stat", "-x,", "-o", out.name, "-e", ",".join(["task-clock", "context-switches"] + EVENTS),
                             "-p", ",".join(str(p) for p in pids)])
    try:
        action()
    finally:
        perf.send_signal(2)
        perf.wait()
    values = {}
    with open(out.name) as f:
        for line in f:
            fields = line.strip().split(",")
            if len(fields) > 2 and fields[0] and not line.startswith("#"):
                try:
                    values[fields[2]] = float(fields[0])
                except ValueError:
                    pass
    os.unlink(out.name)
    return values


def start(binary, work):
    if PEER == "nginx":
        root = os.path.join(work, "root")
        os.makedirs(root, exist_ok=True)
        nginx = Nginx(work, "cpu", root, access_log=True)
        children = subprocess.run(["pgrep", "-P", str(nginx.proc.pid)], capture_output=True, text=True).stdout.split()
        return nginx, [int(p) for p in children]
    server_module.BINARY = binary
    server = server_module.Server(
        os.path.join(work, "data"), log_path=os.path.join(work, "server.log"),
        extra=["--set", "log.accessLog=true", "--set", f"log.accessLogFile={work}/access.log"])
    return server, [server.pid]


def main():
    binaries = ["nginx"] if PEER == "nginx" else (os.environ.get("BINARIES", "").split() or [BINARY])
    payload_of = payloads()
    results = {b: [] for b in binaries}
    load_before = loadavg()
    for run in range(RUNS):
        for binary in binaries:
            work = tempfile.mkdtemp(prefix="flipbook-hostile-cpu.")
            target, pids = start(binary, work)
            try:
                drive(target.port, payload_of, 50)  # warm-up
                counts = perf_around(pids, lambda: drive(target.port, payload_of, CONNECTIONS))
            finally:
                target.stop()
                shutil.rmtree(work, ignore_errors=True)
            per = counts.get("task-clock", 0.0) * 1000 / CONNECTIONS
            results[binary].append(per)
            others = ", ".join(f"{counts.get(e, 0.0) / CONNECTIONS:.2f} {e}" for e in ["context-switches"] + EVENTS)
            log(f"hostile cpu: run {run + 1} {binary}: {per:.1f} µs, {others} per connection")
    print(f"{KIND}, {CONNECTIONS} connections × {RUNS} runs alternated, {THREADS} client threads; "
          f"load {load_before} → {loadavg()}")
    for binary, values in results.items():
        print(f"  {binary}: {' / '.join(f'{v:.1f}' for v in values)} µs per connection, median "
              f"{statistics.median(values):.1f}")


if __name__ == "__main__":
    main()
