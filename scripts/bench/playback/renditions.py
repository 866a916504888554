"""`MODE=renditions make bench-playback`: the renditions mode of the playback benchmark (issue 21's
"real time" and "abuse" goals). The players are bench-playback's own (`player` in __main__.py),
each playing a rendition (`?width=…&format=…[&quality=…]`) instead of the full-size PNGs.

1. A fresh server (`--set cache.maxBytes=BUDGET`, default 64 MiB; access log on, to a file, for
   the per-request server times `ms=`), the IMAGES of bench-out/inputs uploaded (made by
   scripts/make-bench-inputs.sh when missing), each image's metadata fetched once and its
   full-size frame 0 asked for once (the image browser's poster: the full-size entry exists and
   its poster is pinned), then 2 s idle and the baseline RSS.
2. PLAYERS players (default 10), player i plays rendition RENDITIONS[i] (10 by default: 160 to
   640 px wide; PNG, lossless WebP and lossy WebP) of image IMAGES[i % len(IMAGES)] at real-time
   speed by its delay table for DURATION s (frame k of loop L asked for at start + L × duration +
   timestampMs[k]; a late answer sends the next request at once; starts spread over 1 s).
3. With ABUSE=1, one more client (a process of its own, one keep-alive connection) asks, in a
   loop for the whole run, for widths ABUSE_WIDTHS (default 2,000: 1..2000), the format
   alternating png / webp, frame (i × 37) mod frameCount (ABUSE_FRAMES=zero: frame 0) of the
   first image, or of ABUSE_IMAGE (uploaded too; its full-size poster fetched like the others'),
   spread over the animation: each request a decode the players' frames do not share; one
   request at a time, from the players' start until 0.5 s before they stop (so that at the end
   the players' renditions are the most recently used). It runs at nice ABUSER_NICE (19): it stands
   for a client elsewhere, and its own CPU on the shared cores would otherwise slow the players'
   client.
4. After the run: /stats (deltas of hits, misses, decodes, evictions; `renditions` counters),
   every played rendition's frame 0 and the full-size frame 0 checked in `GET
   /images/{id}/cache[?query]`, the server's VmRSS polled every 50 ms (peak), the server-side
   `ms=` of every frame request from the access log.

Each ABUSE value in RUNS (default "0 1") is a fresh server; a value given more than once
(`RUNS="0 1 0 1 0 1"`) also reports the players' latencies of all runs of a kind together
(`pooled`). Goals: ≥ 99% of frames after each
player's first within 15 ms (client-side latency); RSS ≤ baseline + 1.1 × budget; with the
abuser, players' p99 ≤ 2 × the unloaded run's, the RSS bound, every poster cached.

Environment: DURATION=60 PLAYERS=10 IMAGES="small.gif" (the goal's input; large.gif, 1280×720, needs more
than two cores for this mix) BUDGET=67108864 RUNS="0 1"
ABUSE_WIDTHS=2000 ABUSE_FRAMES=spread|zero ABUSER_NICE=19 RENDITIONS="q1 q2 …" (space-separated queries)
SERVER_ARGS="" RESIDENCY=1 (every 2 s, each played rendition's cached frame count from `GET
/images/{id}/cache?query`, into result.json's `residency`) SKIP_BUILD=1 (FLIPBOOK_BIN=path) OUT_NAME=playback-renditions. Writes
bench-out/OUT_NAME/result.json and prints a Markdown report (BENCHMARKS.md's "Renditions: real
time" and "Renditions: abuse" sections quote its figures).
"""
import asyncio
import datetime
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

from benchlib import REPO, head_commit, log
from benchlib.machine import loadavg, machine
from benchlib.process import cpu_seconds
from benchlib.sampler import RSSPoller, busy_processes, end_of_run
from benchlib.server import BINARY, Server, build
from benchlib.stats import mib, percentile
from bench.playback.__main__ import player, read_response, with_halfway_stats  # noqa: F401  (the same players)

