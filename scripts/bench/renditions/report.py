"""Renders docs/benchmarks/renditions.md's section "Renditions: speed and quality (issue 21)" from
bench-out/renditions/{speed,quality,sizes}.json and notes.md (hand-written after a run), prints it,
and (BENCH_WRITE=1, the default) writes it: replaced in place when the section exists, else
appended at the end of the file. BINARY_NOTE: how the section names the build that was measured.
"""
import json
import math
import os
import statistics

from benchlib import REPO
from bench.renditions import HERE, OUT, SECTION

WRITE = os.environ.get("BENCH_WRITE", "1") == "1"
THRESHOLD = 45.0


def load(name):
    path = os.path.join(OUT, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def ms(v):
    return f"{v * 1000:.0f}" if v >= 0.1 else f"{v * 1000:.1f}"


def db(v):
    return "∞" if math.isinf(v) else f"{v:.1f}"


def mean_sd(xs):
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


CLI_NAMES = {
    "flipbook": "flipbook",
    "ffmpeg": "ffmpeg",
    "vips-per-frame": "vips, per frame",
    "vips-one-call": "vips, one call",
    "Pillow": "Pillow",
}


def cli_peer_command(name, fmt):
    c = {
        ("flipbook", "png"): "`flipbook frames small.gif --width 320 -o DIR`",
        ("flipbook", "webp"): "`flipbook frames small.gif --width 320 -o DIR --format webp --quality 80`",
        ("ffmpeg", "png"): "`ffmpeg -i small.gif -vf scale=320:-1 -fps_mode passthrough DIR/frame_%04d.png`",
        ("ffmpeg", "webp"): "`ffmpeg -i small.gif -vf scale=320:-1 -fps_mode passthrough -c:v libwebp -quality 80 "
                            "DIR/frame_%04d.webp`",
        ("vips-per-frame", "png"): "100 × `vips thumbnail 'small.gif[page=i]' DIR/frame_i.png 320` (sh loop)",
        ("vips-per-frame", "webp"): "100 × `vips thumbnail 'small.gif[page=i]' 'DIR/frame_i.webp[Q=80]' 320`",
        ("vips-one-call", "png"): "`vips thumbnail 'small.gif[n=-1]' DIR/strip.png 320`: one 320×18000 PNG strip",
        ("vips-one-call", "webp"): "`vips thumbnail 'small.gif[n=-1]' 'DIR/anim.webp[Q=80]' 320`: one animated WebP",
        ("Pillow", "png"): "`pillow_scaled.py small.gif DIR 320 png`",
        ("Pillow", "webp"): "`pillow_scaled.py small.gif DIR 320 webp 80`",
    }
    return c[(name, fmt)]


def render_cli(sp):
    lines = []
    goals = []
    for fmt, title in (("png", "PNG files"), ("webp", "lossy WebP files, quality 80")):
        block = sp["cli"][fmt]
        res = block["results"]
        fb = res["flipbook"]["mean"]
        lines += ["", f"**{title}** (hyperfine {block['utc']} UTC; load average {block['loadBefore']} before, "
                      f"{block['loadAfter']} after; other processes in the second before: "
                      f"{block.get('busyBefore', '?')}):", "",
                  "| tool | command | wall s, mean ± σ | user + sys CPU s | files, bytes | "
                  + ("PSNR vs Pillow, min / median dB | " if fmt == "png" else "")
                  + "flipbook ÷ tool (mean) |",
                  "|---|---|---:|---:|---:|" + ("---:|" if fmt == "png" else "") + "---:|"]
        for name, r in res.items():
            o = r["output"]
            out = f"{o['files']}, {o['bytes']:,}"
            if o["files"] == 1:
                out = f"1 ({o['firstSize'][0]}×{o['firstSize'][1]}" + (f", {o['pages']} frames" if o["pages"] > 1 else "") \
                      + f"), {o['bytes']:,}"
            row = (f"| {CLI_NAMES[name]} | {cli_peer_command(name, fmt)} | {r['mean']:.3f} ± {r['stddev']:.3f} | "
                   f"{r['user'] + r['system']:.3f} | {out} | ")
            if fmt == "png":
                q = r.get("psnrVsPillow") or {}
                row += (f"{db(q['min'])} / {db(q['median'])} | " if q.get("min") is not None else "– | ")
            row += ("1 |" if name == "flipbook" else f"{r['mean'] / fb:.2f}× |")
            if name == "Pillow" and fmt == "png":
                row = row.replace("| ∞ / ∞ |", "| (the reference) |")
            lines.append(row)
        same = {n: r for n, r in res.items() if n not in ("flipbook", "vips-one-call")}
        fastest = min(same, key=lambda n: same[n]["mean"])
        goals.append((f"typical.gif, all frames at 320 px, {title}: ≥ 3× the fastest peer making the same files",
                      f"{same[fastest]['mean'] / fb:.2f}× ({CLI_NAMES[fastest]}: {same[fastest]['mean']:.3f} s vs "
                      f"{fb:.3f} s); vs vips's one call {res['vips-one-call']['mean'] / fb:.2f}×",
                      same[fastest]["mean"] / fb >= 3))
    prof = sp.get("profile")
    if prof:
        lines += ["", "Where flipbook's time goes: `perf record -F 4000 flipbook frames small.gif --width 320 -o DIR "
                      "[--format webp --quality 80]` (under the lock), `perf report --sort dso`; share of the "
                      "samples per shared object (≥ 2%):", "",
                  "| run | CPU s (perf's count) | shares |", "|---|---:|---|"]
        for fmt, v in prof.items():
            shares = ", ".join(f"{os.path.basename(d).split('.so')[0] if d != sp_binary_name(sp) else 'flipbook'} "
                               f"{pct:.0f}%" for d, pct in v["dso"] if pct >= 2)
            count = f"{v['eventCount'] / 1e9:.2f}" if v.get("eventCount") else "–"
            lines.append(f"| {fmt.upper() if fmt == 'png' else 'WebP q80'} | {count} | {shares} |")
    return lines, goals


def sp_binary_name(sp):
    return os.path.basename(sp.get("binary", "flipbook"))


def render_cold(sp):
    c = sp["cold"]
    up, rs, vp = mean_sd(c["uploadGet"]), mean_sd(c["restartGet"]), mean_sd(c["vips"])
    upm, rsm, vpm = statistics.median(c["uploadGet"]), statistics.median(c["restartGet"]), statistics.median(c["vips"])
    n = len(c["uploadGet"])
    lines = ["", f"{n} runs of each, interleaved ({c['utc']} UTC; load average {c['loadBefore']} before, "
                 f"{c['loadAfter']} after; other processes in the second before: {c.get('busyBefore', '?')}); "
                 f"the frame served: {c['size'][0]}×{c['size'][1]} {c['contentType']}, "
                 f"{c['bytes']:,} bytes; vips's: {c['vipsSize'][0]}×{c['vipsSize'][1]} PNG. Frames decoded by the "
                 f"server for the request (/stats `framesDecoded`): {sorted(set(c['framesDecoded']))}; frames of the "
                 f"image cached before it: {sorted(set(c['cachedBefore']))}.", "",
             "| case | ms, mean ± σ | median ms | CPU ms, mean | vips ÷ flipbook, means | vips ÷ flipbook, medians |",
             "|---|---:|---:|---:|---:|---:|",
             f"| flipbook, fresh upload (upload of {ms(statistics.mean(c['upload']))} ms before it, not counted) | "
             f"{ms(up[0])} ± {ms(up[1])} | {ms(upm)} | {statistics.mean(c['uploadCpu']) * 1000:.0f} | "
             f"{vp[0] / up[0]:.2f}× | {vpm / upm:.2f}× |",
             f"| flipbook, restarted server, first request (process start of {ms(statistics.mean(c['restartStart']))} ms"
             f" before it, not counted) | {ms(rs[0])} ± {ms(rs[1])} | {ms(rsm)} | "
             f"{statistics.mean(c['restartCpu']) * 1000:.0f} | {vp[0] / rs[0]:.2f}× | {vpm / rsm:.2f}× |",
             f"| `vips thumbnail 'large.gif[page=150]' x.png 320` (whole process) | {ms(vp[0])} ± {ms(vp[1])} | "
             f"{ms(vpm)} | {statistics.mean(c['vipsCpu']) * 1000:.0f} | 1 | 1 |"]
    goals = [("large.gif frame 150 at 320 px from cold through the API: ≥ 2× faster than `vips thumbnail`",
              f"{vp[0] / up[0]:.2f}× after a fresh upload (means {ms(up[0])} vs {ms(vp[0])} ms; medians "
              f"{vpm / upm:.2f}×), {vp[0] / rs[0]:.2f}× after a restart ({ms(rs[0])} ms; medians {vpm / rsm:.2f}×)",
              min(vp[0] / up[0], vp[0] / rs[0]) >= 2)]
    st = sp.get("stages")
    if st:
        lines += ["", f"Where the time goes, by process (hyperfine {st['utc']} UTC, load average {st['loadBefore']} → "
                      f"{st['loadAfter']}):", "", "| command | wall ms, mean ± σ | user + sys CPU ms |", "|---|---:|---:|"]
        for name, r in st["results"].items():
            cmd = r["command"].replace(sp["binary"], "flipbook")
            cmd = " ".join(os.path.basename(a) if a.startswith("/dev/shm") else a for a in cmd.split())
            lines.append(f"| {name}: `{cmd}` | {r['mean'] * 1000:.1f} ± {r['stddev'] * 1000:.1f} | "
                         f"{(r['user'] + r['system']) * 1000:.0f} |")
    return lines, goals


def render_quality(q):
    ins = q["inputs"]
    dec = [r for r in ins if "refused" not in r]
    rows = []
    for r in dec:
        for s in r["scaled"]:
            for (i, p), (_, pv), (_, pc) in zip(s["psnr"], s["psnrVerticalFirst"], s["psnrLibvipsConventions"]):
                rows.append((r, s["width"], i, p, pv, pc))
    vals = [x[3] for x in rows]
    vv = [x[4] for x in rows]
    vc = [x[5] for x in rows]
    outputs = sum(len(r["scaled"]) for r in dec)
    size_bad = sum(1 for r in dec for s in r["scaled"] if not s["sizeOk"])
    errors = sum(1 for r in dec for s in r["scaled"] if "error" in s)
    webp = [r["webp"] for r in dec]
    wframes = sum(w.get("frames", 0) for w in webp)
    wbad = sum(len(w.get("badFrames", [])) for w in webp)
    werr = sum("error" in w for w in webp)
    a0 = sum(w.get("alpha0Differ", 0) for w in webp)
    neg = sum(1 for r in dec if r["negative"])

    def summary(xs):
        return (f"{db(min(xs))} | {db(statistics.median(xs))} | {sum(x < THRESHOLD for x in xs)} of {len(xs)} "
                f"({len({(x[0]['path'], x[1]) for x, v in zip(rows, xs) if v < THRESHOLD})} outputs)")
    lines = ["", f"{len(ins)} inputs in the manifests; flipbook decodes {len(dec)} ({neg} of them negative cases), "
                 f"refuses {len(ins) - len(dec)}. {outputs} scaled outputs of {sum(1 for r in dec if r['scaled'])} "
                 f"inputs (the other {sum(1 for r in dec if not r['scaled'])} are 1 px wide), {len(rows)} frames "
                 "compared (every frame); "
                 f"output sizes as the size rule says: {outputs - size_bad} of {outputs}; CLI failures: {errors}.", "",
             "| reference (Pillow 9.4 LANCZOS of flipbook's full-size frame, premultiplied) | min dB | median dB | "
             "frames below 45 dB |", "|---|---:|---:|---:|",
             f"| **the goal's:** `RGBA → RGBa → resize → RGBA` (horizontal pass first; taps outside the frame "
             f"dropped, the rest renormalised) | {summary(vals)} |",
             f"| diagnostic: the same, vertical pass first (libvips's order) | {summary(vv)} |",
             f"| diagnostic: vertical first and edges extended by copying (both of libvips's conventions) | "
             f"{summary(vc)} |"]
    bad = {}
    for r, w, i, p, pv, pc in rows:
        if p < THRESHOLD:
            bad.setdefault((r["path"], w), []).append((i, p, pv, pc))
    total = {}
    for r, w, i, p, pv, pc in rows:
        total[(r["path"], w)] = total.get((r["path"], w), 0) + 1
    if bad:
        lines += ["", "Every output with a frame below 45 dB against the goal's reference:", "",
                  "| input | canvas → width | frames below / compared | min dB | min dB, libvips's order | "
                  "min dB, both conventions |", "|---|---|---:|---:|---:|---:|"]
        dims = {r["path"]: (r["width"], r["height"]) for r in dec}
        for (path, w), l in sorted(bad.items(), key=lambda kv: min(x[1] for x in kv[1])):
            wd, ht = dims[path]
            lines.append(f"| `{path}` | {wd}×{ht} → {w} | {len(l)} / {total[(path, w)]} | {db(min(x[1] for x in l))} | "
                         f"{db(min(x[2] for x in l))} | {db(min(x[3] for x in l))} |")
    lines += ["", f"Lossless WebP (`flipbook frames FILE --format webp`), every frame of the {len(dec)} inputs decoded "
                  f"by Pillow (libwebp) against the PNG frame: {wframes} frames, {wbad} with a pixel that differs "
                  f"(alpha anywhere, or colour where alpha > 0), {werr} failures; {a0:,} fully transparent pixels "
                  "differ in colour only (allowed)."]
    goals = [("Quality: every scaled frame ≥ 45 dB PSNR vs Pillow's LANCZOS (premultiplied), shared corpus",
              f"min {db(min(vals))} dB, median {db(statistics.median(vals))} dB; {sum(v < THRESHOLD for v in vals)} of "
              f"{len(vals)} frames below", min(vals) >= THRESHOLD),
             ("Lossless WebP frames decode to the PNG frame's pixels (alpha-0 aside), shared corpus",
              f"{wframes - wbad} of {wframes} frames exact", wbad == 0 and werr == 0)]
    return lines, goals


def render_sizes(sz):
    rows = sz["inputs"]
    lines = ["", "| input | frames | file bytes | PNG frames, bytes | lossless WebP frames, bytes | WebP ÷ PNG |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| `{r['file']}` | {r['frames']} | {r['fileBytes']:,} | {r['pngBytes']:,} | {r['webpBytes']:,} | "
                     f"{r['ratio']:.3f}× |")
    png = sum(r["pngBytes"] for r in rows)
    webp = sum(r["webpBytes"] for r in rows)
    lines.append(f"| all | {sum(r['frames'] for r in rows)} | {sum(r['fileBytes'] for r in rows):,} | {png:,} | "
                 f"{webp:,} | **{webp / png:.3f}×** |")
    lv = sz.get("levels")
    if lv and lv.get("sets"):
        sets = list(lv["sets"].items())
        lines += ["", "Effort, for choosing the default: the same PNG frames encoded by `cwebp -lossless -z N` "
                      "(libwebp's lossless preset N, which flipbook sets through WebPConfigLosslessPreset; flipbook's "
                      "default is 1) — " + ", ".join(f"{name}: {v['frames']} frames" for name, v in sets)
                  + " (large.gif: every 10th). WebP ÷ PNG bytes, and the cwebp processes' user + sys CPU per frame "
                    f"(PNG reading and process start included; load average {lv['loadBefore']} → {lv['loadAfter']}):",
                  "", "| `-z` | " + " | ".join(f"{name} WebP ÷ PNG | {name} CPU ms/frame" for name, _ in sets) + " |",
                  "|---:|" + "---:|---:|" * len(sets)]
        for i, row in enumerate(sets[0][1]["levels"]):
            cells = []
            for _, v in sets:
                r = v["levels"][i]
                cells += [f"{r['ratio']:.3f}×", f"{r['cpuPerFrame'] * 1000:.1f}"]
            lines.append(f"| {row['level']} | " + " | ".join(cells) + " |")
    worst = max(rows, key=lambda r: r["ratio"])
    goals = [("Full-size lossless WebP frames ≤ 0.75× the PNG frames, decode-bench inputs",
              f"{webp / png:.3f}× overall; per input {min(r['ratio'] for r in rows):.3f}–{worst['ratio']:.3f}× "
              f"({worst['file']} highest)", webp / png <= 0.75)]
    return lines, goals


def render():
    sp, q, sz = load("speed"), load("quality"), load("sizes")
    head = []
    if sp:
        t = sp["tools"]
        head = [f"Made by `make bench-renditions FLIPBOOK_BIN=…` (scripts/bench/renditions, mk/bench-renditions.mk) "
                f"on {sp['date']} (main at {sp['commit']}) with {os.environ.get('BINARY_NOTE') or 'a release build of flipbook'}; {sp['machine']}, shared with other "
                f"engineers' builds and benchmarks (every timing ran holding `flock /tmp/flipbook-bench.lock`, "
                f"which the other benchmarks take too; builds and tests do not). Tools: {t['ffmpeg']}, {t['vips']}, Pillow "
                f"{t['pillow']} (Debian's python3-pil, `/usr/bin/python3`), {t['hyperfine']}. Inputs: "
                "scripts/make-bench-inputs.sh; `small.gif` is the issue's typical.gif (480×270, 100 frames), "
                "`large.gif` 1280×720, 300 frames.", ""]
    goals, body = [], []
    if sp and "cli" in sp:
        l, g = render_cli(sp)
        goals += g
        body += ["### All frames of typical.gif at 320 px wide, by the CLI", "",
                 f"hyperfine -N, {sp['warmup']} warm-up runs and {sp['runs']} timed runs per command; each run writes "
                 "into an emptied directory on /dev/shm; \"flipbook ÷ tool\" above 1 means flipbook is faster. "
                 "Every tool makes 100 frames of 320×180 (checked after the timing). vips has no CLI form that writes "
                 "one file per frame of an animation: *per frame* is a shell loop of `vips thumbnail 'IN[page=i]'` "
                 "(each call decodes from frame 0), the same files as the others; *one call* is "
                 "`vips thumbnail 'IN[n=-1]'`, the same pixels in one file (a tall PNG strip, or one animated WebP "
                 "made by libwebp's animation encoder) — the fastest thing vips does with them, shown but not the "
                 "same job. ffmpeg scales with its default (bicubic), the others with Lanczos-3. Pillow: "
                 "scripts/bench/renditions/pillow_scaled.py (seek, `convert('RGBA')`, `resize((320, 180), "
                 "LANCZOS)`, save with Pillow's defaults: PNG zlib level 6, WebP method 4). flipbook's PNGs use "
                 "deflate level 1, its lossy WebP libwebp method 2; ffmpeg's libwebp its default method 4. PSNR: "
                 "each tool's PNG frames against Pillow's, premultiplied."] + l + [""]
    if sp and "cold" in sp:
        l, g = render_cold(sp)
        goals += g
        body += ["### Frame 150 of large.gif at 320 px, from cold, through the API", "",
                 "`GET /frames/{id}/150?width=320` (scripts/bench/renditions/speed.py, `cold`), the approach of "
                 "`make bench-serve`'s cold first frames (benchlib.server, one `flipbook serve` on loopback, access "
                 "log off), timed in the client around the request. *Fresh upload*: one server, its libvips "
                 "already started by a scaled frame of another image; before each run a byte-distinct copy of "
                 "large.gif (a GIF comment extension naming the run: the same frames, a new content id) is "
                 "uploaded, then the frame is asked for. *Restarted server*: a new `flipbook serve` on the data "
                 "directory that holds large.gif, waited for until `/healthz` answers; the frame is its first "
                 "request (it maps the file, indexes it, starts libvips). The peer is the issue's command, timed "
                 "as a whole process (start-up included, as its users pay)."] + l + [""]
    if q:
        l, g = render_quality(q)
        goals += g
        body += ["### Quality of scaled frames, and lossless WebP, over the shared corpus", "",
                 "scripts/bench/renditions/quality.py over `../shared/corpus/manifest.json` and "
                 "`flipbook-cases/manifest.json`. For each input flipbook decodes: `flipbook frames FILE -o DIR` "
                 "(full size) and `flipbook frames FILE --width W -o DIR` for W = half the width (rounded down) "
                 "and 160 px where that is smaller; every scaled frame against Pillow's LANCZOS of flipbook's own "
                 "full-size frame, resized to flipbook's output size, on premultiplied alpha; PSNR over "
                 "premultiplied values (R·A/255, G·A/255, B·A/255, A) of every pixel and channel, as "
                 "`make bench-resample` compares (so fully transparent pixels count, with value 0)."] + l + [""]
    if sz:
        l, g = render_sizes(sz)
        goals += g
        body += ["### Full-size lossless WebP frames vs PNG frames", "",
                 "scripts/bench/renditions/sizes.py: `flipbook frames IN -o DIR` (PNG, deflate level 1, the "
                 "service's default) and `flipbook frames IN --format webp -o DIR` (lossless, libwebp's lossless "
                 "preset level 1, flipbook's default), all frame files' bytes summed. The CLI writes the bytes the "
                 "service serves for the same rendition."] + l + [""]
    table = ["### Goals", "", "| goal | result | met |", "|---|---|:---:|"]
    table += [f"| {g} | {r} | {'yes' if ok else '**no**'} |" for g, r, ok in goals]
    notes = os.path.join(HERE, "notes.md")
    tail = ["", open(notes).read().strip()] if os.path.exists(notes) else []
    return "\n".join(head + table + [""] + body + tail)


def write(report):
    path = os.path.join(REPO, "docs", "benchmarks", "renditions.md")
    from benchlib.splice import replace_section
    try:
        replace_section(path, SECTION, report)
    except RuntimeError:
        with open(path) as f:
            text = f.read()
        with open(path, "a") as f:
            f.write(("" if text.endswith("\n") else "\n") + f"\n## {SECTION}\n\n{report.strip()}\n")


def main():
    report = render()
    print(f"## {SECTION}\n\n{report}")
    if WRITE:
        write(report)


if __name__ == "__main__":
    main()
