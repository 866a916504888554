"""Colour check: a served frame shows in Chromium exactly as the original's frame does.

Flipbook decodes frames without colour conversion and carries the source's colour-space chunks
into every served PNG (iCCP, sRGB, gAMA, cHRM, cICP; a still WebP's ICCP as iCCP), so that a
browser converts the frame as it converts the original. This module proves it in headless
Chromium with colour management on, against a real `flipbook serve`: for every frame k, the
original's frame k and the served PNG of frame k (GET /frames/{id}/{k}) are decoded by WebCodecs'
ImageDecoder with colorSpaceConversion "default", drawn into sRGB canvases, and must give the
same pixels. Also: decoded with colorSpaceConversion "none" they agree (the served values are
the file's own), and as <img> elements the served frame 0 and the original (which shows its
first frame) draw the same pixels — for translucent ones, within what Chromium's 8-bit
premultiplied storage of an animated image loses at their alpha (ceil(255 / alpha)).

Controls, so that the check can fail: for the inputs tagged here with a wide-gamut profile,
colour management changes most pixels (a served frame without the profile would differ). An
animated WebP's profile is the exception: Chromium does not apply it (Blink clears the ICC flag
when the animation flag is set), so Flipbook serves those frames without it, and the test
checks that Chromium still ignores it.

Inputs: an APNG, an animated WebP (lossless and lossy) and a still WebP, tagged with the ICC
profile colour_inputs.py makes (P3 primaries, gamma 2.6), and the colour cases of the shared
corpus (../shared/corpus/flipbook-cases, or $FLIPBOOK_CORPUS).

Run:  make colour-check   (builds .build/debug/flipbook; installs chromium, webp and pytest)
      FLIPBOOK_BIN=path/to/flipbook python -m pytest --noconftest Tests/browser/colour_check.py
Self-contained: it starts its own server and its own headless Chromium (no WebDriver, none of
the fixtures of the other browser tests; --noconftest keeps their conftest out).
"""
import http.server
import json
import os
import shutil
import socketserver
import subprocess
import tempfile
import threading

import pytest

import chromium
import colour_inputs
from flipbook_server import FlipbookServer

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

CORPUS = os.environ.get("FLIPBOOK_CORPUS") or os.path.join(os.path.dirname(REPO), "shared", "corpus")
CORPUS_CASES = ["flipbook-cases/apng_iccp.png", "flipbook-cases/apng_gama10.png", "flipbook-cases/apng_chrm_p3.png",
                "flipbook-cases/webp_anim_iccp.webp"]

