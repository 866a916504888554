#!/usr/bin/python3
"""How close WebP itself can get to a rendition frame, whatever the animation around it: a few
rendition frames of INPUT at 320 px (`flipbook frames --width 320`), each encoded alone by
`cwebp` with each setting below (lossy at several qualities, with and without sharp RGB→YUV
conversion, near-lossless, lossless), decoded by `dwebp`, and compared with the frame over what
is seen (premultiplied RGBA, as chromium_survey.py does). Prints one Markdown row per setting:
mean bytes per frame and the lowest and mean PSNR over the sampled frames.

Issue 24 asks every lossy preview frame to be within 40 dB of its rendition frame; this shows
where lossy WebP cannot get there at any quality (VP8 keeps colour at half resolution in each
direction, so frames of saturated colours with sharp edges keep a chroma error no quality
removes) and what it costs to get there by the lossless coder instead.

usage: scripts/bench/derived/webp_ceiling.py INPUT [FRAMES]   (FRAMES: how many, evenly spread;
       default 6). FLIPBOOK_BIN (default .build/release/flipbook). Needs Pillow, numpy, webp.
"""
import os
import subprocess
import sys
import tempfile

from chromium_survey import BIN, cwebp_alone

SETTINGS = [
    ["-q", "75"], ["-q", "90"], ["-q", "100"], ["-q", "100", "-sharp_yuv"],
    ["-near_lossless", "60"], ["-near_lossless", "40"], ["-near_lossless", "20"], ["-lossless"],
]


def main():
    path = sys.argv[1]
    wanted = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    with tempfile.TemporaryDirectory() as work:
        frames_dir = os.path.join(work, "frames")
        subprocess.run([BIN, "frames", path, "--width", "320", "--output", frames_dir], check=True,
                       capture_output=True)
        names = sorted(n for n in os.listdir(frames_dir) if n.endswith(".png"))
        step = max(1, len(names) // wanted)
        sample = [os.path.join(frames_dir, n) for n in names[::step][:wanted]]
        print(f"{os.path.basename(path)}: {len(sample)} of {len(names)} rendition frames at 320 px "
              f"({', '.join(os.path.basename(s) for s in sample)})\n")
        print("| cwebp setting | bytes per frame (mean) | lowest PSNR | mean PSNR |")
        print("|---|---:|---:|---:|")
        for setting in SETTINGS:
            measured = [cwebp_alone(frame, setting, work) for frame in sample]
            sizes, values = [m[0] for m in measured], [m[1] for m in measured]
            finite = [v for v in values if v != float("inf")]
            mean = f"{sum(finite) / len(finite):.1f} dB" if finite else "identical"
            lowest = "identical" if min(values) == float("inf") else f"{min(values):.1f} dB"
            print(f"| `{' '.join(setting)}` | {sum(sizes) // len(sizes):,} | {lowest} | {mean} |")


if __name__ == "__main__":
    main()
