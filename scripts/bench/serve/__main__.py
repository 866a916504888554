"""`make bench-serve` (python3 -m bench.serve, PYTHONPATH=scripts): builds flipbook (release,
.build-playback; SKIP_BUILD=1 reuses it) and makes bench-out/inputs (prepare.py), then measures:

(a) Cached frames against nginx as operators run it (open_file_cache, sendfile), access logs on
    and off, GET 200 / GET 304 / HEAD at each connection count: see cached_frames.py.
(b) Cold first frame: for every input of scripts/make-bench-inputs.sh, RUNS times: a fresh
    `flipbook serve` on an empty data directory, POST /images (timed: includes storing the file
    durably and verifying every frame), then GET /frames/{id}/0 (timed: the cache is cold, the
    frame is decoded and encoded for this request); against `convert 'IN[0]' out.png` and
    `vips copy 'IN[page=0]' out.png` (process start included, as a user would run them), run
    interleaved with flipbook's runs. Medians reported.

Each part writes its own section of docs/benchmarks/serving.md ("Serving cached frames vs nginx", "Cold first
frames after upload"; BENCH_WRITE=0 to skip); ONLY=a or ONLY=b runs one part. RENDER_ONLY=1
rewrites the sections from bench-out/serve/result.json without running anything.
Environment: DURATION=5 CONNECTIONS="8 64 256" WRK_THREADS=2 MODES="on off" KINDS="200 304 HEAD" RUNS=5
BENCH_WRITE=1 ONLY=a|b
"""
import datetime
import json
import os
import shutil
import subprocess
import tempfile
import time

from benchlib import REPO, head_commit, log
from benchlib.machine import machine
from benchlib.server import Server
from benchlib.splice import replace_section
from benchlib.stats import percentile
from bench.serve import cached_frames
from bench.serve.prepare import INPUTS, prepare

OUT = os.path.join(REPO, "bench-out", "serve")
RUNS = int(os.environ.get("RUNS", "5"))
WRITE = os.environ.get("BENCH_WRITE", "1") == "1"
ONLY = os.environ.get("ONLY", "")
MAGICK_ENV = dict(os.environ, MAGICK_CONFIGURE_PATH=os.path.join(REPO, "scripts", "bench", "imagemagick"))

COLD_INPUTS = ["small.gif", "large.gif", "small-lossy.webp", "large-lossy.webp", "small-lossless.webp",
               "small.apng", "large.apng"]


# --- (b) cold first frames --------------------------------------------------------------------

def timed(cmd, env=None):
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - t
    return elapsed, p.returncode, p.stderr.decode(errors="replace")[-300:]


def cold(work):
    results = {}
    for name in COLD_INPUTS:
        src = os.path.join(INPUTS, name)
        r = {"upload": [], "first": [], "cachedBefore": [], "convert": [], "vips": [], "convertError": "",
             "vipsError": "", "fileBytes": os.path.getsize(src)}
        for run in range(RUNS):
            data = os.path.join(work, f"cold-{run}")
            shutil.rmtree(data, ignore_errors=True)
            server = Server(data, log_path=os.path.join(OUT, "server-cold.log"))
            try:
                meta, up = server.upload(src)
                st = server.json("/stats")
                r["cachedBefore"].append(st["cachedFrames"])
                t = time.perf_counter()
                status, _, body = server.request("GET", f"/frames/{meta['id']}/0")
                first = time.perf_counter() - t
                if status != 200 or body[:4] != b"\x89PNG":
                    raise RuntimeError(f"{name}: frame 0 answered {status}")
                r["upload"].append(up)
                r["first"].append(first)
                r.update(width=meta["width"], height=meta["height"], frames=meta["frameCount"])
            finally:
                server.stop()
                shutil.rmtree(data, ignore_errors=True)
            out = os.path.join(work, "out.png")
            s, rc, err = timed(["convert", f"{src}[0]", out], env=MAGICK_ENV)
            if rc == 0:
                r["convert"].append(s)
            else:
                r["convertError"] = err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"
            s, rc, err = timed(["vips", "copy", f"{src}[page=0]", out])
            if rc != 0 and name.endswith(".apng"):
                # vips 8.14 reads PNGs with libspng/libpng, which ignore APNG chunks: no `page`
                # option, but the default image is frame 0 of these files (apngasm writes it so).
                r["vipsNote"] = "APNG read as a still PNG (its default image = frame 0): `vips copy IN out.png`"
                s, rc, err = timed(["vips", "copy", src, out])
            if rc == 0:
                r["vips"].append(s)
            else:
                r["vipsError"] = err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"
        log(f"bench-serve: cold {name}: upload {percentile(r['upload'], 50) * 1000:.0f} ms, "
               f"first frame {percentile(r['first'], 50) * 1000:.1f} ms")
        results[name] = r
    return results


