#!/usr/bin/python3
"""The Pillow peer of `make bench-decode`, written as a Pillow user would.

  pillow_frames.py all  IN OUTDIR    every frame: seek(i), save OUTDIR/out_NNNN.png
  pillow_frames.py last IN OUT.png   the last frame only: seek(n_frames - 1), save

Pillow composites GIF, APNG and animated WebP frames itself when seeking; frames are saved with
Pillow's PNG defaults (zlib level 6).
"""

import os
import sys

from PIL import Image


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] not in ("all", "last"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, source, target = sys.argv[1:]
    with Image.open(source) as image:
        count = getattr(image, "n_frames", 1)
        if mode == "last":
            image.seek(count - 1)
            image.save(target, format="PNG")
            return 0
        for index in range(count):
            image.seek(index)
            image.save(os.path.join(target, f"out_{index:04d}.png"), format="PNG")
    return 0


if __name__ == "__main__":
    sys.exit(main())