BENCH_INPUTS = os.path.join(REPO, "bench-out", "inputs")
OUT = os.path.join(REPO, "bench-out", os.environ.get("OUT_NAME", "playback-renditions"))
DURATION = float(os.environ.get("DURATION", "60"))
PLAYERS = int(os.environ.get("PLAYERS", "10"))
IMAGES = os.environ.get("IMAGES", "small.gif").split()
BUDGET = int(os.environ.get("BUDGET", str(64 << 20)))
RUNS = os.environ.get("RUNS", "0 1").split()
ABUSE_WIDTHS = int(os.environ.get("ABUSE_WIDTHS", "2000"))
ABUSE_FRAMES = os.environ.get("ABUSE_FRAMES", "spread")
ABUSER_NICE = int(os.environ.get("ABUSER_NICE", "19"))
ABUSE_IMAGE = os.environ.get("ABUSE_IMAGE", "")  # default: the players' first image
SERVER_ARGS = os.environ.get("SERVER_ARGS", "").split()
FAST_MS = 15.0
DEFAULT_RENDITIONS = [
    "width=160&format=png",
    "width=200&format=webp&quality=75",
    "width=240&format=webp",
    "width=280&format=png",
    "width=320&format=webp&quality=80",
    "width=360&format=webp",
    "width=400&format=png",
    "width=480&format=webp&quality=60",
    "width=560&format=webp",
    "width=640&format=webp&quality=90",
]
RENDITIONS = os.environ.get("RENDITIONS", " ".join(DEFAULT_RENDITIONS)).split()


def abuser(port, image_id, frame_count, stop_at, counts):
    """One client asking for ABUSE_WIDTHS distinct widths in a loop until `stop_at` (time.time())."""
    # The abuser is another client, on another machine in real life: here it shares the two cores
    # with the players' client, so it runs at nice ABUSER_NICE (19) — otherwise its own CPU (a
    # Python loop sending ~500 requests a second) delays the players' event loop and shows up in
    # their client-side latency, which is not the server's doing.
    os.nice(ABUSER_NICE)
    sock = socket.create_connection(("127.0.0.1", port))
    buf = b""
    i = served = errors = 0
    lat = []
    while time.time() < stop_at:
        w = i % ABUSE_WIDTHS + 1
        fmt = "png" if i % 2 == 0 else "webp"
        k = 0 if ABUSE_FRAMES == "zero" else (i * 37) % frame_count
        t = time.perf_counter()
        sock.sendall(f"GET /frames/{image_id}/{k}?width={w}&format={fmt} HTTP/1.1\r\nHost: abuse\r\n"
                     "X-Request-ID: abuser\r\n\r\n".encode())
        while b"\r\n\r\n" not in buf:
            buf += sock.recv(1 << 20)
        head, _, rest = buf.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        m = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
        length = int(m.group(1)) if m else 0
        while len(rest) < length:
            rest += sock.recv(1 << 20)
        buf = rest[length:]
        lat.append(time.perf_counter() - t)
        if status == 200:
            served += 1
        else:
            errors += 1
        i += 1
    sock.close()
    counts.update(requests=i, served=served, errors=errors, cycles=i / ABUSE_WIDTHS,
                  p50=percentile(lat, 50) * 1000, p99=percentile(lat, 99) * 1000)


async def play_all(port, plays, duration):
    loop = asyncio.get_running_loop()
    t0 = loop.time() + 0.5
    end = t0 + duration
    records = [[] for _ in plays]
    unanswered, behind = [], []
    rng = random.Random(7)
    tasks = [player(port, meta, t0 + rng.uniform(0, 1.0), end, records[i], unanswered, behind, query, f"player{i}")
             for i, (meta, query) in enumerate(plays)]
    await asyncio.gather(*tasks)
    return records, unanswered, behind


def access_times(log_path, offset):
    """{request id: [server ms, …]} of the frame requests written to the access log after
    `offset` (the players send X-Request-ID playerN, the abuser `abuser`; the log leaves out
    the query)."""
    times = {}
    with open(log_path, "rb") as f:
        f.seek(offset)
        for line in f:
            if b"component=access" not in line or b"path=/frames/" not in line:
                continue
            m = re.search(rb" ms=([\d.]+) path=\S+ requestID=(\S+)", line)
            if m:
                times.setdefault(m.group(2).decode(), []).append(float(m.group(1)))
    return times


