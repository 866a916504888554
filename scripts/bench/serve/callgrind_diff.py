#!/usr/bin/env python3
"""Where the instructions of one kind of request go beyond another's: the per-request difference,
function by function, between two callgrind dumps kept by callgrind_requests.py (KEEP=1), e.g.
a cached rendition hit against a full-size hit (issue 21's hit-path goal).

  KEEP=1 RENDITION='width=320&format=webp&quality=80' PYTHONPATH=scripts \\
      python3 -m bench.serve.callgrind_requests          # logs "kept /tmp/flipbook-callgrind.X"
  python3 scripts/bench/serve/callgrind_diff.py /tmp/flipbook-callgrind.X/cg/callgrind.out.PID.1.1 \\
      /tmp/flipbook-callgrind.X/cg/callgrind.out.PID.1.4 2000 [TOP]

Runs `callgrind_annotate` on each dump twice (self cost, and inclusive cost with
`--inclusive=yes`), divides by REQUESTS, and prints the TOP (25) functions whose self and
inclusive instructions per request grew the most, names demangled with swift-demangle when it
is on the PATH.
"""
import re
import shutil
import subprocess
import sys

LINE = re.compile(r"^\s*([\d,]+) \([ \d.]+%\)\s+(?:\S*?:)?(.+?)(?: \[.*\])?$")


def costs(path, inclusive):
    args = ["callgrind_annotate", "--threshold=100"] + (["--inclusive=yes"] if inclusive else []) + [path]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    table = {}
    started = False
    for line in out.splitlines():
        if "file:function" in line:
            started = True
            continue
        if not started:
            continue
        m = LINE.match(line)
        if m:
            name = m.group(2).strip()
            table[name] = table.get(name, 0) + int(m.group(1).replace(",", ""))
    return table


def demangle(names):
    tool = shutil.which("swift-demangle")
    if not tool or not names:
        return {n: n for n in names}
    out = subprocess.run([tool, "--simplified", "--compact"], input="\n".join(names), capture_output=True,
                         text=True).stdout.splitlines()
    return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}


def main():
    base, other, requests = sys.argv[1], sys.argv[2], int(sys.argv[3])
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 25
    for inclusive in (False, True):
        a, b = costs(base, inclusive), costs(other, inclusive)
        total_a = sum(a.values()) if not inclusive else None
        total_b = sum(b.values()) if not inclusive else None
        rows = sorted(((b.get(n, 0) - a.get(n, 0)) / requests, n) for n in set(a) | set(b))
        rows.reverse()
        names = demangle([n for _, n in rows[:top]])
        print(f"\n{'inclusive' if inclusive else 'self'} instructions per request, {other} minus {base}:")
        if total_a is not None:
            print(f"  totals: {total_a / requests:,.0f} -> {total_b / requests:,.0f} "
                  f"(+{(total_b - total_a) / requests:,.0f})")
        for d, n in rows[:top]:
            print(f"  {d:+10,.0f}  {b.get(n, 0) / requests:10,.0f}  {names[n][:150]}")


if __name__ == "__main__":
    main()
