"""The encoder × option cases of the conformance matrix: each makes one animation (or still) from
the scenes' frame files with a real encoder, as a user would run it. Every encoder Debian ships
for these formats: ImageMagick, GraphicsMagick, gifsicle, ffmpeg, libwebp's img2webp, gif2webp,
cwebp and webpmux, apngasm, apngopt, Pillow and libvips; plus hand-assembled PNG layouts no
encoder writes (interlaced APNG at every bit depth, small frames at offsets).
"""
import glob
import os
import random
import subprocess

from PIL import Image

import pngwrite


class Case:
    def __init__(self, encoder, option, output, make):
        self.encoder, self.option, self.output, self.make = encoder, option, output, make

    @property
    def name(self):
        return f"{self.encoder}: {self.option}"


def run(*arguments, cwd=None):
    subprocess.run([str(a) for a in arguments], check=True, cwd=cwd, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def pillow_frames(directory, mode="RGBA"):
    return [Image.open(p).convert(mode) for p in sorted(glob.glob(os.path.join(directory, "f*.png")))]


def cases(work):
    """All cases; `work` holds the scenes (work/<scene>/f000.png …) and the outputs."""
    src = {scene: os.path.join(work, "scenes", scene) for scene in ("shapes", "alpha", "photo", "deep")}
    frames = {scene: sorted(glob.glob(os.path.join(d, "f*.png"))) for scene, d in src.items()}
    out = lambda name: os.path.join(work, "inputs", name)  # noqa: E731
    result = []

    def add(encoder, option, filename, make):
        result.append(Case(encoder, option, out(filename), make))

    # ImageMagick (convert)
    for scene in ("shapes", "alpha", "photo"):
        add("ImageMagick", f"GIF, {scene}", f"im-{scene}.gif",
            lambda o, s=scene: run("convert", "-delay", "10", "-loop", "0", *frames[s], o))
        add("ImageMagick", f"GIF -layers Optimize, {scene}", f"im-opt-{scene}.gif",
            lambda o, s=scene: run("convert", "-delay", "10", "-loop", "0", *frames[s], "-layers", "Optimize", o))
    add("ImageMagick", "GIF -layers OptimizeTransparency", "im-opttr.gif",
        lambda o: run("convert", "-delay", "10", "-loop", "0", *frames["alpha"], "-layers", "OptimizeTransparency", o))
    for dispose in ("None", "Background", "Previous"):
        add("ImageMagick", f"GIF -dispose {dispose} -layers OptimizeFrame", f"im-dispose-{dispose}.gif",
            lambda o, d=dispose: run("convert", "-delay", "10", "-loop", "2", "-dispose", d, *frames["alpha"],
                                     "-layers", "OptimizeFrame", o))
    add("ImageMagick", "GIF -interlace GIF", "im-interlaced.gif",
        lambda o: run("convert", "-delay", "7", "-loop", "0", *frames["photo"], "-interlace", "GIF", o))
    for scene in ("shapes", "alpha"):
        add("ImageMagick", f"APNG, {scene}", f"im-{scene}.apng.png",
            lambda o, s=scene: run("convert", "-delay", "1x15", "-loop", "0", *frames[s], "APNG:" + o))
    add("ImageMagick", "APNG 16-bit", "im-deep.apng.png",
        lambda o: run("convert", "-delay", "10", "-loop", "0", *frames["deep"], "-depth", "16", "APNG:" + o))
    for scene, flags in (("alpha", ["-define", "webp:lossless=true"]), ("photo", ["-quality", "70"]),
                         ("alpha", ["-quality", "60"])):
        add("ImageMagick", f"WebP {' '.join(flags)}, {scene}", f"im-{scene}-{len(result)}.webp",
            lambda o, s=scene, f=flags: run("convert", "-delay", "10", "-loop", "0", *frames[s], *f, o))
    add("ImageMagick", "PNG 16-bit interlaced still", "im-deep-interlaced.png",
        lambda o: run("convert", frames["deep"][0], "-depth", "16", "-interlace", "PNG", o))
    add("ImageMagick", "PNG 16-bit gray still", "im-deep-gray.png",
        lambda o: run("convert", frames["deep"][1], "-colorspace", "Gray", "-depth", "16", o))

    # GraphicsMagick (gm convert)
    for scene in ("shapes", "alpha", "photo"):
        add("GraphicsMagick", f"GIF, {scene}", f"gm-{scene}.gif",
            lambda o, s=scene: run("gm", "convert", "-delay", "10", "-loop", "0", *frames[s], o))
    add("GraphicsMagick", "GIF -dispose Background", "gm-bg.gif",
        lambda o: run("gm", "convert", "-delay", "20", "-dispose", "Background", *frames["alpha"], o))

    # gifsicle (from ImageMagick's plain GIF)
    base = {s: out(f"im-{s}.gif") for s in ("shapes", "alpha", "photo")}
    for level in ("-O1", "-O2", "-O3"):
        for scene in ("shapes", "alpha"):
            add("gifsicle", f"{level}, {scene}", f"gifsicle{level}-{scene}.gif",
                lambda o, l=level, s=scene: run("gifsicle", l, base[s], "-o", o))
    add("gifsicle", "--lossy=80 -O3", "gifsicle-lossy.gif", lambda o: run("gifsicle", "-O3", "--lossy=80", base["photo"], "-o", o))
    for disposal in ("none", "background", "previous"):
        add("gifsicle", f"--disposal={disposal} -O2", f"gifsicle-disposal-{disposal}.gif",
            lambda o, d=disposal: run("gifsicle", f"--disposal={d}", "-O2", base["alpha"], "-o", o))
    add("gifsicle", "-i (interlace) --colors 16", "gifsicle-interlace.gif",
        lambda o: run("gifsicle", "-i", "--colors", "16", base["photo"], "-o", o))
    add("gifsicle", "--loopcount=3 --delay 3", "gifsicle-loop3.gif",
        lambda o: run("gifsicle", "--loopcount=3", "--delay", "3", base["shapes"], "-o", o))
    add("gifsicle", "--no-loopcount --delay 0", "gifsicle-noloop.gif",
        lambda o: run("gifsicle", "--no-loopcount", "--delay", "0", base["shapes"], "-o", o))

    # ffmpeg
    pattern = lambda s: os.path.join(src[s], "f%03d.png")  # noqa: E731
    for mode in ("rectangle", "none"):
        for scene in ("shapes", "photo"):
            add("ffmpeg", f"GIF paletteuse diff_mode={mode}, {scene}", f"ffmpeg-{mode}-{scene}.gif",
                lambda o, m=mode, s=scene: run("ffmpeg", "-loglevel", "error", "-y", "-framerate", "12", "-i", pattern(s),
                                               "-vf", f"split[a][b];[a]palettegen[p];[b][p]paletteuse=diff_mode={m}", o))
    add("ffmpeg", "GIF alpha (palettegen reserve_transparent)", "ffmpeg-alpha.gif",
        lambda o: run("ffmpeg", "-loglevel", "error", "-y", "-framerate", "10", "-i", pattern("alpha"), "-vf",
                      "split[a][b];[a]palettegen=reserve_transparent=1[p];[b][p]paletteuse=alpha_threshold=128", o))
    add("ffmpeg", "GIF -gifflags -offsetting-transdiff", "ffmpeg-noopt.gif",
        lambda o: run("ffmpeg", "-loglevel", "error", "-y", "-framerate", "10", "-i", pattern("shapes"),
                      "-gifflags", "-offsetting-transdiff", o))
    for scene, extra in (("shapes", []), ("alpha", ["-pred", "mixed"]), ("deep", ["-pix_fmt", "rgba64be"])):
        add("ffmpeg", f"APNG {' '.join(extra) or 'default'}, {scene}", f"ffmpeg-{scene}.apng",
            lambda o, s=scene, e=extra: run("ffmpeg", "-loglevel", "error", "-y", "-framerate", "15", "-i", pattern(s),
                                            "-plays", "0", *e, "-f", "apng", o))
    for scene, extra in (("alpha", ["-lossless", "1"]), ("photo", ["-quality", "60"]), ("alpha", ["-quality", "75"])):
        add("ffmpeg", f"WebP libwebp_anim {' '.join(extra)}, {scene}", f"ffmpeg-{scene}-{len(result)}.webp",
            lambda o, s=scene, e=extra: run("ffmpeg", "-loglevel", "error", "-y", "-framerate", "10", "-i", pattern(s),
                                            "-c:v", "libwebp_anim", *e, "-loop", "0", o))

    # libwebp: img2webp, gif2webp, cwebp + webpmux
    for scene, flags in (("alpha", ["-lossless"]), ("alpha", ["-lossy"]), ("photo", ["-lossy", "-q", "50"]),
                         ("alpha", ["-mixed"]), ("shapes", ["-min_size"]), ("alpha", ["-kmin", "2", "-kmax", "4"]),
                         ("photo", ["-lossy", "-m", "6", "-q", "90"])):
        def img2webp(o, s=scene, f=flags):
            args = ["img2webp", "-loop", "0", *f]
            for i, p in enumerate(frames[s]):
                args += ["-d", str(40 + 10 * (i % 3)), p]
            run(*args, "-o", o)
        add("img2webp", f"{' '.join(flags)}, {scene}", f"img2webp-{scene}{''.join(flags)}.webp", img2webp)
    for flags in ([], ["-lossy"], ["-mixed"], ["-min_size"], ["-kmax", "1"], ["-lossy", "-q", "30"]):
        add("gif2webp", ' '.join(flags) or "default", f"gif2webp-{len(result)}.webp",
            lambda o, f=flags: run("gif2webp", "-quiet", *f, out("im-opt-alpha.gif"), "-o", o))

    def webpmux_animation(o, lossy, dispose, blend):
        args = ["webpmux"]
        for i, p in enumerate(frames["alpha"][:6]):
            w = os.path.join(work, "inputs", f"mux-{i}-{lossy}.webp")
            run("cwebp", "-quiet", *(["-q", "70"] if lossy else ["-lossless"]), p, "-o", w)
            args += ["-frame", w, f"+{60 + 10 * i}+0+0+{dispose}{'+b' if blend else '-b'}"]
        run(*args, "-loop", "0", "-o", o)
    for lossy, dispose, blend in ((False, 0, True), (False, 1, False), (True, 0, True), (True, 1, True)):
        add("cwebp+webpmux", f"{'lossy' if lossy else 'lossless'} dispose={dispose} {'blend' if blend else 'no-blend'}",
            f"webpmux-{lossy}-{dispose}-{blend}.webp", lambda o, a=lossy, d=dispose, b=blend: webpmux_animation(o, a, d, b))
    add("cwebp", "still lossy", "cwebp-still-lossy.webp", lambda o: run("cwebp", "-quiet", "-q", "80", frames["photo"][0], "-o", o))
    add("cwebp", "still lossy + alpha", "cwebp-still-alpha.webp", lambda o: run("cwebp", "-quiet", "-q", "80", frames["alpha"][0], "-o", o))
    add("cwebp", "still lossless", "cwebp-still-lossless.webp", lambda o: run("cwebp", "-quiet", "-lossless", frames["alpha"][0], "-o", o))

    # apngasm and apngopt (apngopt takes any argument starting with '/' for an option: relative names)
    for flags in ([], ["-z0"], ["-z1"], ["-z2"], ["-kp"], ["-kc"]):
        for scene in ("shapes", "alpha"):
            add("apngasm", f"{' '.join(flags) or 'default'}, {scene}", f"apngasm-{scene}-{len(result)}.png",
                lambda o, s=scene, f=flags: run("apngasm", o, os.path.join(src[s], "f000.png"), "1", "15", *f))
    add("apngasm", "16-bit frames", "apngasm-deep.png", lambda o: run("apngasm", o, os.path.join(src["deep"], "f000.png"), "3", "100"))
    for flags in ([], ["-z0"], ["-z1"], ["-z2"]):
        add("apngopt", f"{' '.join(flags) or 'default'} (of ffmpeg's APNG)", f"apngopt-{len(result)}.png",
            lambda o, f=flags: run("apngopt", *f, "ffmpeg-alpha.apng", os.path.basename(o), cwd=os.path.dirname(o)))

    # Pillow
    def pillow(o, scene, fmt, **options):
        images = pillow_frames(src[scene], "RGBA" if scene == "alpha" else "RGB")
        images[0].save(o, format=fmt, save_all=True, append_images=images[1:], **options)
    for disposal in (0, 1, 2, 3):
        add("Pillow", f"GIF disposal={disposal}", f"pillow-d{disposal}.gif",
            lambda o, d=disposal: pillow(o, "alpha", "GIF", duration=80, loop=0, disposal=d))
    add("Pillow", "GIF optimize=False, photo", "pillow-photo.gif", lambda o: pillow(o, "photo", "GIF", duration=[30, 60] * 5, loop=1, optimize=False))
    for disposal, blend, default_image in ((0, 0, False), (1, 0, False), (2, 1, False), (0, 1, True), (1, 1, True)):
        add("Pillow", f"APNG disposal={disposal} blend={blend} default_image={default_image}",
            f"pillow-{disposal}{blend}{default_image}.png",
            lambda o, d=disposal, b=blend, i=default_image: pillow(o, "alpha", "PNG", duration=70, loop=0, disposal=d,
                                                                   blend=b, default_image=i))
    for options in ({"lossless": True}, {"quality": 70}, {"quality": 60, "minimize_size": True},
                    {"lossless": True, "allow_mixed": True}, {"quality": 80, "kmin": 2, "kmax": 5}):
        add("Pillow", "WebP " + " ".join(f"{k}={v}" for k, v in options.items()), f"pillow-{len(result)}.webp",
            lambda o, opts=options: pillow(o, "alpha", "WEBP", duration=90, loop=0, **opts))

    # libvips (from ImageMagick's GIF and img2webp's WebP, all pages)
    for flags in ([], ["--effort", "1"], ["--bitdepth", "4"], ["--interframe-maxerror", "8"]):
        add("libvips", f"gifsave {' '.join(flags) or 'default'}", f"vips-{len(result)}.gif",
            lambda o, f=flags: run("vips", "gifsave", out("im-photo.gif") + "[n=-1]", o, *f))
    for flags in (["--lossless"], ["--Q", "60"], ["--Q", "75", "--min-size"], ["--kmin", "2", "--kmax", "6"]):
        add("libvips", f"webpsave {' '.join(flags)}", f"vips-{len(result)}.webp",
            lambda o, f=flags: run("vips", "webpsave", out("img2webp-alpha-lossless.webp") + "[n=-1]", o, *f))

    # Hand-assembled PNG layouts (pngwrite): interlaced APNG at every bit depth, small frames at offsets.
    for color_type, depth in ((0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (2, 8), (2, 16), (3, 1), (3, 2), (3, 4), (3, 8),
                              (4, 8), (4, 16), (6, 8), (6, 16)):
        add("hand-made", f"interlaced APNG, colour type {color_type}, {depth}-bit, small offset frames",
            f"hand-interlaced-{color_type}-{depth}.png", lambda o, c=color_type, d=depth: interlaced_apng(o, c, d))
    # Delay edges, each format's rule against Chromium's durations (µs): GIF centiseconds, WebP
    # milliseconds, APNG num/den seconds (den 0 = 100), with zero and ≤ 10 ms delays.
    for delay in ("1", "2"):
        add("gifsicle", f"--delay {delay}", f"gifsicle-delay{delay}.gif",
            lambda o, d=delay: run("gifsicle", "--delay", d, base["shapes"], "-o", o))
    def webpmux_delays(o):
        args = ["webpmux"]
        for i, p in enumerate(frames["shapes"][:8]):
            w = os.path.join(work, "inputs", f"mux-delay-{i}.webp")
            run("cwebp", "-quiet", "-lossless", p, "-o", w)
            args += ["-frame", w, f"+{(0, 1, 5, 10, 11, 33, 1000, 65)[i]}+0+0+0-b"]
        run(*args, "-loop", "0", "-o", o)
    add("cwebp+webpmux", "durations 0, 1, 5, 10, 11, 33, 1000, 65 ms", "webpmux-delays.webp", webpmux_delays)
    for num, den in (("1", "0"), ("1", "3"), ("0", "1")):
        add("apngasm", f"delay {num}/{den} s", f"apngasm-delay-{num}-{den}.png",
            lambda o, n=num, d=den: run("apngasm", o, os.path.join(src["shapes"], "f000.png"), n, d))
    add("ffmpeg", "APNG -framerate 7 (1/7 s)", "ffmpeg-7fps.apng",
        lambda o: run("ffmpeg", "-loglevel", "error", "-y", "-framerate", "7", "-i", pattern("shapes"),
                      "-plays", "0", "-f", "apng", o))
    add("hand-made", "APNG delays 0/0, 1/0, 7/3, 1/1000, 1/999, 65535/65535, 2/3, 1/30 s", "hand-delays.png", delays_apng)
    return result


def delays_apng(path):
    """8×8 APNG whose frames carry delay fractions at the edges of the integer-division rule."""
    delays = [(0, 0), (1, 0), (7, 3), (1, 1000), (1, 999), (65535, 65535), (2, 3), (1, 30)]
    frames = [{"rect": (0, 0, 8, 8), "pixels": [(40 * k % 256, 255 - 30 * k, 90, 255)] * 64, "delay": d}
              for k, d in enumerate(delays)]
    pngwrite.write_apng(path, 8, 8, frames, color_type=6, bit_depth=8)


def interlaced_apng(path, color_type, depth):
    """13×11 canvas; frame 0 whole, then 1×1, 3×2, 7×7 and 9×3 frames at offsets, some blended."""
    rng = random.Random(color_type * 100 + depth)
    top = (1 << depth) - 1
    channels = pngwrite.CHANNELS[color_type]
    palette = transparency = None
    if color_type == 3:
        palette = bytes(rng.randrange(256) for _ in range(3 << depth))
        transparency = bytes(rng.randrange(256) for _ in range((1 << depth) // 2 + 1))
    def samples(w, h):
        return [tuple(rng.randint(0, top) for _ in range(channels)) for _ in range(w * h)]
    rects = [(0, 0, 13, 11), (12, 10, 1, 1), (5, 4, 3, 2), (6, 4, 7, 7), (2, 8, 9, 3)]
    frames = [{"rect": r, "pixels": samples(r[2], r[3]), "delay": (1, 15), "blend": i % 2, "dispose": (i * 2) % 3 if i else 0}
              for i, r in enumerate(rects)]
    pngwrite.write_apng(path, 13, 11, frames, color_type=color_type, bit_depth=depth, interlaced=True,
                        palette=palette, transparency=transparency)


def damaged_copies(path, directory):
    """Cut and bit-flipped copies of one output: (label, path) pairs."""
    with open(path, "rb") as f:
        data = f.read()
    copies = []
    for fraction in (0.6, 0.95):
        cut = os.path.join(directory, os.path.basename(path) + f".cut{int(fraction * 100)}")
        with open(cut, "wb") as f:
            f.write(data[:int(len(data) * fraction)])
        copies.append((f"cut at {int(fraction * 100)}%", cut))
    rng = random.Random(len(data))
    flipped = bytearray(data)
    for _ in range(3):
        at = rng.randrange(len(data) // 3, len(data))
        flipped[at] ^= 1 << rng.randrange(8)
    path_flipped = os.path.join(directory, os.path.basename(path) + ".flipped")
    with open(path_flipped, "wb") as f:
        f.write(bytes(flipped))
    copies.append(("3 bits flipped", path_flipped))
    return copies
