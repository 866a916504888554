"""The soak's clients, all on one asyncio loop, and what they record.

Well-behaved clients (players, metadata pollers, `?t=` lookups, the uploader, the deleter, the
memory-pressure signal) record every request in the minute it ended: its kind, its latency, and
whether the answer was one it expected. A 5xx, an answer it did not expect, or a connection that
failed is an error. The two hostile clients (a pipelining client that never reads, slowloris
connections) record only how many connections the server made them open; the server is expected
to close them, and nothing they see counts as an error.
"""
import asyncio
import collections
import contextlib
import json
import random
import socket
import time

from benchlib.inputs import Generator

ADMIN_TOKEN = "soak-admin"


class Recorder:
    """Per-minute counts and latencies of the well-behaved requests."""

    def __init__(self, start):
        self.start = start
        self.minutes = collections.defaultdict(lambda: {
            "requests": 0, "errors": 0, "status5xx": 0, "connectionFailures": 0, "unexpected": 0,
            "latencyMs": collections.defaultdict(list), "statuses": collections.Counter()})
        self.error_samples = []
        self.hostile = collections.Counter()
        self.uploads = collections.Counter()

    def minute(self, now=None):
        return int(((now or time.monotonic()) - self.start) // 60)

    def record(self, kind, status, latency, expected):
        bucket = self.minutes[self.minute()]
        bucket["requests"] += 1
        bucket["statuses"][status] += 1
        bucket["latencyMs"][kind].append(latency * 1000)
        if status >= 500:
            bucket["status5xx"] += 1
        if status not in expected:
            bucket["errors"] += 1
            bucket["unexpected"] += 1
            self.sample(f"{kind}: status {status}, expected {sorted(expected)}")

    def failure(self, kind, error):
        bucket = self.minutes[self.minute()]
        bucket["requests"] += 1
        bucket["errors"] += 1
        bucket["connectionFailures"] += 1
        self.sample(f"{kind}: {type(error).__name__}: {error}")

    def sample(self, text):
        if len(self.error_samples) < 50:
            self.error_samples.append(f"minute {self.minute()}: {text}")


class Connection:
    """One keep-alive HTTP/1.1 connection of a well-behaved client.

    Like any well-behaved client, it does not reuse a connection that has been idle for longer
    than IDLE_REUSE_SECONDS, half the server's keep-alive timeout (`server.keepAliveTimeoutSeconds`,
    60 s by default): a request sent just as the server closes an idle connection fails through
    no fault of the server."""

    IDLE_REUSE_SECONDS = 30

    def __init__(self, port):
        self.port = port
        self.reader = self.writer = None
        self.last_used = 0.0

    async def request(self, method, path, body=b"", headers=None, timeout=60):
        """(status, headers dict with lower-case names, body). Reconnects when needed."""
        if self.writer is not None and time.monotonic() - self.last_used > self.IDLE_REUSE_SECONDS:
            self.close()
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = f"{method} {path} HTTP/1.1\r\nHost: soak\r\n"
        for name, value in (headers or {}).items():
            head += f"{name}: {value}\r\n"
        if body or method in ("POST", "PUT"):
            head += f"Content-Length: {len(body)}\r\n"
        self.writer.write(head.encode() + b"\r\n" + body)
        try:
            return await asyncio.wait_for(self._response(method), timeout)
        except BaseException:
            self.close()
            raise
        finally:
            self.last_used = time.monotonic()

    async def _response(self, method):
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                fields[name.strip().lower()] = value.strip()
        length = int(fields.get("content-length", "0"))
        body = await self.reader.readexactly(length) if length and method != "HEAD" else b""
        if fields.get("connection", "").lower() == "close":
            self.close()
        return status, fields, body

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


class Soak:
    """Runs every client until `end` (a loop.time() value)."""

    def __init__(self, port, library, recorder, end, workdir, seed=1, players=16, pollers=4,
                 time_clients=2, slowloris=8, upload_every=2.0, large_every=60, session_every=5.0):
        self.port = port
        self.library = library  # metadata of the images that stay for the whole run
        self.rec = recorder
        self.end = end
        self.rng = random.Random(seed)
        self.players = players
        self.pollers = pollers
        self.time_clients = time_clients
        self.slowloris_connections = slowloris
        self.upload_every = upload_every
        self.session_every = session_every
        self.generator = Generator(random.Random(seed + 1), workdir, large_every=large_every)
        self.uploaded = collections.OrderedDict()  # id -> (time its first frames were read, metadata)
        self.deleted = collections.deque(maxlen=50)
        # Held by the uploader while it writes and reads an image, and by the deleter while it
        # deletes one: a named image being replaced is never deleted under the uploader's feet.
        self.locks = collections.defaultdict(asyncio.Lock)

    def running(self):
        return asyncio.get_running_loop().time() < self.end

    async def timed(self, conn, kind, method, path, expected, **kw):
        t = time.monotonic()
        try:
            status, fields, body = await conn.request(method, path, **kw)
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError) as error:
            self.rec.failure(kind, error)
            return None
        self.rec.record(kind, status, time.monotonic() - t, expected)
        return status, fields, body

    # ---- well-behaved clients -------------------------------------------------------------

    async def player(self, index):
        """Plays a library image in real time for 15–45 s, then another; sometimes a new connection."""
        rng = random.Random(index * 7919)
        await asyncio.sleep(rng.uniform(0, 2))
        conn = Connection(self.port)
        loop = asyncio.get_running_loop()
        while self.running():
            meta = rng.choice(self.library)
            stamps = [f["timestampMs"] / 1000 for f in meta["frames"]]
            duration = meta["durationMs"] / 1000
            start = loop.time()
            stop = min(self.end, start + rng.uniform(15, 45))
            k = lap = 0
            while True:
                due = start + lap * duration + stamps[k]
                if due >= stop:
                    break
                if due > loop.time():
                    await asyncio.sleep(due - loop.time())
                answer = await self.timed(conn, "frame", "GET", f"/frames/{meta['id']}/{k}", {200})
                if answer and answer[0] == 200 and answer[2][:4] != b"\x89PNG":
                    self.rec.sample("frame: a 200 without a PNG")
                k += 1
                if k == len(stamps):
                    k, lap = 0, lap + 1
            if rng.random() < 0.5:
                conn.close()
        conn.close()

    async def poller(self, index):
        """Polls metadata with If-None-Match every second; the delay table every fifth time."""
        rng = random.Random(index * 104729)
        conn = Connection(self.port)
        etags = {}
        n = 0
        while self.running():
            await asyncio.sleep(1)
            n += 1
            recent = list(self.uploaded.items())[-20:]
            if recent and rng.random() < 0.3:
                image_id, _ = rng.choice(recent)
                expected = {200, 304, 404}  # an upload may be deleted meanwhile
            else:
                image_id = rng.choice(self.library)["id"]
                expected = {200, 304}
            headers = {"If-None-Match": etags[image_id]} if image_id in etags else {}
            answer = await self.timed(conn, "metadata", "GET", f"/images/{image_id}", expected, headers=headers)
            if answer and answer[0] == 200 and "etag" in answer[1]:
                etags[image_id] = answer[1]["etag"]
            if n % 5 == 0:
                await self.timed(conn, "metadata", "GET", f"/images/{image_id}/delays", expected - {304})
        conn.close()

    async def time_client(self, index):
        """The frame shown at a random time, four times a second."""
        rng = random.Random(index * 15485863)
        conn = Connection(self.port)
        while self.running():
            await asyncio.sleep(0.25)
            meta = rng.choice(self.library)
            t = rng.uniform(0, 3 * meta["durationMs"])
            answer = await self.timed(conn, "frame at t", "GET", f"/frames/{meta['id']}?t={t:.1f}", {200})
            if answer and answer[0] == 200 and "content-location" not in answer[1]:
                self.rec.sample("frame at t: no Content-Location")
        conn.close()

    async def uploader(self):
        """An upload every `upload_every` seconds from the generator's mix; a valid one is then
        asked for its first and last frames (the first-frame request of a new image). The
        deleter sees an image only once those are answered, so it never deletes one the uploader
        is still reading (a 49 MP first frame can take a while on a loaded machine)."""
        conn = Connection(self.port)
        loop = asyncio.get_running_loop()
        named = 0
        while self.running():
            await asyncio.sleep(self.upload_every)
            kind, data, expected = await loop.run_in_executor(None, self.generator.next)
            self.rec.uploads[kind] += 1
            name = None
            if kind.startswith("valid") and self.rng.random() < 0.2:
                named += 1
                name = f"soak-{named % 8}"  # named, replaced as it cycles
                path, method = f"/images/{name}", "PUT"
            else:
                path, method = "/images", "POST"
            async with self.locks[name] if name else contextlib.nullcontext():
                answer = await self.timed(conn, "upload", method, path, expected, body=data, timeout=300)
                if not answer or answer[0] not in (200, 201):
                    continue
                meta = json.loads(answer[2])
                image_id = meta["id"]
                if image_id in self.deleted:
                    self.deleted.remove(image_id)  # back: no longer a deleted image
                # A POST answered 200 is bytes that were there already (an image the deleter
                # may be removing right now); a new image (201), or a name, cannot go meanwhile.
                gone_ok = {404} if method == "POST" and answer[0] == 200 else set()
                for k in sorted({0, meta["frameCount"] - 1}):
                    await self.first_frame(conn, image_id, k, gone_ok)
                self.uploaded[image_id] = (loop.time(), meta)
                self.uploaded.move_to_end(image_id)

    async def session_uploader(self):
        """An upload session every `session_every` seconds (issue 23): a valid file from the
        generator sent in three parts with pauses while two readers wait on frames 0 and 1
        (`Prefer: wait=10`); every fourth session is cut off mid-body (a reader whose frame had not
        arrived gets 410) and
        every fourth is a body of random bytes (its readers get the uploader's 415)."""
        conn = Connection(self.port)
        loop = asyncio.get_running_loop()
        count = 0
        while self.running():
            await asyncio.sleep(self.session_every)
            count += 1
            ending = ("cut", "malformed", "valid", "valid")[count % 4]
            if ending == "malformed":
                data = bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(64, 4096)))
            else:
                data = (await loop.run_in_executor(None, self.generator.valid))[1]
            self.rec.uploads[f"session {ending}"] += 1
            created = await self.timed(conn, "upload session", "POST", "/uploads", {201})
            if not created or created[0] != 201:
                continue
            upload_id = json.loads(created[2])["uploadId"]
            # A frame whose bytes came before the cut is served (200); one after it gets 410.
            expected = {"cut": {200, 410}, "malformed": {415, 422}, "valid": {200, 303, 404}}[ending]
            readers = [asyncio.ensure_future(self.timed(Connection(self.port), "session frame", "GET",
                                                        f"/frames/{upload_id}/{k}", expected,
                                                        headers={"Prefer": "wait=10"}, timeout=30))
                       for k in (0, 1)]
            await asyncio.sleep(0.05)
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError as error:
                self.rec.failure("session upload", error)
                await asyncio.gather(*readers)
                continue
            t = time.monotonic()
            writer.write(f"PUT /uploads/{upload_id} HTTP/1.1\r\nHost: soak\r\nContent-Length: {len(data)}\r\n\r\n".encode())
            thirds = [0, len(data) // 3, 2 * len(data) // 3, len(data)]
            for part in range(3):
                if ending == "cut" and part == 2:
                    break
                writer.write(data[thirds[part]:thirds[part + 1]])
                await writer.drain()
                await asyncio.sleep(0.2)
            if ending == "cut":
                writer.close()
            else:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 300)
                    status = int(head.split(b" ", 2)[1])
                    self.rec.record("session upload", status, time.monotonic() - t,
                                    {200, 201} if ending == "valid" else {415, 422})
                except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError) as error:
                    self.rec.failure("session upload", error)
                writer.close()
            await asyncio.gather(*readers)

    async def first_frame(self, conn, image_id, k, also_expected=frozenset()):
        """GET a frame; a 429 (decode queue full) is retried after its Retry-After."""
        for _ in range(5):
            answer = await self.timed(conn, "first frame", "GET", f"/frames/{image_id}/{k}",
                                      {200, 429} | set(also_expected), timeout=300)
            if not answer or answer[0] != 429:
                return
            await asyncio.sleep(float(answer[1].get("retry-after", "1")))

    async def deleter(self):
        """Deletes uploads older than 60 s; asks for a deleted image now and then (404)."""
        conn = Connection(self.port)
        loop = asyncio.get_running_loop()
        auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        while self.running():
            await asyncio.sleep(5)
            for image_id, (when, _) in list(self.uploaded.items()):
                if loop.time() - when < 60:
                    break
                async with self.locks[image_id]:
                    entry = self.uploaded.get(image_id)
                    if entry is None or loop.time() - entry[0] < 60:
                        continue  # uploaded again (a name replaced) while the lock was held
                    del self.uploaded[image_id]
                    await self.timed(conn, "delete", "DELETE", f"/images/{image_id}", {204, 404}, headers=auth)
                    self.deleted.append(image_id)
                if not image_id.startswith("soak-"):
                    self.locks.pop(image_id, None)
            if self.deleted:
                gone = self.rng.choice(list(self.deleted))
                if not gone.startswith("soak-"):
                    await self.timed(conn, "deleted frame", "GET", f"/frames/{gone}/0", {404})

    async def pressure(self):
        """A memory-pressure warning every 20 s."""
        conn = Connection(self.port)
        auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        while self.running():
            await asyncio.sleep(20)
            await self.timed(conn, "pressure", "POST", "/admin/memory-pressure?level=warning", {200}, headers=auth)
        conn.close()

    # ---- hostile clients ------------------------------------------------------------------

    async def non_reader(self):
        """Pipelines GETs on one connection and never reads an answer; reconnects when the
        server closes it."""
        request = b"".join(f"GET /frames/{m['id']}/0 HTTP/1.1\r\nHost: soak\r\n\r\n".encode() for m in self.library)
        while self.running():
            self.rec.hostile["non-reader connections"] += 1
            sock = socket.socket()
            sock.setblocking(False)
            try:
                await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", self.port))
                while self.running():
                    try:
                        sent = sock.send(request)
                        self.rec.hostile["non-reader bytes sent"] += sent
                    except BlockingIOError:
                        await asyncio.sleep(0.2)  # its send buffer is full: the server stopped reading
                        continue
                    await asyncio.sleep(0)
            except OSError:
                self.rec.hostile["non-reader closed by server"] += 1
                await asyncio.sleep(1)
            finally:
                sock.close()

    async def slowloris(self, index):
        """Sends a request head one byte every 2 s; reconnects when the server gives up on it."""
        while self.running():
            self.rec.hostile["slowloris connections"] += 1
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.write(b"GET /healthz HTTP/1.1\r\nHost: soak\r\n")
                for byte in b"X-Slow: " + b"a" * 10000:
                    if not self.running():
                        break
                    try:
                        answer = await asyncio.wait_for(reader.read(4096), 2)
                        if answer or reader.at_eof():
                            break  # the server answered (408) or closed the connection
                    except asyncio.TimeoutError:
                        pass
                    writer.write(bytes([byte]))
                    await writer.drain()
                writer.close()
            except (OSError, asyncio.IncompleteReadError):
                pass
            self.rec.hostile["slowloris closed by server"] += 1
            await asyncio.sleep(0.5)

    async def run(self):
        tasks = [self.player(i) for i in range(self.players)]
        tasks += [self.poller(i) for i in range(self.pollers)]
        tasks += [self.time_client(i) for i in range(self.time_clients)]
        tasks += [self.uploader(), self.session_uploader(), self.deleter(), self.pressure(), self.non_reader()]
        tasks += [self.slowloris(i) for i in range(self.slowloris_connections)]
        await asyncio.gather(*tasks)
