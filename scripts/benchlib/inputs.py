"""Files the soak uploads, made on the fly so that every upload is new bytes (a new content id):
valid animations, damaged copies of them, and bombs. Pure Python (zlib for PNG, a plain LZW
writer for GIF) plus `gif2webp` for animated WebP.

Every maker returns (kind, bytes, expected): `expected` is the set of statuses a correct server
may answer the upload with. 5xx is never in it; 429 (decode queue full) is, for the large frame.
"""
import os
import struct
import subprocess
import tempfile
import zlib

OK_NEW = {201, 200}
DAMAGED = {201, 200, 415, 422}
REFUSED = {422}


# ---- GIF ------------------------------------------------------------------------------------

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


def _sub_blocks(data):
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


def gif(width, height, frames, palette, delay_cs=5, loops=0, screen=None):
    """A GIF89a of full-canvas frames; `frames` is a list of LZW data (min code size 8)."""
    sw, sh = screen or (width, height)
    pal = bytearray()
    for r, g, b in palette[:256]:
        pal += bytes((r, g, b))
    pal += b"\0" * (768 - len(pal))
    out = bytearray(b"GIF89a" + struct.pack("<HHBBB", sw, sh, 0xF7, 0, 0) + pal)
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", loops) + b"\0"
    for data in frames:
        out += b"\x21\xf9\x04\x00" + struct.pack("<H", delay_cs) + b"\x00\x00"
        out += b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0) + b"\x08" + _sub_blocks(data)
    out += b"\x3b"
    return bytes(out)


