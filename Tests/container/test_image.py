"""The image as a user runs it (issue 32, item 2): `podman run` with a read-only root file system,
a named volume at /data, no capabilities and no privilege gain, as the image's own user."""
import hashlib
import json
import socket
import threading
import time

import pytest

import engine
from benchlib import gifgen

pytestmark = pytest.mark.usefixtures("image")

READY_WITHIN_S = 2.0


@pytest.fixture
def served():
    """A hardened container on a fresh volume, published on a loopback port → (name, port, volume)."""
    container, vol, port = engine.name("image"), engine.volume(engine.name("data")), engine.free_port()
    engine.run_container(container, *engine.HARDENED, "-v", f"{vol}:/data", "-p", f"127.0.0.1:{port}:8080")
    yield container, port, vol
    engine.podman("rm", "-f", "-v", "-t", "0", container, check=False)


def test_the_image_user_is_not_root():
    """Fails on an image whose user is root (no USER, USER root, USER 0)."""
    user = engine.out("image", "inspect", "--format", "{{.Config.User}}", engine.IMAGE)
    assert user and user.split(":")[0] not in ("root", "0"), f"image user is {user!r}"
    uid = engine.out("run", "--rm", *engine.ULIMITS, "--entrypoint", "id", engine.IMAGE, "-u")
    assert uid != "0", "a container of the image runs as uid 0"


def test_ready_quickly_and_serves_everything(served):
    """/readyz within 2 s of the container's start; an upload, its frames, a rendition, a preview
    and a storyboard (and one of its sheets); the HEALTHCHECK passes."""
    container, port, _ = served
    started = time.monotonic()
    ready = engine.wait_ready(port, timeout=30)
    print(f"/readyz 200 {ready:.2f}s after `podman run -d` returned")
    assert ready <= READY_WITHIN_S, f"/readyz took {ready:.2f}s (> {READY_WITHIN_S}s)"
    assert time.monotonic() - started < 30

    data, frames = gifgen.make_gif(321, size=(96, 64), frames=6)
    image_id = hashlib.sha256(data).hexdigest()
    status, headers, body = engine.request(port, "POST", "/images", body=data, headers={"Content-Type": "image/gif"})
    assert status == 201, body
    assert headers["location"] == f"/images/{image_id}"
    assert json.loads(body)["frameCount"] == frames
    status, headers, body = engine.request(port, "GET", f"/frames/{image_id}/{frames - 1}")
    assert status == 200 and headers["content-type"] == "image/png" and body[:8] == b"\x89PNG\r\n\x1a\n"
    status, headers, body = engine.request(port, "GET", f"/frames/{image_id}/2?width=48&format=webp")
    assert status == 200 and headers["content-type"] == "image/webp" and body[8:12] == b"WEBP", (status, body[:200])
    status, headers, body = engine.request(port, "GET", f"/images/{image_id}/preview?width=48", timeout=120)
    assert status == 200 and headers["content-type"] == "image/webp" and b"ANIM" in body[:64], (status, body[:200])
    status, headers, body = engine.request(port, "GET", f"/images/{image_id}/storyboard?tile=32", timeout=120)
    assert status == 200, (status, body[:300])
    sheets = json.loads(body)["sheets"]
    assert sheets, body
    sheet = sheets[0]["url"] if isinstance(sheets[0], dict) else sheets[0]
    status, headers, body = engine.request(port, "GET", sheet)
    assert status == 200 and headers["content-type"].startswith("image/"), (sheet, status)
    # Library images (Samples/, read-only in the image) are served too.
    listing = engine.get_json(port, "/images")
    assert len(listing["images"]) >= 4, listing

    check = engine.podman("healthcheck", "run", container, check=False)
    assert check.returncode == 0, f"podman healthcheck run: {check.returncode} {check.stdout} {check.stderr}"


def test_data_survives_a_new_container_on_the_volume(served):
    container, port, vol = served
    engine.wait_ready(port, timeout=30)
    data, _ = gifgen.make_gif(654, size=(40, 40), frames=3)
    image_id = hashlib.sha256(data).hexdigest()
    assert engine.request(port, "POST", "/images", body=data)[0] == 201
    engine.podman("rm", "-f", "-v", "-t", "10", container)
    second, port2 = engine.name("image2"), engine.free_port()
    engine.run_container(second, *engine.HARDENED, "-v", f"{vol}:/data", "-p", f"127.0.0.1:{port2}:8080")
    try:
        engine.wait_ready(port2, timeout=30)
        status, _, body = engine.request(port2, "GET", f"/images/{image_id}")
        assert status == 200, (status, body[:200])
        assert engine.request(port2, "GET", f"/frames/{image_id}/2")[0] == 200
    finally:
        engine.podman("rm", "-f", "-v", "-t", "0", second, check=False)


def test_sigterm_finishes_the_request_in_flight_and_exits_0(served):
    """`podman stop` (SIGTERM) while an upload's body is half sent: the upload is answered 201
    once its body is complete, and the container exits 0 within its grace period. Fails on a
    server that exits non-zero, or drops the request, on SIGTERM."""
    container, port, _ = served
    engine.wait_ready(port, timeout=30)
    data, _ = gifgen.make_gif(987, size=(64, 64), frames=4)
    half = len(data) // 2
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(f"POST /images HTTP/1.1\r\nHost: x\r\nContent-Type: image/gif\r\nContent-Length: {len(data)}\r\n"
                 f"Connection: close\r\n\r\n".encode() + data[:half])
    time.sleep(0.3)
    grace = 30
    stopper = {}

    def stop():
        begun = time.monotonic()
        stopper["result"] = engine.podman("stop", "-t", str(grace), container, check=False)
        stopper["seconds"] = time.monotonic() - begun

    thread = threading.Thread(target=stop)
    thread.start()
    time.sleep(1.0)  # SIGTERM delivered; the server is draining
    sock.sendall(data[half:])
    answer = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        answer += chunk
    sock.close()
    thread.join(grace + 30)
    status_line = answer.split(b"\r\n", 1)[0]
    assert status_line.startswith(b"HTTP/1.1 201"), answer[:300]
    assert stopper["result"].returncode == 0, stopper["result"].stderr
    assert stopper["seconds"] < grace, f"stop took {stopper['seconds']:.1f}s: killed at the end of the grace period"
    assert engine.inspect(container, "{{.State.ExitCode}}") == "0"
    assert engine.inspect(container, "{{.State.OOMKilled}}") == "false"
