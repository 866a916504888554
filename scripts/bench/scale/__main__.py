"""A million images (issue 37): what each operation costs as the library grows.

Distinct 8×8 two-frame animations (`tiny.py`) are stored — the first 10,000 and the last 10,000
through `POST /images` (their rates compared), the rest with `flipbook import` (the same checks,
the same records) — and at each size (1,000, 100,000 and 1,000,000 by default) a fresh server
(release build, `cache.maxBytes` 256 MiB, no library images) is measured:

1. restart until `/readyz` answers 200 (median of 3 starts);
2. once the server is idle (start-up's reconciliation, which walks every image's file once, done):
   `GET /images?limit=100` at 200 random cursors, one at a time on one connection (p50/p99);
3. the whole listing, page after page of 100;
4. frame 0 of min(N, 100,000) distinct images, one request at a time, in listing order, after
   that restart: the latency of requests 50–150 ("~100 images cached") and of the last 1,000
   ("~100,000 cached"), with `/stats` at those points;
5. RSS before 3 and after 4, against the goal baseline + 1.1 × budget + 64 MB.

  PYTHONPATH=scripts python3 -m bench.scale [--sizes 1000,100000,1000000] [--jobs 2] [--keep] [--data DIR]
  (FLIPBOOK_BIN=… or SKIP_BUILD=1 to skip the build; BENCH_WRITE=1 writes the "A million images"
  section of docs/benchmarks/scale.md)

The data directory is under bench-out/scale (about 8.5 KB of disk per image: two files, a record
and the bytes, 4 KiB blocks each, plus the index); it is removed at the end unless --keep.
"""
import argparse
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

from benchlib import REPO, head_commit, log
from benchlib.machine import loadavg, machine
from benchlib.process import proc_memory
from benchlib.server import BINARY, Server, build
from benchlib.splice import publish
from benchlib.stats import percentile

from bench.scale.tiny import tiny_gif, write_files

BUDGET = 256 * 2**20
SERVER_SETTINGS = ["--set", "storage.libraryDirs=", "--set", "server.maxConnections=64"]


class Connection:
    """One keep-alive HTTP/1.1 connection to the server; each request timed."""

    def __init__(self, port):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def request(self, method, path, body=None):
        t = time.perf_counter()
        self.conn.request(method, path, body=body)
        r = self.conn.getresponse()
        data = r.read()
        return r.status, data, time.perf_counter() - t

    def close(self):
        self.conn.close()


def upload(server, first, count):
    """POSTs the animations of seeds first … first + count - 1; returns images/s."""
    conn = Connection(server.port)
    start = time.perf_counter()
    for seed in range(first, first + count):
        status, body, _ = conn.request("POST", "/images", tiny_gif(seed))
        if status != 201:
            raise RuntimeError(f"upload of seed {seed}: {status} {body[:200]!r}")
    seconds = time.perf_counter() - start
    conn.close()
    return {"first": first, "count": count, "seconds": round(seconds, 2), "perSecond": round(count / seconds, 1)}


def import_files(data_dir, scratch, first, count, jobs, chunk=50_000):
    """Stores seeds first … first + count - 1 with `flipbook import`, `chunk` files at a time."""
    total = 0.0
    for start in range(first, first + count, chunk):
        n = min(chunk, first + count - start)
        files = os.path.join(scratch, "import")
        shutil.rmtree(files, ignore_errors=True)
        write_files(files, start, n)
        run = subprocess.run([BINARY, "import", "--data-dir", data_dir, "--jobs", str(jobs), "--json",
                              "--set", "storage.libraryDirs=", files], capture_output=True, text=True, cwd=REPO)
        if run.returncode != 0:
            raise RuntimeError(f"flipbook import: {run.returncode} {run.stderr[-500:]}")
        summary = json.loads(run.stdout)
        if summary["stored"] != n:
            raise RuntimeError(f"flipbook import stored {summary['stored']} of {n}")
        total += summary["seconds"]
        log(f"bench.scale: imported up to seed {start + n} ({n / summary['seconds']:.0f}/s)")
    shutil.rmtree(os.path.join(scratch, "import"), ignore_errors=True)
    return {"first": first, "count": count, "seconds": round(total, 1), "perSecond": round(count / total, 1)}


