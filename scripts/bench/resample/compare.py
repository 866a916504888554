"""`make bench-resample`: libvips vs pixman scaling the same RGBA frames (issue 21, item 2).

    PYTHONPATH=scripts /usr/bin/python3 -m bench.resample.compare --bin bench-out/resample/resample-bench

1. Inputs (bench-out/resample/frames): frames of bench-out/inputs/small.gif (480×270) and
   large.gif (1280×720), composited by `vips copy FILE[page=N]`; frames with transparency from
   ../shared/corpus (Chromium's reference frames); one synthetic hard alpha edge over saturated
   colour, made here with numpy.
2. The C program (Benchmarks/resample/resample-bench.c) scales each frame to 160, 320 and 640 px
   wide where that is a reduction, and two frames 2× up, with every method, REPS times each,
   interleaved, pinned to one CPU with taskset; it reports the median ms per frame. The methods
   are listed at the top of resample-bench.c.
3. Quality: PSNR of each output vs Pillow's LANCZOS of the same frame on premultiplied data
   (RGBA → "RGBa", resize, → RGBA), both compared as premultiplied values (R·A/255, G·A/255,
   B·A/255, A) over all pixels and channels; and the largest such difference.
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
METHODS = ["vips-float", "vips-float-trunc", "vips-u8", "vips-opaque", "vips-affine", "pixman", "pixman-2pass"]
TARGETS = [160, 320, 640]

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
    return frames


def widths_for(path, name):
    w = Image.open(path).width
    ws = [t for t in TARGETS if t < w]
    if not ws:
        ws = [max(1, w * 3 // 4)]
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


def pillow_reference(src, dw, dh):
    im = Image.open(src).convert("RGBA")
    return np.asarray(im.convert("RGBa").resize((dw, dh), Image.LANCZOS).convert("RGBA"))


def psnr_and_max(out_path, ref):
    got = np.asarray(Image.open(out_path).convert("RGBA"))
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(REPO, "bench-out/resample/resample-bench"))
    ap.add_argument("--inputs", default=os.path.join(REPO, "bench-out/inputs"))
    ap.add_argument("--corpus", default=os.path.join(REPO, "..", "shared", "corpus"))
    ap.add_argument("--work", default=os.path.join(REPO, "bench-out/resample"))
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--cpu", default="1", help="taskset CPU list for the timing")
    ap.add_argument("--bits", type=int, default=4, help="pixman subsample bits")
    args = ap.parse_args()

    frames = make_frames(args.inputs, args.corpus, os.path.join(args.work, "frames"))
    outdir = os.path.join(args.work, "out")
    os.makedirs(outdir, exist_ok=True)
    specs = [f"{p}:{','.join(map(str, widths_for(p, n)))}" for p, n, _ in frames]
    load_before = os.getloadavg()
    log(f"timing {len(frames)} frames, {args.reps} repetitions, pinned to CPU {args.cpu} "
        f"(load {load_before[0]:.2f})")
    out = run(["taskset", "-c", args.cpu, args.bin, "-n", str(args.reps), "-o", outdir,
               "-b", str(args.bits), *specs])
    load_after = os.getloadavg()

    rows = {}  # (name, sw, sh, dw, dh) -> {method: (median, min, max, psnr, maxdiff)}
    names = {p: n for p, n, _ in frames}
    refs = {}
    for line in out.strip().splitlines():
        src, sw, sh, dw, dh, opaque, method, med, mn, mx, png = line.split("\t")
        sw, sh, dw, dh = int(sw), int(sh), int(dw), int(dh)
        key = (names[src], sw, sh, dw, dh)
        if (src, dw, dh) not in refs:
            refs[(src, dw, dh)] = pillow_reference(src, dw, dh)
        psnr, maxd = psnr_and_max(png, refs[(src, dw, dh)])
        rows.setdefault(key, {})[method] = (float(med), float(mn), float(mx), psnr, maxd)
        rows[key]["_opaque"] = opaque == "1"

    print(f"Machine: {machine()}; timing pinned with `taskset -c {args.cpu}`, {args.reps} repetitions "
          f"per method and size, methods interleaved, median shown; load average "
          f"{load_before[0]:.2f} before, {load_after[0]:.2f} after. pixman subsample bits {args.bits}.\n")
    print("Frames:\n")
    for p, n, d in frames:
        print(f"- `{n}`: {d}")
    print()
    head = "| frame | size → target | α | " + " | ".join(METHODS) + " |"
    print("**ms per frame (median)**\n")
    print(head)
    print("|---|---|---|" + "---:|" * len(METHODS))
    for key, m in rows.items():
        name, sw, sh, dw, dh = key
        cells = [fmt_ms(m[k][0]) if k in m else "—" for k in METHODS]
        print(f"| {name} | {sw}×{sh} → {dw}×{dh} | {'no' if m['_opaque'] else 'yes'} | " + " | ".join(cells) + " |")
    print("\n**PSNR (dB) vs Pillow LANCZOS on premultiplied RGBA (largest premultiplied difference)**\n")
    print(head)
    print("|---|---|---|" + "---:|" * len(METHODS))
    for key, m in rows.items():
        name, sw, sh, dw, dh = key
        cells = [f"{fmt_db(m[k][3])} ({m[k][4]:.0f})" if k in m else "—" for k in METHODS]
        print(f"| {name} | {sw}×{sh} → {dw}×{dh} | {'no' if m['_opaque'] else 'yes'} | " + " | ".join(cells) + " |")

    # Summaries: reductions and enlargements apart (libvips takes another path for the latter).
    for title, want in (("reductions", lambda key: key[3] < key[1]), ("enlargements", lambda key: key[3] > key[1])):
        print(f"\n**Summary over the {title}**\n")
        print("| method | frames | total ms | time ÷ vips-float's (geo. mean) | min PSNR dB | median PSNR dB |")
        print("|---|---:|---:|---:|---:|---:|")
        for k in METHODS:
            sel = [m for key, m in rows.items() if k in m and want(key)]
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
