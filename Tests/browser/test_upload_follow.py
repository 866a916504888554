"""Group 6: following an upload in progress. `<flipbook-player src="/uploads/{uploadId}">` plays
the frames that have arrived, holds the last one (`stall`) while the rest are still on their way,
goes on as they arrive and ends on the stored image; the browser page's upload shows that player
while the bytes go up. The upload is slowed by the test: a raw socket that sends half the body and
waits, or the proxy holding back the page's own PUT."""
import hashlib
import os
import socket
import tempfile

import pytest

from benchlib import gifgen
from conftest import wait_until
from slow_proxy import SlowProxy

FOLLOW_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>follow</title><link rel="icon" href="data:,">
<script type="module" src="/ui/flipbook-player.js"></script></head>
<body><flipbook-player id="player" src="/uploads/{upload_id}" autoplay></flipbook-player></body></html>"""

EVENTS = "return window.__flipbook.events.filter((e) => e.id === arguments[0]);"
# The player is stalled on the last frame that has arrived: its stall event, else null.
HELD_AT_THE_LAST_FRAME_IN = """
const p = document.getElementById('player');
if (!p.metadata || !p.stalled || p.currentFrame !== p.metadata.frameCount - 1) return null;
return window.__flipbook.events.find((e) => e.type === 'stall' && e.detail.waitingFor === p.metadata.frameCount);
"""


@pytest.fixture
def proxy(flipbook):
    proxy = SlowProxy(flipbook.port)
    yield proxy
    proxy.close()


def new_session(flipbook):
    status, headers, body = flipbook.request("POST", "/uploads", b"")
    assert status == 201, (status, body[:300])
    return headers["Location"].rsplit("/", 1)[1]


def a_gif(seed):
    """12 frames of 40 ms, played once (no NETSCAPE2.0 extension): the player ends on frame 11."""
    data, frames = gifgen.make_gif(seed, size=(48, 36), frames=12, delays_cs=[4], loops=None)
    assert frames == 12
    return data


def events_of(page, element_id):
    return page.execute_script(EVENTS, element_id)


def test_the_player_follows_an_upload_to_the_stored_image(page, flipbook, proxy):
    data = a_gif(1601)
    sha = hashlib.sha256(data).hexdigest()
    upload_id = new_session(flipbook)
    proxy.serve("/follow.html", FOLLOW_PAGE.format(upload_id=upload_id))
    half = len(data) // 2
    with socket.create_connection(("127.0.0.1", flipbook.port), timeout=30) as uploader:
        uploader.sendall(f"PUT /uploads/{upload_id} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n".encode()
                         + data[:half])
        page.get(f"http://127.0.0.1:{proxy.port}/follow.html")
        # The frames in so far play, then the last of them is held: a stall waiting for the next.
        stall = wait_until(page, HELD_AT_THE_LAST_FRAME_IN, 15, "the stall at the last frame in")
        arrived = stall["detail"]["waitingFor"]
        assert 1 <= arrived < 12 and stall["detail"]["index"] == arrived - 1
        state = page.execute_script("const p = document.getElementById('player');"
                                    "return [p.uploading, p.stalled, p.paused, p.currentFrame, p.metadata.complete];")
        assert state == [True, True, False, arrived - 1, False]
        shown = [e["detail"]["index"] for e in events_of(page, "player") if e["type"] == "frame"]
        assert shown[-1] == arrived - 1 and sorted(set(shown)) == list(range(arrived)), shown
        # The rest of the body: the upload is stored, the player goes on and ends on its last frame.
        uploader.sendall(data[half:])
        assert uploader.recv(4096).startswith(b"HTTP/1.1 201")
    wait_until(page, "return window.__flipbook.events.some((e) => e.type === 'ended')", 15, "the end")
    state = page.execute_script("const p = document.getElementById('player');"
                                "return [p.uploading, p.currentFrame, p.metadata.id, p.metadata.frameCount, p.ended];")
    assert state == [False, 11, sha, 12, True]
    events = events_of(page, "player")
    shown = [e["detail"]["index"] for e in events if e["type"] == "frame"]
    play_at = next(i for i, e in enumerate(events) if e["type"] == "play")
    changes = [e["detail"]["index"] for e in events[play_at + 1:] if e["type"] == "frame"]
    assert changes == list(range(1, 12)), f"in order, nothing skipped: {shown}"
    progress = [e for e in events if e["type"] == "progress"]
    assert progress and progress[-1]["detail"] == {"frameCount": 12, "complete": True, "id": sha}
    # Frames past the cut came from the stored image.
    assert proxy.was_requested(f"/frames/{sha}/11")


def test_the_browser_page_plays_an_upload_while_it_goes_up(page, flipbook, proxy):
    data = a_gif(1602)
    sha = hashlib.sha256(data).hexdigest()
    base = f"http://127.0.0.1:{proxy.port}"
    page.get(base + "/")
    wait_until(page, "return document.querySelectorAll('#images li').length >= 3", message="the list")
    proxy.gate_bodies("PUT", "/uploads/", allowed=len(data) // 2)
    with tempfile.NamedTemporaryFile(suffix=".gif", delete=False) as f:
        f.write(data)
    try:
        page.find_element("id", "file").send_keys(f.name)
        wait_until(page, "return window.__flipbook.events.some((e) => e.id === 'upload-preview' && e.type === 'stall')",
                   15, "the preview's stall")
        # Half the file is in: the preview shows its frames, the upload has not finished.
        state = page.execute_script(
            "const p = document.getElementById('upload-preview'); const bar = document.getElementById('progress');"
            "return [p.hidden, p.uploading, p.getAttribute('src').startsWith('/uploads/'), bar.hidden, bar.dataset.done || ''];")
        assert state == [False, True, True, False, ""]
        assert any(e["type"] == "frame" for e in events_of(page, "upload-preview"))
        assert not page.execute_script("return !!document.querySelector(`#images li[data-id='${arguments[0]}']`)", sha)
        proxy.allow(None)
        wait_until(page, "return !!document.querySelector(`#images li[data-id='${arguments[0]}']`)", 15,
                   "the uploaded image in the list", sha)
        wait_until(page, "const p = document.getElementById('upload-preview');"
                         "return !p.uploading && p.metadata.id === arguments[0]", 15, "the preview on the stored image", sha)
        assert flipbook.json(f"/images/{sha}")["name"] == os.path.basename(f.name)
        assert "added" in page.find_element("id", "upload-status").text
    finally:
        os.unlink(f.name)
