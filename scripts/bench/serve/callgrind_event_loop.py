#!/usr/bin/env python3
"""The event loop's share of the instructions per request in the dumps kept by
callgrind_requests.py (KEEP=1), with the loop's work that depends on wall time taken out: the
column issue 34's steps are measured by.

  KEEP=1 RENDITION='width=320&format=webp&quality=80' PYTHONPATH=scripts \\
      python3 -m bench.serve.callgrind_requests          # logs "kept /tmp/flipbook-callgrind.X"
  python3 scripts/bench/serve/callgrind_event_loop.py /tmp/flipbook-callgrind.X 2000

For each dump, in the order the script made them (GET 200, 304, HEAD, then the rendition's):
the whole process (every thread), the event loop (`EventLoop.run`, inclusive), the loop's
time-driven work, and the loop less that work ("steady"). Time-driven work is what a request does
only when a clock says so, more often the slower valgrind runs (on a loaded machine a window of
2,000 requests takes a minute or more): a record whose freshness window passed is read again
(`RecordLookup.recordAtOnce(_:loop:)`, the store's slow path), and the frame cache's periodic
window and prefetch planning (`FrameCache.takeWork()`). The other threads (the memory-pressure
monitor's wake-ups, the access-log writer) are in the whole-process column only.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

LOOP = re.compile(r"\?\?\?:EventLoop\.run\(\)('\d+)? ")
TIME_DRIVEN = [re.compile(r"\?\?\?:RecordLookup\.recordAtOnce\(_:loop:\)('\d+)? "),
               re.compile(r"\?\?\?:FrameCache\.takeWork\(\)('\d+)? ")]
LABELS = ["GET 200", "GET 304", "HEAD", "rendition GET 200", "rendition GET 304", "rendition HEAD"]


def per_request(path, requests):
    """(whole process, event loop, time-driven work on it), instructions per request."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    if shutil.which("swift"):
        out = subprocess.run(["swift", "demangle", "--simplified"], input=out, capture_output=True,
                             text=True, check=True).stdout
    whole = loop = 0
    timed = [0] * len(TIME_DRIVEN)
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s", line)
        if not m:
            continue
        count = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in line:
            whole = count
        elif LOOP.search(line):
            loop = max(loop, count)
        else:
            for i, pattern in enumerate(TIME_DRIVEN):
                if pattern.search(line):
                    timed[i] = max(timed[i], count)
    return whole / requests, loop / requests, sum(timed) / requests


def main():
    directory, requests = sys.argv[1], int(sys.argv[2])
    dumps = sorted(glob.glob(os.path.join(directory, "cg", "callgrind.out.*.*.*")),
                   key=lambda p: int(p.rsplit(".", 1)[1]))
    for label, path in zip(LABELS, dumps):
        whole, loop, timed = per_request(path, requests)
        print(f"{label}: whole process {whole:,.0f}, event loop {loop:,.0f}, "
              f"time-driven {timed:,.0f}, steady {loop - timed:,.0f}")


if __name__ == "__main__":
    main()
