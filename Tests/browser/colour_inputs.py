"""Inputs of the colour check (colour_check.py), made here from nothing: an ICC v2 display
profile with wide-gamut primaries and a gamma-2.6 curve (so a colour-managed browser converts
its pixels visibly), an APNG that embeds it as iCCP and an animated WebP that embeds it as ICCP.
Pure Python (no numpy, no Pillow); the WebP is encoded by libwebp's img2webp and tagged by
webpmux (Debian's webp package).
"""
import os
import struct
import subprocess
import zlib

def s15f16(v): return struct.pack(">i", round(v * 65536))

def matmul(a, b): return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]

def matvec(a, v): return [sum(a[i][k] * v[k] for k in range(3)) for i in range(3)]

def inverse(m):
    a, b, c = m[0]; d, e, f = m[1]; g, h, i = m[2]
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    return [[(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det],
            [(f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det],
            [(d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det]]

def xy_to_xyz(x, y): return [x / y, 1.0, (1 - x - y) / y]

D50 = [0.9642, 1.0, 0.8249]
BRADFORD = [[0.8951, 0.2664, -0.1614], [-0.7502, 1.7135, 0.0367], [0.0389, -0.0685, 1.0296]]

def colorants(red, green, blue, white):
    """RGB -> XYZ(D50) matrix columns for primaries and white point given as xy chromaticities."""
    p = [xy_to_xyz(*red), xy_to_xyz(*green), xy_to_xyz(*blue)]
    m = [[p[j][i] for j in range(3)] for i in range(3)]
    w = xy_to_xyz(*white)
    s = matvec(inverse(m), w)
    m = [[m[i][j] * s[j] for j in range(3)] for i in range(3)]
    src, dst = matvec(BRADFORD, w), matvec(BRADFORD, D50)
    scale = [[dst[0] / src[0], 0, 0], [0, dst[1] / src[1], 0], [0, 0, dst[2] / src[2]]]
    adapt = matmul(inverse(BRADFORD), matmul(scale, BRADFORD))
    return matmul(adapt, m)

def tag_xyz(v): return b"XYZ " + b"\0" * 4 + b"".join(s15f16(c) for c in v)

def tag_curve(gamma): return b"curv" + b"\0" * 4 + struct.pack(">IH", 1, round(gamma * 256)) + b"\0\0"

def tag_desc(text):
    t = text.encode("ascii") + b"\0"
    return b"desc" + b"\0" * 4 + struct.pack(">I", len(t)) + t + struct.pack(">II", 0, 0) + struct.pack(">HB", 0, 0) + b"\0" * 67

def tag_text(text): return b"text" + b"\0" * 4 + text.encode("ascii") + b"\0"

def rgb_profile(description, red, green, blue, white, gamma):
    """An ICC v2 display profile: matrix/TRC, the given primaries, white point and a pure gamma curve."""
    m = colorants(red, green, blue, white)
    tags = [(b"desc", tag_desc(description)), (b"cprt", tag_text("No copyright, use freely")),
            (b"wtpt", tag_xyz(D50)),
            (b"rXYZ", tag_xyz([m[i][0] for i in range(3)])), (b"gXYZ", tag_xyz([m[i][1] for i in range(3)])),
            (b"bXYZ", tag_xyz([m[i][2] for i in range(3)])),
            (b"rTRC", tag_curve(gamma)), (b"gTRC", tag_curve(gamma)), (b"bTRC", tag_curve(gamma))]
    offset = 128 + 4 + 12 * len(tags)
    table, data = b"", b""
    for sig, body in tags:
        while (offset + len(data)) % 4: data += b"\0"
        table += sig + struct.pack(">II", offset + len(data), len(body))
        data += body
    body = struct.pack(">I", len(tags)) + table + data
    size = 128 + len(body)
    header = struct.pack(">I", size) + b"\0" * 4 + struct.pack(">I", 0x02100000) + b"mntr" + b"RGB " + b"XYZ "
    header += struct.pack(">6H", 2026, 1, 1, 0, 0, 0) + b"acsp" + b"\0" * 4 + struct.pack(">I", 0) + b"\0" * 8
    header += b"\0" * 8 + struct.pack(">I", 0) + b"".join(s15f16(c) for c in D50) + b"\0" * 4 + b"\0" * 16 + b"\0" * 28
    assert len(header) == 128
    return header + body


def test_profile():
    """Display P3 primaries with a D65 white, but a pure 2.6 gamma curve: far from sRGB in both."""
    return rgb_profile("Flipbook colour check: P3 primaries, gamma 2.6", (0.680, 0.320), (0.265, 0.690),
                       (0.150, 0.060), (0.3127, 0.3290), 2.6)


def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def frame_pixels(width, height, k):
    """Saturated gradients that move with k; every third 8×8 block partly transparent."""
    pixels = bytearray()
    for y in range(height):
        for x in range(width):
            pixels += bytes([(x * 255 // (width - 1) + k * 40) % 256, (y * 255 // (height - 1) + k * 70) % 256,
                             ((x + y) * 9 + k * 90) % 256,
                             255 if (x // 8 + y // 8 + k) % 3 else (64 + 40 * k) % 256])
    return bytes(pixels)


def png_file(width, height, pixels, extra_chunks=b""):
    raw = b"".join(b"\x00" + pixels[y * width * 4:(y + 1) * width * 4] for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + extra_chunks + _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b""))


def apng_with_profile(profile, width=48, height=32, frames=4):
    """An APNG whose frames after the first are smaller, offset and blended over the canvas."""
    out = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
    out += _chunk(b"iCCP", b"Flipbook colour check\0\0" + zlib.compress(profile))
    out += _chunk(b"acTL", struct.pack(">II", frames, 0))
    sequence = 0
    for k in range(frames):
        w, h, x, y = (width, height, 0, 0) if k == 0 else (width - 8 * k, height - 4 * k, 4 * k, 2 * k)
        pixels = frame_pixels(w, h, k)
        out += _chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, w, h, x, y, 1, 10, 0, 1 if k else 0))
        sequence += 1
        data = zlib.compress(b"".join(b"\x00" + pixels[r * w * 4:(r + 1) * w * 4] for r in range(h)))
        if k == 0:
            out += _chunk(b"IDAT", data)
        else:
            out += _chunk(b"fdAT", struct.pack(">I", sequence) + data)
            sequence += 1
    return out + _chunk(b"IEND", b"")


def webp_with_profile(profile, directory, width=48, height=32, frames=4, lossless=True):
    """A WebP with `profile` as its ICCP chunk (webpmux -set icc): animated (img2webp) when
    `frames` > 1, else a still (cwebp)."""
    paths = []
    for k in range(frames):
        paths.append(os.path.join(directory, f"frame{k}.png"))
        with open(paths[-1], "wb") as f:
            f.write(png_file(width, height, frame_pixels(width, height, k)))
    plain, tagged, icc = (os.path.join(directory, name) for name in ("plain.webp", "tagged.webp", "profile.icc"))
    with open(icc, "wb") as f:
        f.write(profile)
    if frames > 1:
        arguments = ["img2webp", "-loop", "0", "-lossless" if lossless else "-lossy"]
        for path in paths:
            arguments += ["-d", "100", path]
        subprocess.run(arguments + ["-o", plain], check=True, capture_output=True)
    else:
        quality = ["-lossless"] if lossless else ["-q", "80"]
        subprocess.run(["cwebp", "-quiet", *quality, paths[0], "-o", plain], check=True, capture_output=True)
    subprocess.run(["webpmux", "-set", "icc", icc, plain, "-o", tagged], check=True, capture_output=True)
    with open(tagged, "rb") as f:
        return f.read()
