#!/usr/bin/env python3
"""Render deploy/nginx.conf for loopback: the same file with only addresses and paths rewritten.

Rewritten, and nothing else (the script prints the diff and fails if anything else differs):
  server flipbook-N:8080 ...          -> server <replica N address> ...
  listen 80;                          -> listen <proxy address>;
  pid, error_log, access_log, *_temp_path  -> files under --dir
"""
import argparse
import difflib
import re
import sys


def render(text, listen, replicas, workdir):
    rules = [
        # (pattern, replacement function, exact number of lines it must touch)
        (re.compile(r"^(\s*server\s+)flipbook-(\d+):8080\b"),
         lambda m: m.group(1) + replicas[int(m.group(2)) - 1], len(replicas)),
        (re.compile(r"^(\s*listen\s+)80;"), lambda m: m.group(1) + listen + ";", 1),
        (re.compile(r"^(pid\s+)\S+;"), lambda m: m.group(1) + workdir + "/nginx.pid;", 1),
        (re.compile(r"^(error_log\s+)/var/log/nginx/error\.log\b"),
         lambda m: m.group(1) + workdir + "/error.log", 1),
        (re.compile(r"^(\s*access_log\s+)/var/log/nginx/access\.log\b"),
         lambda m: m.group(1) + workdir + "/access.log", 1),
        (re.compile(r"^(\s*\w+_temp_path\s+)/var/cache/nginx/(\w+);"),
         lambda m: m.group(1) + workdir + "/" + m.group(2) + ";", 5),
    ]
    counts = [0] * len(rules)
    out = []
    for line in text.splitlines(keepends=True):
        for i, (pattern, repl, _) in enumerate(rules):
            m = pattern.match(line)
            if m:
                if pattern.pattern.startswith("^(\\s*server") and int(m.group(2)) > len(replicas):
                    raise SystemExit(f"render-nginx-conf: no address for {m.group(0).strip()}")
                line = repl(m) + line[m.end():]
                counts[i] += 1
                break
        out.append(line)
    for (pattern, _, want), got in zip(rules, counts):
        if got != want:
            raise SystemExit(f"render-nginx-conf: /{pattern.pattern}/ matched {got} lines, expected {want}"
                             " — deploy/nginx.conf changed shape; update the renderer")
    return "".join(out), sum(counts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default="deploy/nginx.conf")
    ap.add_argument("--out", required=True)
    ap.add_argument("--dir", required=True, help="directory for pid, logs and temp files")
    ap.add_argument("--listen", required=True, help="e.g. 127.0.0.1:18080")
    ap.add_argument("--replica", action="append", required=True, help="host:port, once per replica, in order")
    ap.add_argument("--quiet", action="store_true", help="do not print the diff")
    args = ap.parse_args()

    with open(args.src) as f:
        original = f.read()
    rendered, touched = render(original, args.listen, args.replica, args.dir)
    diff = list(difflib.unified_diff(original.splitlines(keepends=True), rendered.splitlines(keepends=True),
                                     args.src, args.out, n=0))
    changed = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
    if changed != touched:
        raise SystemExit(f"render-nginx-conf: {changed} lines differ but {touched} were rewritten")
    with open(args.out, "w") as f:
        f.write(rendered)
    if not args.quiet:
        sys.stdout.write(f"render-nginx-conf: {touched} lines rewritten (addresses and paths only):\n")
        sys.stdout.writelines(d if d.endswith("\n") else d + "\n" for d in diff)


if __name__ == "__main__":
    main()
