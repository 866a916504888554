"""Goal 3 of issue 21 (quality), over the shared corpus (CORPUS/manifest.json and
CORPUS/flipbook-cases/manifest.json; ../shared/corpus by default).

For every input that `flipbook frames FILE -o DIR` decodes (negative cases included: those it
refuses are counted and skipped):

- Scaled frames: `flipbook frames FILE --width W -o DIR` for W = floor(width / 2) (when ≥ 1 and
  below the width) and W = 160 (when below floor(width / 2)). Every frame of each output (or
  SAMPLE evenly spaced ones, first and last included, when SAMPLE > 0) is compared with Pillow's
  LANCZOS of flipbook's own full-size frame on premultiplied alpha (RGBA → "RGBa" → resize to
  flipbook's output size → "RGBA"): PSNR over premultiplied values (R·A/255, G·A/255, B·A/255,
  A), every pixel and channel, as `make bench-resample` compares. Two diagnostic references
  beside it: the same Pillow LANCZOS run vertical pass first (on the transposed frame), the order
  libvips's vips_resize uses — both round and clamp to 8 bits between the passes, so on hard
  edges the order moves values by up to ~25 levels; and Pillow with both of libvips's conventions
  (that order, and edges extended by copying: pillow_lanczos_libvips_conventions), to tell
  conventions from faults. (flipbook reduces in Pillow's conventions and arithmetic since
  Sources/CResample/clipped_lanczos.c; the two diagnostics now show how far libvips's conventions
  are from the goal's reference.) The output size is checked against the size rule of docs/renditions.md
  (height = max(1, round(h·W/w)), halves away from zero).
- Lossless WebP: `flipbook frames FILE --format webp -o DIR`, every frame decoded by Pillow
  (libwebp) and compared with the PNG frame: alpha equal everywhere, R, G, B equal where alpha > 0.

Writes bench-out/renditions/quality.json. Needs no lock (nothing here is timed); runs at nice 19
on one core. Environment: CORPUS, SAMPLE=0, FLIPBOOK_BIN.
"""
import datetime
import json
import math
import os
import shutil
import statistics
import subprocess
import tempfile
from fractions import Fraction

import numpy as np
from PIL import Image

from benchlib import REPO, head_commit, log
from bench.renditions import OUT, binary

CORPUS = os.environ.get("CORPUS") or os.path.abspath(os.path.join(REPO, "..", "shared", "corpus"))
SAMPLE = int(os.environ.get("SAMPLE", "0"))  # frames compared per output; 0: every frame
THRESHOLD = 45.0


def manifest():
    entries = []
    for rel in ("manifest.json", os.path.join("flipbook-cases", "manifest.json")):
        path = os.path.join(CORPUS, rel)
        if os.path.exists(path):
            with open(path) as f:
                entries += json.load(f)
    seen, out = set(), []
    for e in entries:
        if e["path"] not in seen:
            seen.add(e["path"])
            out.append(e)
    return out


def run_frames(fb, src, out, *extra):
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run(["nice", "-n", "19", fb, "frames", src, "-o", out, *extra], capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1][:200]
    return sorted(os.listdir(out)), None


def rgba(path):
    with Image.open(path) as im:
        return np.asarray(im.convert("RGBA"))


def premultiplied(a):
    out = a.astype(np.float64)
    out[..., :3] *= out[..., 3:4] / 255.0
    return out


def psnr(got, ref):
    d = premultiplied(got) - premultiplied(ref)
    mse = float(np.mean(d * d))
    return (math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)), float(np.max(np.abs(d)))


def pillow_lanczos(full, size):
    """The goal's reference: Pillow scales horizontally, then vertically (8 bits, clamped, between)."""
    return np.asarray(Image.fromarray(full, "RGBA").convert("RGBa").resize(size, Image.LANCZOS).convert("RGBA"))


def pillow_lanczos_vertical_first(full, size):
    """The same kernel and arithmetic in libvips's order (vips_resize reduces vertically first):
    Pillow on the transposed frame, transposed back."""
    t = Image.fromarray(full, "RGBA").convert("RGBa").transpose(Image.TRANSPOSE)
    return np.asarray(t.resize((size[1], size[0]), Image.LANCZOS).transpose(Image.TRANSPOSE).convert("RGBA"))


def pillow_lanczos_libvips_conventions(full, size):
    """Diagnostic: Pillow's LANCZOS with libvips's two conventions — vertical pass first, and
    edge pixels repeated outward (libvips extends the image by copying its edges; Pillow instead
    drops the taps outside the frame and renormalises the rest). Pillow on the edge-padded,
    transposed frame, the box the original frame."""
    h, w = full.shape[:2]
    pad = 2 * max(w, h) + 8  # wider than the kernel's reach (3 input pixels × the reduction)
    padded = np.pad(full, ((pad, pad), (pad, pad), (0, 0)), mode="edge")
    t = Image.fromarray(padded, "RGBA").convert("RGBa").transpose(Image.TRANSPOSE)
    out = t.resize((size[1], size[0]), Image.LANCZOS, box=(pad, pad, pad + h, pad + w))
    return np.asarray(out.transpose(Image.TRANSPOSE).convert("RGBA"))


