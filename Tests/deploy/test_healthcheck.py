"""`flipbook healthcheck` against real sockets: 0 on 200, 1 on everything else, one line."""
import http.server
import os
import socket
import subprocess
import threading

import pytest

from conftest import REPO


def binary():
    path = os.environ.get("FLIPBOOK_BIN") or os.path.join(REPO, ".build", "debug", "flipbook")
    assert os.path.exists(path), f"{path} not built (make test builds it; FLIPBOOK_BIN names another)"
    return path


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        status = {"/healthz": 200, "/readyz": 503}.get(self.path, 404)
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture(scope="module")
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.server_address[1]
    srv.shutdown()


def run(*args, env=None):
    return subprocess.run([binary(), "healthcheck", *args], capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, **(env or {})))


def test_200_is_healthy(server):
    result = run("--url", f"http://127.0.0.1:{server}/healthz")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1


def test_port_from_the_environment(server):
    assert run(env={"FLIPBOOK_SERVER_PORT": str(server)}).returncode == 0


@pytest.mark.parametrize("path", ["/readyz", "/missing"])
def test_other_statuses_are_unhealthy(server, path):
    result = run("--url", f"http://127.0.0.1:{server}{path}")
    assert result.returncode == 1
    assert result.stderr.startswith("unhealthy:") and result.stderr.count("\n") == 1


def test_refused_bad_url_and_silence_are_unhealthy():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    free = s.getsockname()[1]
    s.close()
    assert run("--url", f"http://127.0.0.1:{free}/healthz").returncode == 1
    assert run("--url", "https://127.0.0.1/healthz").returncode == 1
    assert run("--url", "http://127.0.0.1:99999/").returncode == 1
    assert run("--url", "http://example.com:80/healthz").returncode == 1  # loopback only
    assert run("--timeout", "0").returncode == 1
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    # The listener accepts (backlog) but never answers: only --timeout ends the wait, and the
    # message says so (run()'s 30 s subprocess timeout only keeps a broken build from hanging).
    result = run("--url", f"http://127.0.0.1:{silent.getsockname()[1]}/healthz", "--timeout", "1")
    silent.close()
    assert result.returncode == 1 and "timed out" in result.stderr
