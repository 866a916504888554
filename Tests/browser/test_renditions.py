"""Group 6: renditions. `<flipbook-player>` asks for frames at the width it is shown at in device
pixels (CSS width × devicePixelRatio, rounded up to a multiple of 40), as `?width=N&format=auto
&quality=Q` (no `dpr`: N is device pixels already), and draws exactly the frame it was served;
shown at the image's own width or wider it asks for the full-size frame with no parameters. The
request URLs are read from the page's resource timing entries (the player's fetches, initiator
`fetch`); the canvas (`getImageData`) is compared with the same URL fetched afresh and decoded
by createImageBitmap in the page: for lossy WebP too the two are identical, since the canvas
holds that very bitmap (both go through the canvas's premultiplied storage the same way).

The image is an 800×450 GIF made here (benchlib.gifgen), so 300 CSS px at DPR 2 (600 device
pixels) is a scaled rendition: 600×338 (the server's size rule rounds 337.5 up).
"""
import math
import urllib.parse

import pytest

from benchlib import gifgen

from conftest import Flipbook, flipbook_binary, wait_until

WIDTH, HEIGHT, FRAMES = 800, 450, 6
ACCEPT = "image/webp,image/png;q=0.9"  # what the player sends with its frame requests
Q = 55  # the player's default quality for scaled frames (DEFAULT_QUALITY in web/flipbook-player.js)

# Opens a bare page of the server's origin (the image browser, emptied) with one player in it.
SETUP = r"""
const [imageId, cssWidth, attributes, done] = arguments;
(async () => {
  await import('/ui/flipbook-player.js');
  document.body.replaceChildren();
  performance.clearResourceTimings();
  window.__flipbook.events = [];
  const player = document.createElement('flipbook-player');
  player.id = 'scaled';
  if (cssWidth) player.style.width = cssWidth + 'px';
  for (const [name, value] of Object.entries(attributes)) player.setAttribute(name, value);
  document.body.append(player);
  player.src = '/images/' + imageId;
  await player.step(0);  // the metadata, then frame 0 on the canvas
  done(true);
})().catch((error) => done(String(error)));
"""

REQUESTED = r"""
const prefix = '/frames/' + arguments[0] + '/';
return performance.getEntriesByType('resource')
  .filter((e) => e.initiatorType === 'fetch' && new URL(e.name).pathname.startsWith(prefix))
  .map((e) => { const url = new URL(e.name); return url.pathname + url.search; });
"""

# The canvas against the served frame: `url` fetched afresh with the player's Accept header,
# decoded as the player decodes, drawn 1:1 with 'copy' on a canvas of its size, read back.
COMPARE = r"""
const [url, accept, done] = arguments;
(async () => {
  const player = document.getElementById('scaled');
  const response = await fetch(url, { cache: 'no-store', headers: { Accept: accept } });
  if (!response.ok) { done({ error: `${url}: ${response.status}` }); return; }
  const type = response.headers.get('Content-Type'), vary = response.headers.get('Vary');
  const bitmap = await createImageBitmap(await response.blob(), { premultiplyAlpha: 'none' });
  const w = bitmap.width, h = bitmap.height;
  const reference = new OffscreenCanvas(w, h).getContext('2d');
  reference.globalCompositeOperation = 'copy';
  reference.drawImage(bitmap, 0, 0);
  const expected = reference.getImageData(0, 0, w, h).data;
  const canvas = player.shadowRoot.querySelector('canvas');
  const actual = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  const box = canvas.getBoundingClientRect();
  const result = { type, vary, width: canvas.width, height: canvas.height, servedWidth: w, servedHeight: h,
                   cssWidth: box.width, cssHeight: box.height, shown: player.currentFrame,
                   frameQuery: player.frameQuery, dpr: window.devicePixelRatio, mismatches: 0, first: null };
  if (canvas.width === w && canvas.height === h) {
    for (let i = 0; i < expected.length; i++) {
      if (actual[i] !== expected[i]) {
        if (!result.first) result.first = { pixel: i >> 2, actual: Array.from(actual.slice(i & ~3, (i & ~3) + 4)),
                                            expected: Array.from(expected.slice(i & ~3, (i & ~3) + 4)) };
        result.mismatches++;
      }
    }
  }
  done(result);
})().catch((error) => done({ error: String(error) }));
"""

