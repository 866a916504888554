#!/usr/bin/python3
"""The Pillow peer of `make bench-renditions`, written as a Pillow user would:

  pillow_scaled.py IN OUTDIR WIDTH png         every frame → RGBA → LANCZOS to WIDTH → PNG
  pillow_scaled.py IN OUTDIR WIDTH webp Q      … → lossy WebP at quality Q

Pillow composites GIF, APNG and animated WebP frames itself when seeking. The height keeps the
aspect ratio (round(h·WIDTH/w), at least 1). `Image.resize` of an RGBA image works on
premultiplied alpha (Pillow converts to "RGBa" and back itself). PNGs are saved with Pillow's
defaults (zlib level 6), WebP with `quality=Q` and Pillow's other defaults (method 4).
Files are OUTDIR/frame_NNNN.png or .webp, as `flipbook frames` names them.
"""

import os
import sys

from PIL import Image


def main() -> int:
    if len(sys.argv) not in (5, 6) or sys.argv[4] not in ("png", "webp"):
        print(__doc__, file=sys.stderr)
        return 2
    source, out, width, fmt = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    quality = int(sys.argv[5]) if len(sys.argv) == 6 else 80
    os.makedirs(out, exist_ok=True)
    with Image.open(source) as image:
        height = max(1, round(image.height * width / image.width))
        for index in range(getattr(image, "n_frames", 1)):
            image.seek(index)
            frame = image.convert("RGBA").resize((width, height), Image.LANCZOS)
            path = os.path.join(out, f"frame_{index:04d}.{fmt}")
            if fmt == "png":
                frame.save(path, format="PNG")
            else:
                frame.save(path, format="WEBP", quality=quality)
    return 0


if __name__ == "__main__":
    sys.exit(main())
