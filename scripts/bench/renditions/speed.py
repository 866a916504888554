"""Goals 1 and 2 of issue 21 (speed), side by side, as each tool's users run it.

(1) CLI: every frame of small.gif (the issue's typical.gif: 480×270, 100 frames) at 320 px wide,
    as PNG files and as lossy WebP files (quality 80), one file per frame:
      flipbook  frames small.gif --width 320 -o DIR [--format webp --quality 80]
      ffmpeg    -i small.gif -vf scale=320:-1 -fps_mode passthrough DIR/frame_%04d.png
                (WebP: -c:v libwebp -quality 80 DIR/frame_%04d.webp)
      vips      per frame: `vips thumbnail 'small.gif[page=i]' DIR/frame_i.png 320` for i = 0..99
                (the vips CLI has no other way to write one file per frame; every call decodes
                from frame 0), and the one-call form `vips thumbnail 'small.gif[n=-1]' OUT 320`,
                which writes one tall PNG strip (PNG) or one animated WebP (WebP): not the same
                files, the fastest thing vips does with the same pixels
      Pillow    pillow_scaled.py (Debian's python3-pil): seek, RGBA, resize LANCZOS, save
    Timed by hyperfine (-N, WARMUP warm-up runs, RUNS runs; each run into an emptied directory on
    /dev/shm), under the benchmark lock. After the timing, each tool's last output is checked
    (file count, size, bytes) and its PNG frames compared with Pillow's (PSNR).
(2) API, cold: frame 150 of large.gif (1280×720, 300 frames) at 320 px wide,
    `GET /frames/{id}/150?width=320`, on a server that has not decoded the image:
      upload   one server (its libvips already initialised by a scaled frame of another image);
               per run a byte-distinct copy of large.gif (a GIF comment extension with the run
               number) is uploaded (not timed), then the GET is timed
      restart  per run a new `flipbook serve` on the data directory that holds large.gif; the GET
               is the process's first request (its libvips is initialised by it)
    against `vips thumbnail 'large.gif[page=150]' DIR/x.png 320` (process start included), runs
    interleaved, wall clock in this process (time.perf_counter around the request / the process).
(3) Where flipbook's time goes: `flipbook frame` of large.gif (frame 150 and 0, scaled and full
    size) and of a 2×2 PNG with and without --width (libvips's start-up), by hyperfine; and
    (`profile`) `perf record` of the two CLI runs of (1), samples per shared object.

Environment: RUNS=10 WARMUP=2 COLD_RUNS=10 PARTS="cli cold stages profile" FLIPBOOK_BIN.
Writes bench-out/renditions/speed.json. Run with /usr/bin/python3 (numpy, Pillow).
"""
import datetime
import io
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np
from PIL import Image

from benchlib import head_commit, log
from benchlib.machine import machine
from benchlib.process import cpu_times
from benchlib.sampler import busy_processes
from benchlib.server import Server
from bench.renditions import HERE, INPUTS, OUT, PYTHON, bench_lock, binary, loadavg3, prepare_inputs, tool_versions

RUNS = int(os.environ.get("RUNS", "10"))
WARMUP = int(os.environ.get("WARMUP", "2"))
COLD_RUNS = int(os.environ.get("COLD_RUNS", "10"))
ALL_PARTS = ["cli", "cold", "stages", "profile"]
PARTS = os.environ.get("PARTS", " ".join(ALL_PARTS)).split()
WIDTH = 320
QUALITY = 80
PILLOW = os.path.join(HERE, "pillow_scaled.py")


def hyperfine(named, work, tag, prepare=None):
    """Runs hyperfine over [(name, command string)] holding the benchmark lock; returns {name: result}
    and the load average (1, 5, 15 min) when it started and ended."""
    export = os.path.join(work, f"hyperfine-{tag}.json")
    args = ["hyperfine", "-N", "--warmup", str(WARMUP), "--runs", str(RUNS), "--export-json", export]
    for name, cmd in named:
        if prepare:
            args += ["--prepare", prepare[name]]
    for name, cmd in named:
        args += ["-n", name]
    args += [cmd for _, cmd in named]
    with bench_lock():  # flock(2) on LOCK, as `flock LOCK hyperfine …` would take it
        busy = busy_processes()
        before = loadavg3()
        t = datetime.datetime.utcnow().strftime("%H:%M")
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        after = loadavg3()
    with open(export) as f:
        data = json.load(f)
    out = {}
    for (name, cmd), r in zip(named, data["results"]):
        out[name] = {"command": cmd, "mean": r["mean"], "stddev": r["stddev"], "median": r["median"],
                     "min": r["min"], "max": r["max"], "user": r["user"], "system": r["system"], "runs": len(r["times"])}
    log(f"bench-renditions: {tag}: " + ", ".join(f"{n} {r['mean']:.3f} s" for n, r in out.items())
        + f" (load {before} → {after})")
    return {"results": out, "loadBefore": before, "loadAfter": after, "utc": t, "busyBefore": busy}


