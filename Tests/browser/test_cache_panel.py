"""The player page's cache panel tells the truth about the rendition on screen, in Chromium and
Firefox (issue 35).

The player asks for its frames with `format=auto` and an `Accept` that lists WebP, so a player
shown 360 device pixels wide plays `360x203-webp-q55` frames; the panel must show the server's
cache for that rendition — not for the PNG rendition the same query resolves to under `fetch`'s
default `Accept: */*` (`360x203-png`), which nobody plays. The page is opened 390 CSS px wide on an 800×450 GIF
made here (so no other client asks for its frames), played for a while, then paused.
"""
import json
import re
import urllib.request
import zlib

import pytest

from benchlib import gifgen

from conftest import Flipbook, flipbook_binary, open_player, wait_until

FRAMES = 24
PLAYER_ACCEPT = "image/webp,image/png;q=0.9"  # FRAME_ACCEPT in web/flipbook-player.js
PANEL = r"""
const cache = document.getElementById('cache'), p = document.getElementById('player');
return { cached: cache.dataset.cached === undefined ? null : cache.dataset.cached.split(',').filter(Boolean).map(Number),
         rendition: cache.dataset.rendition || null, status: document.getElementById('cache-status').textContent,
         frameRendition: p.frameRendition ?? null, frameQuery: p.frameQuery ?? null };
"""


@pytest.fixture(scope="module")
def logged(engine):
    """A server of its own whose access log is on (in its log file), one per engine. The player
    page asks for the image's storyboard, made on first request: this server waits for it as
    long as a loaded machine may take (the default 10 s answers 503 "still being made", which
    Chromium logs as a console error)."""
    server = Flipbook(flipbook_binary(), ["--set", "log.accessLog=true", "--set", "derived.maxWaitSeconds=120"],
                      access_log=True)
    yield server
    server.stop()


@pytest.fixture
def playing(request, page, logged):
    """The player page of an image of the test's own (in no browser cache yet), 390 CSS px wide,
    after it played 12 frames, paused."""
    seed = 3500 + zlib.crc32(request.node.originalname.encode()) % 1000
    data, frames = gifgen.make_gif(seed, size=(800, 450), frames=FRAMES, delays_cs=[5])
    assert frames == FRAMES
    image_id = logged.upload(data)["id"]
    page.engine.resize(page, 390, 844)
    try:
        open_player(page, logged.base, image_id)
        wait_until(page, "return window.__flipbook.events.filter((e) => e.type === 'frame').length >= 12", 30,
                   "12 frames played")
        page.execute_async_script("const done = arguments[0]; document.getElementById('player').pause().then(() => done(true));")
        yield image_id
    finally:
        page.get("about:blank")  # its polls stop before the server does
        page.engine.resize(page, 1280, 900)


def served_frames(server, image_id):
    """The frame indices the access log shows answered 200 for `image_id`."""
    with open(server.log_path, encoding="utf-8", errors="replace") as log:
        text = log.read()
    pattern = re.compile(rf"path=/frames/{image_id}/(\d+) .*status=200\b")
    return {int(match.group(1)) for match in pattern.finditer(text)}


def residency(server, image_id, query, accept):
    request = urllib.request.Request(f"{server.base}/images/{image_id}/cache{query}", headers={"Accept": accept})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_the_panel_lists_the_frames_the_access_log_shows_served(page, logged, playing):
    image_id = playing
    shown = sorted({e["detail"]["index"] for e in page.execute_script("return window.__flipbook.events")
                    if e["type"] == "frame"})
    # The access log is written by a thread of its own: wait until it has every frame shown.
    served = set()
    for _ in range(100):
        served = served_frames(logged, image_id)
        if set(shown) <= served:
            break
        page.execute_script("return new Promise((resolve) => setTimeout(resolve, 100));")
    assert set(shown) <= served, (shown, sorted(served))
    # The panel (polled twice a second) lists every one of them as held.
    panel = wait_until(page, "const s = (() => { " + PANEL + " })();"
                             "return s.cached && arguments[0].every((k) => s.cached.includes(k)) && s;",
                       10, "the served frames in the panel", sorted(served))
    name = panel["frameRendition"]
    assert re.fullmatch(r"\d+x\d+-webp-q55", name), panel  # the WebP the player's Accept gets
    assert panel["rendition"] == name, panel
    assert re.match(rf"{len(panel['cached'])} of {FRAMES} frames held \({re.escape(name)}\)", panel["status"]), panel


def test_the_panel_agrees_with_the_cache_asked_as_the_player_asks(page, logged, playing):
    image_id = playing
    state = page.execute_script("return (() => { " + PANEL + " })();")
    query = state["frameQuery"]
    assert query.startswith("?width=") and "format=auto" in query, state
    # Paused, the server's cache settles (its decode-ahead ends); the panel shows what it holds
    # of the rendition asked for as the player asks (its query and Accept).
    agreed = None
    for _ in range(40):
        asked = residency(logged, image_id, query, PLAYER_ACCEPT)
        panel = page.execute_script("return (() => { " + PANEL + " })();")
        if panel["cached"] == asked["cachedFrames"] and panel["rendition"] == asked["rendition"]:
            agreed = panel
            break
        page.execute_script("return new Promise((resolve) => setTimeout(resolve, 250));")
    assert agreed, (panel, asked)
    assert asked["cachedFrames"] and asked["playhead"] is not None, asked
    # That is the rendition on the player's canvas, as its frames' ETag named it…
    assert asked["rendition"] == state["frameRendition"], (asked, state)
    # …which the same query under fetch's default Accept is not (the panel's old mistake).
    assert residency(logged, image_id, query, "*/*")["rendition"] != asked["rendition"]
