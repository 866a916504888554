"""CPU per frame of each rendition the renditions mode plays (scripts/bench/playback/renditions.py),
made by the CLI (`flipbook frames IMAGE --width … --format … [--quality …]`, the same code the
service runs: composite at full size, scale, encode): what real-time playback of all of them
asks of the machine.

  FLIPBOOK_BIN=… IMAGE=bench-out/inputs/large.gif PYTHONPATH=scripts \\
      flock /tmp/flipbook-bench.lock python3 -m bench.playback.rendition_costs

For each rendition (and the full-size PNG frames) the CLI writes every frame to a tmpfs
directory, RUNS (3) times; the report gives the least user + system CPU seconds of the runs
(children's rusage) ÷ frames, and that minus the full-size PNG's (≈ the scale and the
rendition's encode, over the composite; the full-size PNG's own encode is counted in it, so
this is a lower bound of the difference).
"""
import os
import resource
import shutil
import subprocess
import tempfile

from benchlib import REPO, log
from benchlib.server import BINARY
from bench.playback.renditions import RENDITIONS

IMAGE = os.environ.get("IMAGE", os.path.join(REPO, "bench-out", "inputs", "large.gif"))
RUNS = int(os.environ.get("RUNS", "3"))


def args_for(query):
    out = []
    for part in query.split("&"):
        name, _, value = part.partition("=")
        out += [f"--{name}", value]
    return out


def cpu_of(args, work):
    best = None
    for _ in range(RUNS):
        out = os.path.join(work, "out")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([BINARY, "frames", IMAGE, "-o", out, *args], check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = cpu if best is None else min(best, cpu)
        frames = len(os.listdir(out))
        size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    return best, frames, size


def main():
    work = tempfile.mkdtemp(prefix="flipbook-rendition-costs.", dir="/dev/shm")
    try:
        full, frames, size = cpu_of([], work)
        print(f"{os.path.basename(IMAGE)}, {frames} frames, least CPU of {RUNS} runs, {BINARY}:")
        print("| rendition | CPU ms per frame | over the full-size PNG's | KiB per frame |")
        print("|---|---:|---:|---:|")
        print(f"| full size, PNG | {full * 1000 / frames:.1f} | – | {size / frames / 1024:.1f} |")
        total = 0.0
        for query in RENDITIONS:
            cpu, n, size = cpu_of(args_for(query), work)
            total += cpu / n
            log(f"rendition_costs: {query}: {cpu * 1000 / n:.1f} ms per frame")
            print(f"| `{query}` | {cpu * 1000 / n:.1f} | {(cpu - full) * 1000 / n:+.1f} | {size / n / 1024:.1f} |")
        print(f"\nAll {len(RENDITIONS)} renditions of a frame, each made on its own: {total * 1000:.0f} ms of CPU; "
              f"sharing one composite saves at most {(len(RENDITIONS) - 1) * full * 1000 / frames:.0f} ms of that.")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
