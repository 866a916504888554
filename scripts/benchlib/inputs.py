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

from benchlib.gifgen import gif, lzw_plain, lzw_uniform

OK_NEW = {201, 200}
DAMAGED = {201, 200, 415, 422}
REFUSED = {422}


# ---- GIF (written by benchlib.gifgen) ------------------------------------------------------

def _pattern(rng, width, height, colors, frame):
    """Indices of a moving stripe pattern: cheap to make, different for every seed."""
    a, b, c = rng.randrange(1, 7), rng.randrange(1, 7), rng.randrange(colors)
    return bytes(((x * a + y * b + frame * 3 + c) // 4) % colors for y in range(height) for x in range(width))


def valid_gif(rng, tag=b""):
    """A random animated GIF; `tag` (in a comment extension before the frames) makes it unique."""
    w, h, n = rng.randrange(32, 129), rng.randrange(32, 129), rng.randrange(2, 9)
    colors = rng.choice([4, 16, 64])
    palette = [(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(colors)]
    return gif(w, h, [lzw_plain(_pattern(rng, w, h, colors, k)) for k in range(n)], palette,
               delay_cs=rng.choice([4, 5, 8, 10]), comment=tag)


# ---- PNG / APNG -----------------------------------------------------------------------------

def png_chunk(kind, payload):
    """One PNG chunk: length, type, payload, CRC."""
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


def apng(width, height, raw_frames, delay=(1, 20), comment=b""):
    """An APNG of full-canvas RGBA frames; raw_frames are filtered scanlines (filter byte 0); a
    tEXt comment after IHDR when `comment` is given."""
    out = bytearray(png_signature())
    out += png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
    if comment:
        out += png_chunk(b"tEXt", b"Comment\0" + comment)
    out += png_chunk(b"acTL", struct.pack(">II", len(raw_frames), 0))
    seq = 0
    for k, raw in enumerate(raw_frames):
        out += png_chunk(b"fcTL", struct.pack(">IIIIIHHBB", seq, width, height, 0, 0, delay[0], delay[1], 0, 0))
        seq += 1
        data = zlib.compress(raw, 6)
        if k == 0:
            out += png_chunk(b"IDAT", data)
        else:
            out += png_chunk(b"fdAT", struct.pack(">I", seq) + data)
            seq += 1
    out += png_chunk(b"IEND", b"")
    return bytes(out)


def valid_apng(rng, tag=b""):
    """A random APNG; `tag` (a tEXt comment) makes it unique."""
    w, h, n = rng.randrange(24, 97), rng.randrange(24, 97), rng.randrange(2, 7)
    return apng(w, h, [_rgba_rows(rng, w, h, k) for k in range(n)], delay=(rng.choice([1, 2, 3]), 20), comment=tag)


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
    out += png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
    out += png_chunk(b"IDAT", data)
    out += png_chunk(b"IEND", b"")
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
        """A new valid file: GIF and APNG carry the upload's number (never the same bytes twice);
        a WebP's pixels come from a random palette."""
        maker = self.rng.choice(["gif", "gif", "apng", "webp"])
        tag = f"soak upload {self.count}".encode()
        if maker == "gif":
            return "valid gif", valid_gif(self.rng, tag)
        if maker == "apng":
            return "valid apng", valid_apng(self.rng, tag)
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
