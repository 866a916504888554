"""A small HTTP/1.1 proxy in front of a Flipbook server that can hold chosen requests.

Tests load the pages through it (same origin for everything) and tell it which paths to hold:
a held request is forwarded only when the test releases it, so a test can make a frame arrive
late and watch what the player does meanwhile. It can also gate request bodies: a gated
upload's bytes go upstream only as far as the test allows, so a test can watch what happens while
an upload is part-way in. Everything else passes straight through.
"""
import http.client
import http.server
import socketserver
import threading
import time


class SlowProxy:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self._lock = threading.Lock()
        self._holds = {}          # path → threading.Event (set = released)
        self._pages = {}          # path → HTML the proxy answers itself (a page of another origin)
        self.requested = []       # every path asked for, in order
        self.released_at = {}     # path → monotonic time its answer went out
        self._gate = None         # (method, path prefix) of request bodies forwarded as allowed
        self._allowed = None      # bytes of a gated body allowed upstream (None: all)
        self.forwarded = 0        # bytes of the gated body sent upstream so far
        self._gate_changed = threading.Condition(self._lock)
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _forward(self):
                path = self.path
                with proxy._lock:
                    proxy.requested.append(path)
                    hold = proxy._holds.get(path)
                    page = proxy._pages.get(path)
                if page is not None:
                    body = page.encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if hold is not None:
                    hold.wait(timeout=120)
                length = int(self.headers.get("Content-Length") or 0)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("connection", "keep-alive", "proxy-connection", "host")}
                upstream = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=120)
                with proxy._lock:
                    gated = proxy._gate is not None and self.command == proxy._gate[0] and path.startswith(proxy._gate[1])
                if gated:
                    upstream.putrequest(self.command, path)
                    for name, value in headers.items():
                        upstream.putheader(name, value)
                    upstream.endheaders()
                    proxy._forward_gated(self.rfile, upstream, length)
                else:
                    body = self.rfile.read(length) if length else None
                    upstream.request(self.command, path, body=body, headers=headers)
                response = upstream.getresponse()
                data = response.read()
                self.send_response(response.status, response.reason)
                for name, value in response.getheaders():
                    if name.lower() not in ("connection", "keep-alive", "transfer-encoding", "content-length",
                                            "date", "server"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                upstream.close()
                with proxy._lock:
                    proxy.released_at[path] = time.monotonic()

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = _forward

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def serve(self, path, html):
        """Answers `path` with `html` itself instead of forwarding it."""
        with self._lock:
            self._pages[path] = html

    def hold(self, path):
        """Requests for `path` wait until `release(path)`."""
        with self._lock:
            self._holds[path] = threading.Event()

    def release(self, path):
        with self._lock:
            event = self._holds.pop(path, None)
        if event:
            event.set()

    def gate_bodies(self, method, prefix, allowed=0):
        """Bodies of `method` requests to paths starting with `prefix` go upstream only as far as
        `allow()` lets them (`allowed` bytes to begin with)."""
        with self._lock:
            self._gate = (method, prefix)
            self._allowed = allowed
            self.forwarded = 0

    def allow(self, count=None):
        """Lets the gated body go upstream up to `count` bytes in all (None: the rest)."""
        with self._gate_changed:
            self._allowed = count
            self._gate_changed.notify_all()

    def _forward_gated(self, source, upstream, length):
        sent = 0
        while sent < length:
            with self._gate_changed:
                self._gate_changed.wait_for(lambda: self._allowed is None or self._allowed > sent, timeout=120)
                room = length - sent if self._allowed is None else self._allowed - sent
            data = source.read(min(room, length - sent, 65536))
            if not data:
                break
            upstream.send(data)
            sent += len(data)
            with self._lock:
                self.forwarded = sent

    def was_requested(self, path):
        with self._lock:
            return path in self.requested

    def close(self):
        with self._gate_changed:
            holds = list(self._holds.values())
            self._holds.clear()
            self._allowed = None
            self._gate_changed.notify_all()
        for event in holds:
            event.set()
        self._server.shutdown()
        self._server.server_close()
