"""Makes the 50 animations of `make bench-playback` (also uploaded by `make soak` and `make
bench-backpressure`), deterministically, with real encoders.

Each animation is a different ffmpeg lavfi scene (testsrc, testsrc2, mandelbrot zooms, life,
cellauto, sierpinski, gradients, a moving test card over a still fractal), 320x240 to 640x360,
30 to 120 frames, with its own frame delay (40 to 100 ms). 36 are GIFs (ffmpeg palettegen +
paletteuse with one of three dithers, then gifsicle -O3 with the delay), 8 are animated WebP
(img2webp, lossy or lossless) and 6 are APNG (apngasm; at most 400x300
and 60 frames, as apngasm takes minutes on larger ones). Frame sources and settings come from a
seeded RNG, so the same script and encoders make the same set.

`inputs(OUTDIR)` (or `python3 -m benchlib.animations OUTDIR`) is idempotent: it skips the work when
OUTDIR/.fingerprint matches. It writes and returns OUTDIR/MANIFEST.json: one entry per file (name,
format, size, frames, delay, scene).
"""
import concurrent.futures as cf
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

SIZES = [(320, 240), (400, 300), (480, 270), (512, 288), (560, 315), (640, 360)]
DELAYS_MS = [40, 50, 60, 80, 100]
COUNT = 50
FORMATS = ["gif"] * 36 + ["webp"] * 8 + ["apng"] * 6


def scene(kind, w, h, n, seed):
    """An ffmpeg lavfi graph making n frames of w x h."""
    r = random.Random(seed)
    if kind == "testsrc":
        return f"testsrc=size={w}x{h}:rate=25:decimals={r.randint(0, 2)}"
    if kind == "testsrc2":
        return f"testsrc2=size={w}x{h}:rate=25"
    if kind == "mandelbrot":
        return (f"mandelbrot=size={w}x{h}:rate=25:start_scale={r.uniform(2.0, 3.0):.3f}:"
                f"end_scale={r.uniform(0.05, 0.3):.3f}:end_pts={n / 25:.2f}:maxiter={r.choice([256, 512])}")
    if kind == "life":
        return (f"life=size={w}x{h}:rate=25:seed={seed % 100000}:ratio={r.uniform(0.05, 0.4):.2f}:"
                f"mold={r.randint(0, 30)}:life_color=#{r.randrange(1 << 24):06x}:"
                f"death_color=#{r.randrange(1 << 24):06x}:mold_color=#{r.randrange(1 << 24):06x}")
    if kind == "cellauto":
        return (f"cellauto=size={w}x{h}:rate=25:rule={r.choice([18, 22, 30, 45, 60, 73, 90, 105, 110, 150])}:"
                f"seed={seed % 100000}:random_fill_ratio={r.uniform(0.2, 0.8):.2f},format=rgb24,"
                f"colorchannelmixer=rr={r.uniform(0.2, 1):.2f}:gg={r.uniform(0.2, 1):.2f}:bb={r.uniform(0.2, 1):.2f}")
    if kind == "sierpinski":
        return f"sierpinski=size={w}x{h}:rate=25:seed={seed % 100000}:jump={r.randint(10, 100)}:type={r.choice(['carpet', 'triangle'])}"
    if kind == "gradients":
        return (f"gradients=size={w}x{h}:rate=25:seed={seed % 100000}:nb_colors={r.randint(2, 8)}:"
                f"speed={r.uniform(0.01, 0.05):.3f}")
    if kind == "sticker":
        sw, sh = w // 3 // 2 * 2, h // 3 // 2 * 2
        return (f"mandelbrot=size={w}x{h}:rate=25:start_scale={r.uniform(1.0, 2.5):.2f}:end_scale=1.0,"
                f"trim=end_frame=1,loop=loop=-1:size=1,setpts=N/25/TB[bg];"
                f"testsrc2=size={sw}x{sh}:rate=25[fg];"
                f"[bg][fg]overlay=x='(W-w)*(1-cos(2*PI*n/{n}))/2':y='(H-h)*(1-cos(4*PI*n/{n}))/2':shortest=1")
    raise ValueError(kind)


KINDS = ["testsrc", "testsrc2", "mandelbrot", "life", "cellauto", "sierpinski", "gradients", "sticker"]


def plan():
    rng = random.Random(20261123)
    formats = FORMATS[:]
    rng.shuffle(formats)
    items = []
    for i in range(COUNT):
        w, h = rng.choice(SIZES)
        n = rng.randint(30, 120)
        delay = rng.choice(DELAYS_MS)
        kind = KINDS[i % len(KINDS)]
        fmt = formats[i]
        if fmt == "apng":
            # apngasm's frame optimisation is slow (minutes for 100+ frames of 640x360): smaller APNGs.
            w, h = SIZES[i % 2]
            n = min(n, 60)
        seed = rng.randrange(1 << 30)
        extra = {}
        if fmt == "gif":
            extra["dither"] = rng.choice(["bayer:bayer_scale=3", "sierra2_4a", "none"])
        elif fmt == "webp":
            extra["webp"] = rng.choice(["-lossy -q 70 -m 4", "-lossy -q 85 -m 4", "-lossless -m 2"])
        ext = {"gif": "gif", "webp": "webp", "apng": "png"}[fmt]
        items.append(dict(name=f"p{i:02d}-{kind}-{w}x{h}-{n}f-{delay}ms.{ext}", format=fmt, width=w,
                          height=h, frames=n, delayMs=delay, scene=kind, seed=seed, **extra))
    return items


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({p.returncode}): {p.stderr.decode(errors='replace')[-800:]}")
    return p


