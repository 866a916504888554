"""make bench-player-bytes: what one loop played by `<flipbook-player>` costs on the wire.

1. The inputs are those of `make bench-decode` (scripts/make-bench-inputs.sh, bench-out/inputs):
   large.gif (1280×720, 300 frames) and small.gif (480×270, 100 frames: the issue's
   "typical.gif"); made when missing.
2. A `flipbook serve` (FLIPBOOK_BIN, else the release build of benchlib.server) whose web UI is a
   copy of web/ plus a blank page, behind a byte-counting TCP relay (wire.py): every response is
   counted as it crossed the wire, status line and headers included.
3. For each input, headless Chromium (Debian's, through Selenium, as `make browser-test` runs
   it) at devicePixelRatio 1 opens the blank page, then a `<flipbook-player>` 320 CSS px wide
   with the player's defaults except `loop = false` (exactly one loop: no frame of a second loop
   is fetched ahead) plays until `ended`. Counted: the image's metadata and every frame request
   (headers + bodies), against the file's size.
4. Full size (FULL_SIZE=1, the default): every frame of every decode-bench input fetched as
   today's PNG (no parameters) and as lossless WebP (`?format=webp`), bodies summed.

Writes bench-out/playerbytes/result.json and prints a report on stdout.

Environment: FLIPBOOK_BIN (else .build-playback/release/flipbook, built unless SKIP_BUILD=1),
PLAYER_INPUTS="large.gif small.gif", CSS_WIDTH=320, QUALITY (the player's `quality` attribute;
unset: its default), FULL_SIZE=1, FULL_SIZE_INPUTS (default: all decode-bench inputs),
PLAY_TIMEOUT=600 (seconds per loop).

Run with a Python that has Selenium (`make bench-player-bytes` uses the venv of
`make browser-test`); with one that has not, it runs itself again with .build-browser-venv's.
"""
import concurrent.futures
import http.client
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from benchlib import REPO, head_commit, log

OUT = os.path.join(REPO, "bench-out", "playerbytes")
INPUTS = os.path.join(REPO, "bench-out", "inputs")
DECODE_INPUTS = ["small.gif", "large.gif", "small-lossy.webp", "large-lossy.webp", "small-lossless.webp",
                 "small.apng", "large.apng"]
PLAYER_INPUTS = os.environ.get("PLAYER_INPUTS", "large.gif small.gif").split()
CSS_WIDTH = int(os.environ.get("CSS_WIDTH", "320"))
QUALITY = os.environ.get("QUALITY", "")
FULL_SIZE = os.environ.get("FULL_SIZE", "1") == "1"
FULL_SIZE_INPUTS = os.environ.get("FULL_SIZE_INPUTS", " ".join(DECODE_INPUTS)).split()
PLAY_TIMEOUT = float(os.environ.get("PLAY_TIMEOUT", "600"))
GOALS = {"large.gif": 1.0, "small.gif": 2.0}
VENV_PYTHON = os.path.join(REPO, ".build-browser-venv", "bin", "python")

