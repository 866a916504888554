#!/usr/bin/env python3
"""make bench-playback: 50 simulated frontend players against `flipbook serve` with a frame-cache
budget that holds only a fraction of all frames.

1. Makes 50 different animations with real encoders (scripts/bench/playback/make_inputs.py).
2. Sizing pass (cached in bench-out/playback/frame-bytes.json): a server with an unlimited budget
   gets every file uploaded and every frame fetched once; the sum of the PNG sizes is what the
   cache would hold for all frames.
3. Measured run: a fresh server (fresh data directory) with --cache-max-bytes = BUDGET_FRACTION
   (default 0.25) of that sum. Upload all 50 (timed), wait for the decode threads to go idle,
   read the baseline RSS. Every client fetches its image's metadata (as a player does once).
4. 50 clients, one keep-alive HTTP/1.1 connection each (asyncio, raw sockets), each playing a
   different animation at real-time speed: frame k of loop L is requested at
   start + L * durationMs + timestampMs[k]; when the previous answer arrives after that moment the
   next request goes out at once (the lateness is recorded; frames are never skipped). Starts are
   spread over the first second. DURATION seconds (default 60).
5. /stats before and after (hits, misses = requests that waited for a decode, coalesced, decodes,
   prefetches, evictions); the server's VmRSS polled every 50 ms from /proc (peak during playback)
   and VmHWM.

Writes bench-out/playback/result.json and, with BENCH_WRITE=1 (the default), the "## Playback
through the frame cache" section of BENCHMARKS.md.

Environment: DURATION=60 CLIENTS=50 BUDGET_FRACTION=0.25 SKIP_BUILD=1 BENCH_WRITE=0
HIT_MS=5 (client-side threshold: an answer within it counts as served without waiting).
"""
import asyncio
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench", "playback"))
import flipbook_bench as fb  # noqa: E402

OUT = os.path.join(fb.REPO, "bench-out", "playback")
INPUTS = os.path.join(OUT, "inputs")
DURATION = float(os.environ.get("DURATION", "60"))
CLIENTS = int(os.environ.get("CLIENTS", "50"))
BUDGET_FRACTION = float(os.environ.get("BUDGET_FRACTION", "0.25"))
HIT_MS = float(os.environ.get("HIT_MS", "5"))
WRITE = os.environ.get("BENCH_WRITE", "1") == "1"


def make_inputs():
    subprocess.run([sys.executable, os.path.join(fb.REPO, "scripts", "bench", "playback", "make_inputs.py"), INPUTS],
                   check=True)
    with open(os.path.join(INPUTS, "MANIFEST.json")) as f:
        return json.load(f)


def file_digest(manifest):
    import hashlib
    h = hashlib.sha256()
    for item in manifest:
        with open(os.path.join(INPUTS, item["name"]), "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    h.update(open(fb.BINARY, "rb").read(1 << 20))  # the binary's head: rebuilt binaries re-size
    return h.hexdigest()[:16]


def sizing_pass(manifest):
    """Total PNG bytes of every frame, as the server encodes them; cached per inputs and binary."""
    cache_path = os.path.join(OUT, "frame-bytes.json")
    digest = file_digest(manifest)
    if os.path.exists(cache_path):
        with open(cache_path) as f:
            cached = json.load(f)
        if cached.get("digest") == digest:
            fb.log(f"bench-playback: frame sizes from {cache_path}")
            return cached
    fb.log("bench-playback: sizing pass (every frame fetched once from a server with an unlimited budget)")
    data = os.path.join(OUT, "sizing-data")
    shutil.rmtree(data, ignore_errors=True)
    server = fb.Server(data, budget=16 << 30, log_path=os.path.join(OUT, "sizing-server.log"))
    try:
        per_image = {}
        total_png = total_raw = frames = 0
        for item in manifest:
            meta, _ = server.upload(os.path.join(INPUTS, item["name"]))
            png = 0
            import http.client
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
            for k in range(meta["frameCount"]):
                conn.request("GET", f"/frames/{meta['id']}/{k}")
                r = conn.getresponse()
                body = r.read()
                if r.status != 200:
                    raise RuntimeError(f"{item['name']} frame {k}: {r.status}")
                png += len(body)
            conn.close()
            raw = meta["width"] * meta["height"] * 4 * meta["frameCount"]
            per_image[item["name"]] = {"pngBytes": png, "rawBytes": raw, "frames": meta["frameCount"]}
            total_png += png
            total_raw += raw
            frames += meta["frameCount"]
            server.request("DELETE", f"/images/{meta['id']}")
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)
    result = {"digest": digest, "pngBytes": total_png, "rawBytes": total_raw, "frames": frames, "images": per_image}
    with open(cache_path, "w") as f:
        json.dump(result, f, indent=1)
    return result


