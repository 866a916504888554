"""Decodes one file with Chromium (../shared/tools/browser-frames, headless WebCodecs) and with
Flipbook (`flipbook info` and `flipbook frames`), and says whether they agree, as the brief
defines agreement: the same complete frames (count), raw delays and repetition count (for 2+
frames), and pixels — alpha-0 pixels may carry any colour, partially transparent ones may differ
by 1 per channel, still lossy WebP (which Chromium converts from YUV itself) by 2, the rest
exactly. Both rejecting the file is agreement too.
"""
import json
import os
import shutil
import subprocess

import numpy
from PIL import Image

YUV_FORMATS = ("I420", "I420A", "NV12")


class Outcome:
    """match / differs / both reject, with a short reason and what each side made of the file."""

    def __init__(self, verdict, detail="", chromium="", flipbook=""):
        self.verdict, self.detail, self.chromium, self.flipbook = verdict, detail, chromium, flipbook

    def as_json(self):
        return {"verdict": self.verdict, "detail": self.detail, "chromium": self.chromium, "flipbook": self.flipbook}


def chromium_frames(oracle, path, directory):
    """(meta, [RGBA arrays]) or (None, reason) when Chromium rejects the file."""
    shutil.rmtree(directory, ignore_errors=True)
    run = subprocess.run([oracle, path, directory], capture_output=True, text=True, timeout=300)
    meta_path = os.path.join(directory, "meta.json")
    if run.returncode != 0 or not os.path.exists(meta_path):
        return None, (run.stderr.strip().splitlines() or ["no frames"])[-1]
    with open(meta_path) as f:
        meta = json.load(f)
    frames = []
    for frame in meta["frames"]:
        if "error" in frame or "file" not in frame:
            break
        frames.append(numpy.asarray(Image.open(os.path.join(directory, frame["file"])).convert("RGBA"), dtype=numpy.int16))
    meta["frames"] = meta["frames"][:len(frames)]
    if not frames:
        return None, "no complete frame"
    return meta, frames


def flipbook_frames(flipbook, path, directory):
    """(metadata, [RGBA arrays]) or (None, reason) when Flipbook rejects the file."""
    info = subprocess.run([flipbook, "info", path, "--compact"], capture_output=True, text=True, timeout=300)
    if info.returncode != 0:
        return None, info.stderr.strip().replace("flipbook: " + path + ": ", "")
    metadata = json.loads(info.stdout)
    shutil.rmtree(directory, ignore_errors=True)
    written = subprocess.run([flipbook, "frames", path, "--output", directory], capture_output=True, text=True, timeout=300)
    if written.returncode != 0:
        return None, "frames: " + written.stderr.strip()
    files = sorted(f for f in os.listdir(directory) if f.endswith(".png"))
    # Flipbook's PNGs may carry colour chunks; Pillow applies none of them, so values are the file's.
    frames = [numpy.asarray(Image.open(os.path.join(directory, f)).convert("RGBA"), dtype=numpy.int16) for f in files]
    return metadata, frames


def pixel_differences(ours, reference, yuv):
    """Pixels outside the brief's tolerance, and the largest difference among them."""
    if ours.shape != reference.shape:
        return -1, 0
    alpha = reference[..., 3]
    limit = numpy.where(alpha == 255, 2 if yuv else 0, max(2 if yuv else 0, 1))
    difference = numpy.abs(ours - reference)
    colour = numpy.where(alpha[..., None] == 0, 0, difference[..., :3]).max(axis=-1)
    worst = numpy.maximum(colour, difference[..., 3])
    bad = worst > limit
    return int(bad.sum()), int(worst[bad].max()) if bad.any() else 0


def compare(oracle, flipbook, path, scratch):
    reference, why_chromium = chromium_frames(oracle, path, os.path.join(scratch, "chromium"))
    metadata, why_flipbook = flipbook_frames(flipbook, path, os.path.join(scratch, "flipbook"))
    if reference is None and metadata is None:
        return Outcome("both reject", "", why_chromium, why_flipbook)
    if reference is None:
        return Outcome("differs", "Chromium rejects it, Flipbook serves "
                       f"{metadata['frameCount']} frame(s)", why_chromium, "")
    chromium_frames_list, flipbook_list = why_chromium, why_flipbook  # arrays, when decoded
    if metadata is None:
        return Outcome("differs", f"Flipbook rejects it ({why_flipbook}), Chromium shows {len(chromium_frames_list)} frame(s)")
    problems = []
    count = len(chromium_frames_list)
    if metadata["frameCount"] != count:
        problems.append(f"frames: Flipbook {metadata['frameCount']}, Chromium {count}")
    for i, frame in enumerate(reference["frames"][:min(count, metadata["frameCount"])]):
        duration = frame.get("duration")
        raw = metadata["frames"][i]["rawDelayMs"]
        if duration is not None and duration != raw * 1000:
            problems.append(f"delay of frame {i}: Flipbook {raw} ms, Chromium {duration / 1000:g} ms")
            break
    if count >= 2:
        expected = "infinite" if reference["repetitionCount"] == "Infinity" else reference["repetitionCount"]
        if str(metadata["repetitionCount"]) != str(expected):
            problems.append(f"repetitionCount: Flipbook {metadata['repetitionCount']}, Chromium {expected}")
    for i in range(min(count, len(flipbook_list))):
        yuv = reference["frames"][i].get("format") in YUV_FORMATS
        bad, worst = pixel_differences(flipbook_list[i], chromium_frames_list[i], yuv)
        if bad:
            problems.append(f"frame {i}: " + ("size differs" if bad < 0 else f"{bad} pixels differ (max {worst})"))
            break
    summary = f"{count} frame(s)"
    if problems:
        return Outcome("differs", "; ".join(problems), summary, f"{metadata['frameCount']} frame(s)")
    return Outcome("match", "", summary, summary)