def vips_loop(src, out, ext, frames):
    # dash's printf is a builtin; one `vips` process per frame, as a shell user would write it.
    return ("sh -c " + shlex.quote(
        f"i=0; while [ $i -lt {frames} ]; do vips thumbnail \"{src}[page=$i]\" "
        f"\"{out}/frame_$(printf %04d $i).{ext}\" {WIDTH} || exit 1; i=$((i+1)); done"))


def cli_commands(fb, src, work, fmt, frames):
    d = {k: os.path.join(work, fmt, k) for k in ("flipbook", "ffmpeg", "vips-per-frame", "vips-one-call", "Pillow")}
    ffmpeg = f"ffmpeg -nostdin -v error -i {src} -vf scale={WIDTH}:-1 -fps_mode passthrough"
    if fmt == "png":
        cmds = [
            ("flipbook", f"{fb} frames {src} --width {WIDTH} -o {d['flipbook']}"),
            ("ffmpeg", f"{ffmpeg} {d['ffmpeg']}/frame_%04d.png"),
            ("vips-per-frame", vips_loop(src, d["vips-per-frame"], "png", frames)),
            ("vips-one-call", f"vips thumbnail {src}[n=-1] {d['vips-one-call']}/strip.png {WIDTH}"),
            ("Pillow", f"{PYTHON} {PILLOW} {src} {d['Pillow']} {WIDTH} png"),
        ]
    else:
        cmds = [
            ("flipbook", f"{fb} frames {src} --width {WIDTH} -o {d['flipbook']} --format webp --quality {QUALITY}"),
            ("ffmpeg", f"{ffmpeg} -c:v libwebp -quality {QUALITY} {d['ffmpeg']}/frame_%04d.webp"),
            ("vips-per-frame", vips_loop(src, d["vips-per-frame"], f"webp[Q={QUALITY}]", frames)),
            ("vips-one-call", f"vips thumbnail {src}[n=-1] {d['vips-one-call']}/anim.webp[Q={QUALITY}] {WIDTH}"),
            ("Pillow", f"{PYTHON} {PILLOW} {src} {d['Pillow']} {WIDTH} webp {QUALITY}"),
        ]
    prepare = {name: f"sh -c 'rm -rf {d[name]} && mkdir -p {d[name]}'" for name, _ in cmds}
    return cmds, prepare, d


def describe_output(path):
    files = sorted(os.listdir(path))
    sizes = sum(os.path.getsize(os.path.join(path, f)) for f in files)
    first = Image.open(os.path.join(path, files[0])) if files else None
    return {"files": len(files), "bytes": sizes, "firstSize": list(first.size) if first else None,
            "firstMode": first.mode if first else None,
            "pages": getattr(first, "n_frames", 1) if first else 0}


def premultiplied(a):
    out = a.astype(np.float64)
    out[..., :3] *= out[..., 3:4] / 255.0
    return out


def psnr(a, b):
    d = premultiplied(a) - premultiplied(b)
    mse = float(np.mean(d * d))
    return math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def frames_of(path):
    """RGBA arrays of a tool's PNG output: one per file, or the strip cut into 180-px frames."""
    files = sorted(f for f in os.listdir(path) if f.endswith(".png"))
    if files == ["strip.png"]:
        Image.MAX_IMAGE_PIXELS = None
        strip = np.asarray(Image.open(os.path.join(path, "strip.png")).convert("RGBA"))
        h = strip.shape[1] * 270 // 480
        return [strip[i:i + h] for i in range(0, strip.shape[0], h)]
    return [np.asarray(Image.open(os.path.join(path, f)).convert("RGBA")) for f in files]


