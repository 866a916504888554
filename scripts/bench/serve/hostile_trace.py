#!/usr/bin/env python3
"""Where a normal client's slow requests come from while one-shot hostile clients run (issue 34's
hostile phases; `hostile_p99` measures the ratio, this says what lies behind it).

`flipbook serve` as `hostile_p99` runs it (or nginx with PEER=nginx). A normal keep-alive client
makes REQUESTS timed GETs alone, then again while HOSTILE threads of phase KIND (a one-shot phase
of `hostile_p99`: chunk-zeros, chunk-extension, big-head, garbage) open RATE connections a second
each, as `hostile_p99` does. Every request and every hostile connection is stamped with
`time.monotonic()` and, for Flipbook, the loop that answered it (the high half of its
`X-Request-ID` is per loop). Reports:

- p99 alone and loaded; the hostile connections per loop (how many on the normal client's loop);
- the slow requests (≥ 2× the p99 alone) that overlapped a hostile connection on the normal
  client's loop, on the other loop only, or none;
- with SCHED=1, `perf sched record -a` during the loaded run: CPU per request of each thread on
  the machine during the slowest 2% of requests against the others (who ran while they waited).

  FLIPBOOK_BIN=.build/release/flipbook KIND=garbage SCHED=1 PYTHONPATH=scripts \\
      python3 -m bench.serve.hostile_trace

Environment: KIND (garbage), REQUESTS (10000), HOSTILE (50), RATE (4), PEER (unset or nginx),
SCHED (unset), STAGGER (unset; 1: each thread starts at a random point of its first 1/RATE, so
that the connections come spread out rather than in `hostile_p99`'s bursts of HOSTILE). Writes bench-out/hostile_trace/ (trace.json; sched.data and timehist.txt).
"""
import bisect
import collections
import json
import multiprocessing
import os
import random
import re
import shutil
import socket
import subprocess
import threading
import time

from benchlib import REPO
from benchlib.machine import loadavg
from benchlib.nginx import Nginx
from benchlib.server import Server
from benchlib.stats import percentile
from bench.serve.cached_frames import warm
from bench.serve.hostile_p99 import PAYLOADS

KIND = os.environ.get("KIND", "garbage")
REQUESTS = int(os.environ.get("REQUESTS", "10000"))
HOSTILE = int(os.environ.get("HOSTILE", "50"))
RATE = float(os.environ.get("RATE", "4"))
PEER = os.environ.get("PEER", "")
SCHED = os.environ.get("SCHED") == "1"
STAGGER = os.environ.get("STAGGER") == "1"
OUT = os.path.join(REPO, "bench-out", "hostile_trace")
REQUEST_ID = re.compile(rb"(?im)^x-request-id: (\w{8})")


def one_shot(port, payload):
    """One hostile connection; returns the loop that answered (`?` when unknown)."""
    got = b""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        try:
            sock.sendall(payload)
            while chunk := sock.recv(65536):
                got += chunk
        except OSError:
            pass
    match = REQUEST_ID.search(got)
    return match.group(1).decode() if match else "?"


def hostile(port, stop, path):
    """HOSTILE threads of KIND, each at most RATE connections a second, until `stop`; writes
    [start, end, loop] of each connection to `path`."""
    made, lock = [], threading.Lock()

    def run():
        rng = random.Random()
        if STAGGER:
            stop.wait(rng.uniform(0, 1 / RATE))
        next_start = time.monotonic()
        while not stop.is_set():
            start = time.monotonic()
            loop = one_shot(port, PAYLOADS[KIND](rng))
            with lock:
                made.append((start, time.monotonic(), loop))
            next_start += 1 / RATE
            stop.wait(max(0.0, next_start - time.monotonic()))

    threads = [threading.Thread(target=run, daemon=True) for _ in range(HOSTILE)]
    for thread in threads:
        thread.start()
    stop.wait()
    for thread in threads:
        thread.join(timeout=5)
    with open(path, "w") as f:
        json.dump(made, f)


