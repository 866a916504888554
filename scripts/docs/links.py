"""Checks the documentation's relative links and its length limits; exits 1 on any problem.

    python3 scripts/docs/links.py

- Every relative link or image in README.md, BENCHMARKS.md and docs/**/*.md (`[text](path)`,
  `[text](path#anchor)`, `[text](#anchor)`) must name a file or directory that exists, and an
  anchor must be a heading of that file, spelled as GitHub spells anchors (lower case, punctuation
  dropped, spaces as hyphens, repeats numbered -1, -2, …). Links inside code are not links.
- README.md stays within 250 lines and BENCHMARKS.md within 600: the details belong in docs/.
"""
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIMITS = {"README.md": 250, "BENCHMARKS.md": 600}
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")


def documents():
    yield os.path.join(REPO, "README.md")
    yield os.path.join(REPO, "BENCHMARKS.md")
    for root, _, files in os.walk(os.path.join(REPO, "docs")):
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(root, name)


def prose(text):
    """The text without fenced code blocks and inline code, line numbers kept."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("")
            continue
        out.append("" if fenced else re.sub(r"`[^`]*`", "``", line))
    return out


def github_slug(heading):
    """A heading's anchor as GitHub makes it: link text kept, lower case, punctuation dropped."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links → their text
    text = text.lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def check_links(path):
    problems = []
    with open(path) as f:
        raw = f.read()
    raw_lines = raw.split("\n")
    for number, line in enumerate(prose(raw), 1):
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            where = f"{os.path.relpath(path, REPO)}:{number}"
            if not os.path.exists(dest):
                problems.append(f"{where}: link to {target}: {os.path.relpath(dest, REPO)} does not exist")
                continue
            if anchor:
                if not dest.endswith(".md") or os.path.isdir(dest):
                    problems.append(f"{where}: link to {target}: an anchor into a file that is not Markdown")
                elif anchor not in heading_anchors(dest):
                    problems.append(f"{where}: link to {target}: {os.path.relpath(dest, REPO)} has no heading "
                                    f"'#{anchor}'")
    return problems


def heading_anchors(path):
    """Anchors from the raw headings (inline code kept as text, as GitHub does)."""
    seen, result = {}, set()
    fenced = False
    with open(path) as f:
        for line in f.read().split("\n"):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            m = None if fenced else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            slug = github_slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            result.add(slug if n == 0 else f"{slug}-{n}")
    return result


def main():
    problems = []
    for path in documents():
        problems += check_links(path)
    for name, limit in LIMITS.items():
        with open(os.path.join(REPO, name)) as f:
            count = f.read().count("\n")
        if count > limit:
            problems.append(f"{name}: {count} lines, more than {limit}: move the details to docs/")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
