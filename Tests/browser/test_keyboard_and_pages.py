"""Group 5: keyboard control, labelled controls with a visible focus, 360 px wide pages, no
console errors and no Content-Security-Policy violation (the `page` fixture fails a test that
leaves either). Screenshots of the three players go to build/screenshots/ (Firefox's with
`-firefox` in their names). The keys are sent as the DevTools protocol's key events and the
storyboard is hovered with Selenium's pointer actions: those tests run in Chromium alone."""
import os

import pytest

from conftest import open_player, shot_name, wait_until

KEYS = pytest.mark.chromium_only("keys sent as DevTools protocol key events")

STATE = "const p = document.getElementById('player'); return [p.currentFrame, p.paused];"


def press(page, key):
    page.execute_cdp_cmd("Input.dispatchKeyEvent", {"type": "keyDown", **key})
    page.execute_cdp_cmd("Input.dispatchKeyEvent", {"type": "keyUp", **key})


SPACE = {"key": " ", "code": "Space", "windowsVirtualKeyCode": 32, "text": " "}
RIGHT = {"key": "ArrowRight", "code": "ArrowRight", "windowsVirtualKeyCode": 39}
LEFT = {"key": "ArrowLeft", "code": "ArrowLeft", "windowsVirtualKeyCode": 37}
HOME = {"key": "Home", "code": "Home", "windowsVirtualKeyCode": 36}
END = {"key": "End", "code": "End", "windowsVirtualKeyCode": 35}
TAB = {"key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9}


def wait_state(page, frame, paused):
    return wait_until(page, "const p = document.getElementById('player');"
                            "return p.currentFrame === arguments[0] && p.paused === arguments[1];",
                      10, f"frame {frame}, paused {paused}", frame, paused)


@KEYS
def test_keyboard_controls_the_player(page, flipbook):
    open_player(page, flipbook.base, "orbit.gif")
    wait_until(page, "return !document.getElementById('player').paused", 10, "autoplay")
    # The player has the focus (the page gives it), so its keys work at once.
    assert page.execute_script("return document.activeElement.id") == "player"
    press(page, SPACE)
    wait_until(page, "return document.getElementById('player').paused", 10, "space pauses")
    frame = page.execute_script(STATE)[0]
    press(page, RIGHT)
    wait_state(page, (frame + 1) % 12, True)
    press(page, RIGHT)
    wait_state(page, (frame + 2) % 12, True)
    press(page, LEFT)
    wait_state(page, (frame + 1) % 12, True)
    press(page, END)
    wait_state(page, 11, True)
    press(page, HOME)
    wait_state(page, 0, True)
    press(page, SPACE)
    wait_until(page, "return !document.getElementById('player').paused", 10, "space plays")


@KEYS
def test_controls_are_labelled_and_show_focus(page, flipbook):
    open_player(page, flipbook.base, "orbit.png")
    controls = page.execute_script(r"""
      const root = document.getElementById('player').shadowRoot;
      return [...root.querySelectorAll('button, input, select')].map((c) => ({
        tag: c.tagName, label: c.getAttribute('aria-label') || (c.labels && c.labels[0] && c.labels[0].textContent) || '' }));
    """)
    assert [c["label"] for c in controls] == ["Previous frame", "Play", "Next frame", "Position", "Speed"] or \
        [c["label"] for c in controls] == ["Previous frame", "Pause", "Next frame", "Position", "Speed"], controls
    # Tab moves the focus through the controls; each shows a visible outline when focused.
    page.execute_script("document.querySelector('header a').focus();")
    seen = []
    for _ in range(6):
        press(page, TAB)
        focused = page.execute_script(r"""
          let el = document.activeElement;
          while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
          const style = getComputedStyle(el);
            return { name: el.getAttribute('aria-label') || el.id || el.tagName, outline: style.outlineStyle,
                   width: parseFloat(style.outlineWidth) };
        """)
        seen.append(focused)
    inside = [f for f in seen if f["name"] in ("Previous frame", "Play", "Pause", "Next frame", "Position", "Speed")]
    assert len(inside) == 5, seen
    assert any(f["name"] == "player" for f in seen), seen  # the player itself (its keys work there)
    for focused in seen:
        assert focused["outline"] != "none" and focused["width"] >= 2, f"no visible focus on {focused}"
    # The speed list sets the rate.
    page.execute_script(r"""
      const select = document.getElementById('player').shadowRoot.querySelector('select');
      select.value = '2'; select.dispatchEvent(new Event('change'));""")
    assert page.execute_script("return document.getElementById('player').playbackRate") == 2


@pytest.mark.parametrize("path", ["/", "/player/orbit.webp"])
def test_pages_fit_360_pixels(page, flipbook, screenshots, path):
    page.engine.resize(page, 360, 740, mobile=True)
    try:
        page.get(flipbook.base + path)
        wait_until(page, "return document.readyState === 'complete'", 10, "the page")
        if path.startswith("/player"):
            wait_until(page, "return document.getElementById('player').currentFrame !== undefined", 10, "metadata")
        else:
            wait_until(page, "return document.querySelectorAll('#images li').length >= 3", 10, "the list")
        width = page.execute_script("return [document.documentElement.scrollWidth, window.innerWidth];")
        assert width[0] <= width[1] == 360, width
        name = "browser-360" if path == "/" else "player-360"
        page.save_screenshot(os.path.join(screenshots, shot_name(page, name)))
    finally:
        page.engine.resize(page, 1280, 900)


@pytest.mark.parametrize("image_id", ["orbit.gif", "orbit.png", "orbit.webp"])
def test_player_page_screenshot(page, flipbook, screenshots, image_id):
    open_player(page, flipbook.base, image_id)
    # Let it play a little, so the cache strip shows frames held, then stop on frame 3.
    wait_until(page, "return window.__flipbook.events.filter((e) => e.type === 'frame').length > 4", 10, "playback")
    page.execute_async_script("const done = arguments[0]; const p = document.getElementById('player');"
                              "p.pause().then(() => p.seek(p.metadata.frames[3].timestampMs)).then(() => done(true));")
    wait_until(page, "return (document.getElementById('cache').dataset.cached || '').length > 0", 10, "the cache strip")
    page.execute_script("document.activeElement.blur()")
    page.save_screenshot(os.path.join(screenshots, shot_name(page, f"player-{image_id.replace('.', '-')}")))


STORYBOARD_THUMB = r"""
const p = document.getElementById('player');
const thumb = p.shadowRoot.querySelector('[part=storyboard]');
return thumb && { hidden: thumb.hidden, index: thumb.dataset.index, image: thumb.style.backgroundImage,
                  width: thumb.style.width, position: thumb.style.backgroundPosition };
"""


@pytest.mark.chromium_only("the storyboard hovered with Selenium's pointer actions")
def test_player_page_scrubber_shows_the_storyboard_tile(page, flipbook):
    from selenium.webdriver.common.action_chains import ActionChains
    open_player(page, flipbook.base, "orbit.gif")
    wait_until(page, "return window.__flipbook.events.some((e) => e.type === 'frame')", 10, "the first frame")
    manifest = flipbook.json("/images/orbit.gif/storyboard?tile=160")
    scrub = page.execute_script("return document.getElementById('player').shadowRoot.querySelector('[data-action=scrub]')")
    # The manifest is fetched after the metadata: hover until the thumb shows.
    shown = None
    for _ in range(50):
        ActionChains(page).move_to_element_with_offset(scrub, 0, 0).perform()
        shown = page.execute_script(STORYBOARD_THUMB)
        if shown and not shown["hidden"]:
            break
        page.execute_script("return new Promise((resolve) => setTimeout(resolve, 100));")
    assert shown and not shown["hidden"], shown
    tiles = manifest["tiles"]
    tile = next(t for t in tiles if str(t["index"]) == shown["index"])
    assert manifest["sheets"][tile["sheet"]]["url"] in shown["image"], shown
    assert shown["width"] == f"{tile['width']}px"
    ActionChains(page).move_by_offset(0, 200).perform()
    assert page.execute_script(STORYBOARD_THUMB)["hidden"]
