#!/usr/bin/env python3
"""Where the calls to a few runtime functions come from, by source line: reads one dump that
callgrind_requests.py kept with `CALLGRIND_OPTS=--dump-instr=yes`, takes the address of each call
site, and names it with `addr2line` on the unstripped binary (valgrind 3.19 cannot read Swift's
DWARF 5; binutils can). Inlined code is shown as its chain of source lines, innermost first.

  FLIPBOOK_BIN=… CALLGRIND_OPTS=--dump-instr=yes KEEP=1 PYTHONPATH=scripts \\
      python3 -m bench.serve.callgrind_requests
  PYTHONPATH=scripts python3 -m bench.serve.callgrind_sites DUMP BINARY REQUESTS [FUNCTION …]

FUNCTION defaults to the reference-counting entry points; sites are listed by calls per request.
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

from bench.serve.callgrind_calls import named_lines

DEFAULT = ["swift_retain", "swift_release", "swift_bridgeObjectRetain", "swift_bridgeObjectRelease"]


def call_sites(path, wanted, binary_name):
    """{(function, site address): calls} for calls into the `wanted` functions from code of the
    object `binary_name` (calls the runtime makes inside its own library are not the binary's)."""
    sites = defaultdict(int)
    address = 0
    target = ""
    caller_object = ""
    pending = None  # (target name, calls) of a `calls=` line, whose site is the next line
    for key, text in named_lines(path):
        if key == "ob":
            caller_object = text
            continue
        if key == "cfn":
            target = text
            continue
        if key is not None:
            continue
        if text.startswith("calls="):
            pending = (target, int(text.split()[0][6:]))
            continue
        if not text or text[0] not in "+-*0123456789":
            continue
        first = text.split()[0]
        if first.startswith("0x"):
            address = int(first, 16)
        elif first[0] in "+-":
            address += int(first)
        elif first != "*":
            address = int(first)
        if pending:
            name, calls = pending
            pending = None
            base = name.split(" ")[0]
            if base in wanted and os.path.basename(caller_object) == binary_name:
                sites[(base, address)] += calls
    return sites


def main():
    dump, binary, requests = sys.argv[1], sys.argv[2], int(sys.argv[3])
    wanted = set(sys.argv[4:] or DEFAULT)
    # callgrind_requests.py runs a copy of the binary named `flipbook`.
    sites = call_sites(dump, wanted, "flipbook")
    addresses = sorted({a for _, a in sites})
    # addr2line prints an address's inline chain (function, file:line pairs) with no separator
    # between addresses: ask once per address, to keep them apart.
    where = {}
    for a in addresses:
        text = subprocess.run(["addr2line", "-f", "-i", "-e", binary, hex(a)], capture_output=True,
                              text=True).stdout.split("\n")
        pairs = [(text[i], text[i + 1]) for i in range(0, len(text) - 1, 2)]
        demangled = subprocess.run(["swift", "demangle", "--simplified", "--compact"],
                                   input="\n".join(p[0] for p in pairs), capture_output=True,
                                   text=True).stdout.split("\n")
        where[a] = " ← ".join(f"{re.sub(r'^.*/Sources/', '', loc)} {demangled[i][:70]}"
                               for i, (_, loc) in enumerate(pairs))
    total = defaultdict(float)
    rows = []
    for (name, a), calls in sites.items():
        per = calls / requests
        total[name] += per
        if per >= 0.2:
            rows.append((per, name, where.get(a, hex(a))))
    for per, name, place in sorted(rows, reverse=True):
        print(f"{per:6.2f} {name:26} {place}")
    print("total per request:", ", ".join(f"{k} {v:.2f}" for k, v in sorted(total.items())))


if __name__ == "__main__":
    main()
