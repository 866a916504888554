"""make bench-playback: 50 simulated frontend players against `flipbook serve` with a frame-cache
budget that holds only a fraction of all frames.

1. Makes 50 different animations with real encoders (scripts/benchlib/animations.py).
2. Sizing pass (cached in bench-out/playback/frame-bytes.json): a server with an unlimited budget
   gets every file uploaded and every frame fetched once; the sum of the PNG sizes is what the
   cache would hold for all frames.
3. Measured runs, one per budget in BUDGETS (default "0.25 0.25+canvases": 25% of that sum, and
   25% of it plus one RGBA canvas per animation, the decoder state the cache counts too), each on
   a fresh server (fresh data directory) with that --cache-max-bytes. Upload all 50 (timed), wait for the decode threads to go idle,
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
through the frame cache" section of docs/benchmarks/playback.md.

RENDER_ONLY=1 rewrites the section from bench-out/playback/result.json (e.g. after editing
scripts/bench/playback/notes.md) without running anything.

Environment: DURATION=60 CLIENTS=50 BUDGETS="0.25 0.25+canvases" SKIP_BUILD=1 BENCH_WRITE=0
HIT_MS=5 (client-side threshold: an answer within it counts as served without waiting)
SERVER_ARGS="" (more flags for the measured servers).

MODE=renditions runs the renditions mode instead (issue 21: 10 players on renditions of one
image, with and without a client cycling through 2,000 widths): scripts/bench/playback/renditions.py.
"""
import asyncio
import datetime
import json
import os
import random
import shutil
import sys
import threading
import time

from benchlib import REPO, animations, log
from benchlib.machine import loadavg, machine
from benchlib.process import cpu_seconds
from benchlib.sampler import RSSPoller, busy_processes, end_of_run
from benchlib.server import BINARY, Server, build
from benchlib.splice import publish, replace_section
from benchlib.stats import mib, percentile

OUT = os.path.join(REPO, "bench-out", "playback")
INPUTS = os.path.join(OUT, "inputs")
DURATION = float(os.environ.get("DURATION", "60"))
CLIENTS = int(os.environ.get("CLIENTS", "50"))
# Budgets to run, each on a fresh server: F = F x all frames' PNG bytes; F+canvases = that plus one
# RGBA canvas per animation (the decoders' state, which the cache also counts against its budget).
BUDGETS = os.environ.get("BUDGETS", "0.25 0.25+canvases").split()
HIT_MS = float(os.environ.get("HIT_MS", "5"))
# More `flipbook serve` flags for the measured runs, e.g. SERVER_ARGS="--set cache.decodeThreads=1".
SERVER_ARGS = os.environ.get("SERVER_ARGS", "").split()
SIZES = {}
GRACE = 10.0  # a request still unanswered this long after the end is given up (and counted)
WRITE = os.environ.get("BENCH_WRITE", "1") == "1"


def file_digest(manifest):
    import hashlib
    h = hashlib.sha256()
    for item in manifest:
        with open(os.path.join(INPUTS, item["name"]), "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    h.update(open(BINARY, "rb").read(1 << 20))  # the binary's head: rebuilt binaries re-size
    return h.hexdigest()[:16]


def sizing_pass(manifest):
    """Total PNG bytes of every frame, as the server encodes them; cached per inputs and binary."""
    cache_path = os.path.join(OUT, "frame-bytes.json")
    digest = file_digest(manifest)
    if os.path.exists(cache_path):
        with open(cache_path) as f:
            cached = json.load(f)
        if cached.get("digest") == digest and "cpuSeconds" in cached:
            log(f"bench-playback: frame sizes from {cache_path}")
            return cached
    log("bench-playback: sizing pass (every frame fetched once from a server with an unlimited budget)")
    data = os.path.join(OUT, "sizing-data")
    shutil.rmtree(data, ignore_errors=True)
    server = Server(data, budget=16 << 30, log_path=os.path.join(OUT, "sizing-server.log"))
    try:
        per_image = {}
        total_png = total_raw = frames = 0
        cpu = 0.0
        for item in manifest:
            meta, _ = server.upload(os.path.join(INPUTS, item["name"]))
            png = 0
            cpu_before = cpu_seconds(server.pid)
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
            cpu += cpu_seconds(server.pid) - cpu_before
            raw = meta["width"] * meta["height"] * 4 * meta["frameCount"]
            per_image[item["name"]] = {"pngBytes": png, "rawBytes": raw, "frames": meta["frameCount"]}
            total_png += png
            total_raw += raw
            frames += meta["frameCount"]
            server.request("DELETE", f"/images/{meta['id']}")
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)
    result = {"digest": digest, "cpuSeconds": cpu, "pngBytes": total_png, "rawBytes": total_raw, "frames": frames, "images": per_image}
    with open(cache_path, "w") as f:
        json.dump(result, f, indent=1)
    return result


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


