"""Group 1: the image browser (GET /): the samples are listed with their posters; uploading a GIF
through the file input adds it to the list; uploading a text file shows the server's 415 detail.
In Chromium and Firefox."""
import hashlib
import json
import os
import tempfile
import time

import pytest
from selenium.webdriver.common.by import By

from benchlib import gifgen

import chromium
from conftest import shot_name, wait_until

LISTED = r"""
return [...document.querySelectorAll('#images li')].map((li) => {
  const img = li.querySelector('img');
  return { id: li.dataset.id, href: li.querySelector('a').getAttribute('href'),
           poster: img.getAttribute('src'), loaded: img.complete && img.naturalWidth > 0,
           width: img.naturalWidth, height: img.naturalHeight, text: li.textContent };
});
"""


def listed(page):
    return {item["id"]: item for item in page.execute_script(LISTED)}


def test_the_samples_are_listed_with_posters(page, flipbook, screenshots):
    page.get(flipbook.base + "/")
    wait_until(page, "return document.querySelectorAll('#images li').length >= 3", message="the list")
    for name in ("orbit.gif", "orbit.png", "orbit.webp"):
        wait_until(page, "const li = document.querySelector(`#images li[data-id='${arguments[0]}'] img`);"
                         "return li && li.complete && li.naturalWidth > 0", 30, f"the poster of {name}", name)
    items = listed(page)
    for name in ("orbit.gif", "orbit.png", "orbit.webp"):
        meta = flipbook.json(f"/images/{name}")
        item = items[name]
        assert item["poster"] == f"/frames/{name}/0"
        assert (item["width"], item["height"]) == (meta["width"], meta["height"])
        assert item["href"] == f"/player/{name}"
        for fact in (meta["format"].upper(), f"{meta['width']} × {meta['height']}", str(meta["frameCount"]), "loops forever"):
            assert fact in item["text"], (fact, item["text"])
    page.save_screenshot(os.path.join(screenshots, shot_name(page, "browser")))


def test_uploading_a_gif_adds_it_to_the_list(page, flipbook):
    page.get(flipbook.base + "/")
    wait_until(page, "return document.querySelectorAll('#images li').length >= 3", message="the list")
    data, frames = gifgen.make_gif(1504, size=(50, 40), frames=5)
    with tempfile.NamedTemporaryFile(suffix=".gif", delete=False) as f:
        f.write(data)
    try:
        page.find_element("id", "file").send_keys(f.name)
        image_id = hashlib.sha256(data).hexdigest()
        wait_until(page, "return !!document.querySelector(`#images li[data-id='${arguments[0]}']`)", 30,
                   "the uploaded image in the list", image_id)
        item = listed(page)[image_id]
        assert item["href"] == f"/player/{image_id}"
        assert f"{frames}" in item["text"] and "50 × 40" in item["text"]
        # The card shows the file's name, which the page sent in Content-Disposition.
        assert os.path.basename(f.name) in item["text"], item["text"]
        assert flipbook.json(f"/images/{image_id}")["name"] == os.path.basename(f.name)
        progress = page.execute_script("const p = document.getElementById('progress'); return [p.hidden, p.value];")
        assert progress == [False, 100]
        assert "added" in page.find_element("id", "upload-status").text
        # It is really on the server, and a fresh page lists it too.
        assert flipbook.json(f"/images/{image_id}")["frameCount"] == frames
        page.refresh()
        wait_until(page, "return !!document.querySelector(`#images li[data-id='${arguments[0]}']`)", 30,
                   "the uploaded image after a reload", image_id)
    finally:
        os.unlink(f.name)


