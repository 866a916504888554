"""deploy/nginx.conf: its rules, its loopback rendering (only addresses and paths change, and
nginx accepts it), and its routing, with real requests to three tiny backends."""
import collections
import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import REPO, read, tool
from deploy_rules import nginx_conf_violations

RENDER = os.path.join(REPO, "scripts", "topology", "render-nginx-conf.py")


def test_conf_keeps_the_routing_rules():
    assert nginx_conf_violations(read("deploy/nginx.conf")) == []


@pytest.mark.parametrize("old,new", [
    ("hash $flipbook_image consistent;", "hash $flipbook_image;"),
    ("hash $flipbook_image consistent;", "least_conn;"),
    ("(?:images|frames|uploads)", "(?:images|frames)"),
    ("            proxy_request_buffering off;\n", ""),
    ("proxy_next_upstream error timeout http_503;", "proxy_next_upstream error;"),
    ("proxy_next_upstream error timeout http_503;", "proxy_next_upstream error timeout http_502 http_503 http_504;"),
    ("proxy_next_upstream error timeout http_503 non_idempotent;",
     "proxy_next_upstream error timeout http_503 http_504 non_idempotent;"),
    ("client_max_body_size 256m;", "client_max_body_size 1m;"),
    ("proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;", ""),
    ("proxy_set_header X-Request-ID $flipbook_request_id;", ""),
])
def test_conf_rules_catch(old, new):
    conf = read("deploy/nginx.conf")
    assert old in conf
    assert nginx_conf_violations(conf.replace(old, new))


def render(src_text, workdir, listen, replicas):
    src = os.path.join(workdir, "src.conf")
    with open(src, "w") as f:
        f.write(src_text)
    out = os.path.join(workdir, "nginx.conf")
    result = subprocess.run([sys.executable, RENDER, "--src", src, "--out", out, "--dir", workdir,
                             "--listen", listen] + sum((["--replica", r] for r in replicas), []),
                            capture_output=True, text=True)
    return result, out


