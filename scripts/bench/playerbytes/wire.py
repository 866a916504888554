"""A byte-counting TCP relay in front of a Flipbook server: the browser talks HTTP/1.1 to it, it
passes every byte on unchanged both ways, and it splits what the server sends into responses
(status line and headers, then the body by Content-Length or chunked framing) matched in order
with the requests of the same connection (browsers do not pipeline). So each response's size is
exactly what crossed the wire above TCP: its header bytes and its body bytes as the server wrote
them.

    relay = CountingRelay(upstream_port)
    ... browser loads http://127.0.0.1:{relay.port}/… ...
    relay.responses()   # [Response(method, target, status, head_bytes, body_bytes), …]
"""
import collections
import socket
import threading

Response = collections.namedtuple("Response", "method target status head_bytes body_bytes")


class _Framer:
    """Splits one direction of an HTTP/1.1 byte stream into messages; `on_message(head, body_bytes)`
    is called for each complete one. `body_length(head)` returns the body's framing: an int,
    'chunked', or 'close' (until the connection closes)."""

    def __init__(self, body_length, on_message):
        self.body_length = body_length
        self.on_message = on_message
        self.buffer = bytearray()
        self.head = None         # the head being read the body of
        self.remaining = 0       # body bytes still to come (identity framing)
        self.mode = None         # None (reading a head), 'length', 'chunked', 'close'
        self.body = 0
        self.chunk_state = "size"  # chunked: 'size', 'data', 'data-crlf', 'trailer'

    def feed(self, data):
        self.buffer += data
        while True:
            if self.mode is None:
                end = self.buffer.find(b"\r\n\r\n")
                if end < 0:
                    return
                self.head = bytes(self.buffer[:end + 4])
                del self.buffer[:end + 4]
                framing = self.body_length(self.head)
                self.body = 0
                if framing == 0:
                    self._done()
                elif framing == "chunked":
                    self.mode, self.chunk_state = "chunked", "size"
                elif framing == "close":
                    self.mode = "close"
                else:
                    self.mode, self.remaining = "length", framing
            elif self.mode == "length":
                take = min(self.remaining, len(self.buffer))
                del self.buffer[:take]
                self.body += take
                self.remaining -= take
                if self.remaining:
                    return
                self._done()
            elif self.mode == "close":
                self.body += len(self.buffer)
                self.buffer.clear()
                return
            elif not self._chunked():
                return

    def _chunked(self):
        """Advances through chunked framing; False when more bytes are needed."""
        while True:
            if self.chunk_state in ("size", "trailer"):
                end = self.buffer.find(b"\r\n")
                if end < 0:
                    return False
                line = bytes(self.buffer[:end])
                del self.buffer[:end + 2]
                self.body += end + 2
                if self.chunk_state == "trailer":
                    if not line:
                        self._done()
                        return True
                    continue
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.chunk_state = "trailer"
                else:
                    self.chunk_state, self.remaining = "data", size + 2  # the data and its CRLF
            else:
                take = min(self.remaining, len(self.buffer))
                del self.buffer[:take]
                self.body += take
                self.remaining -= take
                if self.remaining:
                    return False
                self.chunk_state = "size"

    def _done(self):
        head, body = self.head, self.body
        self.mode, self.head, self.body = None, None, 0
        self.on_message(head, body)

    def close(self):
        if self.mode == "close" and self.head is not None:
            self._done()


def _header(head, name):
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip()
    return None


class CountingRelay:
    """Listens on a free loopback port and relays every connection to 127.0.0.1:`upstream_port`."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self._lock = threading.Lock()
        self._responses = []
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def responses(self):
        with self._lock:
            return list(self._responses)

    def reset(self):
        with self._lock:
            self._responses.clear()

    def close(self):
        self._closed = True
        try:
            self._listener.close()
        except OSError:
            pass

    def _accept(self):
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            requests = collections.deque()
            lock = threading.Lock()

            def request_length(head):
                length = _header(head, b"content-length")
                if (_header(head, b"transfer-encoding") or b"").lower().endswith(b"chunked"):
                    return "chunked"
                return int(length) if length else 0

            def on_request(head, _body, requests=requests, lock=lock):
                method, target = head.split(b"\r\n", 1)[0].split(b" ")[:2]
                with lock:
                    requests.append((method.decode(), target.decode("latin-1")))

            def response_length(head, requests=requests, lock=lock):
                status = int(head.split(b" ", 2)[1])
                with lock:
                    method = requests[0][0] if requests else "GET"
                if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
                    return 0
                if (_header(head, b"transfer-encoding") or b"").lower().endswith(b"chunked"):
                    return "chunked"
                length = _header(head, b"content-length")
                return int(length) if length is not None else "close"

            def on_response(head, body, requests=requests, lock=lock):
                status = int(head.split(b" ", 2)[1])
                if 100 <= status < 200:
                    return  # an interim answer: the request's real one follows
                with lock:
                    method, target = requests.popleft() if requests else ("?", "?")
                with self._lock:
                    self._responses.append(Response(method, target, status, len(head), body))

            up = _Framer(request_length, on_request)
            down = _Framer(response_length, on_response)
            threading.Thread(target=self._pump, args=(client, upstream, up), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, down), daemon=True).start()

    @staticmethod
    def _pump(source, sink, framer):
        try:
            while True:
                data = source.recv(1 << 16)
                if not data:
                    break
                # Parsed before it is passed on: a response is counted before the browser has it.
                framer.feed(data)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            framer.close()
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            source.close()