# --- report -----------------------------------------------------------------------------------

CACHED_SECTION = "Serving cached frames vs nginx"
COLD_SECTION = "Cold first frames after upload"


def header(res):
    return (f"`make bench-serve` (scripts/bench/serve), {res['date']}, "
            f"commit {res.get('commit', '?')}, {res['machine']}. Everything (servers, load generators, the peers) "
            "runs on the same machine, over loopback.")


def notes(name):
    path = os.path.join(REPO, "scripts", "bench", "serve", name)
    return ["", open(path).read().strip()] if os.path.exists(path) else []


def render_cached(res):
    return "\n".join([header(res), "", cached_frames.render(res["cached"])] + notes("cached-notes.md"))


def render_cold(res):
    lines = [
        header(res),
        "",
        f"Median of {RUNS} runs each, interleaved. flipbook: a fresh server on an empty data directory per run; "
        "*upload* = `POST /images` until the 201 (the file is stored durably and every frame is verified); "
        "*first frame* = `GET /frames/{id}/0` right after (cold cache: decoded and PNG-encoded for the "
        "request). Peers: `convert 'IN[0]' out.png` (ImageMagick 6, with scripts/bench/imagemagick/policy.xml) "
        "and `vips copy 'IN[page=0]' out.png`, wall-clock time of the whole process.",
        "",
        "| input | size, frames | file | upload ms | first frame ms | upload + first frame ms | convert ms | vips ms | first frame ÷ convert | first frame ÷ vips |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    vips_note = ""
    for name, r in res["cold"].items():
        up = percentile(r["upload"], 50) * 1000
        first = percentile(r["first"], 50) * 1000
        cv = percentile(r["convert"], 50) * 1000 if r["convert"] else None
        vp = percentile(r["vips"], 50) * 1000 if r["vips"] else None
        cvs = f"{cv:.0f}" if cv else f"fails ({r['convertError'][:60]})"
        vps = f"{vp:.0f}" if vp else f"fails ({r['vipsError'][:60]})"
        if vp and r.get("vipsNote"):
            vps += "¹"
            vips_note = r["vipsNote"]
        rc = f"{first / cv:.2f}×" if cv else "–"
        rv = f"{first / vp:.2f}×" if vp else "–"
        lines.append(f"| `{name}` | {r.get('width')}×{r.get('height')}, {r.get('frames')} | "
                     f"{r['fileBytes'] / 1024:.0f} KiB | {up:.0f} | {first:.1f} | {up + first:.0f} | {cvs} | {vps} | {rc} | {rv} |")
    if vips_note:
        lines += ["", "¹ " + vips_note + "."]
    warm = sorted({n for n, r in res["cold"].items() if any(r["cachedBefore"])})
    if warm:
        lines += ["", "Note: after the upload the cache already held frames of " + ", ".join(warm)
                  + " (so the first frame was not cold there)."]
    return "\n".join(lines + notes("cold-notes.md"))


def write_sections(res):
    """Prints and (BENCH_WRITE=1) writes the sections this run measured."""
    for key, section, render in (("cached", CACHED_SECTION, render_cached), ("cold", COLD_SECTION, render_cold)):
        if key not in res:
            continue
        report = render(res)
        print(f"## {section}\n\n{report}\n")
        if WRITE:
            replace_section(os.path.join(REPO, "docs", "benchmarks", "serving.md"), section, report)
            log(f"bench-serve: docs/benchmarks/serving.md section '{section}' written")


def main():
    os.makedirs(OUT, exist_ok=True)
    result_path = os.path.join(OUT, "result.json")
    if os.environ.get("RENDER_ONLY") == "1":
        # Rewrite the sections from the last result.json (after editing the notes).
        with open(result_path) as f:
            write_sections(json.load(f))
        return
    prepare()
    work = tempfile.mkdtemp(prefix="flipbook-bench-serve.", dir="/dev/shm")
    commit = head_commit()
    res = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "machine": machine(), "commit": commit}
    try:
        if ONLY in ("", "a"):
            res["cached"] = cached_frames.run(work, INPUTS, OUT)
        if ONLY in ("", "b"):
            res["cold"] = cold(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(result_path, "w") as f:
        json.dump(res, f, indent=1)
    write_sections(res)


if __name__ == "__main__":
    main()