def start(data_dir, scratch):
    """A server over `data_dir` and the seconds from its start to /readyz 200."""
    t = time.perf_counter()
    server = Server(data_dir, budget=BUDGET, extra=SERVER_SETTINGS, log_path=os.path.join(scratch, "server.log"))
    while server.request("GET", "/readyz", timeout=5)[0] != 200:
        time.sleep(0.005)
    return server, time.perf_counter() - t


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_idle(pid, timeout=900):
    """Waits until the server has finished its start-up work in the background (reconciliation
    walks every image's file once: at a million, seconds natively, minutes under valgrind), so
    that only the requests are measured: under 2% of a core over 3 s."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        before = cpu_seconds(pid)
        time.sleep(3)
        if cpu_seconds(pid) - before < 0.06:
            return
    raise RuntimeError(f"server {pid} still busy after {timeout} s")


def summary(seconds):
    ms = [s * 1000 for s in seconds]
    return {"n": len(ms), "p50": round(percentile(ms, 50), 3), "p99": round(percentile(ms, 99), 3),
            "mean": round(sum(ms) / len(ms), 3)} if ms else {"n": 0}


def measure(data_dir, scratch, size, cold_images):
    """Steps 1–5 of the module's documentation at `size` images."""
    restarts = []
    for _ in range(3):
        server, seconds = start(data_dir, scratch)
        restarts.append(seconds)
        server.stop()
    server, seconds = start(data_dir, scratch)
    restarts.append(seconds)
    result = {"images": size, "load": loadavg(), "restartSeconds": sorted(restarts)[len(restarts) // 2],
              "restarts": [round(s, 3) for s in restarts]}
    try:
        wait_until_idle(server.pid)
        result["rssBaseline"] = proc_memory(server.pid)
        conn = Connection(server.port)
        rng = random.Random(size)
        for _ in range(20):
            conn.request("GET", "/images?limit=100")
        times = []
        for _ in range(200):
            status, _, seconds = conn.request("GET", f"/images?limit=100&after={rng.getrandbits(256):064x}")
            assert status == 200, status
            times.append(seconds)
        result["page100"] = summary(times)
        # The whole listing.
        ids, cursor, pages = [], None, 0
        t = time.perf_counter()
        while True:
            status, body, _ = conn.request("GET", "/images?limit=100" + (f"&after={cursor}" if cursor else ""))
            assert status == 200, status
            page = json.loads(body)
            ids += [image["id"] for image in page["images"]]
            pages += 1
            cursor = page["next"]
            if cursor is None:
                break
        result["listAll"] = {"seconds": round(time.perf_counter() - t, 2), "pages": pages, "ids": len(ids),
                             "distinct": len(set(ids)), "ordered": ids == sorted(ids)}
        result["rssAfterListing"] = proc_memory(server.pid)
        log("bench.scale: before the cold frames: " + json.dumps(result))
        # Cold frame 0, one image after another.
        count = min(cold_images, len(ids))
        latencies, marks = [], {}
        for i, image_id in enumerate(ids[:count]):
            status, _, seconds = conn.request("GET", f"/frames/{image_id}/0")
            assert status == 200, (image_id, status)
            latencies.append(seconds)
            if i + 1 in (150, count):
                marks[i + 1] = server.json("/stats")
        result["cold"] = {"images": count, "first": summary(latencies[50:150]),
                          "last": summary(latencies[-1000:] if count >= 2000 else latencies[-100:]),
                          "totalSeconds": round(sum(latencies), 1),
                          "entriesAt150": marks.get(150, {}).get("entries"),
                          "entriesAtEnd": marks[count]["entries"], "usedBytesAtEnd": marks[count]["usedBytes"],
                          "recordsAtEnd": marks[count].get("records")}
        conn.close()
        time.sleep(1)
        result["rssAfterFrames"] = proc_memory(server.pid)
        goal = result["rssBaseline"]["VmRSS"] + 1.1 * BUDGET + 64e6
        result["rssGoal"] = int(goal)
        result["rssMet"] = result["rssAfterFrames"]["VmRSS"] <= goal
    finally:
        server.stop()
    return result


def report(result):
    """The Markdown section."""
    lines = [f"Run {result['date']}, commit {result['commit']}, {result['machine']}; "
             f"`{result['command']}`. Cache budget 256 MiB; images 8×8, 2 frames, 237 bytes each.", ""]
    first = [u for u in result["uploads"] if u["phase"] == "first"]
    last = [u for u in result["uploads"] if u["phase"] == "last"]
    if first and last:
        rate = lambda runs: sum(u["count"] for u in runs) / sum(u["seconds"] for u in runs)
        lines.append(f"Uploads through `POST /images`, one at a time: the first {sum(u['count'] for u in first):,} "
                     f"at {rate(first):,.0f}/s, the last {sum(u['count'] for u in last):,} (from "
                     f"{last[0]['first']:,}) at {rate(last):,.0f}/s: the last take {rate(first) / rate(last):.2f}× the time "
                     "of the first (goal ≤ 1.5×).")
    for imported in result["imports"]:
        lines.append(f"`flipbook import` of {imported['count']:,} images: {imported['perSecond']:,}/s.")
    lines += ["", "| images | load | restart → ready | `GET /images?limit=100` p50 / p99 | all pages of 100 | "
              "frame 0, ~100 cached: p50 / p99 | frame 0, last 1,000: p50 / p99 (cache entries) | "
              "RSS: baseline → after listing → after frames (goal) |", "|---|---|---|---|---|---|---|---|"]
    for m in result["sizes"]:
        mb = lambda b: f"{b / 1e6:.0f} MB"
        cold = m["cold"]
        lines.append(
            f"| {m['images']:,} | {m['load']} | {m['restartSeconds'] * 1000:.0f} ms | {m['page100']['p50']:.2f} / "
            f"{m['page100']['p99']:.2f} ms | {m['listAll']['seconds']:.1f} s ({m['listAll']['pages']:,} pages) | "
            f"{cold['first']['p50']:.2f} / {cold['first']['p99']:.2f} ms | {cold['last']['p50']:.2f} / "
            f"{cold['last']['p99']:.2f} ms ({cold['entriesAtEnd']:,} of {cold['images']:,}) | "
            f"{mb(m['rssBaseline']['VmRSS'])} → {mb(m['rssAfterListing']['VmRSS'])} → "
            f"{mb(m['rssAfterFrames']['VmRSS'])} ({'≤' if m['rssMet'] else '>'} {mb(m['rssGoal'])}) |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--api", type=int, default=10_000, help="images uploaded through the API first and last")
    parser.add_argument("--cold", type=int, default=100_000, help="images whose frame 0 is asked for")
    parser.add_argument("--jobs", type=int, default=2, help="flipbook import's threads")
    parser.add_argument("--keep", action="store_true", help="keep the data directory")
    parser.add_argument("--data", default=os.path.join(REPO, "bench-out", "scale", "data"),
                        help="the data directory (removed first unless --reuse)")
    parser.add_argument("--reuse", type=int, default=0,
                        help="the data directory kept (--keep) by an earlier run holds seeds 0 … N-1: store only beyond")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    build()
    out = os.path.join(REPO, "bench-out", "scale")
    os.makedirs(out, exist_ok=True)
    data_dir = os.path.abspath(args.data)
    if not args.reuse:
        shutil.rmtree(data_dir, ignore_errors=True)
    need = sizes[-1] * 9000 * 1.2
    free = shutil.disk_usage(out).free
    if free < need:
        raise SystemExit(f"bench.scale: {free / 1e9:.0f} GB free under {out}, {need / 1e9:.0f} GB needed")
    scratch = tempfile.mkdtemp(prefix="flipbook-bench-scale-", dir=out)
    result = {"machine": machine(), "commit": head_commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "command": "make bench-scale" + (f" SIZES={args.sizes}" if args.sizes != "1000,100000,1000000" else "")
              + (f" COLD={args.cold}" if args.cold != 100_000 else "") + (f" REUSE={args.reuse}" if args.reuse else "")
              + (f" DATA={os.path.relpath(data_dir, REPO)}" if data_dir != os.path.join(out, "data") else ""),
              "uploads": [], "imports": [], "sizes": []}
    stored = args.reuse
    if args.reuse:
        result["reused"] = args.reuse
    try:
        for size in sizes:
            first_api = max(0, min(args.api, size) - stored) if stored < args.api else 0
            last_api = args.api if size == sizes[-1] and size >= 2 * args.api and stored < size else 0
            if first_api:
                server, _ = start(data_dir, scratch)
                result["uploads"].append({"phase": "first", **upload(server, stored, first_api)})
                server.stop()
                stored += first_api
            middle = size - stored - last_api
            if middle > 0:
                result["imports"].append(import_files(data_dir, scratch, stored, middle, args.jobs))
                stored += middle
            if last_api:
                server, _ = start(data_dir, scratch)
                result["uploads"].append({"phase": "last", **upload(server, stored, last_api)})
                server.stop()
                stored += last_api
            log(f"bench.scale: {stored:,} images stored; measuring")
            result["sizes"].append(measure(data_dir, scratch, size, args.cold))
            log(json.dumps(result["sizes"][-1]))
    finally:
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    publish(result, report(result), out, os.path.join(REPO, "docs", "benchmarks", "scale.md"), "A million images",
            os.environ.get("BENCH_WRITE") == "1")


if __name__ == "__main__":
    sys.exit(main())