def ensure_inputs():
    for name in IMAGES:
        if not os.path.exists(os.path.join(BENCH_INPUTS, name)):
            log("bench-playback renditions: making the decode-bench inputs")
            subprocess.run([os.path.join(REPO, "scripts", "make-bench-inputs.sh")], cwd=REPO, check=True)
            return


def run_one(abuse, n=0):
    data = os.path.join(OUT, f"data-{abuse}")
    shutil.rmtree(data, ignore_errors=True)
    log_path = os.path.join(OUT, f"server-abuse{abuse}" + (f"-{n}" if n else "") + ".log")
    if os.path.exists(log_path):
        os.remove(log_path)
    load_before = loadavg()
    busy_before = busy_processes()
    server = Server(data, log_path=log_path, extra=["--set", f"cache.maxBytes={BUDGET}", "--set", "log.accessLog=true",
                                                    *SERVER_ARGS])
    abuse_counts = {}
    try:
        metas = {}
        for name in IMAGES + ([ABUSE_IMAGE] if ABUSE_IMAGE and ABUSE_IMAGE not in IMAGES else []):
            meta, _ = server.upload(os.path.join(BENCH_INPUTS, name))
            metas[name] = server.json(f"/images/{meta['id']}")
            status, _, _ = server.request("GET", f"/frames/{meta['id']}/0")  # the full-size poster
            assert status == 200
        time.sleep(2)
        mem = server.memory()
        baseline = mem["VmRSS"]
        plays = [(metas[IMAGES[i % len(IMAGES)]], RENDITIONS[i % len(RENDITIONS)]) for i in range(PLAYERS)]
        before = server.json("/stats")
        log_offset = os.path.getsize(log_path)
        poller = RSSPoller(server.pid)
        poller.start()
        log(f"bench-playback renditions: {PLAYERS} players, abuse {abuse}, {DURATION:.0f} s "
            f"(baseline RSS {mib(baseline)} MiB, budget {mib(BUDGET)} MiB)")
        t = time.monotonic()
        cpu_before = cpu_seconds(server.pid)
        proc = None
        if abuse == "1":
            first = metas[ABUSE_IMAGE or IMAGES[0]]
            manager = multiprocessing.Manager()
            abuse_counts = manager.dict()
            proc = multiprocessing.Process(target=abuser, args=(server.port, first["id"], first["frameCount"],
                                                                time.time() + DURATION, abuse_counts))
            proc.start()
        residency = []
        stop_polling = threading.Event()

        def poll_residency():
            start = time.monotonic()
            while not stop_polling.wait(2):
                row = {"t": round(time.monotonic() - start, 1)}
                for meta, query in plays:
                    status, _, body = server.request("GET", f"/images/{meta['id']}/cache?{query}")
                    doc = json.loads(body) if status == 200 else {}
                    row[query] = [len(doc.get("cachedFrames", [])), doc.get("window"), doc.get("playhead")]
                stats = server.json("/stats")
                row["entries"] = sorted(([e["rendition"], e["cachedFrames"], e["frameBytes"], e["window"]]
                                         for e in stats.get("images", [])), key=lambda e: -e[2])
                row["usedBytes"] = stats.get("usedBytes")
                residency.append(row)

        poll_thread = threading.Thread(target=poll_residency, daemon=True)
        if os.environ.get("RESIDENCY") == "1":
            poll_thread.start()
        (records, unanswered, behind), mid = with_halfway_stats(
            server, DURATION, lambda: asyncio.run(play_all(server.port, plays, DURATION)))
        if proc is not None:
            proc.join()
            abuse_counts = dict(abuse_counts)
            manager.shutdown()
        wall = time.monotonic() - t
        stop_polling.set()
        if poll_thread.is_alive():
            poll_thread.join()
        cpu = cpu_seconds(server.pid) - cpu_before
        poller.stop()
        after = server.json("/stats")
        posters = {}
        for meta, query in plays + [(m, "") for m in metas.values()]:
            key = (meta["id"], query)
            if key in posters:
                continue
            status, _, body = server.request("GET", f"/images/{meta['id']}/cache" + (f"?{query}" if query else ""))
            doc = json.loads(body) if status == 200 else {}
            posters[key] = {"status": status, "poster": 0 in doc.get("cachedFrames", []),
                            "rendition": doc.get("rendition"), "cachedFrames": len(doc.get("cachedFrames", []))}
        hwm_end, load_after, busy_after = end_of_run(server)
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)
    server_ms = access_times(log_path, log_offset)
    per_player = []
    all_after_first = []
    for i, ((meta, query), recs) in enumerate(zip(plays, records)):
        lat = [r[0] * 1000 for r in recs[1:]]
        all_after_first += lat
        srv = server_ms.get(f"player{i}", [])
        per_player.append({
            "query": query, "image": meta["id"][:12], "frames": len(recs),
            "ok": sum(1 for r in recs if r[3]), "bytes": sum(r[4] for r in recs),
            "fast": sum(1 for x in lat if x <= FAST_MS) / max(1, len(lat)),
            "p50": percentile(lat, 50), "p99": percentile(lat, 99), "max": max(lat) if lat else float("nan"),
            "first": recs[0][0] * 1000 if recs else float("nan"),
            "serverP99": percentile(srv, 99), "serverMax": max(srv) if srv else float("nan"),
            "serverOver15": sum(1 for x in srv if x > FAST_MS),
            "lateIndices": [i for i, r in enumerate(recs) if r[0] * 1000 > FAST_MS],
        })
    srv_players = [ms for rid, v in server_ms.items() if rid.startswith("player") for ms in v]
    srv_abuse = server_ms.get("abuser", [])
    keys = ("hits", "misses", "waits", "coalesced", "decodes", "prefetches", "framesDecoded", "resumes", "notKept",
            "evictions")
    delta = {k: after[k] - before[k] for k in keys}
    rdelta = {k: after["renditions"][k] - before["renditions"].get(k, 0) for k in ("sharedRenders", "replaced")}
    return {
        "abuse": abuse, "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "commit": head_commit(),
        "machine": machine(), "binary": BINARY, "durationS": DURATION, "wallS": wall, "budgetBytes": BUDGET,
        "images": {name: {k: m[k] for k in ("width", "height", "frameCount", "durationMs")} for name, m in metas.items()
                   if name in IMAGES},
        "abuseImage": ABUSE_IMAGE or IMAGES[0], "abuseFrames": ABUSE_FRAMES, "serverArgs": SERVER_ARGS,
        "players": per_player, "unanswered": len(unanswered), "behind": behind,
        "served": sum(len(r) for r in records), "ok": sum(p["ok"] for p in per_player),
        "fastShare": sum(1 for x in all_after_first if x <= FAST_MS) / max(1, len(all_after_first)),
        "afterFirstMs": [round(x, 3) for x in all_after_first],
        "latencyMs": {"p50": percentile(all_after_first, 50), "p90": percentile(all_after_first, 90),
                      "p99": percentile(all_after_first, 99), "p999": percentile(all_after_first, 99.9),
                      "max": max(all_after_first)},
        "serverMs": {"players": {"n": len(srv_players), "p50": percentile(srv_players, 50),
                                 "p99": percentile(srv_players, 99), "max": max(srv_players) if srv_players else 0,
                                 "over15": sum(1 for x in srv_players if x > FAST_MS)},
                     "abuser": {"n": len(srv_abuse), "p50": percentile(srv_abuse, 50),
                                "p99": percentile(srv_abuse, 99), "max": max(srv_abuse) if srv_abuse else 0}},
        "abuser": abuse_counts, "residency": residency, "stats": delta, "renditions": rdelta, "renditionsAfter": after["renditions"],
        "midway": {k: mid.get(k) for k in ("usedBytes", "frameBytes", "decoderBytes", "cachedFrames", "entries")},
        "midwayRenditions": mid.get("renditions"),
        "after": {k: after[k] for k in ("usedBytes", "budgetBytes", "cachedFrames", "entries")},
        "posters": [{"image": k[0][:12], "query": k[1] or "full", **v} for k, v in posters.items()],
        "serverCpuSeconds": cpu,
        "rss": {"baseline": baseline, "peak": poller.peak, "peakAnon": poller.peak_anon, "hwmEnd": hwm_end,
                "limit": baseline + 1.1 * BUDGET, "samples": poller.samples},
        "load": {"before": load_before, "after": load_after, "busyBefore": busy_before, "busyAfter": busy_after},
    }


