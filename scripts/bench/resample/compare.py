"""`make bench-resample`: Flipbook's resampler, libvips and pixman scaling the same RGBA frames
(issue 21, item 2).

    PYTHONPATH=scripts /usr/bin/python3 -m bench.resample.compare --bin bench-out/resample/resample-bench \
        [--baseline OTHER-BUILD-OF-IT] [--rounds N] [--cpu-time]

1. Inputs (bench-out/resample/frames): frames of bench-out/inputs/small.gif (480×270) and
   large.gif (1280×720), composited by `vips copy FILE[page=N]`; frames with transparency from
   ../shared/corpus (Chromium's reference frames); one synthetic hard alpha edge over saturated
   colour, made here with numpy; two 4000×4000 frames for the largest reductions (large.gif's
   page 150 tiled, opaque; saturated discs with hard alpha edges over noise).
2. The C program (Benchmarks/resample/resample-bench.c) scales each frame to 160, 320 and 640 px
   wide where that is a reduction, and two frames 2× up, with every method, REPS times each,
   interleaved, pinned to one CPU with taskset; it reports the median ms per frame. The methods
   are listed at the top of resample-bench.c (`flipbook` is Sources/CResample). The reductions by
   more than 40×: large.gif's frames also to 16 px; the 4000×4000 frames only to 48 px, with only
   `flipbook`, `vips-u8` (vips_resize, which box-shrinks such a reduction itself) and
   `pixman-2pass`. With --baseline,
   another build of the program (mk/resample.mk's RESAMPLE_BASELINE: another checkout's
   Sources/CResample) runs its `flipbook` as `flipbook-before`, the two programs taking turns
   frame by frame, ROUNDS times each; the median of the rounds' medians is shown.
3. Quality: PSNR of each output vs Pillow's LANCZOS of the same frame on premultiplied data
   (RGBA → "RGBa", resize, → RGBA), both compared as premultiplied values (R·A/255, G·A/255,
   B·A/255, A) over all pixels and channels; and the largest such difference. For the reductions
   by more than 40×, also against Pillow's resize with `reducing_gap=16` (box-reduced by whole
   factors first, as Flipbook does) and, with --baseline, `flipbook` against `flipbook-before`.
4. Runtime size: what `apt-get install --no-install-recommends` would add to debian:bookworm-slim
   for libvips42 and for libpixman-1-0 (Installed-Size sums), simulated with apt against a dpkg
   status file that lists only the packages of a bookworm minbase (see runtime_sizes()).
Prints markdown tables on stdout; progress on stderr.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

from benchlib.machine import machine

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
METHODS = ["vips-float", "vips-float-trunc", "vips-u8", "vips-opaque", "vips-affine", "pixman", "pixman-2pass",
           "flipbook", "flipbook-before"]
TARGETS = [160, 320, 640]
# Reductions by more than 40× (the ones Flipbook box-shrinks first): frame name prefix → width.
LARGE_REDUCTIONS = {"large-": 16, "tiled-4000": 48, "discs-4000": 48}
# The methods those run (the others take seconds per frame there: vips_reduce and pixman's
# single pass apply every tap of an 83× kernel).
LARGE_METHODS = ["vips-u8", "pixman-2pass", "flipbook"]
# Frames only for the large reductions.
LARGE_ONLY = ("tiled-4000", "discs-4000")

# Frames with alpha from the shared corpus: (corpus path, short name, what it shows).
CORPUS_FRAMES = [
    ("chromium/image-rs-image/images/gif/anim/large-gif-anim-combine.gif/frame_0000.png",
     "gif-combine-1000", "1000×1000 GIF frame, hard alpha edges, 45% transparent"),
    ("chromium/image-rs-image/images/gif/simple/alpha_gif_a.gif/frame_0000.png",
     "alpha-gif-256", "256×256 GIF, hard alpha edge"),
    ("chromium/pillow/webp/transparent.webp/frame_0000.png",
     "webp-transparent-200", "200×150 WebP, soft alpha, 8,768 colours"),
    ("chromium/image-rs-image/images/webp/extended_images/anim.webp/frame_0000.png",
     "webp-anim-200", "200×200 animated WebP frame, antialiased alpha edge"),
]


def log(*a):
    print("resample:", *a, file=sys.stderr, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw).stdout


# ---------------------------------------------------------------------------------------------
# Inputs

def synthetic_edge(path):
    """480×270: saturated red, green, blue and magenta discs with hard edges on full transparency,
    plus a soft-alpha ramp across the bottom — where a scaler working on straight alpha fringes."""
    h, w = 270, 480
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.zeros((h, w, 4), np.uint8)
    for (cx, cy, r, col) in [(90, 90, 70, (255, 0, 0)), (240, 90, 60, (0, 255, 0)),
                             (390, 90, 70, (0, 0, 255)), (240, 190, 50, (255, 0, 255))]:
        m = (xx - cx) ** 2 + (yy - cy) ** 2 <= r * r
        img[m, :3] = col
        img[m, 3] = 255
    ramp = yy >= 240
    img[ramp, 0] = 255
    img[ramp, 1] = 200
    img[ramp, 2] = 0
    img[ramp, 3] = (xx[ramp] * 255 // (w - 1)).astype(np.uint8)
    Image.fromarray(img, "RGBA").save(path)


def tiled_4000(frame_path, path):
    """4000×4000, opaque: a 1280×720 frame tiled (real detail at full resolution everywhere)."""
    tile = np.asarray(Image.open(frame_path).convert("RGBA"))
    reps = (4000 // tile.shape[0] + 1, 4000 // tile.shape[1] + 1, 1)
    Image.fromarray(np.ascontiguousarray(np.tile(tile, reps)[:4000, :4000]), "RGBA").save(path)


def discs_4000(path):
    """4000×4000: saturated discs with hard alpha edges on full transparency (green underneath,
    which no pixel shows), over a band of coloured noise at half alpha."""
    n = 4000
    rng = np.random.default_rng(7)
    img = np.zeros((n, n, 4), np.uint8)
    img[..., 1] = 255  # the colour of the transparent pixels
    yy, xx = np.ogrid[0:n, 0:n]
    for i, col in enumerate([(255, 0, 0), (0, 0, 255), (255, 0, 255), (255, 255, 0)]):
        cx, cy, r = 700 + 850 * i, 1200 + 500 * (i % 2), 380 + 60 * i
        m = (xx - cx) ** 2 + (yy - cy) ** 2 <= r * r
        img[m, :3] = col
        img[m, 3] = 255
    band = slice(2600, 3600)
    img[band, :, :3] = rng.integers(0, 256, (1000, n, 3), dtype=np.uint8)
    img[band, :, 3] = 128
    Image.fromarray(img, "RGBA").save(path)


def make_frames(inputs, corpus, out):
    """[(png path, name, description)]; composited frames, RGBA PNGs."""
    os.makedirs(out, exist_ok=True)
    frames = []
    for gif, pages, desc in [("small.gif", [0, 50, 99], "480×270 GIF frame, opaque"),
                             ("large.gif", [0, 150, 299], "1280×720 GIF frame, opaque")]:
        src = os.path.join(inputs, gif)
        if not os.path.exists(src):
            sys.exit(f"resample: {src} is missing (scripts/make-bench-inputs.sh)")
        for p in pages:
            name = f"{gif.split('.')[0]}-p{p:03d}"
            dst = os.path.join(out, name + ".png")
            if not os.path.exists(dst):
                tmp = os.path.join(out, name + ".vips.png")
                run(["vips", "copy", f"{src}[page={p}]", tmp])
                Image.open(tmp).convert("RGBA").save(dst)
                os.remove(tmp)
            frames.append((dst, name, desc))
    for rel, name, desc in CORPUS_FRAMES:
        src = os.path.join(corpus, rel)
        if not os.path.exists(src):
            log(f"skipping {rel}: not in {corpus}")
            continue
        dst = os.path.join(out, name + ".png")
        Image.open(src).convert("RGBA").save(dst)
        frames.append((dst, name, desc))
    dst = os.path.join(out, "synthetic-edge.png")
    synthetic_edge(dst)
    frames.append((dst, "synthetic-edge", "480×270 saturated discs, hard alpha edges, alpha ramp"))
    dst = os.path.join(out, "tiled-4000.png")
    if not os.path.exists(dst):
        tiled_4000(os.path.join(out, "large-p150.png"), dst)
    frames.append((dst, "tiled-4000", "4000×4000, large.gif page 150 tiled, opaque"))
    dst = os.path.join(out, "discs-4000.png")
    if not os.path.exists(dst):
        discs_4000(dst)
    frames.append((dst, "discs-4000", "4000×4000 saturated discs, hard alpha edges, a band of noise at alpha 128"))
    return frames


def large_width(name):
    """The width of `name`'s reduction by more than 40×, or None."""
    return next((w for prefix, w in LARGE_REDUCTIONS.items() if name.startswith(prefix)), None)


