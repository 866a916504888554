"""A bounded mixed load on one published loopback port, for the limits test: real-time players at
mixed renditions, preview builders and uploaders, each a thread with a keep-alive connection.

Every answer is counted by status. The only 5xx the service documents under load are 503s with
`Retry-After` (a preview or storyboard still being built past `derived.maxWaitSeconds`; the
connection limit); any other 5xx is an error (`unexpected_5xx`).
"""
import collections
import hashlib
import http.client
import random
import threading
import time

from benchlib import gifgen

# Renditions a player asks for: full-size PNG, scaled PNG, lossless and lossy WebP.
RENDITIONS = ["", "?width=320", "?width=160&format=webp", "?width=240&format=webp&quality=70", "?width=120"]
PREVIEW_WIDTHS = [64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.statuses = collections.Counter()
        self.by_kind = collections.defaultdict(collections.Counter)
        self.unexpected_5xx = []
        self.connection_errors = []

    def record(self, kind, status, headers):
        with self.lock:
            self.statuses[status] += 1
            self.by_kind[kind][status] += 1
            documented = status == 503 and "retry-after" in headers
            if status >= 500 and not documented:
                self.unexpected_5xx.append(f"{kind}: {status}")

    def error(self, kind, error):
        with self.lock:
            self.connection_errors.append(f"{kind}: {type(error).__name__}: {error}")


class Client:
    """One keep-alive connection; reconnects after an error or a `Connection: close`."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def request(self, method, path, body=None, headers=None, timeout=120):
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            self.conn.request(method, path, body=body, headers=headers or {})
            resp = self.conn.getresponse()
            data = resp.read()
            headers = {k.lower(): v for k, v in resp.getheaders()}
            if headers.get("connection", "").lower() == "close":
                self.close()
            return resp.status, headers, data
        except Exception:
            self.close()
            raise

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def make_animations(count, size, frames, seed=5000):
    """The bytes of `count` distinct looping animations of `frames` full-canvas frames of `size`,
    shown for 40, 50 and 80 ms in turn."""
    return [gifgen.make_gif(seed + k, size=size, frames=frames, delays_cs=(4, 5, 8))[0] for k in range(count)]


class MixedLoad:
    """Players, preview builders and uploaders against `port` for `seconds`."""

    def __init__(self, port, image_ids, seconds, players=8, previewers=2, uploaders=2, seed=1):
        self.port = port
        self.images = image_ids  # id → frame count
        self.seconds = seconds
        self.counts = (players, previewers, uploaders)
        self.stats = Stats()
        self.rng = random.Random(seed)
        self.upload_seed = 900000 + seed * 1000
        self.uploaded = 0
        self.previews = 0
        self.frames = 0
        self.lock = threading.Lock()

    def run(self):
        deadline = time.monotonic() + self.seconds
        players, previewers, uploaders = self.counts
        threads = [threading.Thread(target=self.player, args=(deadline, k)) for k in range(players)]
        threads += [threading.Thread(target=self.previewer, args=(deadline, k)) for k in range(previewers)]
        threads += [threading.Thread(target=self.uploader, args=(deadline, k)) for k in range(uploaders)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(self.seconds + 180)
        return self.stats

    def _call(self, client, kind, method, path, **kw):
        try:
            status, headers, body = client.request(method, path, **kw)
        except (OSError, http.client.HTTPException) as error:
            self.stats.error(kind, error)
            time.sleep(0.2)
            return None, {}, b""
        self.stats.record(kind, status, headers)
        return status, headers, body

    def player(self, deadline, k):
        """Plays one animation at one rendition in real time (each frame for its delay), then
        picks another."""
        rng = random.Random(k)
        client = Client(self.port)
        ids = sorted(self.images)
        while time.monotonic() < deadline:
            image_id = rng.choice(ids)
            rendition = rng.choice(RENDITIONS)
            for index in range(self.images[image_id]):
                if time.monotonic() >= deadline:
                    break
                status, headers, _ = self._call(client, "frame", "GET", f"/frames/{image_id}/{index}{rendition}")
                with self.lock:
                    self.frames += 1
                if status == 429:
                    time.sleep(float(headers.get("retry-after", "1")))
                    continue
                time.sleep(int(headers.get("x-frame-delay-ms", "50")) / 1000)
        client.close()

    def previewer(self, deadline, k):
        """Asks for animated WebP previews at widths not yet built, and storyboards."""
        rng = random.Random(100 + k)
        client = Client(self.port)
        ids = sorted(self.images)
        while time.monotonic() < deadline:
            image_id = rng.choice(ids)
            if rng.random() < 0.25:
                path = f"/images/{image_id}/storyboard?tile={rng.choice([48, 64, 80])}"
                kind = "storyboard"
            else:
                path = f"/images/{image_id}/preview?width={rng.choice(PREVIEW_WIDTHS)}"
                kind = "preview"
            status, headers, _ = self._call(client, kind, "GET", path, timeout=180)
            with self.lock:
                self.previews += 1
            if status in (429, 503):
                time.sleep(float(headers.get("retry-after", "1")))
        client.close()

    def uploader(self, deadline, k):
        """Uploads new animations (never the same bytes twice) and reads one frame of each."""
        client = Client(self.port)
        n = 0
        while time.monotonic() < deadline:
            n += 1
            data, frames = gifgen.make_gif(self.upload_seed + k * 100000 + n, size=(160, 120), frames=8)
            status, headers, _ = self._call(client, "upload", "POST", "/images", body=data,
                                            headers={"Content-Type": "image/gif"})
            if status in (200, 201):
                with self.lock:
                    self.uploaded += 1
                image_id = hashlib.sha256(data).hexdigest()
                self._call(client, "uploaded frame", "GET", f"/frames/{image_id}/{frames - 1}?width=80")
            elif status in (429, 503):
                time.sleep(float(headers.get("retry-after", "1")))
        client.close()
