"""The topology test's session phase: upload sessions through nginx. `POST /uploads` goes round
robin to any replica; the PUT, GET and frames of its id are hashed to one replica, which makes
the session when the first of them arrives (the replicas share FLIPBOOK_UPLOADS_KEY, see ENV).
Each session's body is streamed in two halves through nginx, and between them its progress and
its first frame are read through nginx: the frame must be served while the upload is still going
on (nginx streams session bodies), and be the finished image's frame 0.
"""
import collections
import hashlib
import json
import os
import socket
import time

from benchlib import gifgen

SESSIONS = 6
# One key for every replica, new each run.
ENV = {"FLIPBOOK_UPLOADS_KEY": os.urandom(32).hex()}


def start_put(port, path, length):
    """A connection that has sent the head of `PUT path` for `length` bytes."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=30)
    conn.sendall(f"PUT {path} HTTP/1.1\r\nHost: flipbook\r\nContent-Type: image/gif\r\n"
                 f"Content-Length: {length}\r\nConnection: close\r\n\r\n".encode())
    return conn


def read_response(conn):
    """The status and header fields of the response on `conn` (read to its close)."""
    data = b""
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    conn.close()
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in head[1:] if ":" in line)}
    return int(head[0].split()[1]), headers


def run(request, nginx, fails, summary):
    """Opens SESSIONS sessions through nginx and uploads through each, reading its first frame
    through nginx while the second half of its bytes has not been sent."""
    minted_by = collections.Counter()
    moved = 0
    during = 0
    latencies = []
    for k in range(SESSIONS):
        data, frames = gifgen.make_gif(2000 + k, size=(160, 120), frames=6)
        status, headers, body = request(nginx.port, "POST", "/uploads")
        fails.check(status == 201, f"session {k}: POST /uploads via nginx -> {status}, expected 201")
        if status != 201:
            continue
        upload_id = json.loads(body)["uploadId"]
        minter = headers.get("x-served-by")
        minted_by[minter] += 1
        half = len(data) // 2
        conn = start_put(nginx.port, f"/uploads/{upload_id}", len(data))
        conn.sendall(data[:half])
        # The first half holds frame 0 (6 frames of similar size): wait until the replica says so
        # and has all of the half (nginx may pass it on in more than one piece, so frame 0 can be
        # counted before the half's last bytes are in).
        started = time.monotonic()
        progress, owner = {}, None
        while time.monotonic() - started < 10:
            s, h, b = request(nginx.port, "GET", f"/uploads/{upload_id}")
            if s == 200:
                progress, owner = json.loads(b), h.get("x-served-by")
                if progress.get("frameCount", 0) >= 1 and progress.get("bytesReceived") == half:
                    break
            time.sleep(0.05)
        fails.check(progress.get("complete") is False and progress.get("frameCount", 0) >= 1,
                    f"session {k}: progress via nginx {progress!r}, expected frames before the end")
        fails.check(progress.get("bytesReceived") == half,
                    f"session {k}: {progress.get('bytesReceived')} bytes received, {half} sent")
        asked = time.monotonic()
        s, h, frame = request(nginx.port, "GET", f"/frames/{upload_id}/0")
        latencies.append(time.monotonic() - asked)
        ok = s == 200 and h.get("cache-control") == "no-store" and h.get("x-served-by") == owner
        during += ok
        fails.check(ok, f"session {k}: frame 0 during the upload -> {s} {h.get('cache-control')!r} "
                        f"from {h.get('x-served-by')!r}, expected 200 no-store from {owner!r}")
        conn.sendall(data[half:])
        stored, put_headers = read_response(conn)
        image_id = hashlib.sha256(data).hexdigest()
        fails.check(stored == 201 and put_headers.get("location") == f"/images/{image_id}",
                    f"session {k}: PUT via nginx -> {stored} {put_headers.get('location')!r}")
        fails.check(put_headers.get("x-served-by") == owner,
                    f"session {k}: PUT served by {put_headers.get('x-served-by')!r}, progress by {owner!r}")
        moved += owner is not None and owner != minter
        s, h, _ = request(nginx.port, "GET", f"/uploads/{upload_id}")
        fails.check(s == 303 and h.get("location") == f"/images/{image_id}",
                    f"session {k}: after the upload GET /uploads -> {s} {h.get('location')!r}")
        s, _, final = request(nginx.port, "GET", f"/frames/{image_id}/0")
        fails.check(s == 200 and final == frame, f"session {k}: the stored frame 0 differs from the one served during")
    print(f"  sessions: {SESSIONS} opened through nginx (minted by {dict(minted_by)}); "
          f"{moved} lived on another replica than the one that minted the id; frame 0 served during "
          f"the upload {during}/{SESSIONS} (slowest {max(latencies, default=0) * 1000:.0f} ms)", flush=True)
    summary["sessions"] = {"sessions": SESSIONS, "mintedBy": dict(minted_by), "livedElsewhere": moved,
                           "framesDuringUpload": during}
