#!/usr/bin/env python3
"""Previews in Chromium (issue 24's browser goals): for each input, the 320 px preview (lossy at
quality 75, and lossless) decoded by headless Chromium's WebCodecs ImageDecoder
(../shared/tools/browser-frames) against what Flipbook says of the original (`flipbook info`)
and the rendition frames (`flipbook frames --width 320`): frame count, repetitionCount, each
frame's duration = its delayMs, and each frame's PSNR against the rendition frame (ffmpeg's psnr
filter over RGBA; "inf" = identical).

usage: scripts/bench/derived/chromium_check.py [INPUT…]   (default bench-out/inputs/small.gif,
       large.gif); FLIPBOOK_BIN (default .build/release/flipbook), BROWSER_FRAMES (default
       ../shared/tools/browser-frames). Prints one Markdown row per preview.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.environ.get("FLIPBOOK_BIN", os.path.join(REPO, ".build/release/flipbook"))
FRAMES_TOOL = os.environ.get("BROWSER_FRAMES", os.path.join(REPO, "..", "shared", "tools", "browser-frames"))


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def psnr(a_dir, b_dir, count):
    """The lowest and mean per-frame PSNR (dB) between two frame_%04d.png sequences."""
    with tempfile.NamedTemporaryFile(suffix=".log") as stats:
        subprocess.run(
            ["ffmpeg", "-v", "error", "-i", os.path.join(a_dir, "frame_%04d.png"), "-i",
             os.path.join(b_dir, "frame_%04d.png"), "-lavfi",
             f"[0:v]format=rgba[a];[1:v]format=rgba[b];[a][b]psnr=stats_file={stats.name}", "-f", "null", "-"],
            check=True, capture_output=True)
        values = [float(m.group(1)) if m.group(1) != "inf" else float("inf")
                  for m in re.finditer(r"psnr_avg:(\S+)", open(stats.name).read())]
    assert len(values) == count, (len(values), count)
    finite = [v for v in values if v != float("inf")]
    mean = sum(finite) / len(finite) if finite else float("inf")
    return min(values), mean


def check(path):
    info = json.loads(run(BIN, "info", path, "--compact"))
    delays = [f["delayMs"] for f in info["frames"]]
    repetition = info["repetitionCount"]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        rendition = os.path.join(work, "rendition")
        run(BIN, "frames", path, "--width", "320", "--output", rendition)
        for label, extra in (("q75", ["--quality", "75"]), ("lossless", [])):
            preview = os.path.join(work, f"{label}.webp")
            run(BIN, "preview", path, "--width", "320", *extra, "--output", preview)
            decoded = os.path.join(work, label)
            run(sys.executable, FRAMES_TOOL, preview, decoded)
            meta = json.load(open(os.path.join(decoded, "meta.json")))
            durations = [round(f["duration"] / 1000) for f in meta["frames"]]
            chromium_rep = "infinite" if meta["repetitionCount"] == "Infinity" else meta["repetitionCount"]
            low, mean = psnr(decoded, rendition, len(delays)) if meta["frameCount"] == len(delays) else (None, None)
            rows.append(
                f"| {os.path.basename(path)} | {label} | {os.path.getsize(preview)} | {meta['frameCount']} / {len(delays)} "
                f"| {chromium_rep} / {repetition} | {'yes' if durations == delays else 'NO'} "
                f"| {low:.2f} | {mean:.2f} |" if low is not None and low != float('inf') else
                f"| {os.path.basename(path)} | {label} | {os.path.getsize(preview)} | {meta['frameCount']} / {len(delays)} "
                f"| {chromium_rep} / {repetition} | {'yes' if durations == delays else 'NO'} | {low} | {mean} |")
    return rows


def main():
    inputs = sys.argv[1:] or [os.path.join(REPO, "bench-out/inputs", n) for n in ("small.gif", "large.gif")]
    print("| input | preview | bytes | frames (Chromium / original) | repetitionCount (Chromium / original) "
          "| durations = delayMs | lowest PSNR dB | mean PSNR dB |")
    print("|---|---|---:|---|---|---|---:|---:|")
    for path in inputs:
        for row in check(path):
            print(row, flush=True)


if __name__ == "__main__":
    main()
