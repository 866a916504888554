"""Writes PNG and APNG files in layouts Pillow cannot: 16-bit samples, Adam7 interlacing, low bit
depths, frames at offsets. Pure Python (zlib)."""
import struct
import zlib

ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _pack(samples, depth):
    if depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    if depth == 8:
        return bytes(samples)
    out, acc, bits = bytearray(), 0, 0
    for s in samples:
        acc, bits = acc << depth | s, bits + depth
        if bits == 8:
            out.append(acc)
            acc, bits = 0, 0
    if bits:
        out.append(acc << (8 - bits))
    return bytes(out)


def image_data(pixels, width, height, color_type, depth, interlaced):
    """pixels: one tuple of samples per pixel, row-major. Returns the zlib stream (filter 0)."""
    raw = bytearray()
    passes = ADAM7 if interlaced else [(0, 0, 1, 1)]
    for x0, y0, dx, dy in passes:
        columns, rows = range(x0, width, dx), range(y0, height, dy)
        if not columns or not rows:
            continue
        for y in rows:
            raw.append(0)
            raw += _pack([s for x in columns for s in pixels[y * width + x]], depth)
    return zlib.compress(bytes(raw), 9)


def to_layout(rgba16_or_8, color_type, depth, source_depth):
    """Samples of an RGBA pixel (at source_depth) in a layout (gray drops G and B)."""
    def scale(v):
        if source_depth == depth:
            return v
        return v >> (source_depth - depth) if source_depth > depth else v * ((1 << depth) - 1) // ((1 << source_depth) - 1)
    r, g, b, a = (scale(v) for v in rgba16_or_8)
    return {0: (r,), 2: (r, g, b), 4: (r, a), 6: (r, g, b, a)}[color_type]


def write(path, width, height, rgba, bit_depth=8, color_type=6, interlaced=False, source_depth=None):
    """A still PNG of RGBA pixels (16-bit values when bit_depth is 16)."""
    source_depth = source_depth or bit_depth
    pixels = [to_layout(p, color_type, bit_depth, source_depth) for p in rgba]
    data = image_data(pixels, width, height, color_type, bit_depth, interlaced)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0,
                                                                    1 if interlaced else 0))
                + chunk(b"IDAT", data) + chunk(b"IEND", b""))


def write_apng(path, width, height, frames, color_type=6, bit_depth=8, interlaced=False, palette=None,
               transparency=None, plays=0):
    """frames: dicts with 'pixels' (samples per pixel in the layout), 'rect' (x, y, w, h), 'delay'
    (num, den), 'dispose', 'blend'. Frame 0 must cover the canvas."""
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0,
                                                            1 if interlaced else 0))
    out += chunk(b"acTL", struct.pack(">II", len(frames), plays))
    if palette:
        out += chunk(b"PLTE", palette)
    if transparency:
        out += chunk(b"tRNS", transparency)
    sequence = 0
    for i, frame in enumerate(frames):
        x, y, w, h = frame["rect"]
        num, den = frame.get("delay", (1, 10))
        out += chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, w, h, x, y, num, den, frame.get("dispose", 0),
                                          frame.get("blend", 0)))
        sequence += 1
        data = image_data(frame["pixels"], w, h, color_type, bit_depth, interlaced)
        if i == 0:
            out += chunk(b"IDAT", data)
        else:
            out += chunk(b"fdAT", struct.pack(">I", sequence) + data)
            sequence += 1
    with open(path, "wb") as f:
        f.write(out + chunk(b"IEND", b""))
