"""Distinct small animations for the scale benchmark: an 8×8 GIF of two frames of 100 ms (a
checkerboard, then its inverse) whose 4-colour palette spells the seed, so every seed gives other
bytes, hence another content id. About 240 bytes; a valid GIF every decoder reads (LZW with literal
codes only, `benchlib.gifgen.lzw_plain`)."""
import struct

from benchlib.gifgen import lzw_plain, sub_blocks

_BOARD = bytes((x + y) % 2 for y in range(8) for x in range(8))
_FRAMES = [lzw_plain(_BOARD), lzw_plain(bytes(3 - v for v in _BOARD))]
_HEAD = b"GIF89a" + struct.pack("<HHBBB", 8, 8, 0x81, 0, 0)  # a global table of 4 colours
_LOOP = b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
_BODY = b"".join(
    b"\x21\xf9\x04\x00" + struct.pack("<H", 10) + b"\x00\x00"  # 10 cs, no transparency
    + b"\x2c" + struct.pack("<HHHHB", 0, 0, 8, 8, 0) + b"\x08" + sub_blocks(data)
    for data in _FRAMES) + b"\x3b"


def tiny_gif(seed):
    """The animation of `seed` (0 ≤ seed < 2**64)."""
    palette = seed.to_bytes(8, "little") + b"\x11\x22\x33\x44"
    return _HEAD + palette + _LOOP + _BODY


def write_files(directory, first, count):
    """Writes the animations of seeds first … first + count - 1 into `directory` (made if missing),
    100 per subdirectory; returns their paths' count."""
    import os
    for start in range(first, first + count, 100):
        sub = os.path.join(directory, f"{start // 100:08d}")
        os.makedirs(sub, exist_ok=True)
        for seed in range(start, min(start + 100, first + count)):
            with open(os.path.join(sub, f"{seed}.gif"), "wb") as f:
                f.write(tiny_gif(seed))
    return count
