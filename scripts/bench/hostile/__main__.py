"""make bench-hostile: uploads and first-frame requests of legal 49 MP frames (7000×7000, under
limits.maxFramePixels) against `flipbook serve`, with the decode threads at 4× and 16× this
machine's cores, to check that memory is bounded by configuration, not by the thread count:

    peak RSS ≤ baseline + cache budget × 1.1 + decode-memory budget

Inputs (made once into bench-out/hostile/inputs): a one-colour GIF (a few tens of KB of LZW), an
8-bit RGBA APNG (zlib), and lossy WebPs of a gradient (cwebp at several qualities, so each upload
is new bytes); GIF and APNG uploads are made unique by bytes after their end marker. Each run: a
fresh server with a 64 MiB cache, a DECODE_MB (1024) MiB decode-memory budget and THREADS decode
threads; CLIENTS (6) clients each upload a new 49 MP image, then ask for its first frame, then for
the first frame of an earlier upload, for SECONDS (60) seconds; 429 answers are retried after
their Retry-After. The server's RSS is polled every 50 ms.

Writes bench-out/hostile/result.json and, with BENCH_WRITE=1 (the default), the "## Hostile
files" section of docs/benchmarks/hardening.md. Environment: SECONDS, CLIENTS, DECODE_MB, MULTIPLIERS ("4 16"),
SKIP_BUILD=1, BENCH_WRITE.
"""
import datetime
import http.client
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import threading
import time
import zlib

from benchlib import REPO, head_commit, inputs
from benchlib.machine import loadavg, machine
from benchlib.sampler import RSSPoller
from benchlib.server import Server, build
from benchlib.splice import publish
from benchlib.stats import mib

OUT = os.path.join(REPO, "bench-out", "hostile")
SIDE = 7000
DURATION = float(os.environ.get("SECONDS", "60"))
CLIENTS = int(os.environ.get("CLIENTS", "6"))
DECODE_MB = int(os.environ.get("DECODE_MB", "1024"))
CACHE_MB = 64
MULTIPLIERS = [int(m) for m in os.environ.get("MULTIPLIERS", "4 16").split()]
WRITE = os.environ.get("BENCH_WRITE", "1") == "1"


def make_inputs():
    """{name: bytes} of the 49 MP inputs."""
    directory = os.path.join(OUT, "inputs")
    os.makedirs(directory, exist_ok=True)
    files = {}
    path = os.path.join(directory, "frame.gif")
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(inputs.large_frame_gif(SIDE))
    files["gif"] = path
    path = os.path.join(directory, "frame.apng")
    if not os.path.exists(path):
        row = b"\x00" + bytes((40, 90, 160, 255)) * SIDE
        out = bytearray(inputs.png_signature())
        out += inputs.png_chunk(b"IHDR", struct.pack(">IIBBBBB", SIDE, SIDE, 8, 6, 0, 0, 0))
        out += inputs.png_chunk(b"acTL", struct.pack(">II", 1, 0))
        out += inputs.png_chunk(b"fcTL", struct.pack(">IIIIIHHBB", 0, SIDE, SIDE, 0, 0, 1, 10, 0, 0))
        out += inputs.png_chunk(b"IDAT", zlib.compress(row * SIDE, 1))
        out += inputs.png_chunk(b"IEND", b"")
        with open(path, "wb") as f:
            f.write(out)
    files["apng"] = path
    source = os.path.join(directory, "gradient.png")
    if not os.path.exists(source):
        subprocess.run(["convert", "-size", f"{SIDE}x{SIDE}", "gradient:#204080-#e0a030", source], check=True)
    for quality in (70, 75, 80, 85):
        path = os.path.join(directory, f"frame-q{quality}.webp")
        if not os.path.exists(path):
            subprocess.run(["cwebp", "-quiet", "-q", str(quality), source, "-o", path], check=True)
        files[f"webp-q{quality}"] = path
    return {name: open(path, "rb").read() for name, path in files.items()}


def request(port, method, path, body=None, timeout=600):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body)
        r = conn.getresponse()
        return r.status, r.getheader("Retry-After"), r.read()
    finally:
        conn.close()