STEP = "const [k, done] = arguments; document.getElementById('scaled').step(k).then(() => done(true), (e) => done(String(e)));"
NEXT_FRAMES = "return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true))));"


def stepped(css_width, dpr):
    return math.ceil(round(css_width * dpr) / 40) * 40


def scaled_height(width):
    return math.floor((2 * HEIGHT * width + WIDTH) / (2 * WIDTH))  # round(450 × width / 800), halves up


@pytest.fixture(scope="module")
def image_data():
    data, frames = gifgen.make_gif(2101, size=(WIDTH, HEIGHT), frames=FRAMES, delays_cs=[10])
    assert frames == FRAMES
    return data


@pytest.fixture
def big(flipbook, image_data):
    return flipbook.upload(image_data)["id"]


@pytest.fixture(params=[1, 2], ids=["dpr1", "dpr2"])
def dpr(request, page):
    page.engine.resize(page, 1280, 900, scale=request.param)
    yield request.param
    page.engine.resize(page, 1280, 900)


@pytest.fixture
def dpr2(page):
    page.engine.resize(page, 1280, 900, scale=2)
    yield 2
    page.engine.resize(page, 1280, 900)


def open_bare_player(driver, server, image_id, css_width=None, attributes=None):
    driver.get(server.base + "/")
    wait_until(driver, "return document.readyState === 'complete'", 10, "the page")
    assert driver.execute_async_script(SETUP, image_id, css_width, attributes or {}) is True


def requested(driver, image_id):
    return driver.execute_script(REQUESTED, image_id)


def query_of(path):
    return urllib.parse.parse_qs(urllib.parse.urlsplit(path).query, keep_blank_values=True)


def compare(driver, server, path):
    result = driver.execute_async_script(COMPARE, server.base + path, ACCEPT)
    assert "error" not in result, result
    assert (result["width"], result["height"]) == (result["servedWidth"], result["servedHeight"]), result
    assert result["mismatches"] == 0, result
    return result


def test_a_player_300_css_px_wide_at_dpr_2_asks_for_600_px_frames(page, flipbook, big, dpr2):
    open_bare_player(page, flipbook, big, css_width=300)
    width = stepped(300, 2)
    assert width == 600
    for k in range(FRAMES):
        if k:
            assert page.execute_async_script(STEP, 1) is True
        path = f"/frames/{big}/{k}?width=600&format=auto&quality={Q}"
        result = compare(page, flipbook, path)
        assert result["shown"] == k and result["dpr"] == 2
        assert result["frameQuery"] == f"?width=600&format=auto&quality={Q}"
        # The frame is 600×338 device pixels, shown 300 CSS px wide at the image's aspect.
        assert (result["width"], result["height"]) == (600, scaled_height(600)) == (600, 338)
        assert result["cssWidth"] == 300 and abs(result["cssHeight"] - 300 * HEIGHT / WIDTH) < 0.5, result
        # Chromium takes WebP: the negotiated frame is WebP, and says it was negotiated.
        assert result["type"] == "image/webp" and "accept" in (result["vary"] or "").lower(), result
    paths = requested(page, big)
    # Every frame asked for at 600 device pixels (no dpr parameter), none at full size first.
    assert paths, "no frame requests recorded"
    for path in paths:
        query = query_of(path)
        assert query == {"width": ["600"], "format": ["auto"], "quality": [str(Q)]}, path
    assert {urllib.parse.urlsplit(p).path for p in paths} == {f"/frames/{big}/{k}" for k in range(FRAMES)}