def cli(fb, work):
    src = os.path.join(work, "small.gif")
    shutil.copy(os.path.join(INPUTS, "small.gif"), src)
    res = {}
    for fmt in ("png", "webp"):
        cmds, prepare, dirs = cli_commands(fb, src, work, fmt, 100)
        r = hyperfine(cmds, work, f"cli-{fmt}", prepare)
        for name in dirs:
            r["results"][name]["output"] = describe_output(dirs[name])
        if fmt == "png":
            ref = frames_of(dirs["Pillow"])
            for name in dirs:
                got = frames_of(dirs[name])
                vals = [psnr(g, p) for g, p in zip(got, ref) if g.shape == p.shape]
                r["results"][name]["psnrVsPillow"] = {"frames": len(vals), "min": min(vals) if vals else None,
                                                      "median": statistics.median(vals) if vals else None}
        res[fmt] = r
    return res


# --- (2) cold API ---------------------------------------------------------------------------

def distinct_gif(src, dst, tag):
    """A copy of the GIF with a comment extension (`tag`) after the global colour table: the
    same frames, other bytes, so another content id."""
    data = open(src, "rb").read()
    if data[:6] not in (b"GIF87a", b"GIF89a"):
        raise RuntimeError(f"{src} is not a GIF")
    packed = data[10]
    at = 13 + (3 * 2 ** ((packed & 7) + 1) if packed & 0x80 else 0)
    text = tag.encode()
    ext = b"\x21\xfe" + bytes([len(text)]) + text + b"\x00"
    with open(dst, "wb") as f:
        f.write(data[:6].replace(b"87a", b"89a") + data[6:at] + ext + data[at:])


def get_frame(server, path):
    pid = server.pid
    u0, s0 = cpu_times(pid)
    t = time.perf_counter()
    status, headers, body = server.request("GET", path)
    elapsed = time.perf_counter() - t
    u1, s1 = cpu_times(pid)
    if status != 200:
        raise RuntimeError(f"GET {path}: {status} {body[:200]!r}")
    img = Image.open(io.BytesIO(body))
    return elapsed, (u1 - u0) + (s1 - s0), len(body), list(img.size), headers.get("Content-Type")


def timed_process(cmd):
    before = os.times()
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - t
    after = os.times()
    return elapsed, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def cold(fb, work):
    os.environ["FLIPBOOK_BIN"] = fb
    import benchlib.server as bs
    bs.BINARY = fb
    src = os.path.join(INPUTS, "large.gif")
    query = f"?width={WIDTH}"
    r = {"upload": [], "uploadGet": [], "uploadCpu": [], "restartGet": [], "restartCpu": [], "restartStart": [],
         "vips": [], "vipsCpu": [], "cachedBefore": [], "framesDecoded": []}
    vips_out = os.path.join(work, "vips-cold.png")
    vips_cmd = ["vips", "thumbnail", f"{src}[page=150]", vips_out, str(WIDTH)]
    up_dir, rs_dir = os.path.join(work, "cold-upload"), os.path.join(work, "cold-restart")
    for d in (up_dir, rs_dir):
        shutil.rmtree(d, ignore_errors=True)
    logs = os.path.join(OUT, "server-cold.log")
    # The restart case's data directory: large.gif stored once.
    s = Server(rs_dir, log_path=logs)
    meta, _ = s.upload(src)
    rs_id = meta["id"]
    s.stop()
    up = Server(up_dir, log_path=logs)
    try:
        # libvips is initialised once per process: by a scaled frame of another image, first.
        small = up.upload(os.path.join(INPUTS, "small.gif"))[0]
        get_frame(up, f"/frames/{small['id']}/0{query}")
        with bench_lock():
            r["busyBefore"] = busy_processes(exclude=(up.pid,))
            r["loadBefore"], r["utc"] = loadavg3(), datetime.datetime.utcnow().strftime("%H:%M")
            for run in range(COLD_RUNS):
                copy = os.path.join(work, f"large-{run}.gif")
                distinct_gif(src, copy, f"flipbook bench-renditions cold run {run} {time.time()}")
                meta, up_s = up.upload(copy)
                st = up.json("/stats")
                cached = sum(i["cachedFrames"] for i in st["images"] if i["id"] == meta["id"])
                decoded0 = st.get("framesDecoded", 0)
                e, cpu, n, size, ctype = get_frame(up, f"/frames/{meta['id']}/150{query}")
                r["framesDecoded"].append(up.json("/stats").get("framesDecoded", 0) - decoded0)
                r["upload"].append(up_s); r["uploadGet"].append(e); r["uploadCpu"].append(cpu); r["cachedBefore"].append(cached)
                r.update(bytes=n, size=size, contentType=ctype)
                os.remove(copy)
                e, cpu = timed_process(vips_cmd)
                r["vips"].append(e); r["vipsCpu"].append(cpu)
                t = time.perf_counter()
                s = Server(rs_dir, log_path=logs)
                r["restartStart"].append(time.perf_counter() - t)
                try:
                    e, cpu, n, size, _ = get_frame(s, f"/frames/{rs_id}/150{query}")
                    r["restartGet"].append(e); r["restartCpu"].append(cpu)
                finally:
                    s.stop()
            r["loadAfter"] = loadavg3()
    finally:
        up.stop()
    r["vipsSize"] = list(Image.open(vips_out).size)
    for k in ("uploadGet", "restartGet", "vips"):
        log(f"bench-renditions: cold {k}: mean {statistics.mean(r[k]) * 1000:.1f} ms")
    return r