# Runs in the page: for each case, every frame four ways (original and served, with and without
# colour conversion), compared in the page; the result goes back by POST.
PAGE = r"""<!doctype html><html><body><script>
const CASES = __CASES__;
async function post(path, body) { await fetch(path, {method: 'POST', body}); }
function draw(source, width, height) {
  const canvas = new OffscreenCanvas(width, height);
  const context = canvas.getContext('2d', {colorSpace: 'srgb', willReadFrequently: true});
  context.drawImage(source, 0, 0);
  return context.getImageData(0, 0, width, height).data;
}
function compare(a, b, premultiplied = false) {
  // premultiplied: a translucent pixel may differ by what 8-bit premultiplied storage loses at
  // its alpha (ceil(255 / alpha)); opaque pixels must be equal.
  let differing = 0, worst = 0, first = null;
  for (let p = 0; p < a.length; p += 4) {
    let d = 0;
    for (let c = 0; c < 4; c++) d = Math.max(d, Math.abs(a[p + c] - b[p + c]));
    const allowed = premultiplied && a[p + 3] > 0 && a[p + 3] < 255 && a[p + 3] === b[p + 3] ? Math.ceil(255 / a[p + 3]) : 0;
    if (premultiplied && a[p + 3] === 0 && b[p + 3] === 0) d = 0;
    if (d > allowed) { differing++; if (!first) first = {pixel: p / 4, a: Array.from(a.slice(p, p + 4)), b: Array.from(b.slice(p, p + 4))}; }
    worst = Math.max(worst, d);
  }
  return {differing, worst, first, pixels: a.length / 4};
}
async function originalFrames(data, type, conversion) {
  const decoder = new ImageDecoder({data, type, colorSpaceConversion: conversion});
  await decoder.tracks.ready;
  await decoder.completed;
  const frames = [];
  for (let k = 0; k < decoder.tracks.selectedTrack.frameCount; k++) {
    const frame = (await decoder.decode({frameIndex: k, completeFramesOnly: true})).image;
    frames.push({pixels: draw(frame, frame.displayWidth, frame.displayHeight),
                 width: frame.displayWidth, height: frame.displayHeight});
    frame.close();
  }
  decoder.close();
  return frames;
}
async function drawnAsImage(url) {
  const image = new Image();
  image.src = url;
  await image.decode();
  return draw(image, image.naturalWidth, image.naturalHeight);
}
async function run() {
  const results = {};
  for (const c of CASES) {
    try {
      const data = await (await fetch(c.original)).arrayBuffer();
      const converted = await originalFrames(data, c.type, 'default');
      const unconverted = await originalFrames(data, c.type, 'none');
      // As <img> elements (the path pages use): the original shows its first frame right after
      // decoding, which the served frame 0 must match.
      const firstAsImage = await drawnAsImage(URL.createObjectURL(new Blob([data], {type: c.type})));
      const frames = [];
      for (let k = 0; k < c.frameCount; k++) {
        const url = '/frames/' + c.id + '/' + k;
        const png = await (await fetch(url)).arrayBuffer();
        const served = (await originalFrames(png, 'image/png', 'default'))[0].pixels;
        const servedRaw = (await originalFrames(png, 'image/png', 'none'))[0].pixels;
        frames.push({
          converted: compare(converted[k].pixels, served),
          unconverted: compare(unconverted[k].pixels, servedRaw),
          image: k === 0 ? compare(firstAsImage, await drawnAsImage(url), true) : null,
          conversionEffect: compare(converted[k].pixels, unconverted[k].pixels),
        });
      }
      results[c.name] = {browserFrames: converted.length, frames};
    } catch (e) {
      results[c.name] = {error: String(e)};
    }
  }
  await post('/results', JSON.stringify(results));
}
run().catch(e => post('/results', JSON.stringify({error: String(e)})));
</script></body></html>"""


def run_page(server, cases, originals, timeout=180):
    """Serves the page, the originals and (proxied, bytes unchanged) the frames on one origin,
    runs headless Chromium on it and returns what the page posts back."""
    page = PAGE.replace("__CASES__", json.dumps(cases)).encode()
    result, done = {}, threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path == "/":
                body, kind = page, "text/html"
            elif self.path.startswith("/original/"):
                body, kind = originals[self.path[len("/original/"):]], "application/octet-stream"
            elif self.path.startswith("/frames/"):
                body, kind = server.get(self.path), "image/png"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            result.update(json.loads(body))
            done.set()
            self.send_response(204)
            self.end_headers()

    httpd = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    profile = tempfile.mkdtemp(prefix="flipbook-colour-chromium-")
    browser = subprocess.Popen([chromium.binary(), "--headless", "--no-sandbox", "--disable-gpu",
                                "--disable-dev-shm-usage", "--no-first-run", "--user-data-dir=" + profile,
                                f"http://127.0.0.1:{httpd.server_address[1]}/"],
                               # Its singleton socket directory goes with the profile, not into /tmp.
                               env=dict(os.environ, TMPDIR=profile),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        finished = done.wait(timeout)
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=20)
        except subprocess.TimeoutExpired:
            browser.kill()
        httpd.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    assert finished, "Chromium did not finish the colour page in time"
    assert "error" not in result, result
    return result


def chunk_types(png):
    """The chunk types of a PNG file, in order."""
    types, offset = [], 8
    while offset + 8 <= len(png):
        length = int.from_bytes(png[offset:offset + 4], "big")
        types.append(png[offset + 4:offset + 8].decode("latin-1"))
        offset += 12 + length
    return types


WIDE_GAMUT_CASES = ["apng-icc", "webp-lossless-icc", "webp-lossy-icc", "webp-still-icc"]
CASE_NAMES = WIDE_GAMUT_CASES + [os.path.basename(p) for p in CORPUS_CASES]