def widths_for(path, name):
    if name in LARGE_ONLY:
        return [large_width(name)]
    w = Image.open(path).width
    ws = [t for t in TARGETS if t < w]
    if not ws:
        ws = [max(1, w * 3 // 4)]
    if large_width(name):
        ws.append(large_width(name))
    if name in ("small-p000", "webp-transparent-200"):  # the 2× enlargements
        ws.append(2 * w)
    return ws


# ---------------------------------------------------------------------------------------------
# Quality

def premultiplied(rgba):
    a = rgba[..., 3:4].astype(np.float64)
    out = rgba.astype(np.float64)
    out[..., :3] = out[..., :3] * a / 255.0
    return out


def pillow_reference(src, dw, dh, reducing_gap=None):
    """Pillow's LANCZOS on premultiplied data. (Pillow 9.4's RGBA resize does not pass
    `reducing_gap` on to its RGBa step, so the RGBa image is resized here.)"""
    im = Image.open(src).convert("RGBA")
    return np.asarray(im.convert("RGBa").resize((dw, dh), Image.LANCZOS, reducing_gap=reducing_gap).convert("RGBA"))


def psnr_and_max(out_path, ref):
    got = np.asarray(Image.open(out_path).convert("RGBA"))
    if not isinstance(ref, np.ndarray):
        ref = np.asarray(Image.open(ref).convert("RGBA"))
    if got.shape != ref.shape:
        raise SystemExit(f"resample: {out_path} is {got.shape}, Pillow made {ref.shape}")
    d = premultiplied(got) - premultiplied(ref)
    mse = float(np.mean(d * d))
    psnr = math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)
    return psnr, float(np.max(np.abs(d)))


# ---------------------------------------------------------------------------------------------
# Runtime size

def _records(text):
    """Package records (dicts) from deb822 text."""
    for block in text.split("\n\n"):
        rec, key = {}, None
        for line in block.splitlines():
            if line[:1] in (" ", "\t") and key:
                rec[key] += "\n" + line
            elif ":" in line:
                key, val = line.split(":", 1)
                rec[key] = val.strip()
        if "Package" in rec:
            yield rec


def _simulate(status_file, packages):
    """Packages `apt-get install -s --no-install-recommends` would add given that dpkg status."""
    out = run(["apt-get", "-s", "-o", f"Dir::State::status={status_file}", "-o", "Debug::NoLocking=1",
               "install", "--no-install-recommends", *packages])
    return sorted({m.group(1) for m in re.finditer(r"^Inst (\S+)", out, re.M)})


def _installed_size_kib(packages, avail):
    return sum(int(avail[p].get("Installed-Size", "0")) for p in packages)


def runtime_sizes():
    """Added Installed-Size of libvips42 and libpixman-1-0 over bookworm-slim and over Flipbook's
    runtime stage (slim + the Dockerfile's libraries), from this machine's apt index.

    debian:bookworm-slim is a debootstrap minbase (the Essential and Priority: required packages,
    plus apt) with docs stripped. No Docker daemon here, so its package set is reconstructed: apt
    resolves Essential + required + apt + usr-is-merged against an empty dpkg status; that set, marked installed
    in a scratch status file, is the base the two libraries are then resolved against."""
    avail = {}
    for rec in _records(run(["apt-cache", "dumpavail"])):
        avail.setdefault(rec["Package"], rec)  # first record = apt's preferred version
    base = sorted(p for p, r in avail.items()
                  if r.get("Essential") == "yes" or r.get("Priority") == "required")
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty")
        open(empty, "w").close()
        # usr-is-merged: as debootstrap does (apt would take the alternative `usrmerge`, and perl).
        slim = sorted(set(_simulate(empty, base + ["apt", "usr-is-merged"])))

        def status_with(pkgs):
            path = os.path.join(tmp, f"status-{len(pkgs)}")
            with open(path, "w") as f:
                for p in pkgs:
                    r = avail[p]
                    f.write(f"Package: {p}\nStatus: install ok installed\n")
                    for k in ("Priority", "Section", "Installed-Size", "Maintainer", "Architecture",
                              "Multi-Arch", "Source", "Version", "Replaces", "Provides", "Depends",
                              "Pre-Depends", "Breaks", "Conflicts", "Essential"):
                        if k in r:
                            f.write(f"{k}: {r[k]}\n")
                    f.write("Description: -\n\n")
            return path

        slim_status = status_with(slim)
        dockerfile = ["libgif7", "libwebp7", "libwebpdemux2", "libpng16-16", "zlib1g", "libdeflate0",
                      "libcurl4"]
        runtime = sorted(set(slim) | set(_simulate(slim_status, dockerfile)))
        runtime_status = status_with(runtime)
        result = {"slim_packages": len(slim), "slim_kib": _installed_size_kib(slim, avail),
                  "runtime_packages": len(runtime), "runtime_kib": _installed_size_kib(runtime, avail)}
        for lib in ("libvips42", "libpixman-1-0"):
            over_slim = _simulate(slim_status, [lib])
            over_runtime = _simulate(runtime_status, [lib])
            result[lib] = {
                "version": avail[lib]["Version"],
                "own_kib": int(avail[lib]["Installed-Size"]),
                "slim_n": len(over_slim), "slim_kib": _installed_size_kib(over_slim, avail),
                "runtime_n": len(over_runtime), "runtime_kib": _installed_size_kib(over_runtime, avail),
                "largest": sorted(over_runtime, key=lambda p: -int(avail[p]["Installed-Size"]))[:6],
            }
        return result


# ---------------------------------------------------------------------------------------------

def fmt_ms(v):
    return "—" if v is None else (f"{v:.1f}" if v >= 10 else f"{v:.2f}")


def fmt_db(v):
    return "—" if v is None else ("∞" if math.isinf(v) else f"{v:.1f}")


def print_large_reductions(rows, pngs, names, large):
    """The reductions by more than 40×: each method's time and its PSNR (largest difference)
    against Pillow's plain LANCZOS and against Pillow with reducing_gap=16."""
    keys = [key for key in rows if large(key)]
    if not keys:
        return
    paths = {n: p for p, n in names.items()}
    print("\n**Reductions by more than 40×: ms per frame / PSNR dB (largest difference) vs Pillow's LANCZOS, "
          "and vs Pillow's LANCZOS with `reducing_gap=16`**\n")
    print("| frame | size → target | α | method | ms | vs Pillow | vs Pillow, reducing_gap 16 |")
    print("|---|---|---|---|---:|---:|---:|")
    for key in keys:
        name, sw, sh, dw, dh = key
        gap = pillow_reference(paths[name], dw, dh, reducing_gap=16)
        for k in METHODS:
            if k not in rows[key]:
                continue
            med, _, _, psnr, maxd = rows[key][k]
            gp, gm = psnr_and_max(pngs[(key, k)], gap)
            print(f"| {name} | {sw}×{sh} → {dw}×{dh} | {'no' if rows[key]['_opaque'] else 'yes'} | {k} | "
                  f"{fmt_ms(med)} | {fmt_db(psnr)} ({maxd:.0f}) | {fmt_db(gp)} ({gm:.0f}) |")


def print_before_after(rows, pngs, large):
    """`flipbook` against `flipbook-before` (the baseline build) on every frame and size."""
    print("\n**flipbook vs flipbook-before: time ratio and the outputs compared (premultiplied PSNR, "
          "largest difference)**\n")
    print("| frame | size → target | before ms | after ms | after ÷ before | PSNR after vs before | largest difference |")
    print("|---|---|---:|---:|---:|---:|---:|")
    ratios = {True: [], False: []}
    for key, m in rows.items():
        if "flipbook" not in m or "flipbook-before" not in m:
            continue
        name, sw, sh, dw, dh = key
        before, after = m["flipbook-before"][0], m["flipbook"][0]
        ratios[large(key)].append(after / before)
        psnr, maxd = psnr_and_max(pngs[(key, "flipbook")], pngs[(key, "flipbook-before")])
        print(f"| {name} | {sw}×{sh} → {dw}×{dh} | {fmt_ms(before)} | {fmt_ms(after)} | {after / before:.2f} | "
              f"{fmt_db(psnr)} | {maxd:.0f} |")
    for is_large, title in ((True, "the reductions by more than 40×"), (False, "the other scalings")):
        if ratios[is_large]:
            r = ratios[is_large]
            print(f"\nAfter ÷ before over {title} ({len(r)}): geometric mean "
                  f"{math.exp(statistics.mean(math.log(x) for x in r)):.3f}, range {min(r):.2f}–{max(r):.2f}.")


def timed_runs(args, frames, outdir):
    """Runs the program(s) over every frame; {(frame path, dw, dh, method): [(median, min, max,
    opaque, png)]}, one entry per round. With a baseline the two programs take turns per frame."""
    results = {}
    runs = []
    for p, n, _ in frames:
        spec = f"{p}:{','.join(map(str, widths_for(p, n)))}"
        methods = LARGE_METHODS if n in LARGE_ONLY else None
        for _ in range(args.rounds):
            runs.append((args.bin, spec, methods, outdir, None))
            if args.baseline:
                runs.append((args.baseline, spec, ["flipbook"], outdir + "-baseline", "flipbook-before"))
    for binary, spec, methods, out, rename in runs:
        os.makedirs(out, exist_ok=True)
        cmd = ["taskset", "-c", args.cpu, binary, "-n", str(args.reps), "-o", out, "-b", str(args.bits)]
        cmd += ["-m", ",".join(methods)] if methods else []
        cmd += ["-c"] if args.cpu_time else []
        for line in run(cmd + [spec]).strip().splitlines():
            src, sw, sh, dw, dh, opaque, method, med, mn, mx, png = line.split("\t")
            method = rename or method
            results.setdefault((src, int(sw), int(sh), int(dw), int(dh), method), []).append(
                (float(med), float(mn), float(mx), opaque == "1", png))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(REPO, "bench-out/resample/resample-bench"))
    ap.add_argument("--baseline", help="another build of resample-bench whose `flipbook` is timed as flipbook-before")
    ap.add_argument("--rounds", type=int, default=None,
                    help="runs of each program per frame (default 1, or 3 with --baseline)")
    ap.add_argument("--cpu-time", action="store_true", help="time the process's CPU time, not wall-clock")
    ap.add_argument("--inputs", default=os.path.join(REPO, "bench-out/inputs"))
    ap.add_argument("--corpus", default=os.path.join(REPO, "..", "shared", "corpus"))
    ap.add_argument("--work", default=os.path.join(REPO, "bench-out/resample"))
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--cpu", default="1", help="taskset CPU list for the timing")
    ap.add_argument("--bits", type=int, default=4, help="pixman subsample bits")
    args = ap.parse_args()
    if args.rounds is None:
        args.rounds = 3 if args.baseline else 1

    frames = make_frames(args.inputs, args.corpus, os.path.join(args.work, "frames"))
    outdir = os.path.join(args.work, "out")
    load_before = os.getloadavg()
    log(f"timing {len(frames)} frames, {args.rounds} round(s) of {args.reps} repetitions, pinned to CPU "
        f"{args.cpu} (load {load_before[0]:.2f})")
    results = timed_runs(args, frames, outdir)
    load_after = os.getloadavg()

    rows = {}  # (name, sw, sh, dw, dh) -> {method: (median, min, max, psnr, maxdiff)}
    names = {p: n for p, n, _ in frames}
    refs = {}
    pngs = {}
    for (src, sw, sh, dw, dh, method), rounds in results.items():
        key = (names[src], sw, sh, dw, dh)
        if (src, dw, dh) not in refs:
            refs[(src, dw, dh)] = pillow_reference(src, dw, dh)
        png = rounds[-1][4]
        psnr, maxd = psnr_and_max(png, refs[(src, dw, dh)])
        med = statistics.median(r[0] for r in rounds)
        rows.setdefault(key, {})[method] = (med, min(r[1] for r in rounds), max(r[2] for r in rounds), psnr, maxd)
        rows[key]["_opaque"] = rounds[-1][3]
        pngs[(key, method)] = png

    clock = "the process's CPU time" if args.cpu_time else "wall-clock time"
    print(f"Machine: {machine()}; timing pinned with `taskset -c {args.cpu}`, {clock}, {args.reps} repetitions "
          f"per method and size, methods interleaved, median shown"
          + (f" (median of {args.rounds} rounds' medians, the two programs taking turns)" if args.rounds > 1 else "")
          + f"; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after. pixman subsample bits "
          f"{args.bits}.\n")
    print("Frames:\n")
    for p, n, d in frames:
        print(f"- `{n}`: {d}")
    print()
    methods = [k for k in METHODS if any(k in m for m in rows.values())]
    head = "| frame | size → target | α | " + " | ".join(methods) + " |"
    print("**ms per frame (median)**\n")
    print(head)
    print("|---|---|---|" + "---:|" * len(methods))
    for key, m in rows.items():
        name, sw, sh, dw, dh = key
        cells = [fmt_ms(m[k][0]) if k in m else "—" for k in methods]
        print(f"| {name} | {sw}×{sh} → {dw}×{dh} | {'no' if m['_opaque'] else 'yes'} | " + " | ".join(cells) + " |")
    print("\n**PSNR (dB) vs Pillow LANCZOS on premultiplied RGBA (largest premultiplied difference)**\n")
    print(head)
    print("|---|---|---|" + "---:|" * len(methods))
    for key, m in rows.items():
        name, sw, sh, dw, dh = key
        cells = [f"{fmt_db(m[k][3])} ({m[k][4]:.0f})" if k in m else "—" for k in methods]
        print(f"| {name} | {sw}×{sh} → {dw}×{dh} | {'no' if m['_opaque'] else 'yes'} | " + " | ".join(cells) + " |")

    large = lambda key: max(key[1] / key[3], key[2] / key[4]) > 40
    print_large_reductions(rows, pngs, {p: n for p, n, _ in frames}, large)
    if args.baseline:
        print_before_after(rows, pngs, large)

    # Summaries: reductions and enlargements apart (libvips takes another path for the latter).
    for title, want in (("reductions by 40× at most", lambda key: key[3] < key[1] and not large(key)),
                        ("enlargements", lambda key: key[3] > key[1])):
        print(f"\n**Summary over the {title}**\n")
        print("| method | frames | total ms | time ÷ vips-float's (geo. mean) | min PSNR dB | median PSNR dB |")
        print("|---|---:|---:|---:|---:|---:|")
        for k in methods:
            sel = [m for key, m in rows.items() if k in m and "vips-float" in m and want(key)]
            if not sel:
                continue
            tot = sum(m[k][0] for m in sel)
            ratio = math.exp(statistics.mean(math.log(m[k][0] / m["vips-float"][0]) for m in sel))
            ps = [m[k][3] for m in sel]
            print(f"| {k} | {len(sel)} | {tot:.1f} | {ratio:.2f} | {fmt_db(min(ps))} | {fmt_db(statistics.median(ps))} |")

    log("resolving runtime sizes with apt")
    sizes = runtime_sizes()
    print(f"\n**Added runtime size** (apt-get -s --no-install-recommends against a reconstructed "
          f"bookworm minbase of {sizes['slim_packages']} packages, {sizes['slim_kib'] / 1024:.1f} MiB; "
          f"Flipbook's runtime stage = that + the Dockerfile's libraries: {sizes['runtime_packages']} "
          f"packages, {sizes['runtime_kib'] / 1024:.1f} MiB)\n")
    print("| runtime package | version | its own Installed-Size | added to bookworm-slim | "
          "added to Flipbook's runtime stage | largest of those |")
    print("|---|---|---:|---:|---:|---|")
    for lib in ("libvips42", "libpixman-1-0"):
        s = sizes[lib]
        print(f"| {lib} | {s['version']} | {s['own_kib'] / 1024:.1f} MiB | {s['slim_kib'] / 1024:.1f} MiB "
              f"({s['slim_n']} packages) | {s['runtime_kib'] / 1024:.1f} MiB ({s['runtime_n']} packages) | "
              f"{', '.join(s['largest'])} |")


if __name__ == "__main__":
    main()