def test_rendering_changes_only_addresses_and_paths_and_nginx_accepts_it(tmp_path):
    os.chmod(tmp_path, 0o755)
    result, out = render(read("deploy/nginx.conf"), str(tmp_path), "127.0.0.1:1",
                         ["127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:4"])
    assert result.returncode == 0, result.stderr
    original = read("deploy/nginx.conf").splitlines()
    rendered = open(out).read().splitlines()
    assert len(original) == len(rendered)
    changed = [(a, b) for a, b in zip(original, rendered) if a != b]
    assert len(changed) == 12
    for before, after in changed:
        assert ("flipbook-" in before and "127.0.0.1:" in after) or str(tmp_path) in after \
            or after.strip() == "listen 127.0.0.1:1;", (before, after)
    check = subprocess.run([tool("nginx"), "-t", "-p", str(tmp_path) + "/", "-c", out],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_rendering_refuses_a_conf_of_another_shape(tmp_path):
    conf = read("deploy/nginx.conf").replace(
        "server flipbook-3:8080 max_fails=1 fail_timeout=5s;",
        "server flipbook-3:8080 max_fails=1 fail_timeout=5s;\n        server flipbook-4:8080;")
    result, _ = render(conf, str(tmp_path), "127.0.0.1:1", ["127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:4"])
    assert result.returncode != 0
    conf = read("deploy/nginx.conf").replace("listen 80;", "listen 8080;")
    result, _ = render(conf, str(tmp_path), "127.0.0.1:1", ["127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:4"])
    assert result.returncode != 0


class Backend:
    """Answers every request with its own name and the request id / forwarded-for it was sent."""

    def __init__(self, name):
        self.name = name
        self.seen = []
        backend = self

        self.connections = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                backend.connections.append(self.connection)

            def log_message(self, *a):
                pass

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                backend.seen.append((self.command, self.path, self.headers.get("X-Request-ID"),
                                     self.headers.get("X-Forwarded-For")))
                body = backend.name.encode()
                self.send_response(200)
                self.send_header("X-Served-By", backend.name)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_DELETE = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        """Like a killed process: the listener and every open connection go away."""
        self.server.shutdown()
        self.server.server_close()
        for conn in self.connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@pytest.fixture
def proxy(tmp_path):
    os.chmod(tmp_path, 0o755)
    backends = [Backend(f"b{i}") for i in range(1, 4)]
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    result, conf = render(read("deploy/nginx.conf"), str(tmp_path), f"127.0.0.1:{port}",
                          [f"127.0.0.1:{b.port}" for b in backends])
    assert result.returncode == 0, result.stderr
    proc = subprocess.Popen([tool("nginx"), "-p", str(tmp_path) + "/", "-c", conf, "-g", "daemon off;"])
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    yield port, backends
    proc.send_signal(signal.SIGQUIT)
    proc.wait(10)
    for b in backends:
        b.close()


def get(port, method, path, headers=None, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, resp.getheader("X-Served-By"), resp.getheader("X-Request-ID"), data


def test_routing_by_image_id(proxy):
    port, backends = proxy
    owners = {}
    for n in range(30):
        image = f"{n:064x}"
        paths = [f"/images/{image}", f"/images/{image}/delays", f"/frames/{image}/0", f"/frames/{image}/17",
                 f"/frames/{image}?t=1500"]
        served = {get(port, "GET", p)[1] for p in paths}
        served.add(get(port, "PUT", f"/images/{image}", body=b"x")[1])
        served.add(get(port, "DELETE", f"/images/{image}")[1])
        assert len(served) == 1, f"{image}: {served}"
        owners[image] = served.pop()
    spread = collections.Counter(owners.values())
    assert len(spread) == 3, spread
    # Requests that name no image are spread round robin.
    anywhere = collections.Counter(get(port, m, p)[1] for m, p in [("GET", "/images"), ("POST", "/images"),
                                                                    ("GET", "/healthz"), ("GET", "/stats")] * 6)
    assert len(anywhere) == 3, anywhere
    # Per-replica endpoints are not proxied.
    assert get(port, "GET", "/metrics")[0] == 404
    assert get(port, "POST", "/admin/memory-pressure?level=warning")[0] == 404
    assert get(port, "GET", "/nginx-health")[0] == 200


def test_routing_by_upload_session_id(proxy):
    port, backends = proxy
    owners = {}
    for n in range(30):
        upload = f"{n:032x}.{1800000000000 + n:013d}.{'A' * 42}{n % 10}"
        paths = [("PUT", f"/uploads/{upload}"), ("GET", f"/uploads/{upload}"), ("GET", f"/frames/{upload}/0"),
                 ("GET", f"/frames/{upload}/9"), ("GET", f"/frames/{upload}?t=40")]
        served = {get(port, m, p, body=b"x" if m == "PUT" else None)[1] for m, p in paths}
        assert len(served) == 1, f"{upload}: {served}"
        owners[upload] = served.pop()
    assert len(collections.Counter(owners.values())) == 3
    # POST /uploads names no session: any replica mints the id.
    anywhere = collections.Counter(get(port, "POST", "/uploads")[1] for _ in range(12))
    assert len(anywhere) == 3, anywhere


def test_request_id_and_forwarded_for_are_passed(proxy):
    port, backends = proxy
    get(port, "GET", "/healthz", headers={"X-Request-ID": "abc-123", "X-Forwarded-For": "203.0.113.5"})
    get(port, "GET", "/healthz")
    seen = [s for b in backends for s in b.seen]
    assert ("GET", "/healthz", "abc-123", "203.0.113.5, 127.0.0.1") in seen
    generated = [s for s in seen if s[2] != "abc-123"]
    assert generated and len(generated[0][2]) == 32 and generated[0][3] == "127.0.0.1"


def test_a_dead_backend_moves_only_its_images(proxy):
    port, backends = proxy
    images = [f"{n:064x}" for n in range(30)]
    before = {i: get(port, "GET", f"/frames/{i}/0")[1] for i in images}
    victim = backends[0]
    victim.close()
    after = {}
    for i in images:
        status, served, _, _ = get(port, "GET", f"/frames/{i}/0")
        assert status == 200
        after[i] = served
    for i in images:
        if before[i] == victim.name:
            assert after[i] != victim.name
        else:
            assert after[i] == before[i], f"{i} moved from {before[i]} to {after[i]}"
