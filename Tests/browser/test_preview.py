"""Animated previews as Chromium reads them (issue 24's browser goals): `GET /images/{id}/preview`
decoded by WebCodecs `ImageDecoder` (no premultiplication, no colour conversion) has the
original's frame count and `repetitionCount`, each frame lasts its `delayMs`, and each frame is
the rendition frame the frame route serves at the same size: exactly where anything shows when
lossless, within PSNR 40 dB (over premultiplied RGBA: what is seen) when lossy at quality 75.

Inputs: the samples, and a corpus APNG that plays once and whose frames all look alike (libwebp
makes one still image of such an animation; the preview must still play once, frame by frame).
"""
import math
import os
import urllib.parse

import pytest

from conftest import REPO, wait_until
from test_storyboard import DECODE, open_host, host  # noqa: F401  (the fixture, reused)

pytestmark = pytest.mark.chromium_only(
    "previews decoded by WebCodecs' ImageDecoder with straight alpha, as Chromium (the brief's reference) decodes "
    "them; Firefox's ImageDecoder returns premultiplied colour (see test_player_pixels)")

CORPUS = os.environ.get("FLIPBOOK_CORPUS") or os.path.join(os.path.dirname(REPO), "shared", "corpus")

# Decodes every frame of the preview and of its rendition frames: {frameCount, repetitionCount,
# frames: [{duration (µs), size, mse (premultiplied RGBA), visibleDiffer (samples that differ
# where either pixel shows)}]}.
COMPARE = r"""
const [previewUrl, frameUrl, done] = arguments;
(async () => {
  const data = await (await fetch(previewUrl)).arrayBuffer();
  const decoder = new ImageDecoder({ data, type: 'image/webp', premultiplyAlpha: 'none',
                                     colorSpaceConversion: 'none' });
  await decoder.tracks.ready;
  await decoder.completed;
  const track = decoder.tracks.selectedTrack;
  const frames = [];
  for (let i = 0; i < track.frameCount; i++) {
    const { image } = await decoder.decode({ frameIndex: i });
    const size = [image.displayWidth, image.displayHeight];
    const duration = image.duration;
    const pixels = new Uint8Array(image.allocationSize({ format: 'RGBA' }));
    await image.copyTo(pixels, { format: 'RGBA' });
    image.close();
    const rendition = await window.__decodePNG(frameUrl.replace('INDEX', i));
    if (rendition.width !== size[0] || rendition.height !== size[1]) {
      frames.push({ duration, size, rendition: [rendition.width, rendition.height] });
      continue;
    }
    let squares = 0, visibleDiffer = 0;
    for (let p = 0; p < pixels.length; p += 4) {
      const a = pixels[p + 3], b = rendition.pixels[p + 3];
      for (let c = 0; c < 3; c++) {
        const d = pixels[p + c] * a / 255 - rendition.pixels[p + c] * b / 255;
        squares += d * d;
        if ((a || b) && pixels[p + c] !== rendition.pixels[p + c]) visibleDiffer++;
      }
      squares += (a - b) * (a - b);
      if (a !== b) visibleDiffer++;
    }
    frames.push({ duration, size, mse: squares / pixels.length, visibleDiffer });
  }
  decoder.close();
  const repetition = track.repetitionCount;
  return { frameCount: track.frameCount, repetitionCount: Number.isFinite(repetition) ? repetition : 'infinite',
           frames };
})().then(done, (error) => done({ error: String(error) }));
"""


@pytest.fixture(scope="module")
def once(flipbook):
    """The corpus APNG that plays once, all of its frames alike, uploaded."""
    with open(os.path.join(CORPUS, "pillow/apng/blend_op_over_near_transparent.png"), "rb") as file:
        return flipbook.upload(file.read())["id"]


@pytest.mark.parametrize("image", ["orbit.gif", "orbit.png", "orbit.webp", "once"])
@pytest.mark.parametrize("quality", [75, None])
def test_the_preview_plays_as_the_original_with_its_rendition_frames(page, flipbook, host, once, image, quality):
    image_id = once if image == "once" else image
    quoted = urllib.parse.quote(image_id)
    metadata = flipbook.json(f"/images/{quoted}")
    delays = [frame["delayMs"] for frame in metadata["frames"]]
    query = "width=320&format=webp" + (f"&quality={quality}" if quality else "")
    open_host(page, host)
    result = page.execute_async_script(
        COMPARE, f"/images/{quoted}/preview?{query}", f"/frames/{quoted}/INDEX?width=320&format=png")
    assert "error" not in result, result
    assert result["frameCount"] == len(delays) > 1
    assert result["repetitionCount"] == metadata["repetitionCount"]
    for index, (frame, delay) in enumerate(zip(result["frames"], delays)):
        assert frame["duration"] == delay * 1000, (index, frame["duration"], delay)
        assert "mse" in frame, (index, frame)
        if quality is None:
            assert frame["visibleDiffer"] == 0, (index, frame)
        else:
            psnr = math.inf if frame["mse"] == 0 else 10 * math.log10(255 * 255 / frame["mse"])
            assert psnr >= 40, (index, psnr)


# Decodes an AVIF preview with ImageDecoder: {frameCount, repetitionCount, durations (µs)}.
READ_AVIF = r"""
const [url, done] = arguments;
(async () => {
  const response = await fetch(url);
  const data = await response.arrayBuffer();
  const decoder = new ImageDecoder({ data, type: 'image/avif' });
  await decoder.tracks.ready;
  await decoder.completed;
  const track = decoder.tracks.selectedTrack;
  const durations = [];
  for (let i = 0; i < track.frameCount; i++) {
    const { image } = await decoder.decode({ frameIndex: i });
    durations.push(image.duration);
    image.close();
  }
  const repetition = track.repetitionCount;
  decoder.close();
  return { type: response.headers.get('content-type'), frameCount: track.frameCount, durations,
           repetitionCount: Number.isFinite(repetition) ? repetition : 'infinite' };
})().then(done, (error) => done({ error: String(error) }));
"""


@pytest.fixture(scope="module")
def thrice(flipbook):
    """orbit.gif with its NETSCAPE loop field set to 2: it plays three times."""
    with open(os.path.join(REPO, "Samples", "orbit.gif"), "rb") as file:
        data = file.read()
    at = data.index(b"NETSCAPE2.0\x03\x01") + 13
    return flipbook.upload(data[:at] + (2).to_bytes(2, "little") + data[at + 2:])["id"]


@pytest.mark.parametrize("image", ["orbit.gif", "orbit.webp", "thrice", "once"])
def test_the_avif_preview_keeps_frames_delays_and_loop_count(page, flipbook, host, once, thrice, image):
    """`format=avif` decoded by Chromium's ImageDecoder: the animation's frame count, each frame
    its `delayMs`, and its `repetitionCount` (the edit list Flipbook writes: forever, twice
    more, none)."""
    image_id = {"once": once, "thrice": thrice}.get(image, image)
    quoted = urllib.parse.quote(image_id)
    metadata = flipbook.json(f"/images/{quoted}")
    open_host(page, host)
    result = page.execute_async_script(READ_AVIF, f"/images/{quoted}/preview?width=64&format=avif")
    assert "error" not in result, result
    assert result["type"] == "image/avif"
    assert result["frameCount"] == metadata["frameCount"] > 1
    assert result["durations"] == [frame["delayMs"] * 1000 for frame in metadata["frames"]]
    assert result["repetitionCount"] == metadata["repetitionCount"], (result, metadata["repetitionCount"])
    if image == "thrice":
        assert metadata["repetitionCount"] == 2