def client(port, files, end, counts, ids, lock, seed):
    rng = random.Random(seed)
    names = sorted(files)
    n = 0
    while time.monotonic() < end:
        n += 1
        name = rng.choice(names)
        data = files[name]
        if not name.startswith("webp"):
            data = data + struct.pack(">QI", seed, n)  # after the end marker: a new content id
        status, retry, body = request(port, "POST", "/images", body=data)
        with lock:
            counts[f"upload {status}"] = counts.get(f"upload {status}", 0) + 1
        if status == 429:
            time.sleep(float(retry or 1))
            continue
        if status not in (200, 201):
            continue
        image_id = json.loads(body)["id"]
        with lock:
            ids.append(image_id)
            earlier = rng.choice(ids)
        for target in (image_id, earlier):
            for _ in range(20):
                status, retry, _ = request(port, "GET", f"/frames/{target}/0")
                with lock:
                    counts[f"first frame {status}"] = counts.get(f"first frame {status}", 0) + 1
                if status != 429:
                    break
                time.sleep(float(retry or 1))


def run_one(threads, files):
    data = os.path.join(OUT, "data")
    shutil.rmtree(data, ignore_errors=True)
    load_before = loadavg()
    server = Server(data, budget=CACHE_MB << 20, log_path=os.path.join(OUT, "server.log"),
                       extra=["--set", f"cache.decodeThreads={threads}",
                              "--set", f"limits.maxDecodeBytes={DECODE_MB << 20}",
                              "--set", "log.accessLog=true", "--set", "log.level=notice"])
    try:
        time.sleep(1)
        baseline = server.memory()["VmRSS"]
        poller = RSSPoller(server.pid)
        poller.start()
        counts, ids, lock = {}, [], threading.Lock()
        end = time.monotonic() + DURATION
        workers = [threading.Thread(target=client, args=(server.port, files, end, counts, ids, lock, s))
                   for s in range(CLIENTS)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        poller.stop()
        stats = server.json("/stats")
        hwm = server.memory()["VmHWM"]
    finally:
        server.stop()
    limit = baseline + (CACHE_MB << 20) * 1.1 + (DECODE_MB << 20)
    return {"threads": threads, "baseline": baseline, "peak": max(poller.peak, hwm), "limit": limit,
            "counts": counts, "decodeMemory": stats.get("decodeMemory"), "cacheUsed": stats["usedBytes"],
            "load": {"before": load_before, "after": loadavg()}}


def render(result):
    lines = [
        f"`make bench-hostile` at {result['commit']} ({result['date']}; {result['machine']}). Legal 7000×7000 "
        f"frames (49 MP; GIF, 8-bit RGBA APNG, lossy WebP), {CLIENTS} clients each uploading a new one, then "
        f"asking for its first frame and for an earlier upload's, for {result['seconds']:g} s per run; a "
        f"{CACHE_MB} MiB cache and a {result['decodeMb']} MiB decode-memory budget "
        f"(`limits.maxDecodeBytes`), the decode threads at 4× and 16× this machine's {os.cpu_count()} cores. "
        "The goal: peak RSS ≤ baseline + cache budget × 1.1 + decode budget, whatever the thread count.",
        "",
        "| decode threads | uploads (201/200/429) | first frames (200/429) | decode budget peak / waits | peak RSS MiB "
        "| limit MiB | met | load |",
        "|---:|---|---|---|---:|---:|---|---|",
    ]
    for r in result["runs"]:
        c = r["counts"]
        d = r["decodeMemory"] or {}
        lines.append(
            f"| {r['threads']} | {c.get('upload 201', 0)}/{c.get('upload 200', 0)}/{c.get('upload 429', 0)} | "
            f"{c.get('first frame 200', 0)}/{c.get('first frame 429', 0)} | "
            f"{mib(d.get('peakBytes', 0))} MiB / {d.get('waits', 0)} | {mib(r['peak'])} | {mib(r['limit'])} | "
            f"{'yes' if r['peak'] <= r['limit'] else '**no**'} | {r['load']['before']}–{r['load']['after']} |")
    others = [f"{r['threads']} threads: " + ", ".join(f"{k} ×{v}" for k, v in sorted(r["counts"].items())
                                                     if not k.endswith((" 200", " 201", " 429")))
              for r in result["runs"]
              if any(not k.endswith((" 200", " 201", " 429")) for k in r["counts"])]
    lines += ["", "Other answers: " + ("; ".join(others) if others else "none") + "."]
    return "\n".join(lines)


def main():
    os.makedirs(OUT, exist_ok=True)
    build()
    files = make_inputs()
    cores = os.cpu_count()
    runs = [run_one(cores * m, files) for m in MULTIPLIERS]
    commit = head_commit()
    result = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "commit": commit,
              "machine": machine(), "seconds": DURATION, "decodeMb": DECODE_MB, "runs": runs}
    publish(result, render(result), OUT, os.path.join(REPO, "docs", "benchmarks", "hardening.md"), "Hostile files", WRITE)
    if any(r["peak"] > r["limit"] for r in runs):
        sys.exit(1)


if __name__ == "__main__":
    main()