def _pattern(rng, width, height, colors, frame):
    """Indices of a moving stripe pattern: cheap to make, different for every seed."""
    a, b, c = rng.randrange(1, 7), rng.randrange(1, 7), rng.randrange(colors)
    return bytes(((x * a + y * b + frame * 3 + c) // 4) % colors for y in range(height) for x in range(width))


def valid_gif(rng):
    w, h, n = rng.randrange(32, 129), rng.randrange(32, 129), rng.randrange(2, 9)
    colors = rng.choice([4, 16, 64])
    palette = [(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(colors)]
    return gif(w, h, [lzw_plain(_pattern(rng, w, h, colors, k)) for k in range(n)], palette,
               delay_cs=rng.choice([4, 5, 8, 10]))


# ---- PNG / APNG -----------------------------------------------------------------------------

def _chunk(kind, payload):
    body = kind + payload
    return struct.pack(">I", len(payload)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png_signature():
    return b"\x89PNG\r\n\x1a\n"


def _rgba_rows(rng, w, h, frame):
    a, b = rng.randrange(1, 9), rng.randrange(1, 9)
    rows = bytearray()
    for y in range(h):
        rows.append(0)
        for x in range(w):
            v = (x * a + y * b + frame * 11) & 0xFF
            rows += bytes((v, 255 - v, (v * 3) & 0xFF, 255))
    return bytes(rows)


def apng(width, height, raw_frames, delay=(1, 20), extra_zlib=b""):
    """An APNG of full-canvas RGBA frames; raw_frames are filtered scanlines (filter byte 0)."""
    out = bytearray(png_signature())
    out += _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
    out += _chunk(b"acTL", struct.pack(">II", len(raw_frames), 0))
    seq = 0
    for k, raw in enumerate(raw_frames):
        out += _chunk(b"fcTL", struct.pack(">IIIIIHHBB", seq, width, height, 0, 0, delay[0], delay[1], 0, 0))
        seq += 1
        data = zlib.compress(raw, 6)
        if k == 0:
            out += _chunk(b"IDAT", data)
        else:
            out += _chunk(b"fdAT", struct.pack(">I", seq) + data)
            seq += 1
    out += _chunk(b"IEND", b"")
    return bytes(out)


def valid_apng(rng):
    w, h, n = rng.randrange(24, 97), rng.randrange(24, 97), rng.randrange(2, 7)
    return apng(w, h, [_rgba_rows(rng, w, h, k) for k in range(n)], delay=(rng.choice([1, 2, 3]), 20))


def idat_bomb(inflated=64 << 20):
    """A still 64×64 RGBA PNG whose one zlib stream holds the image's 16,448 bytes of rows and
    then `inflated` bytes of zeros: a few hundred kilobytes that inflate to tens of megabytes.
    A correct server decodes the image (the rows come first) without inflating the surplus."""
    w = h = 64
    rows = bytearray()
    for y in range(h):
        rows.append(0)
        rows += bytes((x * 4 % 256, y * 4 % 256, 128, 255)[i % 4] for x in range(w) for i in range(4))
    compressor = zlib.compressobj(9)
    data = compressor.compress(bytes(rows))
    zeros = b"\0" * (1 << 20)
    for _ in range(inflated >> 20):
        data += compressor.compress(zeros)
    data += compressor.flush()
    out = bytearray(png_signature())
    out += _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
    out += _chunk(b"IDAT", data)
    out += _chunk(b"IEND", b"")
    return bytes(out)


# ---- WebP -----------------------------------------------------------------------------------

def valid_webp(rng, workdir):
    """An animated WebP: a generated GIF converted by gif2webp (lossy or lossless)."""
    source = valid_gif(rng)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        gif_path, webp_path = os.path.join(tmp, "in.gif"), os.path.join(tmp, "out.webp")
        with open(gif_path, "wb") as f:
            f.write(source)
        args = ["gif2webp", "-quiet", "-mixed" if rng.random() < 0.5 else "-lossy", gif_path, "-o", webp_path]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(webp_path, "rb") as f:
            return f.read()


# ---- bombs and damage -----------------------------------------------------------------------

def giant_canvas_gif():
    """A GIF whose logical screen is 65535×65535 (4.3 G pixels): refused while indexing."""
    return gif(1, 1, [lzw_plain(b"\0")], [(0, 0, 0), (255, 255, 255)], screen=(65535, 65535))


def many_frames_gif(count=12000):
    """12,000 1×1 frames: over limits.maxFrames, refused while indexing."""
    frame = lzw_plain(b"\1")
    return gif(1, 1, [frame] * count, [(0, 0, 0), (255, 0, 0)])


def total_pixels_gif(frames=600, side=2000):
    """600 frames of 2000×2000 (2.4 G pixels in all): over limits.maxTotalPixels."""
    frame = lzw_uniform(1, 1)  # a frame whose data ends at once: refused before any decode
    return gif(side, side, [frame] * frames, [(0, 0, 0), (0, 0, 255)])


def large_frame_gif(side=7000, color=1):
    """One legal side×side frame (49 MP at 7000: under limits.maxFramePixels) of one colour,
    in about 60 KB: verification and a first-frame decode each need a 196 MB canvas."""
    return gif(side, side, [lzw_uniform(color, side * side)], [(0, 0, 0), (20, 120, 220), (220, 60, 20)])


def damaged(rng, data):
    """A copy cut short or with bytes overwritten."""
    data = bytearray(data)
    if rng.random() < 0.5:
        return bytes(data[:rng.randrange(8, max(9, len(data)))])
    for _ in range(rng.randrange(1, 9)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data)


class Generator:
    """The upload mix: mostly valid files, some damaged, some bombs, and a large legal frame every
    `large_every` uploads (0 = never)."""

    def __init__(self, rng, workdir, large_every=60):
        self.rng = rng
        self.workdir = workdir
        self.large_every = large_every
        self.count = 0
        self.bomb_cycle = 0

    def valid(self):
        maker = self.rng.choice(["gif", "gif", "apng", "webp"])
        if maker == "gif":
            return "valid gif", valid_gif(self.rng)
        if maker == "apng":
            return "valid apng", valid_apng(self.rng)
        return "valid webp", valid_webp(self.rng, self.workdir)

    def next(self):
        self.count += 1
        if self.large_every and self.count % self.large_every == 0:
            # Bytes after the trailer (not read) make each one a new image: the same bytes again
            # would bring back an id the deleter removed, and its 404 check would see a 200.
            return "large 49 MP frame", large_frame_gif() + struct.pack(">I", self.count), OK_NEW | {429}
        roll = self.rng.random()
        if roll < 0.6:
            kind, data = self.valid()
            return kind, data, OK_NEW
        if roll < 0.85:
            kind, data = self.valid()
            return "damaged " + kind.split()[-1], damaged(self.rng, data), DAMAGED
        self.bomb_cycle += 1
        bombs = [("IDAT bomb", idat_bomb, OK_NEW), ("giant canvas", giant_canvas_gif, REFUSED),
                 ("too many frames", many_frames_gif, REFUSED), ("too many pixels", total_pixels_gif, REFUSED)]
        kind, maker, expected = bombs[self.bomb_cycle % len(bombs)]
        data = maker()
        if expected is OK_NEW:
            # A new id each time: append a private chunk after IEND... not read by decoders, but a
            # different hash. (PNG readers stop at IEND.)
            data += struct.pack(">I", self.count)
        return kind, data, expected