def test_a_resize_refetches_only_when_the_stepped_width_changes(page, flipbook, big, dpr2):
    open_bare_player(page, flipbook, big, css_width=300)
    # Every frame in (a second of playback ahead is all six): no fetch is still under way.
    wait_until(page, "return document.getElementById('scaled').bufferedFrames === arguments[0]", 20, "every frame",
               FRAMES)
    before = requested(page, big)
    frames_before = page.execute_script("return window.__flipbook.events.filter((e) => e.type === 'frame').length")
    # 290 CSS px = 580 device px: still the 600 px step, nothing is fetched again.
    page.execute_script("document.getElementById('scaled').style.width = '290px';")
    page.execute_script(NEXT_FRAMES)
    page.execute_script("return new Promise((resolve) => setTimeout(resolve, 300));")
    assert requested(page, big) == before
    assert page.execute_script("return document.getElementById('scaled').frameQuery") == f"?width=600&format=auto&quality={Q}"
    # 330 CSS px = 660 device px: the 680 px step. The frame on the canvas is replaced by its
    # 680 px rendition (no `frame` event: the frame did not change).
    page.execute_script("document.getElementById('scaled').style.width = '330px';")
    wait_until(page, "return document.getElementById('scaled').shadowRoot.querySelector('canvas').width === 680",
               20, "the 680 px frame on the canvas")
    frame = page.execute_script("return document.getElementById('scaled').currentFrame")
    compare(page, flipbook, f"/frames/{big}/{frame}?width=680&format=auto&quality={Q}")
    after = requested(page, big)[len(before):]
    assert after and all(query_of(p)["width"] == ["680"] for p in after), after
    assert page.execute_script("return window.__flipbook.events.filter((e) => e.type === 'frame').length") == frames_before


def test_a_player_at_the_images_own_size_asks_for_full_size_frames(page, flipbook, big, dpr):
    open_bare_player(page, flipbook, big)  # no width given: the image's own 800 CSS px
    for k in range(3):
        if k:
            assert page.execute_async_script(STEP, 1) is True
        result = compare(page, flipbook, f"/frames/{big}/{k}")
        assert result["frameQuery"] == ""
        assert (result["width"], result["height"], result["cssWidth"]) == (WIDTH, HEIGHT, WIDTH), result
        assert result["type"] == "image/png" and not result["vary"], result
    paths = requested(page, big)
    assert paths and all("?" not in path for path in paths), paths


def test_the_player_page_asks_for_full_size_frames_of_the_samples(page, flipbook, dpr2):
    page.get(flipbook.base + "/player/orbit.gif")
    wait_until(page, "return window.__flipbook.events.filter((e) => e.type === 'frame').length > 3", 10, "playback")
    paths = page.execute_script("return performance.getEntriesByType('resource').map((e) => new URL(e.name))"
                                ".filter((u) => u.pathname.startsWith('/frames/')).map((u) => u.pathname + u.search)")
    assert paths and all("?" not in path for path in paths), paths


@pytest.mark.parametrize("attributes, query", [
    ({"rendition": "full"}, ""),
    ({"quality": "50"}, "?width=600&format=auto&quality=50"),
    ({"quality": "lossless"}, f"?width=600&format=auto&quality={Q}"),  # not 1–100: the default
], ids=["full", "quality-50", "quality-invalid"])
def test_attributes_choose_the_rendition(page, flipbook, big, dpr2, attributes, query):
    open_bare_player(page, flipbook, big, css_width=300, attributes=attributes)
    result = compare(page, flipbook, f"/frames/{big}/0{query}")
    assert result["frameQuery"] == query
    assert result["cssWidth"] == 300
    if not query:
        assert (result["width"], result["height"]) == (WIDTH, HEIGHT)
    paths = requested(page, big)  # frame 0 and the frames after it (a second of playback ahead)
    assert paths and all(urllib.parse.urlsplit(p).query == query[1:] for p in paths), paths
    # Changing the attribute changes the rendition (and the frame on the canvas follows).
    page.execute_script("document.getElementById('scaled').setAttribute('rendition', arguments[0])",
                        "" if attributes.get("rendition") == "full" else "full")
    wanted = f"?width=600&format=auto&quality={Q}" if attributes.get("rendition") == "full" else ""
    wait_until(page, "return document.getElementById('scaled').frameQuery === arguments[0]", 10, "the new rendition", wanted)
    wait_until(page, "return document.getElementById('scaled').shadowRoot.querySelector('canvas').width === arguments[0]",
               10, "the new frame on the canvas", 600 if wanted else WIDTH)
    compare(page, flipbook, f"/frames/{big}/0{wanted}")