def is_frame(body, query):
    """A PNG frame, or with a rendition query a PNG or WebP one."""
    if body[:8] == b"\x89PNG\r\n\x1a\n":
        return True
    return bool(query) and body[:4] == b"RIFF" and body[8:12] == b"WEBP"


async def player(port, meta, start, end, records, unanswered, behind, query="", tag=None):
    """Plays one animation by its delay table until `end`; appends one record per frame, and
    to `behind` the number of frames due before `end` that were asked for only after it (the
    player was still catching up with real time) or never answered. `query` (e.g.
    "width=320&format=webp") plays a rendition instead of the full-size PNGs (the renditions mode,
    scripts/bench/playback/renditions.py); `tag` is sent as X-Request-ID, so that the access log
    names the player."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    ts = [f["timestampMs"] / 1000 for f in meta["frames"]]
    delays = [f["delayMs"] / 1000 for f in meta["frames"]]
    duration = meta["durationMs"] / 1000
    n = meta["frameCount"]
    loop = asyncio.get_running_loop()
    k = lap = late = 0
    suffix = f"?{query}" if query else ""
    rid = f"X-Request-ID: {tag}\r\n" if tag else ""
    requests = [f"GET /frames/{meta['id']}/{i}{suffix} HTTP/1.1\r\nHost: bench\r\n{rid}\r\n".encode() for i in range(n)]
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
            try:
                status, body = await asyncio.wait_for(read_response(reader), timeout=max(0.001, end + GRACE - sent))
            except asyncio.TimeoutError:
                unanswered.append(meta["id"])  # still waiting GRACE s after the end: given up
                late += 1
                break
            done = loop.time()
            if sent > end:
                late += 1  # due before the end, asked for only after it: still catching up
            ok = status == 200 and is_frame(body, query)
            # (latency, send lateness, arrived after the next frame was due, ok, bytes)
            records.append((done - sent, sent - due, done > due + delays[k], ok, len(body)))
            k += 1
            if k == n:
                k = 0
                lap += 1
    finally:
        behind.append(late)
        writer.close()


def with_halfway_stats(server, duration, play):
    """Runs `play()` (the players, for `duration` seconds) while a thread reads the server's /stats
    halfway through; returns play's result and those stats."""
    mid = {}

    def snapshot():
        time.sleep(duration / 2)
        mid.update(server.json("/stats"))
    snap = threading.Thread(target=snapshot, daemon=True)
    snap.start()
    result = play()
    snap.join()
    return result, mid


async def play_all(port, metas, duration):
    loop = asyncio.get_running_loop()
    t0 = loop.time() + 0.5
    end = t0 + duration
    records = [[] for _ in metas]
    unanswered = []
    rng = random.Random(7)
    behind = []
    tasks = [player(port, m, t0 + rng.uniform(0, 1.0), end, records[i], unanswered, behind)
             for i, m in enumerate(metas)]
    await asyncio.gather(*tasks)
    return records, unanswered, behind