def render(results):
    met = lambda ok: "met" if ok else "**not met**"  # noqa: E731
    r0 = results[0]
    imgs = ", ".join(f"`{n}` {v['width']}×{v['height']}, {v['frameCount']} frames, {v['durationMs'] / 1000:g} s"
                     for n, v in r0["images"].items())
    unloaded = next((r for r in results if r["abuse"] == "0"), None)
    lines = [f"{r0['date']}, commit {r0['commit']}, {r0['machine']}. {len(r0['players'])} players on {imgs}; "
             f"budget {mib(r0['budgetBytes'])} MiB; {r0['durationS']:.0f} s per run, each run a fresh server"
             + (f"; server flags {' '.join(r0['serverArgs'])}" if r0.get("serverArgs") else "")
             + (f"; the abuser on `{r0['abuseImage']}` (frames: {r0['abuseFrames']})" if any(r["abuse"] == "1" for r in results) else "")
             + ".", "",
             "| measure | " + " | ".join("with the abuser" if r["abuse"] == "1" else "players alone" for r in results)
             + " | goal |", "|---|" + "---:|" * len(results) + "---|"]

    def row(name, fn, goal=""):
        lines.append(f"| {name} | " + " | ".join(fn(r) for r in results) + f" | {goal} |")

    row("frames served (all OK) / unanswered / behind real time at the end",
        lambda r: f"{r['served']:,} ({'all' if r['ok'] == r['served'] else r['ok']}) / {r['unanswered']} / {sum(r['behind'])}")
    row("frames after each player's first answered within 15 ms (client)",
        lambda r: f"{r['fastShare']:.2%} {met(r['fastShare'] >= 0.99)}", "≥ 99%")
    row("client latency p50 / p90 / p99 / p99.9 / max (ms)",
        lambda r: " / ".join(f"{r['latencyMs'][k]:.1f}" for k in ("p50", "p90", "p99", "p999", "max")))
    if unloaded:
        row("players' p99 ÷ unloaded p99",
            lambda r: f"{r['latencyMs']['p99'] / unloaded['latencyMs']['p99']:.2f}×"
                      + (f" {met(r['latencyMs']['p99'] <= 2 * unloaded['latencyMs']['p99'])}" if r["abuse"] == "1" else ""),
            "≤ 2× (abuse)")
    row("server time (access log `ms=`) of players' frames: p50 / p99 / max; over 15 ms",
        lambda r: f"{r['serverMs']['players']['p50']:.2f} / {r['serverMs']['players']['p99']:.1f} / "
                  f"{r['serverMs']['players']['max']:.0f}; {r['serverMs']['players']['over15']:,}")
    row("abuser: requests (cycles of the widths) / server ms p50 / p99",
        lambda r: (f"{r['abuser'].get('requests', 0):,} ({r['abuser'].get('cycles', 0):.2f}) / "
                   f"{r['serverMs']['abuser']['p50']:.1f} / {r['serverMs']['abuser']['p99']:.1f}") if r["abuse"] == "1" else "–")
    row("hits / misses / coalesced", lambda r: f"{r['stats']['hits']:,} / {r['stats']['misses']:,} / {r['stats']['coalesced']:,}")
    row("decodes (decode-ahead) / frames decoded / evictions",
        lambda r: f"{r['stats']['decodes']:,} ({r['stats']['prefetches']:,}) / {r['stats']['framesDecoded']:,} / "
                  f"{r['stats']['evictions']:,}")
    row("renditions: sharedRenders / replaced during the run",
        lambda r: f"{r['renditions']['sharedRenders']:,} / {r['renditions']['replaced']:,}")
    row("renditions halfway: entries / decodeAhead / onDemand",
        lambda r: "{entries} / {decodeAhead} / {onDemand}".format(**(r["midwayRenditions"] or
                                                                     {"entries": "?", "decodeAhead": "?", "onDemand": "?"})))
    row("server CPU: cores on average", lambda r: f"{r['serverCpuSeconds'] / r['wallS']:.2f}")
    row("RSS baseline / peak (limit), MiB",
        lambda r: f"{mib(r['rss']['baseline'])} / {mib(r['rss']['peak'])} ({mib(r['rss']['limit'])}) "
                  f"{met(r['rss']['peak'] <= r['rss']['limit'])}", "≤ baseline + 1.1 × budget")
    row("posters cached at the end (played renditions + full size)",
        lambda r: f"{sum(1 for p in r['posters'] if p['poster'])} of {len(r['posters'])} "
                  f"{met(all(p['poster'] for p in r['posters']))}", "all (abuse)")
    row("load average before / after", lambda r: f"{r['load']['before']} / {r['load']['after']}")
    lines += ["", "Per player (client latency of frames after the first; server `ms=` from the access log):", "",
              "| rendition | " + " | ".join(("abuse: " if r["abuse"] == "1" else "alone: ") + "≤ 15 ms, p99 / max ms, server p99 ms, KiB/frame, poster"
                                          for r in results) + " |",
              "|---|" + "---|" * len(results)]
    for i, p in enumerate(r0["players"]):
        cells = []
        for r in results:
            q = r["players"][i]
            poster = next((x["poster"] for x in r["posters"] if x["query"] == q["query"]), None)
            cells.append(f"{q['fast']:.1%}, {q['p99']:.1f} / {q['max']:.0f}, {q['serverP99']:.1f}, "
                         f"{q['bytes'] / max(1, q['frames']) / 1024:.1f}, {'yes' if poster else 'no'}")
        lines.append(f"| `{p['query']}` | " + " | ".join(cells) + " |")
    lines += pooled(results)
    lines += ["", "CPU of other processes over 1 s before each run: "
              + "; ".join(f"{'abuse' if r['abuse'] == '1' else 'alone'}: {r['load']['busyBefore']}" for r in results) + "."]
    return "\n".join(lines)