def rule_height(w, h, width):
    x = Fraction(h * width, w)
    return max(1, math.floor(x + Fraction(1, 2)))


def sample(n):
    if SAMPLE <= 0 or n <= SAMPLE:
        return list(range(n))
    return sorted({round(i * (n - 1) / (SAMPLE - 1)) for i in range(SAMPLE)})


def one(fb, entry, work):
    src = os.path.join(CORPUS, entry["path"])
    full_dir = os.path.join(work, "full")
    files, err = run_frames(fb, src, full_dir)
    r = {"path": entry["path"], "negative": entry.get("negative", False)}
    if files is None:
        r["refused"] = err
        return r
    full = [os.path.join(full_dir, f) for f in files]
    first = rgba(full[0])
    h, w = first.shape[:2]
    r.update(width=w, height=h, frames=len(full), scaled=[], webp=None)
    widths = []
    if w // 2 >= 1 and w // 2 < w:
        widths.append(w // 2)
    if 160 < w // 2:
        widths.append(160)
    cache = {}
    for width in widths:
        sdir = os.path.join(work, f"w{width}")
        sfiles, err = run_frames(fb, src, sdir, "--width", str(width))
        row = {"width": width, "psnr": [], "psnrVerticalFirst": [], "psnrLibvipsConventions": [], "maxDiff": 0.0,
               "sizeOk": True}
        if sfiles is None or len(sfiles) != len(full):
            row["error"] = err or f"{len(sfiles)} frames, full size has {len(full)}"
            r["scaled"].append(row)
            continue
        for i in sample(len(full)):
            got = rgba(os.path.join(sdir, sfiles[i]))
            gh, gw = got.shape[:2]
            if (gw, gh) != (width, rule_height(w, h, width)):
                row["sizeOk"] = False
                row["size"] = [gw, gh]
            if i not in cache:
                cache[i] = rgba(full[i])
            ref = pillow_lanczos(cache[i], (gw, gh))
            p, m = psnr(got, ref)
            row["psnr"].append([i, p])
            row["psnrVerticalFirst"].append([i, psnr(got, pillow_lanczos_vertical_first(cache[i], (gw, gh)))[0]])
            row["psnrLibvipsConventions"].append(
                [i, psnr(got, pillow_lanczos_libvips_conventions(cache[i], (gw, gh)))[0]])
            row["maxDiff"] = max(row["maxDiff"], m)
        r["scaled"].append(row)
    wdir = os.path.join(work, "webp")
    wfiles, err = run_frames(fb, src, wdir, "--format", "webp")
    if wfiles is None or len(wfiles) != len(full):
        r["webp"] = {"error": err or f"{len(wfiles)} files"}
    else:
        bad_frames, bad_pixels, alpha0_differ = [], 0, 0
        for i, (pf, wf) in enumerate(zip(full, wfiles)):
            png = cache[i] if i in cache else rgba(pf)
            webp = rgba(os.path.join(wdir, wf))
            if webp.shape != png.shape:
                bad_frames.append(i)
                continue
            visible = png[..., 3] > 0
            differ = (webp[..., 3] != png[..., 3]) | (visible & np.any(webp[..., :3] != png[..., :3], axis=-1))
            alpha0_differ += int(np.count_nonzero(~visible & np.any(webp != png, axis=-1)))
            if differ.any():
                bad_frames.append(i)
                bad_pixels += int(np.count_nonzero(differ))
        r["webp"] = {"frames": len(wfiles), "badFrames": bad_frames, "badPixels": bad_pixels,
                     "alpha0Differ": alpha0_differ}
    return r


def main():
    os.makedirs(OUT, exist_ok=True)
    fb = binary()
    entries = manifest()
    work = tempfile.mkdtemp(prefix="flipbook-bench-renditions-q.", dir="/dev/shm")
    results = []
    try:
        for k, e in enumerate(entries):
            r = one(fb, e, work)
            results.append(r)
            if k % 20 == 0 or "refused" not in r and any(
                    p < THRESHOLD for s in r["scaled"] for _, p in s["psnr"]):
                low = [(s["width"], min((p for _, p in s["psnr"]), default=None)) for s in r.get("scaled", [])]
                log(f"bench-renditions: quality {k + 1}/{len(entries)} {e['path']}: "
                    + (f"refused ({r['refused']})" if "refused" in r else f"lowest PSNR {low}, webp {r['webp']}"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), "commit": head_commit(), "binary": fb,
           "corpus": CORPUS, "sample": SAMPLE, "inputs": results}
    path = os.path.join(OUT, "quality.json")
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    vals = [p for r in results for s in r.get("scaled", []) for _, p in s["psnr"]]
    finite = [v for v in vals if math.isfinite(v)]
    log(f"bench-renditions: quality: {len(vals)} frames, min {min(vals):.2f} dB, "
        f"median {statistics.median(vals):.2f} dB, below {THRESHOLD}: {sum(v < THRESHOLD for v in vals)}; "
        f"wrote {path}")


if __name__ == "__main__":
    main()
