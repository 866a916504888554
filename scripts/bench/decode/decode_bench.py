"""Side-by-side decoding benchmark of `make bench-decode` (run by bench-decode.sh, beside it, as
`/usr/bin/python3 -m bench.decode.decode_bench` with PYTHONPATH=scripts).

For every input it runs flipbook and the peers a user would otherwise pick (ImageMagick, libvips,
ffmpeg, Pillow) on two jobs:

  all   every composited frame written as PNG files
  last  the last frame only, from a cold start (a new process)

Each command runs once to warm the page cache (that run's output is kept to count frames, add up
PNG bytes and compare pixels with flipbook's), then RUNS more times, the commands of one input
interleaved round-robin so that a burst of load from elsewhere on the machine spreads over all of
them. Wall-clock time is measured around the process; peak RSS is GNU time's "Maximum resident set
size" (`/usr/bin/time -f %M`, the same number `/usr/bin/time -v` prints). Medians are reported,
with the min–max range as the noise.

The result is a Markdown section "## Decoding", written into docs/benchmarks/decoding.md (only that section is
replaced) and to stdout. Uses only the standard library and Pillow (Debian's python3-pil).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageChops

from benchlib.machine import cpu_model, memory_bytes, os_name
from benchlib.sampler import cpu_ticks
from benchlib.splice import replace_section

Image.MAX_IMAGE_PIXELS = None  # vips's strip of 300 720p frames is 276 MP: ours, not a bomb

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
PILLOW_SCRIPT = HERE / "pillow_frames.py"
NOTES = HERE / "notes.md"  # hand-written analysis, copied into the section after the goals
PYTHON = "/usr/bin/python3"  # Debian's, with python3-pil (not whatever python3 is first on PATH)
CONVERT = "/usr/bin/convert"  # ImageMagick itself, not a wrapper earlier on PATH
GNU_TIME = "/usr/bin/time"
SLOW_SECONDS = 20.0  # commands slower than this get SLOW_RUNS timed runs instead of RUNS

INPUTS = [
    # file, what it is
    ("small.gif", "480×270, 100 frames, GIF, gifsicle -O3"),
    ("large.gif", "1280×720, 300 frames, GIF, gifsicle -O3"),
    ("small-lossy.webp", "480×270, 100 frames, animated WebP, lossy (img2webp -lossy -q 75 -m 4)"),
    ("large-lossy.webp", "1280×720, 300 frames, animated WebP, lossy (img2webp -lossy -q 75 -m 4)"),
    ("small-lossless.webp", "480×270, 100 frames, animated WebP, lossless (img2webp -lossless -m 4)"),
    ("small.apng", "480×270, 100 frames, APNG (apngasm -z0)"),
    ("large.apng", "1280×720, 300 frames, APNG (apngasm -z0)"),
]

TOOLS = ["flipbook", "ImageMagick", "vips", "ffmpeg", "Pillow"]


def commands(tool: str, mode: str, flipbook: str, source: Path, out: Path, last: int) -> list[str]:
    """The command line of TOOL for MODE ('all' or 'last'), writing into OUT (a directory)."""
    src = str(source)
    im_src = ("apng:" + src) if source.suffix == ".apng" else src  # IM reads APNG frames only so
    if mode == "all":
        return {
            "flipbook": [flipbook, "frames", src, "--output", str(out)],
            "ImageMagick": [CONVERT, im_src, "-coalesce", str(out / "out_%04d.png")],
            "vips": ["vips", "copy", f"{src}[n=-1]", str(out / "strip.png")],
            "ffmpeg": ["ffmpeg", "-nostdin", "-v", "error", "-i", src, "-fps_mode", "passthrough",
                       str(out / "out_%04d.png")],
            "Pillow": [PYTHON, str(PILLOW_SCRIPT), "all", src, str(out)],
        }[tool]
    return {
        "flipbook": [flipbook, "frame", src, str(last), "--output", str(out / "last.png")],
        "ImageMagick": [CONVERT, im_src, "-coalesce", "-delete", "0--2", str(out / "last.png")],
        "vips": ["vips", "copy", f"{src}[page={last}]", str(out / "last.png")],
        "ffmpeg": ["ffmpeg", "-nostdin", "-v", "error", "-i", src, "-vf", f"select=eq(n\\,{last})",
                   "-fps_mode", "passthrough", "-frames:v", "1", str(out / "last.png")],
        "Pillow": [PYTHON, str(PILLOW_SCRIPT), "last", src, str(out / "last.png")],
    }[tool]


def shown(argv: list[str], source: Path, out: Path, flipbook: str) -> str:
    """A command line for the report, with IN, OUT and `flipbook` in place of local paths."""
    text = " ".join(shlex.quote(a) for a in argv)
    text = text.replace(str(source), "IN").replace(str(out), "OUT")
    text = text.replace(flipbook, "flipbook").replace(str(PILLOW_SCRIPT), "scripts/bench/decode/pillow_frames.py")
    text = text.replace(PYTHON + " ", "python3 ").replace(CONVERT + " ", "convert ")
    return text.replace("|", "\\|")


@dataclass
class Result:
    tool: str
    mode: str
    argv: list[str]
    out: Path
    walls: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    failure: str | None = None  # the command failed or wrote the wrong thing: not timed
    frames_written: int = 0
    png_bytes: int = 0
    note: str = ""
    check: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.walls)


def png_size(path: Path) -> tuple[int, int]:
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError(f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def run_once(argv: list[str], out: Path, log: Path) -> tuple[float, int, int]:
    """Runs ARGV in a fresh OUT; returns (wall seconds, peak RSS KiB, exit status)."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    os.sync()  # write back the previous run's files now, not during this one
    rss_file = out.parent / (out.name + ".rss")
    with open(log, "wb") as sink:
        start = time.perf_counter()
        proc = subprocess.run([GNU_TIME, "-f", "%M", "-o", str(rss_file), *argv],
                              stdin=subprocess.DEVNULL, stdout=sink, stderr=sink)
        wall = time.perf_counter() - start
    rss = 0
    try:
        text = rss_file.read_text().strip().splitlines()
        rss = int(text[-1]) if text and text[-1].isdigit() else 0
    except OSError:
        pass
    return wall, rss, proc.returncode


