#!/usr/bin/env python3
"""Counts the tests `swift test --xunit-output` recorded, per test target and per suite, and fails
when a test target of Package.swift ran none (a target whose tests stopped being discovered, or a
filter that left it out, would otherwise pass in silence).

    scripts/test-counts.py Package.swift RESULTS.xml [MORE.xml ...]
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    targets = re.findall(r'\.testTarget\(\s*name:\s*"([^"]+)"', open(argv[1]).read())
    suites = collections.Counter()
    failed = collections.Counter()
    for path in argv[2:]:
        for case in ET.parse(path).getroot().iter("testcase"):
            suite = case.get("classname") or "?"
            suites[suite] += 1
            if case.find("failure") is not None or case.find("error") is not None:
                failed[suite] += 1
    per_target = collections.Counter()
    for suite, count in suites.items():
        per_target[suite.split(".", 1)[0]] += count
    width = max([len(s) for s in suites] + [10])
    for suite in sorted(suites):
        note = f"  ({failed[suite]} failed)" if failed[suite] else ""
        print(f"tests: {suite:<{width}} {suites[suite]:>5}{note}")
    for target in targets:
        print(f"tests: target {target:<{width - 7}} {per_target[target]:>5}")
    print(f"tests: {sum(suites.values())} in {len(suites)} suites of {len(targets)} test targets")
    empty = [t for t in targets if per_target[t] == 0]
    if empty:
        print(f"tests: no test ran in {', '.join(empty)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
