"""Podman as the container tests drive it: the flags these machines need, the image under test,
names and labels that let every test remove what it made, and plain HTTP to loopback ports.

Flags (docs/DEPLOYMENT.md, "Podman"): `--runtime runc` (crun refuses this host's hybrid cgroups),
`--cgroup-manager cgroupfs` (no systemd in the machine), `--storage-driver vfs` (no overlay in the
machine), and ulimits at or below the shell's on every run (podman's defaults ask for more than
the machine grants). Traffic goes only to loopback ports the tests publish.
"""
import http.client
import json
import os
import shlex
import socket
import subprocess
import time
import uuid

PODMAN = shlex.split(os.environ.get(
    "PODMAN", "podman --runtime runc --cgroup-manager cgroupfs --storage-driver vfs"))
IMAGE = os.environ.get("FLIPBOOK_IMAGE", "localhost/flipbook:latest")
ULIMITS = ["--ulimit", "nofile=1024:4096", "--ulimit", "nproc=1024:4096"]
# Every container, volume and network a test run makes carries this label, so that the run
# removes them all at its end even when a test failed half-way.
RUN_LABEL = "flipbook.test.run=" + uuid.uuid4().hex[:12]
# `podman run` as a user runs the image: read-only root, no capabilities, no privilege gain.
HARDENED = ["--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"]


def podman(*args, check=True, timeout=300, capture=True, input=None, env=None):
    """Runs `podman ARGS` with the machine's flags (and `env` added to the environment) →
    CompletedProcess (text)."""
    argv = PODMAN + [str(a) for a in args]
    result = subprocess.run(argv, timeout=timeout, text=True, capture_output=capture, input=input,
                            env=dict(os.environ, **env) if env else None)
    if check and result.returncode != 0:
        raise AssertionError(f"{shlex.join(argv)} -> {result.returncode}\n{(result.stderr or '')[-3000:]}")
    return result


def out(*args, **kw):
    """The stripped standard output of `podman ARGS`."""
    return podman(*args, **kw).stdout.strip()


def name(kind):
    """A name no other run uses: flipbook-ct-KIND-xxxxxx."""
    return f"flipbook-ct-{kind}-{uuid.uuid4().hex[:6]}"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run_container(container, *args, image=IMAGE, command=()):
    """`podman run -d` with the label and the ulimits → the container's name."""
    podman("run", "-d", "--name", container, "--label", RUN_LABEL, *ULIMITS, *args, image, *command)
    return container


def volume(vol):
    podman("volume", "create", "--label", RUN_LABEL, vol)
    return vol


def inspect(container, fmt):
    return out("inspect", "--format", fmt, container)


def cleanup():
    """Removes this run's containers, pods, volumes and networks (images are kept for reuse)."""
    label = f"label={RUN_LABEL}"
    for c in out("ps", "-a", "--filter", label, "--format", "{{.Names}}", check=False).split():
        podman("rm", "-f", "-v", "-t", "0", c, check=False)
    for v in out("volume", "ls", "--filter", label, "--format", "{{.Name}}", check=False).split():
        podman("volume", "rm", "-f", v, check=False)
    for n in out("network", "ls", "--filter", label, "--format", "{{.Name}}", check=False).split():
        podman("network", "rm", "-f", n, check=False)


def request(port, method, path, body=None, headers=None, timeout=30, host="127.0.0.1"):
    """One HTTP request to host:port (a loopback port the test published, or a container on a
    network the test made) → (status, headers lower-case, body bytes)."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def get_json(port, path, host="127.0.0.1"):
    status, _, body = request(port, "GET", path, host=host)
    assert status == 200, f"GET {path} -> {status}: {body[:300]!r}"
    return json.loads(body)


def wait_ready(port, timeout, path="/readyz", host="127.0.0.1"):
    """Seconds until `path` answered 200 (polled every 20 ms); raises after `timeout`."""
    start = time.monotonic()
    last = None
    while time.monotonic() - start < timeout:
        try:
            status, _, _ = request(port, "GET", path, timeout=2, host=host)
            if status == 200:
                return time.monotonic() - start
            last = status
        except OSError as error:
            last = error
        time.sleep(0.02)
    raise AssertionError(f"{path} on {host}:{port} not 200 within {timeout}s (last: {last})")


def logs(container):
    return podman("logs", container, check=False).stdout + podman("logs", container, check=False).stderr
