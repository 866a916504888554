"""`make bench-renditions`: scaled and WebP frames (issue 21) measured side by side.

    PYTHONPATH=scripts /usr/bin/python3 -m bench.renditions.speed     goals 1, 2: CLI and cold API speed
    PYTHONPATH=scripts /usr/bin/python3 -m bench.renditions.quality   goal 3: PSNR, lossless WebP
    PYTHONPATH=scripts /usr/bin/python3 -m bench.renditions.sizes     goal 4: lossless WebP vs PNG bytes
    PYTHONPATH=scripts /usr/bin/python3 -m bench.renditions.report    the docs/benchmarks/renditions.md section

(`make bench-renditions` runs all four; Debian's /usr/bin/python3 has python3-pil and numpy.)

Each part writes bench-out/renditions/<part>.json; `report` renders the section "Renditions: speed
and quality (issue 21)" from them and notes.md (BENCH_WRITE=0: print only). Every timed command
runs holding flock(2) on /tmp/flipbook-bench.lock (BENCH_LOCK), the lock `flock LOCK cmd` takes and
the machine's other benchmarks take, so two timings never overlap.

The binary is FLIPBOOK_BIN, else benchlib.server's release build (.build-playback; SKIP_BUILD=1
reuses it). Inputs: scripts/make-bench-inputs.sh in bench-out/inputs (small.gif is the issue's
"typical.gif").
"""
import fcntl
import os
import subprocess
import sys
import time
from contextlib import contextmanager

from benchlib import REPO, log

OUT = os.path.join(REPO, "bench-out", "renditions")
INPUTS = os.path.join(REPO, "bench-out", "inputs")
LOCK = os.environ.get("BENCH_LOCK", "/tmp/flipbook-bench.lock")
PYTHON = "/usr/bin/python3"  # Debian's, with python3-pil and python3-numpy
HERE = os.path.dirname(os.path.abspath(__file__))
SECTION = "Renditions: speed and quality (issue 21)"


def binary():
    """The flipbook binary measured: FLIPBOOK_BIN, else the release build of benchlib.server."""
    if os.environ.get("FLIPBOOK_BIN"):
        return os.path.abspath(os.environ["FLIPBOOK_BIN"])
    from benchlib.server import build
    return build()


def prepare_inputs():
    subprocess.run([os.path.join(REPO, "scripts", "make-bench-inputs.sh"), INPUTS], check=True, stdout=sys.stderr)


@contextmanager
def bench_lock():
    """Holds the machine's benchmark lock (flock(2) on LOCK, what `flock LOCK cmd` takes)."""
    with open(LOCK, "a") as f:
        t = time.monotonic()
        fcntl.flock(f, fcntl.LOCK_EX)
        waited = time.monotonic() - t
        if waited > 1:
            log(f"bench-renditions: waited {waited:.0f} s for {LOCK}")
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def loadavg3():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def tool_versions():
    def first_line(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0]
        except (OSError, IndexError):
            return "?"
    pil = first_line([PYTHON, "-c", "import PIL; print(PIL.__version__)"])
    return {
        "hyperfine": first_line(["hyperfine", "--version"]),
        "ffmpeg": " ".join(first_line(["ffmpeg", "-version"]).split()[:3]),
        "vips": first_line(["vips", "--version"]),
        "pillow": pil,
    }
