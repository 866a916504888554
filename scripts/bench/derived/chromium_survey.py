#!/usr/bin/python3
"""Previews of every animation of the shared corpus in Chromium (issue 24's browser goal, over
more than the two benchmark inputs of chromium_check.py): for each animated, non-negative input
of ../shared/corpus (manifest.json and flipbook-cases/manifest.json), the preview at 320 px
(never enlarged) at each QUALITY, decoded by headless Chromium's WebCodecs ImageDecoder
(../shared/tools/browser-frames), against what Flipbook says of the original (`flipbook info`)
and its rendition frames (`flipbook frames --width 320`):

  - frame count and repetitionCount equal the original's, each frame's duration its delayMs;
  - each frame's PSNR against the rendition frame over what is seen: colour weighted by alpha
    (premultiplied RGBA), so that the colour of a fully transparent pixel — which the encoder
    is free to change — does not count;
  - where a frame is below 40 dB, the lowest PSNR `cwebp -q QUALITY` gives the rendition frames
    each encoded alone (decoded by dwebp): how far WebP itself gets at that quality.

usage: scripts/bench/derived/chromium_survey.py [QUALITY…]   (default 75; "lossless" for none)
       FLIPBOOK_BIN (default .build/release/flipbook). Prints a summary per quality and the
       inputs whose lowest frame PSNR is below 40 dB. Needs Pillow and numpy (Debian's
       python3-pil, python3-numpy) and cwebp/dwebp (webp).
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.environ.get("FLIPBOOK_BIN", os.path.join(REPO, ".build/release/flipbook"))
CORPUS = os.path.join(REPO, "..", "shared", "corpus")
FRAMES_TOOL = os.path.join(REPO, "..", "shared", "tools", "browser-frames")


def animations():
    items = json.load(open(os.path.join(CORPUS, "manifest.json")))
    items += [dict(item, path="flipbook-cases/" + item["path"])
              for item in json.load(open(os.path.join(CORPUS, "flipbook-cases", "manifest.json")))]
    for item in items:
        if not item.get("negative") and ((item.get("expected") or {}).get("frame_count") or 0) >= 2:
            yield item["path"]


def seen(path):
    """A PNG's pixels as premultiplied RGBA floats."""
    pixels = np.asarray(Image.open(path).convert("RGBA"), dtype=np.float64)
    pixels[..., :3] *= pixels[..., 3:4] / 255
    return pixels


def psnr(a, b):
    mse = np.mean((a - b) ** 2)
    return float("inf") if mse == 0 else 10 * math.log10(255 * 255 / mse)


def survey(path, quality, work):
    info = json.loads(subprocess.run([BIN, "info", path, "--compact"], check=True, capture_output=True).stdout)
    delays = [frame["delayMs"] for frame in info["frames"]]
    rendition = os.path.join(work, "rendition")
    subprocess.run([BIN, "frames", path, "--width", "320", "--output", rendition], check=True, capture_output=True)
    preview = os.path.join(work, "preview.webp")
    extra = [] if quality == "lossless" else ["--quality", quality]
    subprocess.run([BIN, "preview", path, "--width", "320", *extra, "--output", preview], check=True,
                   capture_output=True)
    decoded = os.path.join(work, "chromium")
    subprocess.run([sys.executable, FRAMES_TOOL, preview, decoded], check=True, capture_output=True)
    meta = json.load(open(os.path.join(decoded, "meta.json")))
    repetition = "infinite" if meta["repetitionCount"] == "Infinity" else meta["repetitionCount"]
    timeline_ok = (meta["frameCount"] == len(delays) and repetition == info["repetitionCount"]
                   and [round(f["duration"] / 1000) for f in meta["frames"]] == delays)
    names = sorted(n for n in os.listdir(rendition) if n.endswith(".png"))
    lowest = min(psnr(seen(os.path.join(decoded, f["file"])), seen(os.path.join(rendition, n)))
                 for f, n in zip(meta["frames"], names)) if timeline_ok else None
    alone = None
    if lowest is not None and lowest < 40 and quality != "lossless":
        alone = min(still_psnr(os.path.join(rendition, n), quality, work) for n in names)
    return timeline_ok, lowest, info["width"], info["height"], alone


def still_psnr(frame, quality, work):
    """The PSNR of one rendition frame encoded on its own by `cwebp -q QUALITY` (libwebp's
    defaults otherwise) and decoded by `dwebp`: what WebP at that quality gives that frame with
    no animation around it."""
    return cwebp_alone(frame, ["-q", quality], work)[1]


def cwebp_alone(frame, setting, work):
    """`frame` (a PNG) encoded by `cwebp SETTING` and decoded by `dwebp`: the encoded bytes and
    the PSNR of what comes back over what is seen."""
    encoded = os.path.join(work, "still.webp")
    decoded = os.path.join(work, "still.png")
    subprocess.run(["cwebp", "-quiet", *setting, frame, "-o", encoded], check=True, capture_output=True)
    subprocess.run(["dwebp", "-quiet", encoded, "-o", decoded], check=True, capture_output=True)
    return os.path.getsize(encoded), psnr(seen(decoded), seen(frame))


def main():
    qualities = sys.argv[1:] or ["75"]
    paths = list(animations())
    for quality in qualities:
        rows = []
        for path in paths:
            with tempfile.TemporaryDirectory() as work:
                try:
                    rows.append((path, *survey(os.path.join(CORPUS, path), quality, work)))
                except subprocess.CalledProcessError as error:
                    rows.append((path, False, None, 0, 0, None))
                    print(f"  {path}: {error.cmd[1] if len(error.cmd) > 1 else error.cmd}: {error.stderr!r}",
                          file=sys.stderr)
        timeline_ok = sum(1 for row in rows if row[1])
        measured = [row for row in rows if row[2] is not None]
        at_40 = sum(1 for row in measured if row[2] >= 40)
        print(f"quality {quality}: {len(rows)} animations; frame count, repetitionCount and every duration "
              f"as the original's in {timeline_ok}; every frame ≥ 40 dB (premultiplied RGBA) in {at_40}")
        for path, _, lowest, width, height, alone in sorted(measured, key=lambda row: row[2]):
            if lowest < 40:
                print(f"  {path} ({width}×{height}): lowest frame {lowest:.1f} dB; "
                      f"cwebp -q {quality} on each rendition frame alone: lowest {alone:.1f} dB")
        for path, ok, *_ in rows:
            if not ok:
                print(f"  {path}: timeline differs or the preview failed")


if __name__ == "__main__":
    main()
