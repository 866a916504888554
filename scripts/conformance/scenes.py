"""Source frames of the conformance matrix: small scenes every encoder is given, written as PNG
files (8-bit by Pillow; 16-bit and interlaced by pngwrite, which Pillow cannot).

- shapes: an opaque background with a moving square and a blinking dot, so optimising encoders
  store partial frames with disposal and blending;
- alpha: the same over a transparent background, with a half-transparent band;
- photo: smooth gradients with noise (many colours: palette quantisers and lossy codecs work);
- deep: 16-bit RGBA gradients whose low bytes differ from their high bytes.
"""
import os
import random

from PIL import Image

import pngwrite

WIDTH, HEIGHT, FRAMES = 64, 48, 10


def _shapes_pixel(x, y, k, alpha):
    if alpha and (x < 10 or y < 6):
        return (0, 0, 0, 0)
    color = (40 + (x // 8) * 20, 60 + (y // 8) * 22, 90, 255)
    if alpha and 40 <= x < 52:
        color = (200, 40, 40, 96)
    sx = 4 + 5 * k % (WIDTH - 14)
    if sx <= x < sx + 10 and 16 <= y < 26:
        color = (250, 200, 20, 255)
    if k % 3 == 0 and x in (56, 57) and y in (40, 41):
        color = (255, 255, 255, 255)
    return color


def frames(scene, k):
    """Frame k of a scene as a list of RGBA rows (8-bit), or 16-bit values for 'deep'."""
    rng = random.Random(1000 * k + len(scene))
    pixels = []
    for y in range(HEIGHT):
        for x in range(WIDTH):
            if scene == "shapes":
                pixels.append(_shapes_pixel(x, y, k, False))
            elif scene == "alpha":
                pixels.append(_shapes_pixel(x, y, k, True))
            elif scene == "photo":
                n = rng.randint(-12, 12)
                pixels.append((max(0, min(255, x * 4 + k * 9 + n)), max(0, min(255, y * 5 + n)),
                               max(0, min(255, 128 + ((x * y + 37 * k) % 97) - 48)), 255))
            elif scene == "deep":
                pixels.append((x * 1031 + k * 4099 & 0xFFFF, y * 1361 + 257 * rng.randint(0, 3) & 0xFFFF,
                               (x * y * 97 + k * 131) & 0xFFFF, 0xFFFF if (x + y + k) % 5 else 0x8080 + k))
    return pixels


def write_scene(scene, directory, frames_count=FRAMES):
    """Writes frame files f000.png … into `directory`; returns their paths."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for k in range(frames_count):
        path = os.path.join(directory, "f%03d.png" % k)
        if scene == "deep":
            pngwrite.write(path, WIDTH, HEIGHT, frames(scene, k), bit_depth=16)
        else:
            image = Image.new("RGBA", (WIDTH, HEIGHT))
            image.putdata(frames(scene, k))
            if scene in ("shapes", "photo"):
                image = image.convert("RGB")
            image.save(path)
        paths.append(path)
    return paths
