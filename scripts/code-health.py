#!/usr/bin/env python3
"""Measures issue 33's goals over Sources/: each Swift module's share of Sources' Swift lines
(goal: none over 30%), the files over 400 lines, and the functions over 80 lines (a function:
`func`, `init`, `deinit`, `subscript`, from its declaration to its closing brace).

    scripts/code-health.py [REPOSITORY]       (default: the current directory)

Prints one line per module, then each file and function over its limit. Exits 1 when a goal is
missed, 0 otherwise; functions named in ALLOWED (parsers' state machines) are listed but allowed.
Duplicates are measured by the `duplicates` command over Sources/ and web/, not here.
"""
import os
import re
import sys

MODULE_SHARE = 0.30
FILE_LINES = 400
FUNCTION_LINES = 80
# Parsers' state machines: one switch over the states, which reads best whole.
ALLOWED = {"HTTPRequestParser.swift"}

DECLARATION = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|"
                         r"static|class|final|override|mutating|nonmutating|nonisolated|consuming|borrowing|"
                         r"convenience|required|@inlinable|@inline\(__always\)|@discardableResult)\s+)*"
                         r"(func\s+[^\s(<]+|init[?!]?|deinit|subscript)\b")


def code_only(line, state):
    """`line` without string literals and comments; `state` carries a block comment or a
    multi-line string across lines."""
    out = []
    i = 0
    while i < len(line):
        if state["block"]:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out)
            state["block"] = False
            i = end + 2
            continue
        if state["multiline"]:
            end = line.find('"""', i)
            if end < 0:
                return "".join(out)
            state["multiline"] = False
            i = end + 3
            continue
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            state["block"] = True
            i += 2
            continue
        if line.startswith('"""', i):
            state["multiline"] = True
            i += 3
            continue
        if line[i] == '"':
            i += 1
            while i < len(line) and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
            i += 1
            out.append('""')
            continue
        out.append(line[i])
        i += 1
    return "".join(out)


def long_functions(path):
    """(name, first line, length) of each function of `path` over FUNCTION_LINES lines."""
    lines = open(path, encoding="utf-8").read().split("\n")
    state = {"block": False, "multiline": False}
    depth = 0
    open_functions = []  # (name, first line, depth its body opens at, whether its brace is seen)
    found = []
    for number, raw in enumerate(lines, 1):
        code = code_only(raw, state)
        match = DECLARATION.match(code)
        if match:
            name = match.group(1).replace("func ", "").strip()
            open_functions.append([name, number, depth, False])
        for char in code:
            if char == "{":
                depth += 1
                if open_functions and not open_functions[-1][3] and depth == open_functions[-1][2] + 1:
                    open_functions[-1][3] = True
            elif char == "}":
                depth -= 1
                if open_functions and open_functions[-1][3] and depth == open_functions[-1][2]:
                    name, first, _, _ = open_functions.pop()
                    length = number - first + 1
                    if length > FUNCTION_LINES:
                        found.append((name, first, length))
        # A requirement without a body (a protocol's) ends at its line.
        if open_functions and not open_functions[-1][3] and open_functions[-1][1] == number and "{" not in code:
            if not code.rstrip().endswith((",", "(", "->")):
                open_functions.pop()
    return found


def main(argv):
    root = argv[1] if len(argv) > 1 else "."
    sources = os.path.join(root, "Sources")
    modules = {}
    long_files = []
    functions = []
    for module in sorted(os.listdir(sources)):
        for directory, _, files in os.walk(os.path.join(sources, module)):
            for name in sorted(files):
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(directory, name)
                count = sum(1 for _ in open(path, encoding="utf-8"))
                modules[module] = modules.get(module, 0) + count
                if count > FILE_LINES:
                    long_files.append((os.path.relpath(path, root), count))
                for function, first, length in long_functions(path):
                    functions.append((os.path.relpath(path, root), function, first, length, name in ALLOWED))
    total = sum(modules.values())
    failed = False
    print(f"Sources/: {total} Swift lines in {len([m for m in modules if modules[m]])} Swift modules")
    for module, count in sorted(modules.items(), key=lambda item: -item[1]):
        share = count / total
        over = share > MODULE_SHARE
        failed |= over
        print(f"  {module:<20} {count:>6} lines {share:6.1%}{'  OVER 30%' if over else ''}")
    print(f"files over {FILE_LINES} lines: {len(long_files)}")
    for path, count in long_files:
        print(f"  {path}: {count}")
    failed |= bool(long_files)
    print(f"functions over {FUNCTION_LINES} lines: {len(functions)}"
          f" ({sum(1 for f in functions if f[4])} of them parsers' state machines, allowed)")
    for path, function, first, length, allowed in functions:
        print(f"  {path}:{first} {function}: {length}{'  (state machine)' if allowed else ''}")
        failed |= not allowed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