def frame_paths(result: Result) -> list[Path]:
    return sorted(p for p in result.out.iterdir() if p.suffix == ".png")


def load_frames(result: Result, width: int, height: int):
    """Yields the RGBA frames a result wrote (a vips strip is cut into frames)."""
    paths = frame_paths(result)
    if result.tool == "vips" and result.mode == "all":
        with Image.open(paths[0]) as strip:
            strip = strip.convert("RGBA")
            for y in range(0, strip.height, height):
                yield strip.crop((0, y, width, y + height))
        return
    for path in paths:
        with Image.open(path) as image:
            yield image.convert("RGBA")


def compare(a: Image.Image, b: Image.Image) -> tuple[int, int]:
    """(pixels that differ, largest channel difference); pixels transparent in both match."""
    if a.size != b.size:
        return a.width * a.height, 255
    diff = ImageChops.difference(a, b)
    bands = diff.split()
    worst = bands[0]
    for band in bands[1:]:
        worst = ImageChops.lighter(worst, band)
    visible = ImageChops.lighter(a.getchannel("A"), b.getchannel("A")).point(lambda v: 255 if v else 0)
    worst = ImageChops.multiply(worst, visible)
    histogram = worst.histogram()
    differing = sum(histogram[1:])
    largest = max((v for v in range(256) if histogram[v]), default=0)
    return differing, largest


def check_against(reference: Result, peer: Result, width: int, height: int) -> str:
    frames = 0
    bad_frames = 0
    bad_pixels = 0
    largest = 0
    for ours, theirs in zip(load_frames(reference, width, height), load_frames(peer, width, height)):
        differing, worst = compare(ours, theirs)
        frames += 1
        if differing:
            bad_frames += 1
            bad_pixels += differing
            largest = max(largest, worst)
    if bad_frames == 0:
        return f"identical ({frames}/{frames} frames)"
    return (f"{bad_frames}/{frames} frames differ ({bad_pixels} pixels, "
            f"up to {largest} per channel)")


def fmt_seconds(values: list[float]) -> str:
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.3f}"
    return f"{med:.3f} ({min(values):.3f}–{max(values):.3f})"


def fmt_mib(kb: list[int]) -> str:
    if not kb:
        return "–"
    return f"{statistics.median(kb) / 1024:.0f} MiB"