# --- (3) stages -----------------------------------------------------------------------------

def stages(fb, work):
    large = os.path.join(work, "large.gif")
    shutil.copy(os.path.join(INPUTS, "large.gif"), large)
    tiny = os.path.join(work, "tiny.png")
    Image.new("RGBA", (2, 2), (200, 30, 30, 255)).save(tiny)
    o = os.path.join(work, "stage.png")
    cmds = [
        ("frame 150, 320 px", f"{fb} frame {large} 150 --width {WIDTH} -o {o}"),
        ("frame 150, full size", f"{fb} frame {large} 150 -o {o}"),
        ("frame 0, 320 px", f"{fb} frame {large} 0 --width {WIDTH} -o {o}"),
        ("frame 0, full size", f"{fb} frame {large} 0 -o {o}"),
        ("2×2 PNG, 1 px (libvips start-up)", f"{fb} frame {tiny} 0 --width 1 -o {o}"),
        ("2×2 PNG, full size", f"{fb} frame {tiny} 0 -o {o}"),
        ("vips copy page 150 (decode, no scale)", f"vips copy {large}[page=150] {o}"),
        ("vips thumbnail page 150", f"vips thumbnail {large}[page=150] {o} {WIDTH}"),
    ]
    return hyperfine(cmds, work, "stages")


def profile(fb, work):
    """Share of `perf record` samples (4 kHz) per shared object for the CLI runs of (1);
    None when perf cannot record here."""
    src = os.path.join(work, "small.gif")
    if not os.path.exists(src):
        shutil.copy(os.path.join(INPUTS, "small.gif"), src)
    out = {}
    for fmt, extra in (("png", []), ("webp", ["--format", "webp", "--quality", str(QUALITY)])):
        data = os.path.join(work, f"perf-{fmt}.data")
        d = os.path.join(work, f"perf-{fmt}")
        with bench_lock():
            p = subprocess.run(["perf", "record", "-q", "-F", "4000", "-o", data, fb, "frames", src, "--width", str(WIDTH),
                                "-o", d, *extra], capture_output=True, text=True)
        if p.returncode != 0:
            log(f"bench-renditions: perf record failed: {p.stderr.strip()[-200:]}")
            return None
        rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso", "--stdio", "-g", "none"],
                             capture_output=True, text=True).stdout
        rows = []
        for line in rep.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0].endswith("%"):
                rows.append([parts[1], float(parts[0][:-1])])
        # The event is cpu-clock (no hardware counters here): its count is CPU nanoseconds.
        count = next((int(line.split(":")[1].split()[0]) for line in rep.splitlines()
                      if line.startswith("# Event count")), None)
        event = next((line.split("'")[1] for line in rep.splitlines() if line.startswith("# Samples:") and "'" in line), "")
        out[fmt] = {"dso": rows, "eventCount": count, "event": event}
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    prepare_inputs()
    fb = binary()
    work = tempfile.mkdtemp(prefix="flipbook-bench-renditions.", dir="/dev/shm")
    path = os.path.join(OUT, "speed.json")
    res = {}
    if os.path.exists(path) and set(PARTS) != set(ALL_PARTS):
        with open(path) as f:
            res = json.load(f)
    res.update({"date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(),
                "commit": head_commit(), "binary": fb, "tools": tool_versions(), "runs": RUNS, "warmup": WARMUP,
                "coldRuns": COLD_RUNS})
    try:
        if "cli" in PARTS:
            res["cli"] = cli(fb, work)
        if "cold" in PARTS:
            res["cold"] = cold(fb, work)
        if "stages" in PARTS:
            res["stages"] = stages(fb, work)
        if "profile" in PARTS:
            res["profile"] = profile(fb, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    log(f"bench-renditions: wrote {path}")


if __name__ == "__main__":
    main()
