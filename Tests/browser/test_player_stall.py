"""Group 4: a stall. The page is loaded through a proxy that holds one frame's request until the
test lets it go; the player must hold the frame before it and emit `stall`, show nothing early,
skip nothing, and give the late frame its whole delay once it is on the canvas."""
import pytest

from benchlib import gifgen
from conftest import open_player, wait_until
from slow_proxy import SlowProxy
from test_player_pixels import check_frame
from timing import check_changes, first_tick_at_or_after

pytestmark = pytest.mark.chromium_only(
    "the held frame is checked against ImageDecoder's decode (test_player_pixels) and the late frame is timed "
    "to the animation frame (timing.py), both in the reference engine only")


@pytest.fixture
def proxy(flipbook):
    proxy = SlowProxy(flipbook.port)
    yield proxy
    proxy.close()


def test_a_late_frame_holds_the_current_one(page, flipbook, proxy):
    # A new image (its frames are in no browser cache), 8 frames of 100 ms, looping.
    data, _ = gifgen.make_gif(1503, size=(48, 36), frames=8, delays_cs=[10])
    image = flipbook.upload(data)
    image_id = image["id"]
    late = 5
    held = f"/frames/{image_id}/{late}"
    proxy.hold(held)
    base = f"http://127.0.0.1:{proxy.port}"
    open_player(page, base, image_id)  # autoplay
    stall = wait_until(page, "return window.__flipbook.events.find((e) => e.type === 'stall' && e.detail.waitingFor === arguments[0])",
                       30, "the stall", late)
    assert stall["detail"]["index"] == late - 1
    assert proxy.was_requested(held)
    # Held for a while: still frame 4 on the canvas, exactly, and still stalled.
    page.execute_script("return new Promise((resolve) => setTimeout(resolve, 500));")
    state = page.execute_script("const p = document.getElementById('player'); return [p.currentFrame, p.stalled, p.paused];")
    assert state == [late - 1, True, False]
    check_frame(page, base, image_id, late - 1)
    released = page.execute_script("return performance.now();")
    proxy.release(held)
    wait_until(page, "return window.__flipbook.events.filter((e) => e.type === 'frame' && e.detail.index === arguments[0]).length > 0",
               30, "the frame after the late one", late + 1)
    page.execute_script("document.getElementById('player').pause()")
    record = page.execute_script("return window.__flipbook;")
    events = [e for e in record["events"] if e["id"] == "player"]
    play_at = next(i for i, e in enumerate(events) if e["type"] == "play")
    play = events[play_at]
    # Frame changes are the frame events dispatched after play (frame 0 is drawn before it). Order,
    # not time: a frame drawn by a fetch's task carries performance.now(), which can be later than
    # the timestamp of the animation frame that then emits play.
    changes = [(e["detail"]["index"], e["detail"]["time"]) for e in events[play_at + 1:]
               if e["type"] == "frame"]
    indices = [index for index, _ in changes]
    late_at = indices.index(late)
    # Nothing skipped, before or after.
    assert indices[:late_at + 2] == list(range(1, late + 2))
    delays = [100] * 8
    # The late frame: not before its bytes were let through, after the stall, nothing skipped.
    late_time = changes[late_at][1]
    assert changes[late_at - 1][0] == late - 1
    assert late_time > released
    assert late_time > stall["detail"]["time"]
    # Then the timeline starts again from the late frame: the next frame gets no less than its
    # delay (not rushed to catch up) and comes on the first animation frame it is due.
    check_changes(changes[late_at + 1:late_at + 2], record["ticks"], delays, late, late_time)
    assert first_tick_at_or_after(record["ticks"], late_time + 100) == changes[late_at + 1][1]
    assert len([e for e in events if e["type"] == "stall" and e["detail"]["waitingFor"] == late]) == 1