def tool_version(argv: list[str], pattern: str = "") -> str:
    try:
        text = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    for line in text.splitlines():
        if pattern in line:
            return line.strip()
    return text.strip().splitlines()[0] if text.strip() else "?"


def machine_lines() -> list[str]:
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    return [
        f"- CPU: {cpu_model()}, `nproc` = {nproc}; {memory_bytes() / 2**30:.0f} GiB RAM; {os_name()}, "
        f"Linux {platform.release()}",
    ]


def busiest_others(seconds: float = 2.0) -> str:
    """The other processes using most CPU over the next SECONDS, as a clause for the report: on a
    2-core machine one busy neighbour halves what a multi-threaded tool can use."""
    before = cpu_ticks()
    time.sleep(seconds)
    after = cpu_ticks()
    hz = os.sysconf("SC_CLK_TCK")
    mine = {os.getpid()}
    by_name: dict[str, float] = {}
    for pid, (name, ticks) in after.items():
        if pid in mine:
            continue
        start = before[pid][1] if pid in before else 0  # started during the sample
        by_name[name] = by_name.get(name, 0.0) + (ticks - start) / hz / seconds * 100
    busy = sorted(((share, name) for name, share in by_name.items() if share >= 30), reverse=True)
    ts = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M")
    if not busy:
        return f"; at {ts} UTC no other running process used over 30% of a core (short-lived ones are not seen)"
    return f"; at {ts} UTC other processes used " + ", ".join(f"{name} {share:.0f}%" for share, name in busy[:4]) + " of a core"


def versions(flipbook: str) -> list[str]:
    rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip() or "?"
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "Sources", "Package.swift"],
                           capture_output=True, text=True).stdout.strip()
    import PIL
    return [
        f"- flipbook: release build of commit {rev}{' (with uncommitted changes under Sources/)' if dirty else ''}, "
        f"`swift build -c release`; PNG deflate level 1 with libdeflate (its default)",
        f"- ImageMagick: {tool_version([CONVERT, '-version'], 'Version:').replace('Version: ', '')}; "
        f"policy raised by `scripts/bench/imagemagick/policy.xml` (via `MAGICK_CONFIGURE_PATH`)",
        f"- libvips: {tool_version(['vips', '--version'])}",
        f"- ffmpeg: {tool_version(['ffmpeg', '-version'], 'ffmpeg version').split(' Copyright')[0]}",
        f"- Pillow: {PIL.__version__} (Debian's python3-pil, `/usr/bin/python3` {platform.python_version()})",
    ]