def pooled(results):
    """With more than one run of a kind (`RUNS="0 1 0 1 0 1"`): the players' latencies of all
    runs of each kind taken together. A p99 of one run falls among the few hundred frames of the
    first loop, when every rendition's frames are made for the first time, and moves with how
    the players' starts meet the decode threads; the p99 of several runs' frames is the
    steadier estimate of the same quantity."""
    kinds = {}
    for r in results:
        kinds.setdefault(r["abuse"], []).append(r)
    if not any(len(v) > 1 for v in kinds.values()) or any("afterFirstMs" not in r for r in results):
        return []
    lat = {k: [x for r in v for x in r["afterFirstMs"]] for k, v in kinds.items()}
    p99 = {k: percentile(v, 99) for k, v in lat.items()}
    out = ["", "All runs of each kind together (frames after each player's first):", "",
           "| kind | runs | frames | within 15 ms | p99 (ms) | p99 of each run (ms) |", "|---|---:|---:|---:|---:|---|"]
    for k, v in kinds.items():
        share = sum(1 for x in lat[k] if x <= FAST_MS) / max(1, len(lat[k]))
        each = ", ".join(f"{r['latencyMs']['p99']:.1f}" for r in v)
        out.append(f"| {'with the abuser' if k == '1' else 'players alone'} | {len(v)} | {len(lat[k]):,} | "
                   f"{share:.2%} | {p99[k]:.1f} | {each} |")
    if "0" in p99 and "1" in p99:
        ratio = p99["1"] / p99["0"]
        out += ["", f"Players' p99 with the abuser ÷ alone, all runs together: **{ratio:.2f}×** "
                f"({'met' if ratio <= 2 else 'not met'}; goal ≤ 2×)."]
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    if os.environ.get("RENDER_ONLY") == "1":
        with open(os.path.join(OUT, "result.json")) as f:
            print(render(json.load(f)))
        return
    build()
    ensure_inputs()
    results = [run_one(a, n) for n, a in enumerate(RUNS)]
    with open(os.path.join(OUT, "result.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(render(results))


if __name__ == "__main__":
    main()