def budget_for(spec, sizes):
    fraction, _, extra = spec.partition("+")
    budget = int(sizes["pngBytes"] * float(fraction))
    if extra == "canvases":
        budget += sum(v["rawBytes"] // v["frames"] for v in sizes["images"].values())
    elif extra:
        raise SystemExit(f"bench-playback: unknown budget '{spec}'")
    return budget


def run_one(spec, sizes, manifest):
    budget = budget_for(spec, sizes)
    log(f"bench-playback: budget {spec} = {mib(budget)} MiB")
    data = os.path.join(OUT, "data")
    shutil.rmtree(data, ignore_errors=True)
    load_before = loadavg()
    busy_before = busy_processes()
    server = Server(data, budget=budget, log_path=os.path.join(OUT, "server.log"), extra=SERVER_ARGS)
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
        baseline_anon, baseline_file = mem.get("RssAnon", 0), mem.get("RssFile", 0)
        hwm_after_upload = mem["VmHWM"]
        before = server.json("/stats")
        poller = RSSPoller(server.pid)
        poller.start()
        log(f"bench-playback: {CLIENTS} players for {DURATION:.0f} s (baseline RSS {mib(baseline)} MiB)")
        t = time.monotonic()
        cpu_before = cpu_seconds(server.pid)
        (records, unanswered, behind), mid = with_halfway_stats(
            server, DURATION, lambda: asyncio.run(play_all(server.port, metas, DURATION)))
        wall = time.monotonic() - t
        cpu = cpu_seconds(server.pid) - cpu_before
        after = server.json("/stats")
        poller.stop()
        hwm_end, load_after, busy_after = end_of_run(server)
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
                                              "framesDecoded", "resumes", "notKept", "evictions", "refusedQueueFull")}
    asked = delta["hits"] + delta["misses"]
    server_share = delta["hits"] / asked if asked else float("nan")
    client_share = fast / served if served else float("nan")
    limit = baseline + budget * 1.1
    frame_rate = sum(1000 / (m["durationMs"] / m["frameCount"]) for m in metas)
    result = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "machine": machine(),
        "clients": CLIENTS, "durationS": DURATION, "wallS": wall,
        "inputs": {"images": len(metas), "frames": sum(m["frameCount"] for m in metas),
                   "pngBytes": sizes["pngBytes"], "rawBytes": sizes["rawBytes"],
                   "formats": {f: sum(1 for i in manifest[:CLIENTS] if i["format"] == f) for f in ("gif", "webp", "apng")},
                   "fileBytes": sum(i["bytes"] for i in manifest[:CLIENTS]),
                   "framesPerSecondAsked": frame_rate},
        "budgetBytes": budget, "budgetSpec": spec,
        "uploadSeconds": {"total": sum(upload_s), "median": percentile(upload_s, 50), "max": max(upload_s)},
        "serverCpuSeconds": cpu,
        "served": served, "ok": ok, "errors": served - ok, "unanswered": len(unanswered),
        "behind": behind,
        "midway": {k: mid.get(k) for k in ("usedBytes", "frameBytes", "decoderBytes", "cachedFrames", "queueDepth")},
        "stats": delta, "statsAfter": {k: after[k] for k in ("usedBytes", "budgetBytes", "cachedFrames", "entries")},
        "serverShareNoWait": server_share, "clientShareFast": client_share, "hitMs": HIT_MS,
        "latencyMs": {"p50": percentile(lat_ms, 50), "p90": percentile(lat_ms, 90),
                      "p99": percentile(lat_ms, 99), "p999": percentile(lat_ms, 99.9), "max": max(lat_ms)},
        "sendLatenessMs": {"p50": percentile(late_send, 50), "p99": percentile(late_send, 99),
                           "max": max(late_send)},
        "arrivedAfterNextFrameDue": after_next,
        "rss": {"start": rss_start, "baseline": baseline, "peakPlayback": poller.peak, "samples": poller.samples,
                "baselineAnon": baseline_anon, "baselineFile": baseline_file, "peakAnon": poller.peak_anon,
                "fileAtPeak": poller.file_at_peak,
                "hwmAfterUpload": hwm_after_upload, "hwmEnd": hwm_end, "limit": limit},
        "load": {"before": load_before, "after": load_after, "busyBefore": busy_before, "busyAfter": busy_after},
    }
    return result