def test_uploading_a_text_file_shows_the_415_detail(page, flipbook):
    text = b"this is not an image\n"
    status, _, body = flipbook.request("POST", "/images", text)
    assert status == 415
    detail = json.loads(body)["detail"]
    page.get(flipbook.base + "/")
    wait_until(page, "return document.querySelectorAll('#images li').length >= 3", message="the list")
    before = len(listed(page))
    with tempfile.NamedTemporaryFile(suffix=".txt", delete=False) as f:
        f.write(text)
    try:
        page.find_element("id", "file").send_keys(f.name)
        shown = wait_until(page, "const s = document.getElementById('upload-status');"
                                 "return s.classList.contains('refused') && s.textContent", 30, "the refusal")
        assert detail in shown, (detail, shown)
        assert len(listed(page)) == before
    finally:
        os.unlink(f.name)
    errors = page.engine.console_errors(page)
    if page.engine is not chromium:
        # Firefox logs no console error for an HTTP error answer: nothing at all here.
        assert errors == [], errors
        assert page.execute_script("return document.getElementById('upload-preview').hidden") is True
        return
    # The refused upload is what Chromium logs here: its PUT to the session (415), and at most the
    # preview's poll of that session once the session answers the failure (422) before the page
    # stops following it.
    refused = [e for e in errors if "415" in e["message"]]
    assert len(refused) == 1 and "/uploads/" in refused[0]["message"], errors
    session = refused[0]["message"].split(" ")[0]
    assert all(e in refused or (e["message"].startswith(session) and "422" in e["message"]) for e in errors), errors
    assert page.execute_script("return document.getElementById('upload-preview').hidden") is True


CARD_IMAGE = r"""
const img = document.querySelector(`#images li[data-id='${arguments[0]}'] img`);
return img && img.complete && img.naturalWidth > 0 && { src: img.getAttribute('src'), current: img.currentSrc };
"""


def test_animated_cards_show_the_preview_and_reduced_motion_the_poster(page, flipbook):
    page.get(flipbook.base + "/")
    shown = wait_until(page, "return (() => { " + CARD_IMAGE + " })()", 30, "the card", "orbit.gif")
    # The <picture> offers AVIF, then WebP: both engines play animated AVIF, the smaller one.
    assert "/images/orbit.gif/preview?" in shown["current"] and "format=avif" in shown["current"], shown
    assert shown["src"] == "/frames/orbit.gif/0"
    page.engine.reduced_motion(page, True)
    try:
        page.get(flipbook.base + "/")
        shown = wait_until(page, "return (() => { " + CARD_IMAGE + " })()", 30, "the card", "orbit.gif")
        assert shown["current"].endswith("/frames/orbit.gif/0"), shown
    finally:
        page.engine.reduced_motion(page, False)


# Decodes the file the card's <img> shows with ImageDecoder: {durationMs, frameCount, type, current}.
CARD_FILE = r"""
const [id, done] = arguments;
const img = document.querySelector(`#images li[data-id='${id}'] img`);
(async () => {
  const response = await fetch(img.currentSrc);
  const decoder = new ImageDecoder({ data: await response.arrayBuffer(), type: response.headers.get('content-type') });
  await decoder.tracks.ready;
  await decoder.completed;
  let total = 0;
  for (let i = 0; i < decoder.tracks.selectedTrack.frameCount; i++) {
    const { image } = await decoder.decode({ frameIndex: i });
    total += image.duration;
    image.close();
  }
  return { durationMs: total / 1000, frameCount: decoder.tracks.selectedTrack.frameCount,
           type: response.headers.get('content-type'), current: img.currentSrc };
})().then(done, (error) => done({ error: String(error) }));
"""


@pytest.mark.chromium_only("ImageDecoder reads the played file's frame durations; Chromium is the brief's reference")
def test_the_cards_avif_preview_plays_for_the_animations_duration(page, flipbook):
    """The grid's animated card in Chromium: the <img> shows the AVIF preview, it plays (its
    rendered picture changes over a second), and the file it plays lasts the animation's
    `durationMs` over its frame count."""
    metadata = flipbook.json("/images/orbit.gif")
    page.get(flipbook.base + "/")
    shown = "const shown = (() => { " + CARD_IMAGE + " })(); return shown && shown.current.includes('format=avif')"
    wait_until(page, shown, 60, "the card's AVIF preview", "orbit.gif")
    # It plays: the card's picture, as rendered (element screenshots over about a second), changes.
    card = page.find_element(By.CSS_SELECTOR, "#images li[data-id='orbit.gif'] img")
    page.execute_script("arguments[0].scrollIntoView({block: 'center'})", card)
    seen = set()
    for _ in range(12):
        seen.add(hashlib.sha256(card.screenshot_as_png).hexdigest())
        time.sleep(0.09)
    assert len(seen) >= 3, f"the card's picture changed {len(seen) - 1} times in 12 screenshots"
    result = page.execute_async_script(CARD_FILE, "orbit.gif")
    assert "error" not in result, result
    assert result["type"] == "image/avif" and "format=avif" in result["current"], result
    assert result["frameCount"] == metadata["frameCount"], result
    assert result["durationMs"] == metadata["durationMs"], (result, metadata["durationMs"])
