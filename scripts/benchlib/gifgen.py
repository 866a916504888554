"""Deterministic small animated GIFs for the topology test, in plain Python (no encoder needed).

Each image is a looping animation of a square moving over a background; `seed` changes colours,
size, frame count and delays, so every seed gives different bytes (and so a different image id).
The LZW stream is "uncompressed": 9-bit literal codes with a clear code every 254 literals, which
every GIF decoder reads and which needs no dictionary on the encoding side.
"""
import random
import struct


def _lzw_literal_stream(indices):
    """Min code size 8: clear = 256, end = 257, every code 9 bits wide."""
    codes = [256]
    run = 0
    for value in indices:
        if run == 254:
            codes.append(256)
            run = 0
        codes.append(value)
        run += 1
    codes.append(257)
    out = bytearray()
    acc = 0
    bits = 0
    for code in codes:
        acc |= code << bits
        bits += 9
        while bits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            bits -= 8
    if bits:
        out.append(acc & 0xFF)
    return bytes(out)


def _sub_blocks(data):
    out = bytearray()
    for i in range(0, len(data), 255):
        chunk = data[i:i + 255]
        out.append(len(chunk))
        out += chunk
    out.append(0)
    return bytes(out)


def make_gif(seed, size=None, frames=None, delays_cs=None, loops=0):
    """→ (GIF bytes, frame count). `size` (w, h) and `frames` override the seeded choices;
    `delays_cs` gives every frame's delay in centiseconds (cycled); `loops` is the NETSCAPE2.0
    loop count (0 = forever: the animation plays loops + 1 times otherwise), None for no
    NETSCAPE2.0 extension (the animation plays once)."""
    rng = random.Random(seed)
    width = rng.randrange(24, 64)
    height = rng.randrange(24, 64)
    count = rng.randrange(4, 13)
    if size:
        width, height = size
    frames = frames or count
    side = max(4, min(width, height) // 4)
    palette = bytearray()
    for i in range(256):
        palette += bytes((rng.randrange(256), rng.randrange(256), rng.randrange(256)))

    out = bytearray(b"GIF89a")
    # Logical screen: global colour table of 256 entries (size field 7), background 0.
    out += struct.pack("<HHBBB", width, height, 0xF7, 0, 0)
    out += palette
    # NETSCAPE2.0 application extension: loop forever unless told.
    if loops is not None:
        out += b"\x21\xFF\x0BNETSCAPE2.0\x03\x01" + struct.pack("<H", loops) + b"\x00"
    background = rng.randrange(1, 256)
    square = rng.randrange(1, 256)
    for f in range(frames):
        delay_cs = rng.choice((2, 5, 10, 20))
        if delays_cs:
            delay_cs = delays_cs[f % len(delays_cs)]
        # Graphic control extension: disposal "none", no transparency.
        out += b"\x21\xF9\x04" + struct.pack("<BHB", 0x04, delay_cs, 0) + b"\x00"
        out += b"\x2C" + struct.pack("<HHHHB", 0, 0, width, height, 0)
        x0 = (f * max(1, (width - side) // frames)) % max(1, width - side)
        y0 = (seed * 7 + f * 3) % max(1, height - side)
        pixels = []
        for y in range(height):
            inside_y = y0 <= y < y0 + side
            for x in range(width):
                pixels.append(square if inside_y and x0 <= x < x0 + side else background)
        out.append(8)  # LZW minimum code size
        out += _sub_blocks(_lzw_literal_stream(pixels))
    out.append(0x3B)
    return bytes(out), frames


if __name__ == "__main__":
    import sys
    data, count = make_gif(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
    sys.stdout.buffer.write(data)
    print(f"{count} frames", file=sys.stderr)