def bench_input(args, source: Path, description: str, sections: list[str], goals: list[tuple]) -> None:
    flipbook = args.flipbook
    info = json.loads(subprocess.run([flipbook, "info", str(source)], capture_output=True, text=True,
                                     check=True).stdout)
    count, width, height = info["frameCount"], info["width"], info["height"]
    last = count - 1
    work = Path(args.work) / source.stem.replace(".", "-") / source.suffix.lstrip(".")
    work.mkdir(parents=True, exist_ok=True)
    print(f"== {source.name}: {description}", file=sys.stderr)

    results: list[Result] = []
    for mode in ("all", "last"):
        for tool in TOOLS:
            out = work / f"{tool}-{mode}"
            results.append(Result(tool, mode, commands(tool, mode, flipbook, source, out, last), out))

    # Warm-up: also the run whose output is counted, measured and compared.
    for r in results:
        log = work / f"{r.tool}-{r.mode}.log"
        wall, rss, status = run_once(r.argv, r.out, log)
        if status != 0:
            first = next((l for l in log.read_text(errors="replace").splitlines() if l.strip()), "")
            r.failure = f"fails (exit {status}): {first.strip()[:90]}"
        else:
            pngs = frame_paths(r)
            r.png_bytes = sum(p.stat().st_size for p in pngs)
            if r.mode == "all":
                if r.tool == "vips" and len(pngs) == 1:
                    w, h = png_size(pngs[0])
                    r.frames_written = h // height if w == width and h % height == 0 else 0
                    r.note = "one tall strip of all frames"
                else:
                    r.frames_written = len(pngs)
                if r.frames_written != count:
                    r.failure = f"wrong output: {r.frames_written} of {count} frames"
            else:
                r.frames_written = len(pngs)
                if len(pngs) != 1:
                    r.failure = f"wrong output: {len(pngs)} files"
        print(f"   warm-up {r.tool:11} {r.mode:4} {wall:7.3f} s  {rss / 1024:7.0f} MiB"
              f"  {r.failure or ''}", file=sys.stderr)
        r.walls_warm = wall  # type: ignore[attr-defined]
        if not r.failure and wall > SLOW_SECONDS:
            # A run this long is not helped by a warm page cache: it counts as a timed run too.
            r.walls.append(wall)
            r.rss_kb.append(rss)

    # Pixels: every peer that wrote the right number of frames against flipbook.
    ref = {m: next(r for r in results if r.tool == "flipbook" and r.mode == m) for m in ("all", "last")}
    for r in results:
        if r.failure or r.tool == "flipbook" or ref[r.mode].failure:
            continue
        try:
            r.check = check_against(ref[r.mode], r, width, height)
        except Exception as error:  # a comparison that cannot be made is reported, not fatal
            r.check = f"not compared: {type(error).__name__}: {str(error)[:80]}"

    # Timed runs, interleaved.
    runnable = [r for r in results if not r.failure]
    for run in range(args.runs):
        for r in runnable:
            if r.walls_warm > SLOW_SECONDS and len(r.walls) >= args.slow_runs:  # type: ignore[attr-defined]
                continue
            wall, rss, status = run_once(r.argv, r.out, work / "run.log")
            if status != 0:
                r.failure = f"failed in a timed run (exit {status})"
                continue
            r.walls.append(wall)
            r.rss_kb.append(rss)
        print(f"   run {run + 1}/{args.runs} done", file=sys.stderr)
    # Keep the disk tidy: outputs were only needed for the checks above.
    if not args.keep:
        for r in results:
            shutil.rmtree(r.out, ignore_errors=True)

    lines = [f"### `{source.name}` — {description}", ""]
    fb_all, fb_last = ref["all"], ref["last"]
    im_all = next(r for r in results if r.tool == "ImageMagick" and r.mode == "all")
    lines += ["All frames to PNG files (median wall-clock seconds, min–max in brackets):", "",
              "| tool | command | seconds | frames/s | flipbook ÷ tool (speed) | PNG bytes | ÷ ImageMagick's | peak RSS | pixels vs flipbook |",
              "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in (x for x in results if x.mode == "all"):
        cmd = f"`{shown(r.argv, source, r.out, flipbook)}`"
        if r.failure or not r.walls:
            lines.append(f"| {r.tool} | {cmd} | {r.failure or 'no timed run'} | – | – | – | – | – | – |")
            continue
        fps = count / r.median
        ratio = "1.00" if r.tool == "flipbook" else (
            f"{r.median / fb_all.median:.2f}×" if fb_all.walls else "–")
        size_ratio = f"{r.png_bytes / im_all.png_bytes:.2f}" if im_all.png_bytes and not im_all.failure else "–"
        note = f" ({r.note})" if r.note else ""
        lines.append(f"| {r.tool} | {cmd}{note} | {fmt_seconds(r.walls)} | {fps:.1f} | {ratio} | "
                     f"{r.png_bytes:,} | {size_ratio} | {fmt_mib(r.rss_kb)} | {r.check or ('reference' if r.tool == 'flipbook' else '–')} |")
    lines += ["", f"The last frame (index {last}) only, from a cold start:", "",
              "| tool | command | seconds | flipbook ÷ tool (speed) | peak RSS | pixels vs flipbook |",
              "|---|---|---:|---:|---:|---|"]
    for r in (x for x in results if x.mode == "last"):
        cmd = f"`{shown(r.argv, source, r.out, flipbook)}`"
        if r.failure or not r.walls:
            lines.append(f"| {r.tool} | {cmd} | {r.failure or 'no timed run'} | – | – | – |")
            continue
        ratio = "1.00" if r.tool == "flipbook" else (f"{r.median / fb_last.median:.2f}×" if fb_last.walls else "–")
        lines.append(f"| {r.tool} | {cmd} | {fmt_seconds(r.walls)} | {ratio} | {fmt_mib(r.rss_kb)} | "
                     f"{r.check or ('reference' if r.tool == 'flipbook' else '–')} |")
    lines.append("")
    sections.append("\n".join(lines))

    # Goals of issue 2.
    def speedup(tool: str, mode: str) -> float | None:
        r = next(x for x in results if x.tool == tool and x.mode == mode)
        f = ref[mode]
        if r.failure or not r.walls or f.failure or not f.walls:
            return None
        return r.median / f.median

    fmt = source.suffix.lstrip(".")
    peers = [t for t in TOOLS if t != "flipbook"]
    if fmt == "gif":
        goals.append((source.name, "all frames ≥ 2.5× ffmpeg", speedup("ffmpeg", "all"), 2.5))
        goals.append((source.name, "all frames ≥ 10× ImageMagick", speedup("ImageMagick", "all"), 10.0))
    else:
        for p in peers:
            goals.append((source.name, f"all frames ahead of {p}", speedup(p, "all"), 1.0))
    goals.append((source.name, "last frame no slower than vips", speedup("vips", "last"), 1.0))
    for p in ("ffmpeg", "Pillow", "ImageMagick"):
        goals.append((source.name, f"last frame ahead of {p}", speedup(p, "last"), 1.0))
    if fb_all.png_bytes and im_all.png_bytes and not im_all.failure and not fb_all.failure:
        goals.append((source.name, "PNG bytes ≤ 0.7× ImageMagick's", 0.7 / (fb_all.png_bytes / im_all.png_bytes), 1.0,
                      f"{fb_all.png_bytes / im_all.png_bytes:.2f}×"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flipbook", required=True, help="the release flipbook binary")
    parser.add_argument("--inputs", required=True, help="directory made by scripts/make-bench-inputs.sh")
    parser.add_argument("--work", required=True, help="scratch directory for outputs")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per command (after one warm-up)")
    parser.add_argument("--slow-runs", type=int, default=3, help=f"timed runs of commands slower than {SLOW_SECONDS:.0f} s")
    parser.add_argument("--only", default="", help="comma-separated input file names (default: all)")
    parser.add_argument("--benchmarks", default="", help="the report to update (its '## Decoding' section; docs/benchmarks/decoding.md)")
    parser.add_argument("--keep", action="store_true", help="keep the warm-up outputs under --work")
    args = parser.parse_args()
    args.flipbook = str(Path(args.flipbook).resolve())

    for tool in (CONVERT, GNU_TIME, PYTHON, shutil.which("vips"), shutil.which("ffmpeg")):
        if not tool or not os.access(tool, os.X_OK):
            print(f"decode_bench: {tool or 'vips/ffmpeg'} is missing (scripts/install-deps.sh bench)", file=sys.stderr)
            return 1
    os.environ.setdefault("MAGICK_CONFIGURE_PATH", str(HERE.parent / "imagemagick"))

    inputs_dir = Path(args.inputs)
    chosen = [i for i in INPUTS if not args.only or i[0] in args.only.split(",")]
    missing = [name for name, _ in chosen if not (inputs_dir / name).is_file()]
    if missing:
        print(f"decode_bench: missing inputs in {inputs_dir}: {', '.join(missing)} "
              f"(scripts/make-bench-inputs.sh {inputs_dir})", file=sys.stderr)
        return 1

    started = datetime.datetime.now(datetime.timezone.utc)
    args.version_lines = versions(args.flipbook)  # the commit the binary was built from, not a later one
    load_before = os.getloadavg()
    busy_before = busiest_others()
    sections: list[str] = []
    goals: list[tuple] = []
    for done, (name, description) in enumerate(chosen, start=1):
        bench_input(args, inputs_dir / name, description, sections, goals)
        final = done == len(chosen)
        section = report(args, started, load_before, busy_before, sections, goals,
                         None if final else (done, len(chosen)))
        if final:
            print(section)
        if args.benchmarks:
            # Written after every input, so that a run cut short leaves what it measured.
            replace_section(args.benchmarks, "Decoding", section.split("\n", 1)[1])
            print(f"decode_bench: wrote the '## Decoding' section of {args.benchmarks}"
                  f"{'' if final else f' ({done} of {len(chosen)} inputs so far)'}", file=sys.stderr)
    return 0


def report(args, started, load_before, busy_before, sections: list[str], goals: list[tuple],
           partial: tuple[int, int] | None) -> str:
    """The '## Decoding' section for the inputs measured so far."""
    load_after = os.getloadavg()
    busy_after = busiest_others() if partial is None else ""
    elapsed = datetime.datetime.now(datetime.timezone.utc) - started

    out = ["## Decoding", ""]
    if partial is not None:
        out += [f"**Partial: {partial[0]} of {partial[1]} inputs measured so far** (the run was still going "
                f"when this was written, or was cut short).", ""]
    env = "".join(f"{name}={value} " for name, value, default in
                  (("BENCH_RUNS", args.runs, 5), ("BENCH_SLOW_RUNS", args.slow_runs, 3),
                   ("BENCH_ONLY", args.only, "")) if value != default)
    out += [
           f"Made by `{env}make bench-decode` (`scripts/bench/decode/bench-decode.sh`: installs the peers, builds "
           "flipbook in release, makes the inputs with `scripts/make-bench-inputs.sh`, then runs "
           "`scripts/bench/decode/decode_bench.py`). "
           f"Run {started:%Y-%m-%d %H:%M} UTC, {elapsed.seconds // 60} min.", "",
           "Machine and tools:", ""]
    out += machine_lines()
    out += args.version_lines
    out += ["",
            f"Method: each command runs once to warm the page cache (that run's output is counted, its PNG bytes "
            f"added up and its pixels compared with flipbook's), then {args.runs} timed runs "
            f"(commands over {SLOW_SECONDS:.0f} s: {args.slow_runs} in all, the warm-up run counting as the first), "
            f"all commands of an input interleaved "
            f"round-robin; `sync` before each run, outputs written to a fresh directory on the same disk. "
            f"Tables give the median wall-clock time with the min–max range; frames/s = frames ÷ median. "
            f"Peak RSS is the median of GNU time's maximum resident set size (`/usr/bin/time`). "
            f"\"flipbook ÷ tool\" is how many times faster flipbook is (the tool's median ÷ flipbook's): "
            f"above 1 flipbook is ahead. The machine is shared with other engineers' builds and tests: "
            f"load average {load_before[0]:.2f} at the start, {load_after[0]:.2f} at the end"
            f"{busy_before}{busy_after}; read differences under ~10% as noise.",
            "",
            "Notes on the peers:",
            "",
            "- **vips** `copy IN[n=-1] OUT.png` writes all frames as one tall PNG strip (width × frames·height): "
            "one process, one encode of the same pixels, which is the vips way to get every frame; "
            "writing one file per frame would need one `vips copy IN[page=i]` per frame, each decoding "
            "from the start (quadratic), which would be unfair to vips. Its PNGs use zlib level 6 "
            "(flipbook: level 1). vips 8.14 has no APNG reader (`pngload` has no `n`/`page`).",
            "- **ImageMagick** needs `-coalesce` for partial frames: `convert IN[LAST] OUT.png` alone returns "
            "the raw sub-rectangle of the last frame, not what a browser shows; for the last frame the "
            "cheapest correct form is to coalesce and drop all but the last (`-delete 0--2`). "
            "It reads APNG frames only through its `apng:` coder, which hands the file to ffmpeg and "
            "reads back the frames (without the prefix it returns the default image alone).",
            "- **ffmpeg** 5.1 cannot decode animated WebP (its decoder rejects ANIM/ANMF). "
            "`-fps_mode passthrough` keeps it from duplicating or dropping frames; the last frame uses "
            "`select` (GIF and APNG cannot be seeked to a composited frame).",
            "- **Pillow** seeks frame by frame and saves each (`scripts/bench/decode/pillow_frames.py`), PNG at "
            "its default zlib level 6.",
            "",
            ]
    out.append("### Goals (issue 2)\n")
    out.append("| input | goal | result | met |")
    out.append("|---|---|---:|:---:|")
    for goal in goals:
        name, what, value, target = goal[:4]
        label = goal[4] if len(goal) > 4 else (f"{value:.2f}×" if value is not None else "peer fails")
        met = "–" if value is None else ("yes" if value >= target else "**no**")
        out.append(f"| {name} | {what} | {label} | {met} |")
    out.append("")
    if NOTES.is_file():
        out += [NOTES.read_text().rstrip("\n"), ""]
    out += sections
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
