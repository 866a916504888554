"""Conformance cases of upload sessions (`/uploads`), for conformance.py: a session created, its
body sent in two halves over one socket with reads in between (progress, a frame, a wait that
runs out), the alias, a malformed body, unknown ids."""

import socket
import time


def upload_session_server_checks(c, port, samples, request, raw_response):
    """`request(port, method, target, body, headers)` and `raw_response(sock)` are conformance.py's."""
    name, data = next((n, d) for n, d in samples.items() if n.endswith(".gif"))
    created = request(port, "POST", "/uploads")
    c.conforms("POST /uploads → 201", "POST", "/uploads", created, 201)
    if created.status != 201:
        return
    upload_id = created.json()["uploadId"]
    c.expect("POST /uploads: Location", created.header("location") == f"/uploads/{upload_id}")
    empty = request(port, "GET", f"/uploads/{upload_id}")
    c.conforms("GET /uploads/{id} before the body → 200", "GET", "/uploads/{uploadId}", empty, 200)

    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"PUT /uploads/{upload_id} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n".encode())
        half = len(data) * 2 // 3
        s.sendall(data[:half])
        for _ in range(100):
            progress = request(port, "GET", f"/uploads/{upload_id}")
            if progress.status == 200 and progress.json().get("bytesReceived") == half:
                break
            time.sleep(0.02)
        c.conforms(f"GET /uploads/{{id}} with {half} of {len(data)} bytes of {name} → 200", "GET", "/uploads/{uploadId}",
                   progress, 200)
        frames = progress.json().get("frameCount", 0)
        c.expect("upload progress: some frames, not all", 0 < frames, f"frameCount {frames}")
        frame = request(port, "GET", f"/frames/{upload_id}/0")
        c.conforms("GET /frames/{uploadId}/0 while receiving → 200", "GET", "/frames/{id}/{index}", frame, 200)
        c.expect("frame while receiving: no-store", frame.header("cache-control") == "no-store")
        late = request(port, "GET", f"/frames/{upload_id}/999", headers={"Prefer": "wait=0"})
        c.conforms("GET /frames/{uploadId}/999, Prefer: wait=0 → 503", "GET", "/frames/{id}/{index}", late, 503)
        s.sendall(data[half:])
        done = raw_response(s)
    c.conforms("PUT /uploads/{id} → 201", "PUT", "/uploads/{uploadId}", done, 201)
    finished = request(port, "GET", f"/frames/{done.json()['id']}/0") if done.status == 201 else None
    c.expect("the frame served while receiving is the stored image's", finished is not None and finished.body == frame.body)
    c.conforms("GET /uploads/{id} after → 303", "GET", "/uploads/{uploadId}", request(port, "GET", f"/uploads/{upload_id}"), 303)
    c.conforms("GET /frames/{uploadId}/0 after → 303", "GET", "/frames/{id}/{index}",
               request(port, "GET", f"/frames/{upload_id}/0"), 303)
    c.conforms("PUT /uploads/{id} again → 409", "PUT", "/uploads/{uploadId}",
               request(port, "PUT", f"/uploads/{upload_id}", data), 409)

    junk_id = request(port, "POST", "/uploads").json()["uploadId"]
    c.conforms("PUT /uploads/{id} not an image → 415", "PUT", "/uploads/{uploadId}",
               request(port, "PUT", f"/uploads/{junk_id}", b"not an image at all"), 415)
    c.conforms("GET /uploads/{id} after a malformed body → 422", "GET", "/uploads/{uploadId}",
               request(port, "GET", f"/uploads/{junk_id}"), 422)
    c.conforms("GET /uploads/{unknown} → 404", "GET", "/uploads/{uploadId}", request(port, "GET", "/uploads/" + "0" * 32), 404)
    c.conforms("PUT /uploads/{unknown} → 404", "PUT", "/uploads/{uploadId}", request(port, "PUT", "/uploads/nope", data), 404)
