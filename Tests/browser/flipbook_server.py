"""A `flipbook serve` of its own for the browser tests (conftest.py), the colour check
(colour_check.py, which runs without the conftest) and the OpenAPI conformance cases
(Tests/openapi/conformance.py): a temporary work directory for its data and log, a free loopback
port (`--port 0`, read back from the log), plain HTTP helpers, and `stop()`, which removes it all
again."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request


def wait_for_port(log_path, process, timeout=60):
    """The port a starting server logs that it listens on (RuntimeError with its log if it exits
    or says nothing within `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            match = re.search(r"port=(\d+) .*HTTP server listening", f.read())
        if match:
            return int(match.group(1))
        if process.poll() is not None:
            break
        time.sleep(0.1)
    with open(log_path, encoding="utf-8", errors="replace") as f:
        raise RuntimeError(f"flipbook serve did not start:\n{f.read()}")


class FlipbookServer:
    """A running `flipbook serve` on a free loopback port, with `arguments` added; its access log
    is off unless `access_log`. It runs in its work directory unless `cwd` is given (relative
    settings, `ui.dir` and the default Config/flipbook.json among them, are read from there)."""

    def __init__(self, binary, arguments=(), prefix="flipbook-browser-", access_log=False, cwd=None):
        self.work = tempfile.mkdtemp(prefix=prefix)
        self.log_path = os.path.join(self.work, "server.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", os.path.join(self.work, "data"),
             *([] if access_log else ["--set", "log.accessLog=false"]), *arguments],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=cwd or self.work)
        try:
            self.port = wait_for_port(self.log_path, self.process)
        except RuntimeError:
            self.stop()
            raise
        self.base = f"http://127.0.0.1:{self.port}"

    def request(self, method, path, body=None):
        """(status, headers, body) of one request; error statuses are answers, not exceptions."""
        request = urllib.request.Request(self.base + path, data=body, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def get(self, path):
        """The body of a GET that must answer 200."""
        status, _, body = self.request("GET", path)
        assert status == 200, (path, status, body[:300])
        return body

    def json(self, path):
        """The JSON of a GET that must answer 200."""
        return json.loads(self.get(path))

    def upload(self, data):
        """POST /images, which must answer 200 or 201; its JSON."""
        status, _, body = self.request("POST", "/images", data)
        assert status in (200, 201), (status, body[:300])
        return json.loads(body)

    def stop(self):
        """Stops the server (SIGTERM, then SIGKILL after 20 s) and removes its work directory."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.work, ignore_errors=True)