BLANK_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>player bytes</title><link rel="icon" href="data:,">
<script type="module" src="/ui/flipbook-player.js"></script></head><body></body></html>
"""

# Creates the player, plays one loop, and reports what it showed.
PLAY = r"""
const [imageId, cssWidth, quality, done] = arguments;
(async () => {
  await customElements.whenDefined('flipbook-player');
  const player = document.createElement('flipbook-player');
  player.style.width = cssWidth + 'px';
  if (quality) player.setAttribute('quality', quality);
  player.loop = false;
  const started = performance.now();
  let frames = 0, stalls = 0;
  player.addEventListener('frame', () => { frames++; });
  player.addEventListener('stall', () => { stalls++; });
  const ended = new Promise((resolve, reject) => {
    player.addEventListener('ended', resolve);
    player.addEventListener('error', (event) => reject(new Error(event.detail.message)));
  });
  document.body.append(player);
  player.src = '/images/' + imageId;
  await player.play();
  await ended;
  const canvas = player.shadowRoot.querySelector('canvas');
  const box = canvas.getBoundingClientRect();
  done({ frames, stalls, seconds: (performance.now() - started) / 1000, frameQuery: player.frameQuery,
         canvas: [canvas.width, canvas.height], css: [box.width, box.height], dpr: window.devicePixelRatio });
})().catch((error) => done({ error: String(error) }));
"""


def ensure_selenium():
    """Runs this module again under the browser-test venv when this Python has no Selenium."""
    if importlib.util.find_spec("selenium") is not None:
        return
    if os.path.exists(VENV_PYTHON) and os.path.abspath(sys.prefix) != os.path.dirname(os.path.dirname(VENV_PYTHON)):
        log(f"bench-player-bytes: no selenium here; running with {VENV_PYTHON}")
        os.execv(VENV_PYTHON, [VENV_PYTHON, "-m", "bench.playerbytes.run", *sys.argv[1:]])
    sys.exit("bench-player-bytes: needs selenium: `make .build-browser-venv/.stamp` (make browser-test makes it)")


def load_chromium():
    """Tests/browser/chromium.py (the one way the browser tests start Chromium), loaded by path."""
    path = os.path.join(REPO, "Tests", "browser", "chromium.py")
    spec = importlib.util.spec_from_file_location("flipbook_browser_chromium", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ensure_inputs():
    wanted = sorted(set(PLAYER_INPUTS) | (set(FULL_SIZE_INPUTS) if FULL_SIZE else set()))
    if all(os.path.exists(os.path.join(INPUTS, name)) for name in wanted):
        return
    log("bench-player-bytes: making the decode-bench inputs (scripts/make-bench-inputs.sh)")
    subprocess.run([os.path.join(REPO, "scripts", "make-bench-inputs.sh"), INPUTS], check=True, stdout=sys.stderr)


def binary():
    from benchlib import server
    if os.environ.get("FLIPBOOK_BIN"):
        return os.environ["FLIPBOOK_BIN"]
    return server.build()


def ui_directory():
    """A copy of web/ with the blank page the player is put in."""
    directory = tempfile.mkdtemp(prefix="flipbook-playerbytes-ui-")
    for name in os.listdir(os.path.join(REPO, "web")):
        shutil.copy(os.path.join(REPO, "web", name), directory)
    with open(os.path.join(directory, "playerbytes.html"), "w") as f:
        f.write(BLANK_PAGE)
    return directory


def play_one_loop(driver, relay, server, name):
    path = os.path.join(INPUTS, name)
    meta, _ = server.upload(path)
    image_id = meta["id"]
    file_bytes = os.path.getsize(path)
    driver.get(f"http://127.0.0.1:{relay.port}/ui/playerbytes.html")
    deadline = time.monotonic() + 10
    while driver.execute_script("return document.readyState") != "complete" and time.monotonic() < deadline:
        time.sleep(0.05)
    relay.reset()
    log(f"bench-player-bytes: {name}: one loop at {CSS_WIDTH} CSS px, DPR 1 ({meta['frameCount']} frames, "
        f"{meta['durationMs'] / 1000:.1f} s)")
    driver.set_script_timeout(PLAY_TIMEOUT)
    shown = driver.execute_async_script(PLAY, image_id, CSS_WIDTH, QUALITY)
    if "error" in shown:
        raise RuntimeError(f"{name}: {shown['error']}")
    time.sleep(1.0)  # anything still in flight (nothing should be) is counted too
    mine = [r for r in relay.responses()
            if r.target.split("?")[0] in (f"/images/{image_id}",) or r.target.startswith(f"/frames/{image_id}/")]
    frames = [r for r in mine if r.target.startswith("/frames/")]
    others = [r for r in mine if not r.target.startswith("/frames/")]
    statuses = sorted({r.status for r in mine})
    indices = [r.target.split("/")[3].split("?")[0] for r in frames]
    wire = sum(r.head_bytes + r.body_bytes for r in mine)
    result = {
        "file": name, "fileBytes": file_bytes, "width": meta["width"], "height": meta["height"],
        "frameCount": meta["frameCount"], "durationMs": meta["durationMs"],
        "shown": shown, "queries": sorted({r.target.partition("?")[2] for r in frames}),
        "frameRequests": len(frames), "distinctFrames": len(set(indices)), "statuses": statuses,
        "frameBodyBytes": sum(r.body_bytes for r in frames), "frameHeadBytes": sum(r.head_bytes for r in frames),
        "metadataBytes": sum(r.head_bytes + r.body_bytes for r in others),
        "wireBytes": wire, "ratio": wire / file_bytes, "goal": GOALS.get(name),
    }
    server.request("DELETE", f"/images/{image_id}")
    return result


def full_size(server, name):
    """Every frame's body as today's PNG and as lossless WebP."""
    meta, _ = server.upload(os.path.join(INPUTS, name))
    image_id = meta["id"]

    def fetch(query):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
        total = 0
        try:
            for k in range(meta["frameCount"]):
                conn.request("GET", f"/frames/{image_id}/{k}{query}")
                response = conn.getresponse()
                body = response.read()
                if response.status != 200:
                    raise RuntimeError(f"{name} frame {k}{query}: {response.status} {body[:200]!r}")
                total += len(body)
        finally:
            conn.close()
        return total

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        png, webp = pool.map(fetch, ["", "?format=webp"])
    server.request("DELETE", f"/images/{image_id}")
    log(f"bench-player-bytes: {name}: PNG {png} B, lossless WebP {webp} B ({webp / png:.3f}×), "
        f"{time.monotonic() - started:.0f} s")
    return {"file": name, "frames": meta["frameCount"], "pngBytes": png, "webpLosslessBytes": webp, "ratio": webp / png}


def report(results, binary_path):
    shown = os.path.relpath(binary_path, REPO)
    shown = binary_path if shown.startswith("..") else shown
    lines = [f"# <flipbook-player> bytes on the wire ({head_commit()}, {shown})", ""]
    lines.append(f"One loop, {CSS_WIDTH} CSS px wide, DPR 1, headless Chromium, the player's defaults"
                 + (f" (quality={QUALITY})" if QUALITY else "") + "; counted by a TCP relay: headers + bodies of")
    lines.append("the image's metadata and every frame request.")
    lines.append("")
    lines.append("| input | size | file | frame requests | frame query | frames on the wire | metadata | total | ratio | goal |")
    lines.append("|---|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for r in results["player"]:
        goal = f"≤ {r['goal']:.1f}×" if r["goal"] else ""
        verdict = "" if not r["goal"] else (" ✓" if r["ratio"] <= r["goal"] else " ✗")
        lines.append(f"| {r['file']} | {r['width']}×{r['height']}×{r['frameCount']} | {r['fileBytes']:,} | "
                     f"{r['frameRequests']} ({r['distinctFrames']} frames) | `{' '.join(r['queries']) or '(none)'}` | "
                     f"{r['frameBodyBytes'] + r['frameHeadBytes']:,} ({r['frameHeadBytes']:,} headers) | "
                     f"{r['metadataBytes']:,} | {r['wireBytes']:,} | {r['ratio']:.3f}× | {goal}{verdict} |")
    for r in results["player"]:
        s = r["shown"]
        lines.append(f"- {r['file']}: canvas {s['canvas'][0]}×{s['canvas'][1]} shown at {s['css'][0]:g}×{s['css'][1]:g} CSS px, "
                     f"{s['frames']} frame events, {s['stalls']} stalls, {s['seconds']:.1f} s; statuses {r['statuses']}")
    if results.get("fullSize"):
        rows = results["fullSize"]
        lines += ["", "Full size: every frame as today's PNG vs lossless WebP (`?format=webp`), bodies:", "",
                  "| input | frames | PNG | lossless WebP | ratio |", "|---|---:|---:|---:|---:|"]
        for r in rows:
            lines.append(f"| {r['file']} | {r['frames']} | {r['pngBytes']:,} | {r['webpLosslessBytes']:,} | {r['ratio']:.3f}× |")
        png = sum(r["pngBytes"] for r in rows)
        webp = sum(r["webpLosslessBytes"] for r in rows)
        lines.append(f"| all | {sum(r['frames'] for r in rows)} | {png:,} | {webp:,} | {webp / png:.3f}× (goal ≤ 0.75×) |")
    return "\n".join(lines)


def main():
    ensure_selenium()
    from benchlib.server import Server
    ensure_inputs()
    binary_path = binary()
    os.environ["FLIPBOOK_BIN"] = binary_path
    import benchlib.server
    benchlib.server.BINARY = binary_path
    from bench.playerbytes.wire import CountingRelay
    chromium = load_chromium()
    os.makedirs(OUT, exist_ok=True)
    ui = ui_directory()
    work = tempfile.mkdtemp(prefix="flipbook-playerbytes-")
    server = Server(os.path.join(work, "data"), extra=["--set", f"ui.dir={ui}"],
                    log_path=os.path.join(OUT, "server.log"))
    relay = CountingRelay(server.port)
    results = {"commit": head_commit(), "binary": binary_path, "cssWidth": CSS_WIDTH, "quality": QUALITY or None,
               "player": [], "fullSize": []}
    driver = None
    try:
        driver = chromium.launch()
        for name in PLAYER_INPUTS:
            results["player"].append(play_one_loop(driver, relay, server, name))
        driver.quit()
        driver = None
        if FULL_SIZE:
            for name in FULL_SIZE_INPUTS:
                results["fullSize"].append(full_size(server, name))
    finally:
        if driver:
            driver.quit()
        relay.close()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(ui, ignore_errors=True)
    with open(os.path.join(OUT, "result.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(report(results, binary_path))
    failed = [r["file"] for r in results["player"] if r["goal"] and r["ratio"] > r["goal"]]
    if failed:
        log(f"bench-player-bytes: over the goal: {', '.join(failed)}")


if __name__ == "__main__":
    main()
