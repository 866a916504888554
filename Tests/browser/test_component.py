"""The component's other promises: used from another origin through CORS, revalidating its
metadata, an unknown image's problem shown in the element, `poster-only`, reduced motion, and
pausing while off-screen. In Chromium and Firefox."""
import pytest

import chromium
from conftest import Flipbook, flipbook_binary, open_player, wait_until
from slow_proxy import SlowProxy

HOST_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>elsewhere</title><link rel="icon" href="data:,">
<script type="module" src="{base}/ui/flipbook-player.js"></script></head>
<body><flipbook-player id="player" src="{base}/images/orbit.webp" autoplay controls></flipbook-player></body></html>"""


@pytest.fixture
def other_origin(flipbook):
    """A page of another origin (a proxy answering it itself) and a Flipbook that lets that
    origin in (server.corsOrigins)."""
    proxy = SlowProxy(flipbook.port)
    origin = f"http://127.0.0.1:{proxy.port}"
    server = Flipbook(flipbook_binary(), ["--set", f"server.corsOrigins={origin}"])
    yield proxy, origin, server
    server.stop()
    proxy.close()


def test_a_page_of_another_origin_plays_through_cors(page, other_origin):
    proxy, origin, server = other_origin
    proxy.serve("/elsewhere.html", HOST_PAGE.format(base=server.base))
    page.get(origin + "/elsewhere.html")
    wait_until(page, "return window.__flipbook.events.filter((e) => e.type === 'frame').length >= 4", 20,
               "cross-origin playback")
    # The canvas is not tainted (frames come as CORS-checked blobs): its pixels can be read.
    alpha = page.execute_script("const c = document.getElementById('player').shadowRoot.querySelector('canvas');"
                                "return c.getContext('2d').getImageData(0, 0, c.width, c.height).data.some((v, i) => i % 4 === 3 && v > 0);")
    assert alpha is True


def test_without_cors_another_origin_is_refused(page, flipbook, other_origin):
    proxy, origin, _ = other_origin
    # The session's server has no corsOrigins: the module itself is refused.
    proxy.serve("/refused.html", HOST_PAGE.format(base=flipbook.base))
    page.get(origin + "/refused.html")
    wait_until(page, "return document.readyState === 'complete'", 10, "the page")
    assert page.execute_script("return customElements.get('flipbook-player') === undefined") is True
    errors = page.engine.console_errors(page)
    assert errors and all("CORS" in e["message"] or "flipbook-player.js" in e["message"] for e in errors), errors


def test_refresh_revalidates_the_metadata(page, flipbook):
    open_player(page, flipbook.base, "orbit.gif")
    changed = page.execute_async_script("const done = arguments[0];"
                                        "document.getElementById('player').refresh().then(done, (e) => done(String(e)));")
    assert changed is False  # 304: the ETag still matches


def test_an_unknown_image_shows_the_problem_detail(page, flipbook):
    status, _, body = flipbook.request("GET", "/images/no-such-image")
    assert status == 404
    page.get(flipbook.base + "/player/no-such-image")
    error = wait_until(page, "return window.__flipbook.events.find((e) => e.type === 'error')", 10, "the error event")
    assert error["detail"]["status"] == 404
    assert error["detail"]["message"] == "No image with id 'no-such-image'."
    shown = page.execute_script("const box = document.getElementById('player').shadowRoot.querySelector('[part=error]');"
                                "return [box.hidden, box.textContent, box.getAttribute('role')];")
    assert shown == [False, "No image with id 'no-such-image'.", "alert"]
    errors = page.engine.console_errors(page)
    if page.engine is chromium:  # the page itself (404) and the metadata request
        assert errors and all("404" in e["message"] for e in errors), errors
    else:  # Firefox logs no console error for an HTTP error answer
        assert errors == [], errors


def test_poster_only_shows_frame_0_and_never_plays(page, flipbook):
    page.get(flipbook.base + "/")
    wait_until(page, "return document.readyState === 'complete'", 10, "the page")
    page.execute_async_script("const done = arguments[0]; import('/ui/flipbook-player.js').then(() => done(true));")
    page.execute_script("""
      const p = document.createElement('flipbook-player');
      p.id = 'poster'; p.setAttribute('poster-only', ''); p.setAttribute('autoplay', '');
      p.src = '/images/orbit.gif'; document.body.prepend(p);""")
    wait_until(page, "return document.getElementById('poster').currentFrame === 0 &&"
                     "window.__flipbook.events.some((e) => e.id === 'poster' && e.type === 'frame')", 10, "the poster")
    page.execute_async_script("const done = arguments[0]; document.getElementById('poster').play().then(() => done(true));")
    page.execute_script("return new Promise((resolve) => setTimeout(resolve, 400));")
    frames = page.execute_script("return window.__flipbook.events.filter((e) => e.id === 'poster' && e.type === 'frame')"
                                 ".map((e) => e.detail.index)")
    assert set(frames) == {0}
    assert page.execute_script("return document.getElementById('poster').shadowRoot.querySelector('[part=controls]')") is None


def test_reduced_motion_shows_the_poster_until_played(page, flipbook):
    page.engine.reduced_motion(page, True)
    try:
        open_player(page, flipbook.base, "orbit.png")  # the page asks for autoplay
        wait_until(page, "return window.__flipbook.events.some((e) => e.type === 'frame')", 10, "the poster")
        page.execute_script("return new Promise((resolve) => setTimeout(resolve, 300));")
        state = page.execute_script("const p = document.getElementById('player'); return [p.paused, p.currentFrame];")
        assert state == [True, 0]
        page.execute_async_script("const done = arguments[0]; document.getElementById('player').play().then(() => done(true));")
        wait_until(page, "return document.getElementById('player').currentFrame > 0", 10, "playback once asked")
    finally:
        page.engine.reduced_motion(page, False)


def test_playback_pauses_while_off_screen(page, flipbook):
    open_player(page, flipbook.base, "orbit.gif")
    wait_until(page, "return window.__flipbook.events.filter((e) => e.type === 'frame').length > 2", 10, "playback")
    page.execute_script("""
      const spacer = document.createElement('div'); spacer.id = 'spacer'; spacer.style.height = '5000px';
      document.body.prepend(spacer); window.scrollTo(0, 0);""")
    wait_until(page, "return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true))))",
               5, "layout")
    page.execute_script("return new Promise((resolve) => setTimeout(resolve, 200));")
    count = page.execute_script("return window.__flipbook.events.filter((e) => e.type === 'frame').length")
    page.execute_script("return new Promise((resolve) => setTimeout(resolve, 500));")
    assert page.execute_script("return window.__flipbook.events.filter((e) => e.type === 'frame').length") == count
    assert page.execute_script("return document.getElementById('player').paused") is False  # suspended, not paused
    page.execute_script("document.getElementById('spacer').remove(); window.scrollTo(0, 0);")
    wait_until(page, "return window.__flipbook.events.filter((e) => e.type === 'frame').length > arguments[0]", 10,
               "playback on screen again", count)