class MemoryPoller(threading.Thread):
    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self.samples = 0
        self.stop_flag = threading.Event()

    def run(self):
        while not self.stop_flag.is_set():
            try:
                rss = fb.proc_memory(self.pid)["VmRSS"]
            except (OSError, KeyError):
                break
            self.peak = max(self.peak, rss)
            self.samples += 1
            time.sleep(0.05)


async def read_response(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        if line[:15].lower() == b"content-length:":
            length = int(line[15:].strip())
    body = await reader.readexactly(length) if length else b""
    return status, body


async def player(port, meta, start, end, records):
    """Plays one animation by its delay table until `end`; appends one record per frame."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    ts = [f["timestampMs"] / 1000 for f in meta["frames"]]
    delays = [f["delayMs"] / 1000 for f in meta["frames"]]
    duration = meta["durationMs"] / 1000
    n = meta["frameCount"]
    loop = asyncio.get_running_loop()
    k = lap = 0
    requests = [f"GET /frames/{meta['id']}/{i} HTTP/1.1\r\nHost: bench\r\n\r\n".encode() for i in range(n)]
    try:
        while True:
            due = start + lap * duration + ts[k]
            if due >= end:
                break
            now = loop.time()
            if due > now:
                await asyncio.sleep(due - now)
            sent = loop.time()
            writer.write(requests[k])
            status, body = await read_response(reader)
            done = loop.time()
            ok = status == 200 and body[:8] == b"\x89PNG\r\n\x1a\n"
            # (latency, send lateness, arrived after the next frame was due, ok, bytes)
            records.append((done - sent, sent - due, done > due + delays[k], ok, len(body)))
            k += 1
            if k == n:
                k = 0
                lap += 1
    finally:
        writer.close()


async def play_all(port, metas, duration):
    loop = asyncio.get_running_loop()
    t0 = loop.time() + 0.5
    end = t0 + duration
    records = [[] for _ in metas]
    rng = random.Random(7)
    tasks = [player(port, m, t0 + rng.uniform(0, 1.0), end, records[i]) for i, m in enumerate(metas)]
    await asyncio.gather(*tasks)
    return records


def main():
    os.makedirs(OUT, exist_ok=True)
    fb.build()
    manifest = make_inputs()
    if len(manifest) < CLIENTS:
        sys.exit(f"bench-playback: {len(manifest)} inputs for {CLIENTS} clients")
    sizes = sizing_pass(manifest)
    budget = int(sizes["pngBytes"] * BUDGET_FRACTION)
    fb.log(f"bench-playback: {sizes['frames']} frames, {fb.mib(sizes['pngBytes'])} MiB of PNGs "
           f"({fb.mib(sizes['rawBytes'])} MiB RGBA); budget {fb.mib(budget)} MiB")

    data = os.path.join(OUT, "data")
    shutil.rmtree(data, ignore_errors=True)
    load_before = fb.loadavg()
    busy_before = fb.busy_processes()
    server = fb.Server(data, budget=budget, log_path=os.path.join(OUT, "server.log"))
    try:
        rss_start = server.memory()["VmRSS"]
        metas = []
        upload_s = []
        for item in manifest[:CLIENTS]:
            meta, s = server.upload(os.path.join(INPUTS, item["name"]))
            upload_s.append(s)
            metas.append(server.json(f"/images/{meta['id']}"))  # the player's one metadata fetch
        time.sleep(2)
        mem = server.memory()
        baseline = mem["VmRSS"]
        hwm_after_upload = mem["VmHWM"]
        before = server.json("/stats")
        poller = MemoryPoller(server.pid)
        poller.start()
        fb.log(f"bench-playback: {CLIENTS} players for {DURATION:.0f} s (baseline RSS {fb.mib(baseline)} MiB)")
        t = time.monotonic()
        records = asyncio.run(play_all(server.port, metas, DURATION))
        wall = time.monotonic() - t
        after = server.json("/stats")
        poller.stop_flag.set()
        poller.join()
        hwm_end = server.memory()["VmHWM"]
        load_after = fb.loadavg()
        busy_after = fb.busy_processes()
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)

    flat = [r for rs in records for r in rs]
    served = len(flat)
    ok = sum(1 for r in flat if r[3])
    lat_ms = [r[0] * 1000 for r in flat]
    fast = sum(1 for x in lat_ms if x <= HIT_MS)
    late_send = [r[1] * 1000 for r in flat]
    after_next = sum(1 for r in flat if r[2])
    delta = {k: after[k] - before[k] for k in ("hits", "misses", "waits", "coalesced", "decodes", "prefetches",
                                              "evictions", "refusedQueueFull")}
    asked = delta["hits"] + delta["misses"]
    server_share = delta["hits"] / asked if asked else float("nan")
    client_share = fast / served if served else float("nan")
    limit = baseline + budget * 1.1
    frame_rate = sum(1000 / (m["durationMs"] / m["frameCount"]) for m in metas)
    result = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "machine": fb.machine(),
        "clients": CLIENTS, "durationS": DURATION, "wallS": wall,
        "inputs": {"images": len(metas), "frames": sum(m["frameCount"] for m in metas),
                   "pngBytes": sizes["pngBytes"], "rawBytes": sizes["rawBytes"],
                   "formats": {f: sum(1 for i in manifest[:CLIENTS] if i["format"] == f) for f in ("gif", "webp", "apng")},
                   "fileBytes": sum(i["bytes"] for i in manifest[:CLIENTS]),
                   "framesPerSecondAsked": frame_rate},
        "budgetBytes": budget, "budgetFraction": BUDGET_FRACTION,
        "uploadSeconds": {"total": sum(upload_s), "median": fb.percentile(upload_s, 50), "max": max(upload_s)},
        "served": served, "ok": ok, "errors": served - ok,
        "stats": delta, "statsAfter": {k: after[k] for k in ("usedBytes", "budgetBytes", "cachedFrames", "entries")},
        "serverShareNoWait": server_share, "clientShareFast": client_share, "hitMs": HIT_MS,
        "latencyMs": {"p50": fb.percentile(lat_ms, 50), "p90": fb.percentile(lat_ms, 90),
                      "p99": fb.percentile(lat_ms, 99), "p999": fb.percentile(lat_ms, 99.9), "max": max(lat_ms)},
        "sendLatenessMs": {"p50": fb.percentile(late_send, 50), "p99": fb.percentile(late_send, 99),
                           "max": max(late_send)},
        "arrivedAfterNextFrameDue": after_next,
        "rss": {"start": rss_start, "baseline": baseline, "peakPlayback": poller.peak, "samples": poller.samples,
                "hwmAfterUpload": hwm_after_upload, "hwmEnd": hwm_end, "limit": limit},
        "load": {"before": load_before, "after": load_after, "busyBefore": busy_before, "busyAfter": busy_after},
    }
    with open(os.path.join(OUT, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    report = render(result)
    print(report)
    if WRITE:
        fb.replace_section(os.path.join(fb.REPO, "BENCHMARKS.md"), "Playback through the frame cache", report)
        fb.log("bench-playback: BENCHMARKS.md section written")


def render(r):
    met = lambda ok: "**met**" if ok else "**not met**"  # noqa: E731
    lat = r["latencyMs"]
    rss = r["rss"]
    i = r["inputs"]
    s = r["stats"]
    fmts = ", ".join(f"{n} {f.upper()}" for f, n in i["formats"].items())
    lines = [
        f"`make bench-playback` (scripts/bench-playback.py), {r['date']}, {r['machine']}; "
        f"load average {r['load']['before']} before, {r['load']['after']} after "
        f"(other processes at the start: {r['load']['busyBefore']}; at the end: {r['load']['busyAfter']}).",
        "",
        f"{r['clients']} simulated players, one keep-alive HTTP/1.1 connection each (Python asyncio on the same "
        f"machine), each playing a different animation at real-time speed by its delay table for "
        f"{r['durationS']:.0f} s: {i['images']} animations ({fmts}; 320×240 to 640×360, 30–120 frames, "
        f"40–100 ms per frame; {i['frames']} frames, {fb.mib(i['fileBytes'])} MiB of files, "
        f"{fb.mib(i['rawBytes'])} MiB as RGBA canvases, {fb.mib(i['pngBytes'])} MiB as the server's PNGs), "
        f"{i['framesPerSecondAsked']:.0f} frames/s asked for in all. Cache budget "
        f"`--cache-max-bytes {r['budgetBytes']}` = {r['budgetFraction']:.0%} of all frames' PNG bytes.",
        "",
        "| measure | value | goal |",
        "|---|---:|---|",
        f"| frames served (200, PNG) | {r['ok']:,} of {r['served']:,} requests | |",
        f"| served without waiting for a decode, server (`/stats` hits ÷ (hits + misses)) | "
        f"{r['serverShareNoWait']:.2%} ({s['hits']:,} hits, {s['misses']:,} misses) | ≥ 99.5%: {met(r['serverShareNoWait'] >= 0.995)} |",
        f"| served without waiting, client (answer within {r['hitMs']:g} ms) | {r['clientShareFast']:.2%} | ≥ 99.5%: "
        f"{met(r['clientShareFast'] >= 0.995)} |",
        f"| latency p50 / p90 / p99 / p99.9 / max | {lat['p50']:.2f} / {lat['p90']:.2f} / {lat['p99']:.2f} / "
        f"{lat['p999']:.1f} / {lat['max']:.1f} ms | |",
        f"| answers that arrived after the next frame was due | {r['arrivedAfterNextFrameDue']:,} "
        f"({r['arrivedAfterNextFrameDue'] / max(1, r['served']):.2%}) | |",
        f"| request sent late (previous answer still pending) p99 / max | {r['sendLatenessMs']['p99']:.1f} / "
        f"{r['sendLatenessMs']['max']:.1f} ms | |",
        f"| decodes / of them decode-ahead / coalesced / evictions | {s['decodes']:,} / {s['prefetches']:,} / "
        f"{s['coalesced']:,} / {s['evictions']:,} | |",
        f"| cache at the end: used / budget | {fb.mib(r['statsAfter']['usedBytes'])} / "
        f"{fb.mib(r['statsAfter']['budgetBytes'])} MiB, {r['statsAfter']['cachedFrames']:,} frames | |",
        f"| server RSS: at start / after upload (baseline) | {fb.mib(rss['start'])} / {fb.mib(rss['baseline'])} MiB | |",
        f"| server RSS peak during playback (VmRSS every 50 ms) | {fb.mib(rss['peakPlayback'])} MiB | ≤ baseline + "
        f"budget × 1.1 = {fb.mib(rss['limit'])} MiB: {met(rss['peakPlayback'] <= rss['limit'])} |",
        f"| VmHWM after upload / at the end | {fb.mib(rss['hwmAfterUpload'])} / {fb.mib(rss['hwmEnd'])} MiB | |",
        f"| uploads (full verification of every frame): total / median / max | {r['uploadSeconds']['total']:.1f} s / "
        f"{r['uploadSeconds']['median'] * 1000:.0f} ms / {r['uploadSeconds']['max'] * 1000:.0f} ms | |",
    ]
    notes = os.path.join(fb.REPO, "scripts", "bench", "playback", "notes.md")
    if os.path.exists(notes):
        lines += ["", open(notes).read().strip()]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