FF = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y"]


def make(item, out, work):
    w, h, n = item["width"], item["height"], item["frames"]
    # trim: palettegen emits its palette only at the end of its input, so the source must end.
    graph = scene(item["scene"], w, h, n, item["seed"]) + f",trim=end_frame={n}"
    tmp = tempfile.mkdtemp(dir=work)
    try:
        dest = os.path.join(out, item["name"])
        if item["format"] == "gif":
            raw = os.path.join(tmp, "raw.gif")
            run(FF + ["-f", "lavfi", "-i", f"{graph},format=rgb24,split[a][b];[a]palettegen=max_colors=256:stats_mode=full[p];"
                      f"[b][p]paletteuse=dither={item['dither']}:diff_mode=rectangle",
                      "-frames:v", str(n), "-loop", "0", "-bitexact", raw])
            run(["gifsicle", "-O3", "--no-comments", "--no-names", "--no-extensions", "--loopcount=forever",
                 "--delay", str(item["delayMs"] // 10), raw, "-o", os.path.join(tmp, "out.gif")])
            shutil.move(os.path.join(tmp, "out.gif"), dest)
        else:
            run(FF + ["-f", "lavfi", "-i", f"{graph},format=rgb24", "-frames:v", str(n), "-bitexact",
                      os.path.join(tmp, "%04d.png")])
            frames = sorted(f for f in os.listdir(tmp) if f.endswith(".png"))
            if len(frames) != n:
                raise RuntimeError(f"{item['name']}: ffmpeg made {len(frames)} frames, not {n}")
            if item["format"] == "webp":
                args = ["img2webp", "-loop", "0"] + item["webp"].split()
                for f in frames:
                    args += ["-d", str(item["delayMs"]), os.path.join(tmp, f)]
                run(args + ["-o", os.path.join(tmp, "out.webp")])
                shutil.move(os.path.join(tmp, "out.webp"), dest)
            else:
                # apngasm: delay = delayMs/1000 s as num/den, loop forever, zlib.
                run(["apngasm", os.path.join(tmp, "out.png"), frames[0], str(item["delayMs"]), "1000", "-z0"], cwd=tmp)
                shutil.move(os.path.join(tmp, "out.png"), dest)
        item = dict(item, bytes=os.path.getsize(dest))
        return item
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def versions():
    out = []
    for cmd in (["ffmpeg", "-version"], ["gifsicle", "--version"], ["img2webp", "-version"]):
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out.append(p.stdout.decode(errors="replace").splitlines()[0] if p.stdout else "")
    p = subprocess.run(["apngasm"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out += [l for l in p.stdout.decode(errors="replace").splitlines() if "APNG Assembler" in l]
    return "\n".join(out)


def inputs(out):
    """Makes the animations in `out` unless they are there already; returns the manifest."""
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    items = plan()
    with open(__file__, "rb") as f:
        fingerprint = hashlib.sha256(f.read() + versions().encode()).hexdigest()[:16]
    stamp = os.path.join(out, ".fingerprint")
    manifest = os.path.join(out, "MANIFEST.json")
    if (os.path.exists(stamp) and open(stamp).read().strip() == fingerprint and os.path.exists(manifest)
            and all(os.path.getsize(os.path.join(out, i["name"])) > 0 for i in items
                    if os.path.exists(os.path.join(out, i["name"])))
            and all(os.path.exists(os.path.join(out, i["name"])) for i in items)):
        print(f"animations: {len(items)} inputs in {out} are up to date", file=sys.stderr)
        with open(manifest) as f:
            return json.load(f)
    if os.path.exists(stamp):
        os.remove(stamp)
    for f in os.listdir(out):
        if f.startswith("p") and f[1:3].isdigit():
            os.remove(os.path.join(out, f))
    work = tempfile.mkdtemp(prefix="flipbook-playback-inputs.")
    done = []
    try:
        with cf.ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
            for item in pool.map(lambda it: make(it, out, work), items):
                print(f"animations: {item['name']} {item['bytes']} bytes", file=sys.stderr)
                done.append(item)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(manifest, "w") as f:
        json.dump(done, f, indent=1)
    with open(stamp, "w") as f:
        f.write(fingerprint + "\n")
    print(f"animations: {len(done)} inputs written to {out}", file=sys.stderr)
    return done


if __name__ == "__main__":
    inputs(sys.argv[1] if len(sys.argv) > 1 else "bench-out/playback/inputs")