def timed_client(port, paths, count):
    """`count` sequential keep-alive GETs: [(monotonic start, ms)], and the loop that answered."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    reader, out, loop = sock.makefile("rb"), [], "?"
    for k in range(count):
        request = f"GET {paths[k % len(paths)]} HTTP/1.1\r\nHost: bench\r\n\r\n".encode()
        start, stamp = time.perf_counter(), time.monotonic()
        sock.sendall(request)
        reader.readline()
        length = 0
        while (line := reader.readline()) not in (b"\r\n", b""):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
            elif line[:13].lower() == b"x-request-id:":
                loop = line[14:22].decode()
        reader.read(length)
        out.append((stamp, (time.perf_counter() - start) * 1000))
    sock.close()
    return out, loop


def overlaps(spans, start, end):
    """The loops of the hostile connections open during [start, end] (0.5 ms either side)."""
    return {loop for s, e, loop in spans if s - 0.0005 < end and e + 0.0005 > start}


def sched_threads(timehist, requests, names):
    """µs of CPU per request of each thread during the slowest 2% of `requests`, and the others;
    `names` labels the processes of the benchmark by pid (others keep their thread's name)."""
    runs = []
    for line in open(timehist):
        parts = line.split()
        if len(parts) < 6 or not re.match(r"^\d+\.\d+$", parts[0]):
            continue
        task = " ".join(parts[2:-3])
        name = re.sub(r"\[.*", "", task)
        ids = re.search(r"\[(\d+)(?:/(\d+))?\]", task)
        pid = int(ids.group(2) or ids.group(1)) if ids else -1
        name = names[pid] + (f" {name}" if names[pid] == "server" else "") if pid in names else name
        end = float(parts[0])
        runs.append((end - float(parts[-1]) / 1000, end, name))
    runs.sort()
    starts = [r[0] for r in runs]
    inside = [(t, ms) for t, ms in requests if runs and runs[0][0] + 0.01 < t < runs[-1][1] - 0.01]
    if not inside:
        return None, {True: {}, False: {}}
    threshold = percentile([ms for _, ms in inside], 98)
    totals = {True: collections.Counter(), False: collections.Counter()}
    counts = collections.Counter()
    for t, ms in inside:
        slow, end = ms >= threshold, t + ms / 1000
        counts[slow] += 1
        for s, e, name in runs[max(0, bisect.bisect_left(starts, t - 0.05)):]:
            if s > end:
                break
            if min(e, end) > max(s, t):
                totals[slow][name] += (min(e, end) - max(s, t)) * 1e6
    return threshold, {slow: {k: v / max(1, counts[slow]) for k, v in c.items()} for slow, c in totals.items()}


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    load = loadavg()
    server = Server(os.path.join(OUT, "data"), budget=256 << 20, log_path=os.path.join(OUT, "server.log"),
                    extra=["--set", "log.accessLog=true", "--set", f"log.accessLogFile={OUT}/access.log"])
    target, inputs = server, os.path.join(REPO, "bench-out", "inputs")
    try:
        if PEER == "nginx":
            paths, _ = warm(server, inputs, root=os.path.join(OUT, "root"))
            server.stop()
            target = Nginx(OUT, "hostile", os.path.join(OUT, "root"), access_log=True)
        else:
            paths, _ = warm(server, inputs)
        server_pid = target.pid if hasattr(target, "pid") else -1
        timed_client(target.port, paths, 500)
        alone, _ = timed_client(target.port, paths, REQUESTS)
        stop = multiprocessing.Event()
        worker = multiprocessing.Process(target=hostile, args=(target.port, stop, os.path.join(OUT, "hostile.json")))
        worker.start()
        time.sleep(1)
        perf = None
        if SCHED:
            perf = subprocess.Popen(["perf", "sched", "record", "-a", "-o", os.path.join(OUT, "sched.data"), "--",
                                     "sleep", "0.6"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.2)
        loaded, normal_loop = timed_client(target.port, paths, REQUESTS)
        if perf:
            perf.wait()
        stop.set()
        worker.join(timeout=30)
    finally:
        target.stop()
        if target is not server:
            server.stop()
    with open(os.path.join(OUT, "hostile.json")) as f:
        spans = sorted(tuple(s) for s in json.load(f))
    alone_p99 = percentile([ms for _, ms in alone], 99)
    loaded_p99 = percentile([ms for _, ms in loaded], 99)
    first, last = loaded[0][0], loaded[-1][0]
    during = [s for s in spans if first <= s[0] <= last]
    per_loop = collections.Counter(loop for _, _, loop in during)
    slow = [(t, ms) for t, ms in loaded if ms >= 2 * alone_p99]
    where = collections.Counter()
    for t, ms in slow:
        loops = overlaps(spans, t, t + ms / 1000)
        where["its loop" if normal_loop in loops else "the other loop only" if loops else "none"] += 1
    with open(os.path.join(OUT, "trace.json"), "w") as f:
        json.dump({"alone": alone, "loaded": loaded, "hostile": spans, "normalLoop": normal_loop}, f)
    print(f"{PEER or 'flipbook'}, {KIND}{', staggered' if STAGGER else ''}, load {load} → {loadavg()}: p99 alone {alone_p99:.3f} ms, loaded "
          f"{loaded_p99:.3f} ms ({loaded_p99 / alone_p99:.2f}×)")
    print(f"hostile connections during the loaded run: {len(during)}, {per_loop[normal_loop]} on the normal "
          f"client's loop ({dict(per_loop)})")
    print(f"slow requests (≥ {2 * alone_p99:.3f} ms): {len(slow)} of {len(loaded)}; overlapping a hostile "
          f"connection on {dict(where)}")
    if SCHED:
        timehist = os.path.join(OUT, "timehist.txt")
        with open(timehist, "w") as f:
            subprocess.run(["perf", "sched", "timehist", "-i", os.path.join(OUT, "sched.data")], stdout=f,
                           stderr=subprocess.DEVNULL, check=False)
        names = {os.getpid(): "normal client", worker.pid: "hostile clients", server_pid: "server"}
        threshold, cpu = sched_threads(timehist, loaded, names)
        if threshold is None:
            raise SystemExit("perf sched recorded nothing during the loaded run")
        print(f"CPU per request (µs) of each thread while the request was out, slowest 2% (≥ {threshold:.3f} ms) "
              "against the others:")
        for name in sorted(cpu[True], key=lambda k: -cpu[True][k])[:12]:
            print(f"  {name:28s} {cpu[True][name]:7.1f}  {cpu[False].get(name, 0):7.1f}")


if __name__ == "__main__":
    main()
