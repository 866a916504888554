#!/usr/bin/env python3
"""bench-serve's part (a) with nginx against itself: how far its CPU-per-request ratios move when
both sides are the same server (issue 34's second goal asks for ≤ 1.0 in all 18 rows).

Runs `cached_frames.run` with CONTENDER=nginx — a second nginx, configured as the first (the same
`worker_processes 2; sendfile on; …` and the same access log in each mode) and serving the same
files, takes flipbook's runs; flipbook only makes the frames — and prints each row's CPU ratio
with its 90% bootstrap interval, then how many rows came out over 1.0 and the widest ratio. Any
row over 1.0 here is the harness and the machine, not a server. Writes
bench-out/same_server/result.json.

  FLIPBOOK_BIN=.build/release/flipbook PYTHONPATH=scripts python3 -m bench.serve.same_server

Environment: as cached_frames.py (DURATION, ROUNDS, CONNECTIONS, WRK_THREADS, MODES, KINDS).
"""
import json
import os
import tempfile

from benchlib import REPO, log
from benchlib.machine import machine
from bench.serve import cached_frames
from bench.serve.prepare import INPUTS

OUT = os.path.join(REPO, "bench-out", "same_server")


def summary(result):
    """One line per row (ratio, interval, each side's runs), then the count over 1.0."""
    lines, over, ratios = [], 0, []
    for mode, m in result["modes"].items():
        for row in m["rows"]:
            a, b = row["nginx"]["cpuUsPerRequest"], row["flipbook"]["cpuUsPerRequest"]
            low, high = row["cpuRatioInterval"]
            ratio = b / a
            ratios.append(ratio)
            over += ratio > 1
            runs = " / ".join(f"{r['cpuUsPerRequest']:.2f}" for r in row["runs"]["flipbook"])
            base = " / ".join(f"{r['cpuUsPerRequest']:.2f}" for r in row["runs"]["nginx"])
            lines.append(f"logs {mode:3} {row['kind']:4} {row['connections']:3} conns: second ÷ first nginx "
                         f"{ratio:.3f} ({low:.2f}–{high:.2f}); µs per request {runs} against {base}")
    lines.append(f"{over} of {len(ratios)} rows over 1.0; ratios {min(ratios):.3f}–{max(ratios):.3f}")
    return "\n".join(lines)


def main():
    cached_frames.CONTENDER = "nginx"
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        result = cached_frames.run(work, INPUTS, OUT)
    result["machine"] = machine()
    with open(os.path.join(OUT, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    log("same server: " + OUT)
    print(summary(result))
    print(f"load {result['load']['before']} → {result['load']['after']}")


if __name__ == "__main__":
    main()
