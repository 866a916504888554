"""Group 3: timing. From the player's `frame` events, frames change at the effective delays
(each on the first animation frame at or after it is due — see timing.py), loops are counted
per `playCount`, the last frame stays after the last play, and a 10 ms-delay GIF plays at
100 ms per frame (what browsers do with delays of 10 ms or less)."""
import pytest

from benchlib import gifgen

from conftest import open_player, wait_until
from timing import check_changes

pytestmark = pytest.mark.chromium_only(
    "frame changes timed to the animation frame (timing.py) in the reference engine only (issue 35): Firefox "
    "clamps performance.now() to 1 ms (privacy.reduceTimerPrecision) and its headless animation frames come "
    "irregularly on this loaded machine")

PREPARE = r"""
const done = arguments[arguments.length - 1];
const [rate, loop] = [arguments[0], arguments[1]];
const player = document.getElementById('player');
(async () => {
  await player.pause();
  player.playbackRate = rate;
  player.loop = loop === null ? undefined : loop;
  await player.seek(0);
  // Every frame decoded before the clock starts: this measures the clock, not the network.
  const started = performance.now();
  while (player.bufferedFrames < player.metadata.frameCount && performance.now() - started < 20000) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  window.__flipbook.events = [];
  await player.play();
  done(player.bufferedFrames);
})().catch((error) => done(String(error)));
"""


def recorded(page):
    return page.execute_script("return window.__flipbook;")


def play_and_record(page, flipbook, image_id, changes_wanted, rate=1.0, loop=None, ended=False):
    open_player(page, flipbook.base, image_id)
    meta = flipbook.json(f"/images/{image_id}")
    buffered = page.execute_async_script(PREPARE, rate, loop)
    assert buffered == meta["frameCount"], buffered
    if ended:
        wait_until(page, "return window.__flipbook.events.some((e) => e.type === 'ended')", 60, "ended")
    else:
        wait_until(page, "return window.__flipbook.events.filter((e) => e.type === 'frame').length >= arguments[0]",
                   60, f"{changes_wanted} frame changes", changes_wanted)
    page.execute_script("document.getElementById('player').pause()")
    record = recorded(page)
    events = [e for e in record["events"] if e["id"] == "player"]
    play_at = next(i for i, e in enumerate(events) if e["type"] == "play")
    play = events[play_at]
    # Frame changes are the frame events dispatched after play (frame 0 is drawn before it). Order,
    # not time: a frame drawn by a fetch's task carries performance.now(), which can be later than
    # the timestamp of the animation frame that then emits play.
    changes = [(e["detail"]["index"], e["detail"]["time"]) for e in events[play_at + 1:]
               if e["type"] == "frame"]
    return meta, play, changes, events, record["ticks"]


def test_frames_change_at_their_effective_delays_through_loops(page, flipbook):
    meta, play, changes, _, ticks = play_and_record(page, flipbook, "orbit.gif", 30)
    delays = [f["delayMs"] for f in meta["frames"]]
    lateness = check_changes(changes[:30], ticks, delays, play["detail"]["index"], play["detail"]["time"])
    assert len(lateness) == 30 and max(lateness) >= 0
    # 30 changes of a 12-frame animation that loops forever: frame 0 came back twice.
    assert [index for index, _ in changes[:30]].count(0) == 2
    print(f"orbit.gif: 30 changes, lateness max {max(lateness):.2f} ms, mean {sum(lateness) / len(lateness):.2f} ms")


def test_play_count_is_honoured_and_the_last_frame_stays(page, flipbook):
    data, _ = gifgen.make_gif(1501, size=(40, 30), frames=3, delays_cs=[5, 7, 4], loops=1)  # plays twice
    image = flipbook.upload(data)
    assert image["playCount"] == 2
    meta, play, changes, events, ticks = play_and_record(page, flipbook, image["id"], 0, ended=True)
    delays = [f["delayMs"] for f in meta["frames"]]
    assert [index for index, _ in changes] == [1, 2, 0, 1, 2]
    check_changes(changes, ticks, delays, 0, play["detail"]["time"])
    ended = next(e for e in events if e["type"] == "ended")
    # The end comes when the last frame's delay of the last play is over, not before.
    end_due = play["detail"]["time"] + 2 * sum(delays)
    assert ended["detail"]["time"] >= end_due - 1e-6
    assert ended["detail"]["index"] == 2
    # Held: no frame event after the end, the last frame stays, and the player says it ended.
    page.execute_script("return new Promise((resolve) => setTimeout(resolve, 400));")
    after = [e for e in recorded(page)["events"] if e["type"] == "frame" and e["at"] > ended["at"]]
    assert after == []
    state = page.execute_script("const p = document.getElementById('player'); return [p.currentFrame, p.ended, p.paused];")
    assert state == [2, True, True]


def test_loop_override_plays_once(page, flipbook):
    meta, play, changes, events, ticks = play_and_record(page, flipbook, "orbit.webp", 0, loop=False, ended=True)
    assert meta["playCount"] == 0
    assert [index for index, _ in changes] == list(range(1, meta["frameCount"]))
    check_changes(changes, ticks, [f["delayMs"] for f in meta["frames"]], 0, play["detail"]["time"])


def test_a_10_ms_gif_plays_at_100_ms_per_frame(page, flipbook):
    data, _ = gifgen.make_gif(1502, size=(32, 32), frames=4, delays_cs=[1])
    image = flipbook.upload(data)
    assert [f["rawDelayMs"] for f in image["frames"]] == [10] * 4
    assert [f["delayMs"] for f in image["frames"]] == [100] * 4
    meta, play, changes, _, ticks = play_and_record(page, flipbook, image["id"], 6)
    check_changes(changes[:6], ticks, [100] * 4, 0, play["detail"]["time"])


def test_playback_rate_scales_the_delays(page, flipbook):
    meta, play, changes, _, ticks = play_and_record(page, flipbook, "orbit.png", 12, rate=2.0)
    check_changes(changes[:12], ticks, [f["delayMs"] for f in meta["frames"]], 0, play["detail"]["time"], rate=2.0)
