#!/usr/bin/env python3
"""A stand-in for `flipbook serve`, for dry runs of the topology harness only.

`scripts/topology-test.sh --fake` runs the whole topology test against three of these instead of
the real service, to check the harness, the nginx configuration and the failure detection without
a Swift build. It speaks just enough of the HTTP API: POST /images, GET /images, GET /images/{id},
GET /frames/{id}/{index}, GET /frames/{id}?t=, /healthz, /readyz, X-Served-By, X-Request-ID, a
shared data directory, and SIGTERM drain. It decodes nothing: a "frame" is a few bytes.

`--misbehave` makes it break the contract in one way the harness must catch:
  no-served-by   never sends X-Served-By
  no-shared-dir  keeps uploads in memory only (other replicas cannot see them)
  ignore-term    keeps running on SIGTERM (no drain)
  flaky          answers 500 to one frame request in 50
"""
import argparse
import hashlib
import json
import os
import signal
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


def gif_frame_count(data):
    """Counts image descriptors by walking GIF blocks."""
    if data[:6] not in (b"GIF87a", b"GIF89a"):
        return None
    flags = data[10]
    pos = 13 + (3 * (2 << (flags & 7)) if flags & 0x80 else 0)
    count = 0
    while pos < len(data):
        block = data[pos]
        if block == 0x3B:
            break
        if block == 0x21:
            pos += 2
        elif block == 0x2C:
            lflags = data[pos + 9]
            pos += 10 + (3 * (2 << (lflags & 7)) if lflags & 0x80 else 0) + 1
            count += 1
        else:
            return None
        while pos < len(data) and data[pos] != 0:
            pos += data[pos] + 1
        pos += 1
    return count


class State:
    def __init__(self, args):
        self.args = args
        self.draining = False
        self.inflight = 0
        self.lock = threading.Lock()
        self.memory = {}
        self.requests = 0


def make_handler(state):
    args = state.args

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            pass

        def _path_for(self, image_id):
            return os.path.join(args.data_dir, "fake-images", image_id)

        def _load(self, image_id):
            if args.misbehave == "no-shared-dir":
                return state.memory.get(image_id)
            try:
                with open(self._path_for(image_id), "rb") as f:
                    return f.read()
            except OSError:
                return None

        def _send(self, status, body=b"", ctype="application/json", extra=None):
            request_id = self.headers.get("X-Request-ID") or uuid.uuid4().hex
            client = self.client_address[0]
            forwarded = self.headers.get("X-Forwarded-For")
            if forwarded and client in args.trusted:
                # The nearest address that is not one of our proxies.
                for hop in reversed([h.strip() for h in forwarded.split(",") if h.strip()]):
                    client = hop
                    if hop not in args.trusted:
                        break
            sys.stderr.write(json.dumps({"msg": "request", "requestId": request_id, "client": client,
                                         "method": self.command, "path": self.path, "status": status}) + "\n")
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Request-ID", request_id)
            if args.misbehave != "no-served-by":
                self.send_header("X-Served-By", args.instance_name)
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            if state.draining:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(body)

        def _problem(self, status, title):
            self._send(status, json.dumps({"type": "about:blank", "title": title, "status": status}).encode(),
                       "application/problem+json")

        def _begin(self):
            with state.lock:
                state.inflight += 1
                state.requests += 1

        def _end(self):
            with state.lock:
                state.inflight -= 1

        def do_GET(self):
            self._begin()
            try:
                self._get()
            finally:
                self._end()

        def do_POST(self):
            self._begin()
            try:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                url = urlsplit(self.path)
                if url.path != "/images":
                    return self._problem(404, "Not Found")
                count = gif_frame_count(body)
                if not count:
                    return self._problem(415, "Unsupported Media Type")
                image_id = hashlib.sha256(body).hexdigest()
                existed = self._load(image_id) is not None
                if args.misbehave == "no-shared-dir":
                    state.memory[image_id] = body
                else:
                    path = self._path_for(image_id)
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    tmp = f"{path}.{os.getpid()}.tmp"
                    with open(tmp, "wb") as f:
                        f.write(body)
                    os.replace(tmp, path)
                meta = json.dumps({"id": image_id, "format": "gif", "frameCount": count}).encode()
                self._send(200 if existed else 201, meta, extra={"Location": f"/images/{image_id}"})
            finally:
                self._end()

        def _get(self):
            url = urlsplit(self.path)
            parts = [p for p in url.path.split("/") if p]
            if url.path == "/healthz":
                return self._send(200, b'{"status":"ok"}')
            if url.path == "/readyz":
                if state.draining:
                    return self._problem(503, "Draining")
                return self._send(200, b'{"status":"ready"}')
            if url.path == "/images":
                folder = os.path.join(args.data_dir, "fake-images")
                names = sorted(n for n in os.listdir(folder) if not n.endswith(".tmp")) if os.path.isdir(folder) else []
                return self._send(200, json.dumps({"images": names, "next": None}).encode())
            if len(parts) >= 2 and parts[0] in ("images", "frames"):
                data = self._load(parts[1])
                if data is None:
                    return self._problem(404, "Not Found")
                count = gif_frame_count(data)
                if parts[0] == "images" and len(parts) == 2:
                    return self._send(200, json.dumps({"id": parts[1], "frameCount": count}).encode())
                if parts[0] == "frames":
                    if len(parts) == 3:
                        index = int(parts[2]) if parts[2].isdigit() else -1
                    else:
                        t = int(parse_qs(url.query).get("t", ["0"])[0])
                        index = (t // 100) % count
                    if not 0 <= index < count:
                        return self._problem(404, "Not Found")
                    if args.misbehave == "flaky" and state.requests % 50 == 0:
                        return self._problem(500, "Flaky")
                    time.sleep(0.002)
                    return self._send(200, b"\x89PNG fake frame %d" % index, "image/png",
                                      {"Content-Location": f"/frames/{parts[1]}/{index}"})
            return self._problem(404, "Not Found")

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["serve"])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--data-dir", default=os.environ.get("FLIPBOOK_STORAGE_DATADIR", "/data"))
    ap.add_argument("--instance-name", default=os.environ.get("FLIPBOOK_SERVER_INSTANCENAME", socket.gethostname()))
    ap.add_argument("--misbehave", default=os.environ.get("FAKE_MISBEHAVE", ""))
    args = ap.parse_args()
    args.trusted = [t.split("/")[0] for t in os.environ.get("FLIPBOOK_SERVER_TRUSTEDPROXIES", "").split(",") if t]
    drain_timeout = float(os.environ.get("FLIPBOOK_SERVER_DRAINTIMEOUTSECONDS", "20"))

    state = State(args)
    server = ThreadingHTTPServer((args.host, args.port), make_handler(state))
    server.daemon_threads = True

    def on_term(signum, frame):
        if args.misbehave == "ignore-term":
            return
        state.draining = True

        def drain():
            server.shutdown()  # stop accepting; in-flight handler threads keep running
            deadline = time.monotonic() + drain_timeout
            while state.inflight and time.monotonic() < deadline:
                time.sleep(0.01)
            os._exit(0)
        threading.Thread(target=drain, daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    server.serve_forever()
    server.server_close()
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
