"""Storyboards as Chromium reads them (issue 24's browser goals): the WebVTT thumbnail track,
loaded as a `<track>` of a `<video>`, gives one cue per tile whose start and end are the
manifest's `startMs` and `startMs + durationMs` and whose text is the sheet's URL (relative to the
VTT's) with `#xywh=` the tile's rectangle; and every tile of a PNG sheet, decoded by Chromium's
own PNG decoder (WebCodecs `ImageDecoder`, no premultiplication, no colour conversion), is
exactly the rendition frame the frame route serves for that frame at the tile's size
(`fit=contain`, enlarged if need be: `enlarge=true`), centred on transparent.
"""
import urllib.parse

import pytest

from conftest import wait_until
from slow_proxy import SlowProxy

pytestmark = pytest.mark.chromium_only(
    "tiles decoded by WebCodecs' ImageDecoder with straight alpha, as Chromium (the brief's reference) decodes "
    "them; Firefox's ImageDecoder returns premultiplied colour (see test_player_pixels)")

# Loads the VTT as a hidden metadata track of a detached-from-layout <video>; resolves with the
# cues (or the error event's type).
TRACK = r"""
const [src, done] = arguments;
const video = document.createElement('video');
const track = document.createElement('track');
track.kind = 'metadata';
track.src = src;
track.addEventListener('load', () => done({ cues: Array.from(track.track.cues, (cue) => (
  { start: cue.startTime, end: cue.endTime, text: cue.text })) }));
track.addEventListener('error', () => done({ error: 'the track did not load' }));
video.append(track);
document.body.append(video);
track.track.mode = 'hidden';
"""

# Decodes a PNG with ImageDecoder into RGBA bytes: {width, height, pixels (array)}.
DECODE = r"""
window.__decodePNG = async (url) => {
  const data = await (await fetch(url)).arrayBuffer();
  const decoder = new ImageDecoder({ data, type: 'image/png', premultiplyAlpha: 'none',
                                     colorSpaceConversion: 'none' });
  const { image } = await decoder.decode({ frameIndex: 0 });
  const width = image.displayWidth, height = image.displayHeight;
  const raw = new Uint8Array(image.allocationSize({ format: 'RGBA' }));
  await image.copyTo(raw, { format: 'RGBA' });
  image.close();
  decoder.close();
  return { width, height, pixels: raw };
};
"""

# Compares every tile of sheet `sheetUrl` with its frame's rendition: returns one entry per
# tile with the samples that differ inside the frame's rectangle and the non-transparent
# samples outside it (both must be 0).
COMPARE = r"""
const [sheetUrl, tiles, frameUrl, done] = arguments;
(async () => {
  const sheet = await window.__decodePNG(sheetUrl);
  const results = [];
  for (const tile of tiles) {
    const frame = await window.__decodePNG(frameUrl.replace('INDEX', tile.index));
    const ox = tile.x + Math.floor((tile.width - frame.width) / 2);
    const oy = tile.y + Math.floor((tile.height - frame.height) / 2);
    let differ = 0, outside = 0;
    for (let y = tile.y; y < tile.y + tile.height; y++) {
      for (let x = tile.x; x < tile.x + tile.width; x++) {
        const s = (y * sheet.width + x) * 4;
        const fx = x - ox, fy = y - oy;
        if (fx >= 0 && fy >= 0 && fx < frame.width && fy < frame.height) {
          const f = (fy * frame.width + fx) * 4;
          for (let c = 0; c < 4; c++) if (sheet.pixels[s + c] !== frame.pixels[f + c]) differ++;
        } else {
          for (let c = 0; c < 4; c++) if (sheet.pixels[s + c] !== 0) outside++;
        }
      }
    }
    results.push({ index: tile.index, frame: [frame.width, frame.height], differ, outside });
  }
  return results;
})().then(done, (error) => done({ error: String(error) }));
"""


PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>storyboard</title><link rel="icon" href="data:,">
</head><body></body></html>"""


@pytest.fixture
def host(flipbook):
    """A page of a third-party site that shows the storyboard (no web UI and none of its
    Content-Security-Policy, which allows no media), the service's URLs reached through the same
    origin (a proxy that forwards everything else to the service)."""
    proxy = SlowProxy(flipbook.port)
    proxy.serve("/storyboard.html", PAGE)
    yield f"http://127.0.0.1:{proxy.port}"
    proxy.close()


def open_host(page, host):
    page.get(host + "/storyboard.html")
    wait_until(page, "return document.readyState === 'complete'", message="the page")
    page.execute_script(DECODE)


@pytest.mark.parametrize("image_id,query", [
    ("orbit.gif", "tile=160"),
    ("orbit.png", "tile=96&columns=4&frames=interval=250"),
    ("orbit.webp", "tile=120&tileHeight=120&columns=3"),
])
def test_the_vtt_track_gives_the_manifests_cues(page, flipbook, host, image_id, query):
    manifest = flipbook.json(f"/images/{image_id}/storyboard?{query}")
    open_host(page, host)
    vtt = f"/images/{urllib.parse.quote(image_id)}/storyboard.vtt?{query}"
    loaded = page.execute_async_script(TRACK, vtt)
    assert "error" not in loaded, loaded
    cues = loaded["cues"]
    assert len(cues) == len(manifest["tiles"]) > 1
    sheets = manifest["sheets"]
    for cue, tile in zip(cues, manifest["tiles"]):
        assert cue["start"] == pytest.approx(tile["startMs"] / 1000, abs=1e-6), (cue, tile)
        assert cue["end"] == pytest.approx((tile["startMs"] + tile["durationMs"]) / 1000, abs=1e-6), (cue, tile)
        url, _, fragment = cue["text"].partition("#")
        # Relative to the VTT's URL, it names the manifest's sheet.
        assert urllib.parse.urljoin(host + vtt, url) == host + sheets[tile["sheet"]]["url"], cue
        assert fragment == f"xywh={tile['x']},{tile['y']},{tile['width']},{tile['height']}", cue


@pytest.mark.parametrize("image_id,tile,tile_height", [("orbit.gif", 160, None), ("orbit.png", 100, 100)])
def test_every_tile_of_a_png_sheet_is_the_rendition_frame(page, flipbook, host, image_id, tile, tile_height):
    query = f"tile={tile}&format=png" + (f"&tileHeight={tile_height}" if tile_height else "")
    manifest = flipbook.json(f"/images/{image_id}/storyboard?{query}")
    height = manifest["tileHeight"]
    frame_url = f"/frames/{urllib.parse.quote(image_id)}/INDEX?width={tile}&height={height}&enlarge=true&format=png"
    open_host(page, host)
    compared = 0
    for number, sheet in enumerate(manifest["sheets"]):
        tiles = [t for t in manifest["tiles"] if t["sheet"] == number]
        results = page.execute_async_script(COMPARE, sheet["url"], tiles, frame_url)
        assert isinstance(results, list), results
        for result in results:
            assert result["differ"] == 0 and result["outside"] == 0, result
            # contain: one side fills the tile
            assert (result["frame"][0] == tile) or (result["frame"][1] == height), result
        compared += len(results)
    assert compared == len(manifest["tiles"]) > 1
