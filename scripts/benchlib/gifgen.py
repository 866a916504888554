"""GIF files written in plain Python, no encoder needed: the LZW streams (`lzw_plain`, every pixel
its own 9-bit code with a clear code every 254 of them, which every decoder reads and which needs
no dictionary; `lzw_uniform`, one colour compactly), a GIF89a of full-canvas frames (`gif`), and
`make_gif`, the deterministic small animations of the topology and browser tests.

`make_gif`'s images are looping animations of a square moving over a background; `seed` changes
colours, size, frame count and delays, so every seed gives different bytes (and so a different
image id).
"""
import random
import struct


class _Bits:
    """LSB-first bit writer for GIF LZW codes."""

    def __init__(self):
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def put(self, code, width):
        self.acc |= code << self.n
        self.n += width
        while self.n >= 8:
            self.out.append(self.acc & 0xFF)
            self.acc >>= 8
            self.n -= 8

    def done(self):
        if self.n:
            self.out.append(self.acc & 0xFF)
        return bytes(self.out)


def sub_blocks(data):
    out = bytearray()
    for i in range(0, len(data), 255):
        piece = data[i:i + 255]
        out.append(len(piece))
        out += piece
    out.append(0)
    return bytes(out)


def lzw_plain(indices):
    """LZW data (minimum code size 8) that a GIF decoder reads as `indices`: every pixel its own
    code, with a clear code before the table would widen, so no dictionary is needed."""
    bits = _Bits()
    clear, end = 256, 257
    bits.put(clear, 9)
    since_clear = 0
    for value in indices:
        if since_clear == 254:  # the next code would be 512: start over at 9 bits
            bits.put(clear, 9)
            since_clear = 0
        bits.put(value, 9)
        since_clear += 1
    bits.put(end, 9)
    return bits.done()


def lzw_uniform(value, count):
    """LZW data (minimum code size 8) for `count` pixels of one index, compact: the codes spell
    runs of 1, 2, 3, … pixels, so a 49 MP frame is a few tens of kilobytes."""
    bits = _Bits()
    clear, end = 256, 257
    left = count
    width = 9
    while left > 0:
        bits.put(clear, width)  # at the width the table had grown to
        next_code, width = 258, 9
        bits.put(value, width)
        left -= 1
        run = 2
        while left > 0 and next_code < 4095:
            if run > left:
                # the rest one pixel at a time; each code still adds an entry to the table
                bits.put(value, width)
                left -= 1
            else:
                bits.put(next_code, width)
                left -= run
                run += 1
            next_code += 1
            if next_code == (1 << width) and width < 12:
                width += 1
    bits.put(end, width)
    return bits.done()


def gif(width, height, frames, palette, delay_cs=5, loops=0, screen=None, comment=b""):
    """A GIF89a of full-canvas frames; `frames` is a list of LZW data (min code size 8); a
    comment extension before the frames when `comment` is given."""
    sw, sh = screen or (width, height)
    pal = bytearray()
    for r, g, b in palette[:256]:
        pal += bytes((r, g, b))
    pal += b"\0" * (768 - len(pal))
    out = bytearray(b"GIF89a" + struct.pack("<HHBBB", sw, sh, 0xF7, 0, 0) + pal)
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", loops) + b"\0"
    if comment:
        out += b"\x21\xfe" + sub_blocks(comment)
    for data in frames:
        out += b"\x21\xf9\x04\x00" + struct.pack("<H", delay_cs) + b"\x00\x00"
        out += b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0) + b"\x08" + sub_blocks(data)
    out += b"\x3b"
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
        out += sub_blocks(lzw_plain(pixels))
    out.append(0x3B)
    return bytes(out), frames


if __name__ == "__main__":
    import sys
    data, count = make_gif(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
    sys.stdout.buffer.write(data)
    print(f"{count} frames", file=sys.stderr)
