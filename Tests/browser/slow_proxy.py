"""A small HTTP/1.1 proxy in front of a Flipbook server that can hold chosen requests.

Tests load the pages through it (same origin for everything) and tell it which paths to hold:
a held request is forwarded only when the test releases it, so a test can make a frame arrive
late and watch what the player does meanwhile. Everything else passes straight through.
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
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("connection", "keep-alive", "proxy-connection", "host")}
                upstream = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=120)
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

    def was_requested(self, path):
        with self._lock:
            return path in self.requested

    def close(self):
        with self._lock:
            holds = list(self._holds.values())
            self._holds.clear()
        for event in holds:
            event.set()
        self._server.shutdown()
        self._server.server_close()
