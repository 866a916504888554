"""make soak MINUTES=N: a mixed load against one `flipbook serve` on loopback for N minutes
(default 30), reported minute by minute.

The server runs with Flipbook's defaults (access log on, to a file) except: a cache budget of
SOAK_CACHE_MB (default 64) MiB, a decode-memory budget of SOAK_DECODE_MB (default 1024) MiB
(`limits.maxDecodeBytes`: a 49 MP frame needs about 790 MB), an admin token (for deletes and
the pressure signal), and SERVER_ARGS. Before the clock starts, 16 animations made by the playback benchmark's generator
(scripts/benchlib/animations.py: GIF, WebP and APNG from real encoders) are uploaded; they
stay for the whole run. Then, all at once (clients.py):

- 16 players, each playing a random one of those animations in real time for 15–45 s, then
  another (half the time on a new connection);
- 4 metadata pollers, every second, with If-None-Match (and the delay table every fifth time);
- 2 clients asking for the frame at a random time (`?t=`), four times a second;
- an uploader, every 2 s: new valid GIF/APNG/WebP files (some as named images, replaced as the
  names cycle), damaged copies of them (cut short, bytes overwritten), bombs (an IDAT that
  inflates to 64 MiB past a 64×64 image, a 65535×65535 canvas, 12,000 frames, 2.4 G pixels in
  all) and, every 60th upload, a legal 7000×7000 (49 MP) frame; each accepted upload is then asked
  for its first and last frames;
- a deleter removing uploads older than 60 s, and asking for deleted ones (404);
- a memory-pressure warning every 20 s;
- one pipelining client that never reads its answers, and 8 slowloris connections sending a
  request head one byte every 2 s (both reconnect whenever the server closes them).

Each minute: well-behaved requests, errors (5xx, an answer the client did not expect, a
connection that failed), frame latency p50/p99 (players) and p99 of everything well-behaved,
the server's RSS (VmRSS from /proc every 250 ms: the minute's floor, its peak and its last
sample), its CPU, and the cache's bytes (/stats). The limit RSS is held against is baseline
(after the 16 uploads, idle) + cache budget × 1.1 + the decode-memory budget
(`decodeMemory.capacityBytes` in /stats; 0 before it existed).

Goals: no 5xx and no error for well-behaved clients; p99 flat; after warm-up, RSS flat and
within the limit:

- flat: memory outside the frame cache does not grow. Each minute's OUTSIDE-CACHE FLOOR — the
  lowest of its ~240 samples of RSS less the cache's bytes (/stats `usedBytes`, read together with
  RSS every 250 ms) — stays within 5% over the last 10 minutes (max/min − 1 ≤ 5%);
- within the limit: every minute's PEAK (the highest raw RSS sample) is under the limit.

Why this rule. RSS in this mix is the sum of two things that move differently. The cache holds
up to its budget and no more (its own count, checked by its tests); a pressure warning every 20 s
purges most of it and it refills, so its share of RSS is a saw-tooth between a few MiB and the
budget. A 49 MP decode adds ~300 MiB for a few seconds, bounded by the decode-memory budget. A
leak is neither: memory that is never given back, outside both budgets. The raw RSS floor mixes
the first into the measure — it lands wherever the cache's refill stands at the minute's lowest
sample (a quiet 30-minute run read 17.3% spread with a falling floor, no growth at all; a
49 MP first frame used to shrink the cache for 20 s and lowered the floor of those minutes) — so
it fails without a leak, and a budget-sized refill could hide one. RSS less the cache's bytes
removes the saw-tooth sample by sample (an 8-minute run at 6422044, before the cache stopped
planning for 49 MP canvases: the raw floor moved 71–83 MiB while the outside-cache floor stayed
68.6–69.2 MiB); its lowest sample is taken between decodes
and after the heap was trimmed, so transient decode memory does not lift it, and memory that is
kept — a leak, or freed memory never handed back — raises it minute after minute. 5% of the
~70 MiB it reads is 3.5 MiB: a leak of a third of a MiB a minute fails within the last 10
minutes. The raw floor and peak stay in the table for information, and the peak (the cache,
the decodes and everything else at once) is held against the limit. The table also gives the
slope of the outside-cache floor (least squares, MiB per minute); the plot shows raw floor and
peak, the cache's bytes and the outside-cache floor.

Writes bench-out/soak/result.json and bench-out/soak/soak.png (matplotlib); with BENCH_WRITE=1
(the default) copies the plot to docs/soak.png and writes the "## Soak" section of docs/benchmarks/soak.md.
RENDER_ONLY=1 rewrites those from result.json. Environment: MINUTES, SOAK_CACHE_MB, SERVER_ARGS,
SOAK_DECODE_MB, SKIP_BUILD=1 (reuse .build-playback/release/flipbook), BENCH_WRITE, SOAK_SEED.
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

from benchlib import REPO, animations, head_commit, log
from benchlib.machine import loadavg, machine
from benchlib.process import cpu_seconds, proc_memory
from benchlib.sampler import busy_processes
from benchlib.server import Server, build
from benchlib.splice import replace_section
from benchlib.stats import mib, percentile
from bench.soak.clients import ADMIN_TOKEN, Recorder, Soak

OUT = os.path.join(REPO, "bench-out", "soak")
PLAYBACK_INPUTS = os.path.join(REPO, "bench-out", "playback", "inputs")
MINUTES = float(os.environ.get("MINUTES", "30"))
CACHE_MB = int(os.environ.get("SOAK_CACHE_MB", "64"))
DECODE_MB = int(os.environ.get("SOAK_DECODE_MB", "1024"))
SERVER_ARGS = os.environ.get("SERVER_ARGS", "").split()
SEED = int(os.environ.get("SOAK_SEED", "1"))
WRITE = os.environ.get("BENCH_WRITE", "1") == "1"
LIBRARY_SIZE = 16
WARMUP_MINUTES = 5


class Sampler(threading.Thread):
    """Every 250 ms, together: the server's RSS (/proc) and the cache's bytes, working reserve and
    decode-memory reservations (/stats); its CPU. Bucketed by minute (floor, peak, last sample)
    and kept whole in `samples` (seconds since the start, RSS, cache bytes, decode bytes)."""

    def __init__(self, server, start):
        super().__init__(daemon=True)
        self.server = server
        self.start_time = start
        self.minutes = {}
        self.samples = []
        self.stop_flag = threading.Event()

    def bucket(self):
        minute = int((time.monotonic() - self.start_time) // 60)
        return self.minutes.setdefault(minute, {"rssPeak": 0, "rssFloor": None, "rssEnd": 0, "anonEnd": 0,
                                                "fileEnd": 0, "samples": 0, "otherFloor": None,
                                                "cpuStart": None, "cpuEnd": None, "cacheUsed": 0,
                                                "cacheFloor": None, "reservePeak": 0,
                                                "decodeUsed": 0, "decodeWaits": None})

    def run(self):
        while not self.stop_flag.is_set():
            # RSS is read before and after /stats and the higher kept: the cache counts a frame
            # after its memory is allocated and uncounts it before the heap is trimmed, so RSS
            # less the cache's bytes can only be overstated by the gap, never understated (the
            # floor would take an understated sample).
            try:
                before = proc_memory(self.server.pid)
            except (OSError, KeyError):
                break
            try:
                stats = self.server.json("/stats")
            except (OSError, RuntimeError, ValueError):
                stats = None
            try:
                mem = proc_memory(self.server.pid)
                cpu = cpu_seconds(self.server.pid)
            except (OSError, KeyError):
                break
            b = self.bucket()
            rss = max(mem["VmRSS"], before["VmRSS"])
            b["rssPeak"] = max(b["rssPeak"], rss)
            b["rssFloor"] = rss if b["rssFloor"] is None else min(b["rssFloor"], rss)
            b["samples"] += 1
            b["rssEnd"], b["anonEnd"], b["fileEnd"] = rss, mem.get("RssAnon", 0), mem.get("RssFile", 0)
            if b["cpuStart"] is None:
                b["cpuStart"] = cpu
            b["cpuEnd"] = cpu
            if stats is not None:
                cache = stats.get("usedBytes", 0)
                decode = (stats.get("decodeMemory") or {}).get("usedBytes", 0)
                other = rss - cache
                b["cacheUsed"] = max(b["cacheUsed"], cache)
                b["cacheFloor"] = cache if b["cacheFloor"] is None else min(b["cacheFloor"], cache)
                b["reservePeak"] = max(b["reservePeak"], stats.get("workingReserveBytes", 0))
                b["decodeUsed"] = max(b["decodeUsed"], decode)
                b["otherFloor"] = other if b["otherFloor"] is None else min(b["otherFloor"], other)
                self.samples.append([round(time.monotonic() - self.start_time, 2), rss, cache, decode])
            time.sleep(0.25)


def library(server):
    manifest = animations.inputs(PLAYBACK_INPUTS)
    rng = random.Random(SEED)
    chosen = rng.sample(manifest, LIBRARY_SIZE)
    metas = []
    for item in chosen:
        meta, _ = server.upload(os.path.join(PLAYBACK_INPUTS, item["name"]))
        metas.append(server.json(f"/images/{meta['id']}"))
    return metas


def run():
    os.makedirs(OUT, exist_ok=True)
    build()
    data = os.path.join(OUT, "data")
    shutil.rmtree(data, ignore_errors=True)
    load_before, busy_before = loadavg(), busy_processes()
    extra = ["--set", "log.accessLog=true", "--set", "log.level=notice",
             "--set", f"limits.maxDecodeBytes={DECODE_MB << 20}",
             "--set", f"auth.adminToken={ADMIN_TOKEN}"] + SERVER_ARGS
    server = Server(data, budget=CACHE_MB << 20, extra=extra, log_path=os.path.join(OUT, "server.log"))
    try:
        metas = library(server)
        time.sleep(2)
        baseline = server.memory()["VmRSS"]
        stats = server.json("/stats")
        budget = stats["budgetBytes"]
        decode_budget = (stats.get("decodeMemory") or {}).get("capacityBytes", 0)
        limit = baseline + budget * 1.1 + decode_budget
        log(f"soak: {MINUTES:g} minutes; baseline RSS {mib(baseline)} MiB, limit {mib(limit)} MiB")
        start = time.monotonic()
        recorder = Recorder(start)
        sampler = Sampler(server, start)
        sampler.start()
        cpu_before = cpu_seconds(server.pid)

        async def main():
            loop = asyncio.get_running_loop()
            end = loop.time() + MINUTES * 60
            await Soak(server.port, metas, recorder, end, OUT, seed=SEED).run()
        asyncio.run(main())
        wall = time.monotonic() - start
        cpu = cpu_seconds(server.pid) - cpu_before
        sampler.stop_flag.set()
        sampler.join()
        final_stats = server.json("/stats")
        alive = server.proc.poll() is None
    finally:
        server.stop()
    commit = head_commit()
    minutes = []
    for m in range(int(MINUTES)):
        r = recorder.minutes.get(m)
        s = sampler.minutes.get(m, {})
        if r is None:
            continue
        frames = r["latencyMs"].get("frame", [])
        every = [x for values in r["latencyMs"].values() for x in values]
        cpu_minute = (s.get("cpuEnd") or 0) - (s.get("cpuStart") or 0)
        minutes.append({
            "minute": m + 1, "requests": r["requests"], "errors": r["errors"], "status5xx": r["status5xx"],
            "connectionFailures": r["connectionFailures"], "unexpected": r["unexpected"],
            "frames": len(frames), "frameP50": percentile(frames, 50), "frameP99": percentile(frames, 99),
            "allP99": percentile(every, 99),
            "uploadP50": percentile(r["latencyMs"].get("upload", []), 50),
            "rssPeak": s.get("rssPeak", 0), "rssFloor": s.get("rssFloor") or 0, "rssSamples": s.get("samples", 0),
            "rssEnd": s.get("rssEnd", 0), "anonEnd": s.get("anonEnd", 0),
            "fileEnd": s.get("fileEnd", 0), "cpuPercent": cpu_minute / 60 * 100,
            "cacheUsed": s.get("cacheUsed", 0), "cacheFloor": s.get("cacheFloor") or 0,
            "otherFloor": s.get("otherFloor") or 0, "reservePeak": s.get("reservePeak", 0),
            "decodeUsed": s.get("decodeUsed", 0),
            "statuses": {str(k): v for k, v in sorted(r["statuses"].items())},
        })
    return {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "commit": commit, "machine": machine(),
        "minutes": MINUTES, "wallS": wall, "serverCpuS": cpu, "serverAlive": alive,
        "cacheBudget": budget, "decodeBudget": decode_budget, "baseline": baseline, "limit": limit,
        "serverArgs": SERVER_ARGS, "seed": SEED, "perMinute": minutes,
        "samples": sampler.samples, "uploads": dict(recorder.uploads), "hostile": dict(recorder.hostile),
        "errorSamples": recorder.error_samples,
        "statsAfter": {k: final_stats.get(k) for k in ("usedBytes", "hits", "misses", "decodes", "evictions",
                                                                "refusedQueueFull", "framesDecoded")},
        "load": {"before": load_before, "after": loadavg(), "busyBefore": busy_before,
                 "busyAfter": busy_processes()},
    }


def slope(xs, ys):
    """Least-squares slope of ys over xs (nan with fewer than two points)."""
    if len(xs) < 2:
        return float("nan")
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else float("nan")


def spread(values):
    """(max − min) / min, or nan."""
    return (max(values) - min(values)) / min(values) if values and min(values) else float("nan")


def warmup_minutes(rows):
    """The warm-up the rules leave out: WARMUP_MINUTES, or a third of a shorter run (so that a
    `MINUTES=4` check run still has minutes after its warm-up to judge: 1 of its 4)."""
    return min(WARMUP_MINUTES, len(rows) // 3)


def last_minutes(rows):
    """The minutes the flat rule looks at: the last 10 (a short check run: those after warm-up)."""
    after = [r for r in rows if r["minute"] > warmup_minutes(rows)]
    return rows[-10:] if len(rows) >= 10 else (after or rows)


def goals(result):
    """(name, value, met) rows; met is None for a row given for information only."""
    rows = result["perMinute"]
    after = [r for r in rows if r["minute"] > warmup_minutes(rows)]
    last = last_minutes(rows)
    total5xx = sum(r["status5xx"] for r in rows)
    errors = sum(r["errors"] for r in rows)
    floors = [r.get("rssFloor", 0) for r in last]
    outside = [r.get("otherFloor", 0) for r in last]
    outside_spread = spread(outside)
    floor_spread = spread(floors)
    peak_spread = spread([r["rssPeak"] for r in last])
    outside_slope = slope([r["minute"] for r in last], [f / 2**20 for f in outside])
    within = max(r["rssPeak"] for r in rows) <= result["limit"] if rows else False
    third = max(1, len(after) // 3)
    early = [r["frameP99"] for r in after[:third]]
    late = [r["frameP99"] for r in after[-third:]]
    trend = (sum(late) / len(late)) / (sum(early) / len(early)) if early and late and sum(early) else float("nan")
    return [
        ("no 5xx", f"{total5xx}", total5xx == 0),
        ("no error for well-behaved clients (5xx, unexpected answer, failed connection)", f"{errors}", errors == 0),
        ("RSS flat: each minute's floor of RSS less the cache's bytes (lowest 250 ms sample) of the last 10 "
         "minutes within 5% of each other",
         f"{outside_spread * 100:.1f}% ({mib(min(outside)) if outside else '-'}–{mib(max(outside)) if outside else '-'} MiB)",
         outside_spread <= 0.05),
        ("RSS within the limit: every minute's peak", f"peak {mib(max(r['rssPeak'] for r in rows))} of "
         f"{mib(result['limit'])} MiB", within),
        ("(information) the last 10 minutes' floor of RSS less the cache: slope", f"{outside_slope:+.2f} MiB/minute",
         None),
        ("(information) the last 10 minutes' raw RSS floors: spread",
         f"{floor_spread * 100:.1f}% ({mib(min(floors)) if floors else '-'}–{mib(max(floors)) if floors else '-'} MiB)",
         None),
        ("(information) the last 10 minutes' raw RSS peaks: spread", f"{peak_spread * 100:.1f}%", None),
        ("p99 flat: frame p99 of the last third after warm-up ≤ 1.5× the first third's", f"{trend:.2f}×",
         trend <= 1.5),
    ]


def plot(result, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = result["perMinute"]
    x = [r["minute"] for r in rows]
    fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(9, 11), sharex=True)
    top.plot(x, [r["frameP50"] for r in rows], marker="o", ms=3, label="frame p50")
    top.plot(x, [r["frameP99"] for r in rows], marker="o", ms=3, label="frame p99")
    top.plot(x, [r["allP99"] for r in rows], ls="--", label="p99, every well-behaved request")
    top.set_yscale("log")
    top.set_ylabel("latency (ms)")
    top.legend(loc="upper left", fontsize=8)
    top.grid(True, which="both", alpha=0.3)
    errors = [r["errors"] for r in rows]
    if any(errors):
        twin = top.twinx()
        twin.bar(x, errors, color="red", alpha=0.3, label="errors")
        twin.set_ylabel("errors")
    mib = 1 << 20
    middle.plot(x, [r["rssPeak"] / mib for r in rows], marker="o", ms=3, label="RSS, peak of the minute")
    middle.axhline(result["limit"] / mib, color="red", ls="--",
                   label="limit: baseline + cache budget × 1.1 + decode budget")
    middle.set_ylim(bottom=0)
    middle.set_ylabel("MiB")
    middle.legend(loc="center right", fontsize=8)
    middle.grid(True, alpha=0.3)
    bottom.plot(x, [r.get("rssFloor", 0) / mib for r in rows], marker="o", ms=3, label="RSS, floor of the minute")
    bottom.plot(x, [r.get("otherFloor", 0) / mib for r in rows], marker="o", ms=3,
                label="RSS less the cache's bytes, floor of the minute (the flat rule)")
    bottom.plot(x, [r["cacheUsed"] / mib for r in rows], label="frame cache bytes, highest of the minute")
    bottom.plot(x, [r.get("cacheFloor", 0) / mib for r in rows], ls=":", label="frame cache bytes, lowest of the minute")
    for axis in (top, middle, bottom):
        axis.axvline(warmup_minutes(rows) + 0.5, color="gray", ls=":")
    last = last_minutes(rows)
    floors = [r.get("otherFloor", 0) for r in last]
    if floors and min(floors):
        low = min(floors) / mib
        bottom.fill_between([last[0]["minute"], last[-1]["minute"]], low, low * 1.05, color="tab:green",
                            alpha=0.25, label="flat: the last 10 floors outside the cache within 5% of the lowest")
    bottom.set_ylim(bottom=0)
    bottom.set_ylabel("MiB")
    bottom.set_xlabel("minute (dotted: end of warm-up)")
    bottom.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, fontsize=8)
    bottom.grid(True, alpha=0.3)
    fig.suptitle(f"flipbook soak, {result['minutes']:g} min at {result['commit']} ({result['date']})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def render(result):
    lines = [
        f"`make soak MINUTES={result['minutes']:g}` at {result['commit']} ({result['date']}; {result['machine']}; "
        f"load average {result['load']['before']} before, {result['load']['after']} after; other work before: "
        f"{result['load']['busyBefore']}). One `flipbook serve` with its defaults (access log on, to a file), "
        f"a {mib(result['cacheBudget'])} MiB cache budget"
        + (f", a {mib(result['decodeBudget'])} MiB decode-memory budget" if result["decodeBudget"] else "")
        + (f", `{' '.join(result['serverArgs'])}`" if result["serverArgs"] else "")
        + "; the load mix is described at the top of `scripts/bench/soak/__main__.py` (players, metadata polling, `?t=`, uploads "
        "of valid, damaged and bomb files, deletes, a pressure warning every 20 s, a pipelining client that never "
        "reads, 8 slowloris connections).",
        "",
        "![soak: latency and RSS per minute](../soak.png)",
        "",
        "| goal | result | met |",
        "|---|---|---|",
    ]
    for name, value, met in goals(result):
        lines.append(f"| {name} | {value} | {'—' if met is None else 'yes' if met else '**no**'} |")
    lines += [
        "",
        "RSS is judged by two numbers per minute, from samples taken every 250 ms of VmRSS together with the "
        "cache's bytes (`usedBytes` in /stats): the floor of RSS less the cache's bytes (the lowest sample) must "
        "stay within 5% over the last 10 minutes, and the raw peak under the limit. The cache is bounded by its "
        "budget and is a saw-tooth here: each pressure warning (three a minute) purges most of it and it refills, "
        "so a raw RSS floor lands wherever the refill stands and moves without any growth, while a budget-sized "
        "refill could hide some. Taking the cache's bytes out sample by sample leaves what a leak would grow — "
        "memory outside the cache that is never given back — and the lowest such sample is taken between decodes "
        "(a 49 MP decode holds about 300 MiB for seconds, within the decode-memory budget) and after the heap was "
        "trimmed. The raw floors and peaks stay in the table for information (the argument is in "
        "`scripts/bench/soak/__main__.py`).",
        "",
        f"Baseline RSS {mib(result['baseline'])} MiB (16 animations uploaded, idle); limit "
        f"{mib(result['limit'])} MiB. Server CPU {result['serverCpuS']:.0f} s in {result['wallS'] / 60:.1f} min. "
        f"Uploads by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(result["uploads"].items())) + ". Hostile "
        "clients: " + ", ".join(f"{k} {v}" for k, v in sorted(result["hostile"].items())) + ".",
        "",
        "| minute | requests | errors | 5xx | frames | frame p50 ms | frame p99 ms | all p99 ms "
        "| RSS less cache, floor MiB | RSS floor MiB | RSS peak MiB | cache MiB, low–high | server CPU |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["perMinute"]:
        lines.append(f"| {r['minute']} | {r['requests']:,} | {r['errors']} | {r['status5xx']} | {r['frames']:,} | "
                     f"{r['frameP50']:.2f} | {r['frameP99']:.1f} | {r['allP99']:.1f} | {mib(r.get('otherFloor', 0))} | "
                     f"{mib(r.get('rssFloor', 0))} | {mib(r['rssPeak'])} | {mib(r.get('cacheFloor', 0))}–"
                     f"{mib(r['cacheUsed'])} | {r['cpuPercent']:.0f}% |")
    if result["errorSamples"]:
        lines += ["", "Errors seen (first 50):", ""] + [f"- {e}" for e in result["errorSamples"]]
    return "\n".join(lines)


def main():
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "result.json")
    if os.environ.get("RENDER_ONLY") == "1":
        with open(path) as f:
            result = json.load(f)
    else:
        result = run()
        with open(path, "w") as f:
            json.dump(result, f, indent=1)
    plot(result, os.path.join(OUT, "soak.png"))
    report = render(result)
    print(report)
    if WRITE:
        os.makedirs(os.path.join(REPO, "docs"), exist_ok=True)
        shutil.copy(os.path.join(OUT, "soak.png"), os.path.join(REPO, "docs", "soak.png"))
        replace_section(os.path.join(REPO, "docs", "benchmarks", "soak.md"), "Soak", report)
    failed = [name for name, _, met in goals(result) if met is False]
    if failed:
        log("soak: goals not met: " + "; ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
