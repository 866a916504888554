#!/usr/bin/env python3
"""Cold frame 0 latency, timed, with ~100 and with ~N images cached (issue 37's first goal:
≤ 1.5× with 100,000 cached), over a kept `make bench-scale` data directory (`KEEP=1`).

`make bench-scale` measures cold frames with the 256 MiB budget its RSS goal names, which holds
about 37,000 of these images' frames; the latency goal speaks of 100,000 images *in the cache*, so
this run gives the cache a budget that holds them all (`BUDGET`, default 2 GiB: nothing evicted).
A fresh server (release build) over `DATA`, idle first (start-up's reconciliation done); the first
N ids listed; then frame 0 of each, one request at a time on one keep-alive connection, in listing
order. Reported: p50, p99 and mean of requests 50–150 ("~100 cached") and of the last 1,000, their
ratio, `/stats` entries at both points, and the load average. Run it on a quiet machine: it is a
time, not an instruction count (`bench.scale.callgrind_cold` counts the same requests).

  FLIPBOOK_BIN=.build/release/flipbook IMAGES=100000 DATA=bench-out/scale/data \\
      PYTHONPATH=scripts python3 -m bench.scale.cold_time
"""
import json
import os
import tempfile
import time

from benchlib import REPO, log
from benchlib.machine import loadavg
from benchlib.server import BINARY, Server
from bench.scale.__main__ import SERVER_SETTINGS, Connection, summary, wait_until_idle

IMAGES = int(os.environ.get("IMAGES", "100000"))
DATA = os.path.abspath(os.environ.get("DATA", os.path.join(REPO, "bench-out", "scale", "data")))
BUDGET = int(os.environ.get("BUDGET", str(2 << 30)))


def listed_ids(conn, count):
    """The first `count` ids of the listing, page after page."""
    ids, cursor = [], None
    while len(ids) < count:
        status, body, _ = conn.request("GET", "/images?limit=1000" + (f"&after={cursor}" if cursor else ""))
        assert status == 200, status
        page = json.loads(body)
        ids += [image["id"] for image in page["images"]]
        cursor = page["next"]
        if cursor is None:
            break
    return ids[:count]


def main():
    scratch = tempfile.mkdtemp(prefix="flipbook-cold-time-")
    server = Server(DATA, budget=BUDGET, extra=SERVER_SETTINGS, log_path=os.path.join(scratch, "server.log"))
    try:
        while server.request("GET", "/readyz", timeout=5)[0] != 200:
            time.sleep(0.05)
        wait_until_idle(server.pid)
        conn = Connection(server.port)
        ids = listed_ids(conn, IMAGES)
        wait_until_idle(server.pid)
        load_before = loadavg()
        latencies, entries = [], {}
        for i, image_id in enumerate(ids):
            status, _, seconds = conn.request("GET", f"/frames/{image_id}/0")
            assert status == 200, (image_id, status)
            latencies.append(seconds)
            if i + 1 in (150, len(ids)):
                entries[i + 1] = server.json("/stats")["entries"]
        first = summary(latencies[50:150])
        last = summary(latencies[-1000:])
        result = {"binary": BINARY, "images": len(ids), "budget": BUDGET, "first": first, "last": last,
                  "ratioP50": round(last["p50"] / first["p50"], 3), "entriesAt150": entries.get(150),
                  "entriesAtEnd": entries.get(len(ids)), "totalSeconds": round(sum(latencies), 1),
                  "load": {"before": load_before, "after": loadavg()}}
        print(json.dumps(result))
        log(f"bench.scale.cold_time: p50 {first['p50']} ms with ~100 cached, {last['p50']} ms with "
            f"{entries.get(len(ids))} cached: {result['ratioP50']}×")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
