#!/usr/bin/python3
"""make conformance-matrix: animations made by every encoder Debian has, decoded by Chromium
and by Flipbook, compared frame by frame; prints the encoder × option table and, with
--update-docs, writes it into docs/CONFORMANCE.md (between its matrix markers).

usage: matrix.py [--flipbook BIN] [--oracle browser-frames] [--work DIR] [--jobs N]
                 [--only TEXT] [--update-docs]
Runs with Debian's python3 (Pillow and numpy from python3-pil, python3-numpy).
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import re
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

import compare
import encoders
import scenes

BEGIN, END = "<!-- conformance-matrix:begin -->", "<!-- conformance-matrix:end -->"


def tool_versions():
    def first_line(*command):
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=30)
            text = (run.stdout or run.stderr).strip().splitlines()
            return text[0].strip() if text else "?"
        except OSError:
            return "missing"
    import PIL
    return {
        "Chromium": first_line("chromium", "--version"),
        "ImageMagick": first_line("convert", "-version"),
        "GraphicsMagick": first_line("gm", "-version"),
        "gifsicle": first_line("gifsicle", "--version"),
        "ffmpeg": first_line("ffmpeg", "-version"),
        "libwebp (img2webp)": "img2webp " + first_line("img2webp", "-version"),
        "apngasm": first_line("apngasm"),
        "apngopt": first_line("apngopt"),
        "Pillow": "Pillow " + PIL.__version__,
        "libvips": first_line("vips", "--version"),
    }


def evaluate(job, arguments):
    label, path = job["label"], job["path"]
    scratch = os.path.join(arguments.work, "decoded", re.sub(r"[^A-Za-z0-9._-]+", "_", label))
    try:
        outcome = compare.compare(arguments.oracle, arguments.flipbook, path, scratch)
        return {**job, **outcome.as_json()}
    except Exception as error:  # a harness failure is a row, not a crash
        return {**job, "verdict": "error", "detail": f"{type(error).__name__}: {error}",
                "trace": traceback.format_exc()}


def markdown(rows, versions, command, started):
    counts = {}
    for row in rows:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    compared = len(rows) - counts.get("encoder failed", 0)
    agree = counts.get("match", 0) + counts.get("both reject", 0)
    lines = [
        f"Run `{command}` on {started} (UTC).",
        "",
        f"**{agree} of {compared} inputs agree with Chromium** ({counts.get('match', 0)} match, "
        f"{counts.get('both reject', 0)} rejected by both, {counts.get('differs', 0)} differ"
        + (f", {counts['error']} harness errors" if counts.get("error") else "")
        + (f"; {counts['encoder failed']} encoder runs failed and are not counted" if counts.get("encoder failed") else "")
        + ").",
        "",
        "| encoder | option | input | verdict | detail |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        detail = row.get("detail", "").replace("|", "\\|")
        if row["verdict"] == "both reject":
            detail = "Chromium: " + row.get("chromium", "")[:80].replace("|", "\\|")
        lines.append(f"| {row['encoder']} | {row['option']} | {row['variant']} | {row['verdict']} | {detail} |")
    lines += ["", "Tools:", ""] + [f"- {name}: {version}" for name, version in versions.items()]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flipbook", default=os.path.join(REPO, ".build", "release", "flipbook"))
    parser.add_argument("--oracle", default=os.path.join(os.path.dirname(REPO), "shared", "tools", "browser-frames"))
    parser.add_argument("--work", default=os.path.join(REPO, "build", "conformance"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", help="only cases whose name contains this")
    parser.add_argument("--update-docs", action="store_true")
    arguments = parser.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    for tool in (arguments.flipbook, arguments.oracle):
        if not os.access(tool, os.X_OK):
            sys.exit(f"conformance-matrix: {tool} is not executable")
    os.makedirs(os.path.join(arguments.work, "inputs"), exist_ok=True)
    for scene in ("shapes", "alpha", "photo", "deep"):
        scenes.write_scene(scene, os.path.join(arguments.work, "scenes", scene))

    jobs, rows = [], []
    for case in encoders.cases(arguments.work):
        if arguments.only and arguments.only not in case.name:
            continue
        try:
            case.make(case.output)
        except (subprocess.CalledProcessError, OSError, ValueError) as error:
            detail = getattr(error, "stderr", b"") or str(error)
            detail = detail.decode(errors="replace") if isinstance(detail, bytes) else detail
            rows.append({"encoder": case.encoder, "option": case.option, "variant": "as made",
                         "verdict": "encoder failed", "detail": detail.strip().splitlines()[-1][:120] if detail.strip() else ""})
            continue
        jobs.append({"encoder": case.encoder, "option": case.option, "variant": "as made", "path": case.output,
                     "label": case.name})
        # Damaged copies of every animation made: cut short twice and bit-flipped.
        for variant, path in encoders.damaged_copies(case.output, os.path.join(arguments.work, "inputs")):
            jobs.append({"encoder": case.encoder, "option": case.option, "variant": variant, "path": path,
                         "label": f"{case.name} {variant}"})
    print(f"conformance-matrix: {len(jobs)} inputs, {arguments.jobs} at a time", file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(arguments.jobs) as pool:
        for done, row in enumerate(pool.map(lambda job: evaluate(job, arguments), jobs), 1):
            rows.append(row)
            if row["verdict"] not in ("match", "both reject"):
                print(f"  {row['verdict']}: {row['label']}: {row.get('detail', '')}", file=sys.stderr)
            if done % 25 == 0:
                print(f"  {done}/{len(jobs)}", file=sys.stderr)
    order = {(j["encoder"], j["option"]): n for n, j in enumerate(jobs)}
    rows.sort(key=lambda r: (order.get((r["encoder"], r["option"]), -1), r["variant"] != "as made", r["variant"]))
    with open(os.path.join(arguments.work, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)
    command = "make conformance-matrix" + (f" ONLY='{arguments.only}'" if arguments.only else "")
    table = markdown(rows, tool_versions(), command, started)
    print(table)
    if arguments.update_docs:
        path = os.path.join(REPO, "docs", "CONFORMANCE.md")
        with open(path) as f:
            text = f.read()
        if BEGIN not in text or END not in text:
            sys.exit(f"conformance-matrix: {path} has no matrix markers")
        text = text[:text.index(BEGIN) + len(BEGIN)] + "\n" + table + text[text.index(END):]
        with open(path, "w") as f:
            f.write(text)
        print(f"conformance-matrix: wrote the table into {path}", file=sys.stderr)
    differing = sum(1 for r in rows if r["verdict"] in ("differs", "error"))
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
