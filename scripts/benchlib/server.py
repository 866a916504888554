"""A `flipbook serve` process for benchmarks: started on a free loopback port with a data
directory of its own, talked to over HTTP/1.1, stopped; and the release binary they run
(.build-playback, or $FLIPBOOK_BIN)."""
import http.client
import json
import os
import subprocess
import sys
import time

from benchlib import REPO, log
from benchlib.ports import free_port
from benchlib.process import proc_memory

BINARY = os.environ.get("FLIPBOOK_BIN") or os.path.join(REPO, ".build-playback", "release", "flipbook")


def build():
    """The release flipbook binary, built into .build-playback (skipped with SKIP_BUILD=1)."""
    if os.environ.get("SKIP_BUILD") == "1" and os.path.exists(BINARY):
        log(f"bench: SKIP_BUILD=1, using {BINARY}")
        return BINARY
    log("bench: building flipbook (release, .build-playback)")
    subprocess.run(["timeout", "1800", "swift", "build", "-c", "release", "--scratch-path", ".build-playback",
                    "--product", "flipbook"], cwd=REPO, check=True, stdout=sys.stderr)
    return BINARY


class Server:
    """One `flipbook serve` process on 127.0.0.1 with a data directory of its own."""

    def __init__(self, data_dir, budget=None, extra=(), port=None, log_path=None):
        self.port = port or free_port()
        self.data_dir = data_dir
        os.makedirs(data_dir, exist_ok=True)
        args = [BINARY, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--data-dir", data_dir,
                "--log-level", "warning", "--set", "log.accessLog=false"]
        if budget is not None:
            args += ["--cache-max-bytes", str(int(budget))]
        args += list(extra)
        self.args = args
        self.log_file = open(log_path or os.path.join(data_dir, "..", f"server-{self.port}.log"), "ab")
        self.proc = subprocess.Popen(args, cwd=REPO, stdout=self.log_file, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"flipbook serve exited with {self.proc.returncode}; see {self.log_file.name}")
            try:
                status, _, _ = self.request("GET", "/healthz", timeout=1)
                if status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("flipbook serve did not answer /healthz within 30 s")
            time.sleep(0.05)

    def request(self, method, path, body=None, timeout=60, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            conn.close()

    def json(self, path):
        status, _, body = self.request("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body[:200]!r}")
        return json.loads(body)

    def upload(self, path):
        """POST the file; returns (metadata, seconds from first byte sent to the whole answer)."""
        with open(path, "rb") as f:
            data = f.read()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        try:
            t = time.perf_counter()
            conn.request("POST", "/images", body=data, headers={"Content-Type": "application/octet-stream"})
            r = conn.getresponse()
            body = r.read()
            elapsed = time.perf_counter() - t
        finally:
            conn.close()
        if r.status not in (200, 201):
            raise RuntimeError(f"upload of {path}: {r.status} {body[:300]!r}")
        return json.loads(body), elapsed

    def wait_for_decodes(self, poll=0.5, limit=600):
        """Waits until the cache's decode-ahead has stopped (no new decodes between two polls and
        nothing queued)."""
        last = -1
        for _ in range(limit):
            st = self.json("/stats")
            if st["decodes"] == last and st["queueDepth"] == 0:
                return
            last = st["decodes"]
            time.sleep(poll)

    def memory(self):
        return proc_memory(self.pid)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()
