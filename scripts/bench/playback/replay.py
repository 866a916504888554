#!/usr/bin/env python3
"""A deterministic replay of bench-playback's inputs, for comparing builds on a busy machine
(where real-time players only measure the load): a fresh server with a FRACTION (default 0.25)
budget gets the 50 inputs uploaded, then STEPS (default 20) rounds of one request per image in
turn (frame = round mod frameCount), one request at a time, no pacing. Prints one JSON line:
/stats counters and the server's user/system CPU over the replay, and `perf stat` counts on the
server (malloc_trim calls through a uprobe — `perf probe -x <libc> malloc_trim` once —, fallocate,
madvise, minor faults) when perf is there.

Needs bench-out/playback/inputs and frame-bytes.json (a `make bench-playback` run makes them).
Usage: FLIPBOOK_BIN=path/to/flipbook python3 scripts/bench/playback/replay.py LABEL [serve flags...]
"""
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from benchlib import REPO  # noqa: E402
from benchlib.server import Server  # noqa: E402

OUT = os.path.join(REPO, "bench-out", "playback")
STEPS = int(os.environ.get("STEPS", "20"))
FRACTION = float(os.environ.get("FRACTION", "0.25"))
EVENTS = "probe_libc:malloc_trim,syscalls:sys_enter_fallocate,syscalls:sys_enter_madvise,minor-faults,task-clock"


def cpu(pid):
    stat = open(f"/proc/{pid}/stat").read()
    fields = stat[stat.rindex(")") + 2:].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def main():
    label, extra = sys.argv[1], sys.argv[2:]
    inputs = os.path.join(OUT, "inputs")
    manifest = json.load(open(os.path.join(inputs, "MANIFEST.json")))[:50]
    png_bytes = json.load(open(os.path.join(OUT, "frame-bytes.json")))["pngBytes"]
    data = os.path.join(OUT, f"replay-{label}")
    shutil.rmtree(data, ignore_errors=True)
    perf_out = os.path.join(OUT, f"replay-{label}.perf")
    server = Server(data, budget=int(png_bytes * FRACTION), extra=extra,
                    log_path=os.path.join(OUT, f"replay-{label}.log"))
    perf = None
    try:
        metas = [server.upload(os.path.join(inputs, m["name"]))[0] for m in manifest]
        server.wait_for_decodes()
        before, (u0, s0) = server.json("/stats"), cpu(server.pid)
        if shutil.which("perf"):
            perf = subprocess.Popen(["perf", "stat", "-x,", "-e", EVENTS, "-p", str(server.pid), "-o", perf_out],
                                    stderr=subprocess.DEVNULL)
            time.sleep(0.3)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        started = time.monotonic()
        for step in range(STEPS):
            for meta in metas:
                conn.request("GET", f"/frames/{meta['id']}/{step % meta['frameCount']}")
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    raise RuntimeError(f"{meta['id']} frame {step % meta['frameCount']}: {response.status}")
        wall = time.monotonic() - started
        server.wait_for_decodes(poll=0.3)
        after, (u1, s1) = server.json("/stats"), cpu(server.pid)
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait()
        hwm = server.memory()["VmHWM"]
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)
    delta = {k: after[k] - before[k] for k in ("hits", "misses", "decodes", "prefetches", "framesDecoded",
                                              "resumes", "evictions")}
    counts = {}
    if perf and os.path.exists(perf_out):
        for line in open(perf_out):
            parts = line.strip().split(",")
            if len(parts) > 3 and parts[0] and not line.startswith("#") and parts[0][0].isdigit():
                counts[parts[2]] = float(parts[0])
    made = max(1, delta["decodes"])
    print(json.dumps({
        "label": label, "requests": STEPS * len(metas), "wallS": round(wall, 1),
        "userS": round(u1 - u0, 2), "systemS": round(s1 - s0, 2),
        "cpuMsPerFrameMade": round((u1 - u0 + s1 - s0) * 1000 / made, 2), **delta,
        "mallocTrims": counts.get("probe_libc:malloc_trim"), "fallocates": counts.get("syscalls:sys_enter_fallocate"),
        "madvises": counts.get("syscalls:sys_enter_madvise"),
        "minorFaultsPerFrameMade": round(counts.get("minor-faults", 0) / made, 1),
        "vmHWMMiB": round(hwm / 2**20, 1), "loadAverage": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
