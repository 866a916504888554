"""Goal 4 of issue 21 (bytes): full-size lossless WebP frames vs today's PNG frames over the
decode-bench inputs (scripts/make-bench-inputs.sh, bench-out/inputs).

For each input: `flipbook frames IN -o DIR` (PNG, the service's default deflate level 1) and
`flipbook frames IN --format webp -o DIR` (lossless WebP), the bytes of all frame files summed;
ratio = WebP ÷ PNG per input and over all inputs. The CLI writes the bytes the service serves
(issue 21, item 9; `make bench-player-bytes` sums the same frames through the API). Nothing is
timed.

Then, for the lead's choice of effort: the PNG frames of small.gif (all 100) and large.gif (every
10th: 30) encoded by `cwebp -lossless -z N` (libwebp's lossless preset N, the one flipbook sets with
WebPConfigLosslessPreset; its default is 1) for N in LEVELS: bytes ÷ the PNG bytes, and the cwebp
processes' user + sys CPU per frame (PNG reading and process start included), taken under the
benchmark lock. Writes bench-out/renditions/sizes.json. Environment: LEVELS="0 1 2 3 4 6" (empty:
skip), LEVELS_ONLY=1 (keep the per-input rows of the last sizes.json), FLIPBOOK_BIN.
"""
import datetime
import json
import os
import shutil
import subprocess
import tempfile

from benchlib import head_commit, log
from bench.renditions import INPUTS, OUT, bench_lock, binary, loadavg3, prepare_inputs

LEVELS = [int(x) for x in os.environ.get("LEVELS", "0 1 2 3 4 6").split()]

NAMES = ["small.gif", "large.gif", "small-lossy.webp", "large-lossy.webp", "small-lossless.webp", "small.apng",
         "large.apng"]


def total(directory):
    files = os.listdir(directory)
    return len(files), sum(os.path.getsize(os.path.join(directory, f)) for f in files)


def lossless_levels(fb, work):
    out = {"loadBefore": None, "sets": {}}
    frames = {}
    for name, step in (("small.gif", 1), ("large.gif", 10)):
        d = os.path.join(work, "levels-" + name)
        subprocess.run([fb, "frames", os.path.join(INPUTS, name), "-o", d], check=True, stdout=subprocess.DEVNULL)
        frames[name] = [os.path.join(d, f) for f in sorted(os.listdir(d))][::step]
    with bench_lock():
        out["loadBefore"] = loadavg3()
        for name, files in frames.items():
            png = sum(os.path.getsize(f) for f in files)
            rows = []
            for level in LEVELS:
                before = os.times()
                webp = 0
                for f in files:
                    target = f[:-4] + f"-z{level}.webp"
                    subprocess.run(["cwebp", "-quiet", "-lossless", "-z", str(level), f, "-o", target], check=True)
                    webp += os.path.getsize(target)
                    os.remove(target)
                after = os.times()
                cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
                rows.append({"level": level, "webpBytes": webp, "ratio": webp / png, "cpuPerFrame": cpu / len(files)})
                log(f"bench-renditions: cwebp -z {level} {name}: {webp / png:.3f}×, {cpu / len(files) * 1000:.1f} ms CPU a frame")
            out["sets"][name] = {"frames": len(files), "pngBytes": png, "levels": rows}
        out["loadAfter"] = loadavg3()
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    prepare_inputs()
    fb = binary()
    work = tempfile.mkdtemp(prefix="flipbook-bench-renditions-s.", dir="/dev/shm")
    rows = []
    path = os.path.join(OUT, "sizes.json")
    if os.environ.get("LEVELS_ONLY") == "1" and os.path.exists(path):
        with open(path) as f:
            rows = json.load(f)["inputs"]
    try:
        for name in (NAMES if not rows else []):
            src = os.path.join(INPUTS, name)
            row = {"file": name, "fileBytes": os.path.getsize(src)}
            for fmt, extra in (("png", []), ("webp", ["--format", "webp"])):
                d = os.path.join(work, fmt)
                shutil.rmtree(d, ignore_errors=True)
                subprocess.run(["nice", "-n", "19", fb, "frames", src, "-o", d, *extra], check=True,
                               stdout=subprocess.DEVNULL)
                row["frames"], row[fmt + "Bytes"] = total(d)
                shutil.rmtree(d, ignore_errors=True)
            row["ratio"] = row["webpBytes"] / row["pngBytes"]
            log(f"bench-renditions: sizes {name}: PNG {row['pngBytes']:,} B, WebP {row['webpBytes']:,} B, "
                f"{row['ratio']:.3f}×")
            rows.append(row)
        levels = lossless_levels(fb, work) if LEVELS else None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), "commit": head_commit(), "binary": fb,
           "inputs": rows, "levels": levels}
    with open(path, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
