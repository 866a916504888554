#!/usr/bin/env python3
"""Calls per request of a few runtime functions (heap allocations, reference counting), counted in
callgrind dumps kept by callgrind_requests.py (KEEP=1): repeatable where times are not.

  KEEP=1 PYTHONPATH=scripts python3 -m bench.serve.callgrind_requests   # logs "kept /tmp/flipbook-callgrind.X"
  python3 scripts/bench/serve/callgrind_calls.py /tmp/flipbook-callgrind.X/cg 2000

Each of the kept dumps (one per kind of request, in the order GET 200, GET 304, HEAD; several
files when several threads ran) is summed, and the calls made to each function below — from
anywhere in the process — are divided by the number of requests.
"""
import glob
import os
import re
import sys
from collections import defaultdict

FUNCTIONS = ["malloc", "free", "realloc", "calloc", "swift_retain", "swift_release", "swift_bridgeObjectRetain",
             "swift_bridgeObjectRelease", "swift_allocObject", "swift_beginAccess", "swift_dynamicCast",
             "swift_dynamicCastClass", "clock_gettime"]


def named_lines(path):
    """The lines of one callgrind dump with its compressed names resolved: (key, name) for a
    `fn=`, `cfn=`, `ob=` or `cob=` line (the name given once, then by its number), (None, line)
    for any other line."""
    names = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"(c?fn|c?ob)=\((\d+)\)(?: (.*))?", line)
            if not m:
                yield None, line
                continue
            table = names.setdefault(m.group(1).lstrip("c"), {})
            if m.group(3):
                table[m.group(2)] = m.group(3).strip()
            yield m.group(1), table.get(m.group(2), "")


def calls_in(path):
    """{function name: calls} over one dump file."""
    calls = defaultdict(int)
    callee = None
    for key, text in named_lines(path):
        if key is not None:
            callee = text if key == "cfn" else None if key == "fn" else callee
        elif callee and text.startswith("calls="):
            calls[callee] += int(text.split()[0][6:])
            callee = None
    return calls


def main():
    out_dir, requests = sys.argv[1], int(sys.argv[2])
    dumps = sorted(glob.glob(os.path.join(out_dir, "callgrind.out.*")), key=os.path.getmtime)
    # Dumps of one `callgrind_control --dump` share its sequence number (the part after the pid).
    groups = defaultdict(list)
    for path in dumps:
        seq = re.search(r"\.(\d+)(?:-\d+)?$", path)
        groups[seq.group(1) if seq else path].append(path)
    labels = ["GET 200", "GET 304", "HEAD"]
    for label, key in zip(labels, sorted(groups, key=lambda k: min(os.path.getmtime(p) for p in groups[k]))[-3:]):
        total = defaultdict(int)
        for path in groups[key]:
            for name, n in calls_in(path).items():
                total[name] += n
        parts = []
        for function in FUNCTIONS:
            # `name'2` is a recursion level; `name@@GLIBC_2.17` a versioned C library symbol.
            n = sum(v for k, v in total.items() if k == function or k.startswith((function + "'", function + "@")))
            if n:
                parts.append(f"{function} {n / requests:.2f}")
        print(f"{label}: " + ", ".join(parts))


if __name__ == "__main__":
    main()