@pytest.fixture(scope="module")
def outcome():
    """Every case run once in one browser: {name: {"frameCount", "servedChunks", "frames", ...}}."""
    try:
        chromium.binary()
    except RuntimeError as error:
        pytest.fail(f"{error} (make colour-check installs it)")
    binary = os.path.abspath(os.environ.get("FLIPBOOK_BIN") or os.path.join(REPO, ".build", "debug", "flipbook"))
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no flipbook binary at {binary}: build it (make colour-check does) or set FLIPBOOK_BIN")
    work = tempfile.mkdtemp(prefix="flipbook-colour-inputs-")
    profile = colour_inputs.test_profile()
    inputs = {  # name: (bytes, MIME type)
        "apng-icc": (colour_inputs.apng_with_profile(profile), "image/png"),
        "webp-lossless-icc": (colour_inputs.webp_with_profile(profile, work, lossless=True), "image/webp"),
        "webp-lossy-icc": (colour_inputs.webp_with_profile(profile, work, lossless=False), "image/webp"),
        "webp-still-icc": (colour_inputs.webp_with_profile(profile, work, frames=1), "image/webp"),
    }
    for path in CORPUS_CASES:
        full = os.path.join(CORPUS, path)
        if not os.path.exists(full):
            pytest.fail(f"no corpus file {full}: clone ../shared beside the repository or set FLIPBOOK_CORPUS")
        with open(full, "rb") as f:
            inputs[os.path.basename(path)] = (f.read(), "image/webp" if path.endswith(".webp") else "image/png")
    server = FlipbookServer(binary, ["--set", "storage.libraryDirs="], prefix="flipbook-colour-")
    try:
        cases, originals, facts = [], {}, {}
        for n, (name, (data, kind)) in enumerate(inputs.items()):
            metadata = server.upload(data)
            cases.append({"name": name, "id": metadata["id"], "type": kind, "frameCount": metadata["frameCount"],
                          "original": f"/original/{n}"})
            originals[str(n)] = data
            facts[name] = {"frameCount": metadata["frameCount"],
                           "servedChunks": chunk_types(server.get(f"/frames/{metadata['id']}/0"))}
        results = run_page(server, cases, originals)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return {name: {**facts[name], **results.get(name, {"error": "no result"})} for name in facts}


@pytest.mark.parametrize("name", CASE_NAMES)
def test_served_frames_render_like_the_original(outcome, name):
    case = outcome[name]
    assert "error" not in case, case
    assert case["browserFrames"] == case["frameCount"], case
    for k, frame in enumerate(case["frames"]):
        # Colour-managed: the served PNG converts exactly as the original does.
        assert frame["converted"]["differing"] == 0, (name, k, frame["converted"])
        # Unconverted: the served pixel values are the file's own.
        assert frame["unconverted"]["differing"] == 0, (name, k, frame["unconverted"])
    # Shown as <img> elements, the served frame 0 and the original look the same.
    assert case["frames"][0]["image"]["differing"] == 0, (name, case["frames"][0]["image"])


@pytest.mark.parametrize("name", ["apng-icc", "webp-still-icc"])
def test_a_profile_chromium_applies_travels_with_the_frames(outcome, name):
    """The control: Chromium converts these originals visibly (most pixels, by 16 or more), so a
    served frame that dropped the profile could not pass the check above; it carries it."""
    case = outcome[name]
    assert "error" not in case, case
    assert "iCCP" in case["servedChunks"], case["servedChunks"]
    for k, frame in enumerate(case["frames"]):
        effect = frame["conversionEffect"]
        assert effect["differing"] > effect["pixels"] // 2 and effect["worst"] >= 16, (name, k, effect)


@pytest.mark.parametrize("name", ["webp-lossless-icc", "webp-lossy-icc"])
def test_chromium_ignores_an_animated_webp_profile(outcome, name):
    """Chromium shows an animated WebP's frames unconverted whatever its ICC profile, so the
    served frames carry none (were Chromium to start applying it, this fails first)."""
    case = outcome[name]
    assert "error" not in case, case
    assert case["frameCount"] > 1
    assert "iCCP" not in case["servedChunks"], case["servedChunks"]
    for k, frame in enumerate(case["frames"]):
        assert frame["conversionEffect"]["differing"] == 0, (name, k, frame["conversionEffect"])
