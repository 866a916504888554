"""Checks that every citation of a BENCHMARKS.md section names a section it has; exits 1 if not.

    python3 scripts/docs/citations.py

Code comments, scripts and docs cite measurements as `BENCHMARKS.md, "<section>"`. BENCHMARKS.md
keeps one stable `## ` section per benchmark (dated runs live under docs/benchmarks/history/), so a
citation must name one of those sections: a citation of a dated run, or of a section that was
renamed, fails here. Comment markers (`///`, `//`, `#`, `*`) are dropped and lines joined, so a
name broken over two comment lines is read whole.
"""
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WHERE = ["Sources", "Tests", "scripts", "web", "fuzz", "mk", "deploy", "docs", "Benchmarks"]
FILES = ["Dockerfile", "Makefile", "README.md", "docker-compose.yml"]
SUFFIXES = (".swift", ".c", ".h", ".py", ".sh", ".js", ".mk", ".md", ".yml", ".yaml", ".conf")
CITATION = re.compile(r'BENCHMARKS\.md`?,?\s+"([A-Za-z][^"]*)"')
COMMENT = re.compile(r"^\s*(///|//|#|\*|/\*\*?)?\s?")


def sections():
    with open(os.path.join(REPO, "BENCHMARKS.md")) as f:
        return {line[3:].strip() for line in f if line.startswith("## ")}


def files():
    for name in FILES:
        path = os.path.join(REPO, name)
        if os.path.exists(path):
            yield path
    for top in WHERE:
        for root, dirs, names in os.walk(os.path.join(REPO, top)):
            dirs[:] = [d for d in dirs if d != "history" and not d.startswith(".")]
            for name in sorted(names):
                if name.endswith(SUFFIXES):
                    yield os.path.join(root, name)


def main():
    known = sections()
    problems = []
    for path in files():
        with open(path, errors="replace") as f:
            lines = f.read().split("\n")
        joined, starts = "", []
        for line in lines:
            starts.append(len(joined))
            joined += COMMENT.sub("", line, count=1) + " "
        for m in CITATION.finditer(joined):
            name = re.sub(r"\s+", " ", m.group(1)).strip()
            if name not in known:
                number = sum(1 for s in starts if s <= m.start())
                problems.append(f"{os.path.relpath(path, REPO)}:{number}: cites BENCHMARKS.md, \"{name}\", "
                                f"which is not a section of BENCHMARKS.md")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