def main():
    if os.environ.get("MODE") == "renditions":
        from bench.playback import renditions
        renditions.main()
        return
    os.makedirs(OUT, exist_ok=True)
    if os.environ.get("RENDER_ONLY") == "1":
        # Rewrite the section from the last run's result.json (after editing notes.md).
        with open(os.path.join(OUT, "frame-bytes.json")) as f:
            SIZES.update(json.load(f))
        with open(os.path.join(OUT, "result.json")) as f:
            report = render(json.load(f))
        print(report)
        if WRITE:
            replace_section(os.path.join(REPO, "docs", "benchmarks", "playback.md"), "Playback through the frame cache", report)
        return
    build()
    manifest = animations.inputs(INPUTS)
    if len(manifest) < CLIENTS:
        sys.exit(f"bench-playback: {len(manifest)} inputs for {CLIENTS} clients")
    sizes = sizing_pass(manifest)
    SIZES.update(sizes)
    log(f"bench-playback: {sizes['frames']} frames, {mib(sizes['pngBytes'])} MiB of PNGs "
           f"({mib(sizes['rawBytes'])} MiB RGBA)")
    results = [run_one(spec, sizes, manifest) for spec in BUDGETS]
    publish(results, render(results), OUT, os.path.join(REPO, "docs", "benchmarks", "playback.md"), "Playback through the frame cache", WRITE)
    if WRITE:
        log("bench-playback: docs/benchmarks/playback.md section written")


def label(spec):
    fraction, _, extra = spec.partition("+")
    text = f"{float(fraction):.0%} of all PNG bytes"
    return text + " + one canvas per animation" if extra == "canvases" else text