@pytest.fixture(scope="module")
def preset_server():
    server = Flipbook(flipbook_binary(), ["--set", "renditions.presets=thumb:width=160&format=webp&quality=75"])
    yield server
    server.stop()


def test_a_preset_is_asked_for_by_name(page, preset_server, image_data):
    image_id = preset_server.upload(image_data)["id"]
    open_bare_player(page, preset_server, image_id, css_width=300, attributes={"rendition": "thumb"})
    result = compare(page, preset_server, f"/frames/{image_id}/0?r=thumb")
    assert result["frameQuery"] == "?r=thumb"
    assert (result["width"], result["height"]) == (160, 90) and result["cssWidth"] == 300, result
    assert result["type"] == "image/webp" and not result["vary"], result  # format=webp: not negotiated
    wait_until(page, "return document.getElementById('scaled').bufferedFrames === arguments[0]", 30,
               "every frame decoded", FRAMES)
    paths = requested(page, image_id)  # the player's, and the comparison's own fetch of frame 0
    assert {p.replace(f"/frames/{image_id}/", "") for p in paths} == {f"{k}?r=thumb" for k in range(FRAMES)}, paths


@pytest.fixture(scope="module")
def presets_only_server():
    server = Flipbook(flipbook_binary(), ["--set", "renditions.allowArbitrary=false"])
    yield server
    server.stop()


def test_a_presets_only_server_gets_full_size_requests(page, presets_only_server, image_data):
    image_id = presets_only_server.upload(image_data)["id"]
    status, _, _ = presets_only_server.request("GET", f"/frames/{image_id}/0?width=600&format=auto&quality={Q}")
    assert status == 400
    open_bare_player(page, presets_only_server, image_id, css_width=300)
    result = compare(page, presets_only_server, f"/frames/{image_id}/0")
    assert result["frameQuery"] == "" and (result["width"], result["height"]) == (WIDTH, HEIGHT)
    assert page.execute_script("return window.__flipbook.events.filter((e) => e.type === 'error')") == []
    # The scaled requests (refused), then only full-size ones.
    paths = requested(page, image_id)
    scaled = [p for p in paths if "?" in p]
    assert scaled and paths == scaled + [p for p in paths if "?" not in p], paths
    assert all(query_of(p) == {"width": ["320"], "format": ["auto"], "quality": [str(Q)]} for p in scaled), scaled
    assert f"/frames/{image_id}/0" in paths
    errors = page.engine.console_errors(page)  # the refused request (Chromium logs it; Firefox does not)
    assert all("400" in e["message"] for e in errors), errors


POSTERS = r"""
return [...document.querySelectorAll('#images li img')].filter((img) => img.closest('li').dataset.id === arguments[0])
  .map((img) => ({ src: img.getAttribute('src'), loaded: img.complete && img.naturalWidth > 0,
                   naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight,
                   cssWidth: img.getBoundingClientRect().width }))[0] || null;
"""


def test_posters_are_scaled_to_the_card(page, flipbook, big, dpr):
    page.get(flipbook.base + "/")
    poster = wait_until(page, "const p = (() => { " + POSTERS + " })(); return p && p.loaded && p;", 30,
                        "the poster", big)
    width = stepped(poster["cssWidth"], dpr)
    assert width < WIDTH, poster  # a card is narrower than 800 px even at DPR 2
    assert poster["src"] == f"/frames/{big}/0?width={width}&format=auto&quality=75", (poster, width)
    assert (poster["naturalWidth"], poster["naturalHeight"]) == (width, scaled_height(width)), poster
