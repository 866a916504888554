"""Writes a benchmark's report into its own section of a report file (docs/benchmarks/*.md) and
touches nothing else. BENCHMARKS.md, the summary, is updated by hand from those reports."""
import os


def replace_section(path, heading, body):
    """Replaces the body of `## heading` in `path` (up to the next `## `) with `body`, framed by
    one blank line on each side; the file is replaced atomically. RuntimeError when the file has
    no such section."""
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    start = None
    for i, line in enumerate(lines):
        if line.strip() == f"## {heading}":
            start = i
            break
    if start is None:
        raise RuntimeError(f"{path} has no '## {heading}' section")
    end = len(lines)
    for j in range(start + 1, len(lines)):
        if lines[j].startswith("## "):
            end = j
            break
    new = lines[:start + 1] + [""] + body.strip("\n").split("\n") + [""] + lines[end:]
    if end == len(lines):
        new = lines[:start + 1] + [""] + body.strip("\n").split("\n") + [""]
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(new))
    os.replace(path + ".tmp", path)


def publish(result, report, out_dir, benchmarks_md, heading, write):
    """Keeps a run: `result` as `out_dir`/result.json (what RENDER_ONLY re-renders from), the
    rendered `report` on stdout, and — when `write` — the report as the `heading` section of `benchmarks_md`."""
    import json
    with open(os.path.join(out_dir, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(report)
    if write:
        replace_section(benchmarks_md, heading, report)