def render(results):
    met = lambda ok: "met" if ok else "**not met**"  # noqa: E731
    r0 = results[0]
    i = r0["inputs"]
    fmts = ", ".join(f"{n} {f.upper()}" for f, n in i["formats"].items())
    canv = budget_for("0+canvases", {"pngBytes": 0, "images": SIZES["images"]})
    lines = [
        f"`make bench-playback` (scripts/bench/playback), {r0['date']}, {r0['machine']}.",
        "",
        f"{r0['clients']} simulated players, one keep-alive HTTP/1.1 connection each (Python asyncio, on the same "
        f"machine), each playing a different animation at real-time speed by its delay table for "
        f"{r0['durationS']:.0f} s (frame k of loop L asked for at start + L × duration + timestampMs[k]; when the "
        f"previous answer comes later than that, the next request goes out at once — frames are never skipped; "
        f"starts spread over 1 s). {i['images']} animations made by scripts/benchlib/animations.py ({fmts}; "
        f"ffmpeg testsrc/testsrc2/mandelbrot/life/cellauto/sierpinski/gradients scenes, 320×240 to 640×360, 11–120 "
        f"frames, 40–100 ms per frame): {i['frames']:,} frames, {mib(i['fileBytes'])} MiB of files, "
        f"{mib(i['rawBytes'])} MiB as RGBA canvases, {mib(i['pngBytes'])} MiB as the server's PNGs (what its "
        f"cache holds per frame); {i['framesPerSecondAsked']:.0f} frames/s asked for by all players together. "
        f"One RGBA canvas per animation (the decoder state the cache also counts against its budget) is "
        f"{mib(canv)} MiB for the 50. Sizing pass (every frame of every animation asked for once, in order, "
        f"one at a time, unlimited budget): {SIZES['cpuSeconds'] * 1000 / SIZES['frames']:.1f} ms of server CPU "
        f"per frame, so real-time playback of all 50 needs ≈ "
        f"{SIZES['cpuSeconds'] / SIZES['frames'] * i['framesPerSecondAsked']:.1f} cores of decoding alone. Each column is a fresh server with that `--cache-max-bytes`; the same "
        f"files uploaded first (timed), then 2 s idle, then the baseline RSS.",
        "",
        "| measure | " + " | ".join(f"budget {mib(r['budgetBytes'])} MiB ({label(r['budgetSpec'])})" for r in results)
        + " | goal |",
        "|---|" + "---:|" * len(results) + "---|",
    ]

    def row(name, fn, goal=""):
        lines.append(f"| {name} | " + " | ".join(fn(r) for r in results) + f" | {goal} |")

    row("frames served (200, PNG) / requests unanswered 10 s after the end",
        lambda r: f"{r['ok']:,} / {r['unanswered']}")
    row("frames due before the end but asked for after it (players behind real time at the end): all / worst player",
        lambda r: f"{sum(r['behind']):,} / {max(r['behind']):,}", "0")
    row("served without waiting for a decode, server (`/stats` hits ÷ (hits + misses))",
        lambda r: f"{r['serverShareNoWait']:.2%} ({r['stats']['hits']:,} / {r['stats']['hits'] + r['stats']['misses']:,}) "
                  f"{met(r['serverShareNoWait'] >= 0.995)}", "≥ 99.5%")
    row(f"served without waiting, client (answer within {r0['hitMs']:g} ms)",
        lambda r: f"{r['clientShareFast']:.2%} {met(r['clientShareFast'] >= 0.995)}", "≥ 99.5%")
    row("latency p50 / p99 (ms)", lambda r: f"{r['latencyMs']['p50']:.2f} / {r['latencyMs']['p99']:.1f}")
    row("latency p99.9 / max (ms)", lambda r: f"{r['latencyMs']['p999']:.0f} / {r['latencyMs']['max']:.0f}")
    row("answers that came after the next frame was due",
        lambda r: f"{r['arrivedAfterNextFrameDue']:,} ({r['arrivedAfterNextFrameDue'] / max(1, r['served']):.1%})")
    row("decodes (of them decode-ahead) / coalesced / evictions",
        lambda r: f"{r['stats']['decodes']:,} ({r['stats']['prefetches']:,}) / {r['stats']['coalesced']:,} / "
                  f"{r['stats']['evictions']:,}")
    row("frame decodes done to make them (replays included) / renders resumed from a cached frame's PNG",
        lambda r: f"{r['stats']['framesDecoded']:,} / {r['stats']['resumes']:,}")
    row("server CPU during playback: cores used on average / ms of CPU per decode",
        lambda r: f"{r['serverCpuSeconds'] / r['wallS']:.2f} / "
                  f"{r['serverCpuSeconds'] * 1000 / max(1, r['stats']['decodes']):.1f}")
    row("cache halfway: frames / decoders (canvases + checkpoints), MiB; frames cached; requests waiting",
        lambda r: f"{mib(r['midway']['frameBytes'] or 0)} / {mib(r['midway']['decoderBytes'] or 0)}; "
                  f"{r['midway']['cachedFrames']}; {r['midway']['queueDepth']}")
    row("server RSS at start / after upload (baseline), MiB",
        lambda r: f"{mib(r['rss']['start'])} / {mib(r['rss']['baseline'])}")
    row("server RSS peak during playback (VmRSS every 50 ms), MiB",
        lambda r: f"{mib(r['rss']['peakPlayback'])} (limit {mib(r['rss']['limit'])}) "
                  f"{met(r['rss']['peakPlayback'] <= r['rss']['limit'])}", "≤ baseline + budget × 1.1")
    row("of which anonymous (heap) / file-backed (binary, libraries, mapped images), MiB: baseline; peak",
        lambda r: f"{mib(r['rss'].get('baselineAnon', 0))} / {mib(r['rss'].get('baselineFile', 0))}; "
                  f"{mib(r['rss'].get('peakAnon', 0))} / {mib(r['rss'].get('fileAtPeak', 0))}")
    row("VmHWM after upload / at the end, MiB",
        lambda r: f"{mib(r['rss']['hwmAfterUpload'])} / {mib(r['rss']['hwmEnd'])}")
    row("50 uploads (each verifies every frame): total s / median ms / max ms",
        lambda r: f"{r['uploadSeconds']['total']:.1f} / {r['uploadSeconds']['median'] * 1000:.0f} / "
                  f"{r['uploadSeconds']['max'] * 1000:.0f}")
    row("load average before / after", lambda r: f"{r['load']['before']} / {r['load']['after']}")
    lines += ["", "CPU of other processes over 1 s before each run (the machine is shared): "
              + "; ".join(f"{mib(r['budgetBytes'])} MiB run: {r['load']['busyBefore']}" for r in results) + "."]
    notes = os.path.join(REPO, "scripts", "bench", "playback", "notes.md")
    if os.path.exists(notes):
        lines += ["", open(notes).read().strip()]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
