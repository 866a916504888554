"""docker-compose.yml started by podman-compose (with Tests/container/compose.test.yml over it),
seen as the topology harness (scripts/topology/topology_test.py `run_checks`) sees a cluster:
replicas it reaches directly on the network the test made, and kills, stops and starts; nginx on
the loopback port the test published, whose access log it reads from the container's output.

podman-compose is the PyPI release of Tests/container/requirements.txt, run with the machine's
podman flags (engine.PODMAN) and ulimits; every container it makes carries the run's label, so
that engine.cleanup removes it even when `down` was never reached."""
import collections
import hashlib
import json
import os
import random
import shlex
import subprocess
import time

import engine

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
COMPOSE_FILE = os.path.join(REPO, "docker-compose.yml")
OVERRIDE = os.path.join(HERE, "compose.test.yml")
COMPOSE = shlex.split(os.environ.get("PODMAN_COMPOSE", "podman-compose"))
RUNTIME_BASE = os.environ.get("RUNTIME_BASE", "localhost/flipbook-debian:bookworm-slim")
REPLICA_PORT = 8080  # FLIPBOOK_SERVER_PORT in docker-compose.yml

# The images Docker Hub would supply, made from Debian and PyPI packages: image → (Containerfile
# in images/, build context). moto's is Tests/s3 (its requirements.txt pins the S3 tests' moto).
TEST_IMAGES = {
    "localhost/flipbook-test-nginx:bookworm": ("nginx.Containerfile", os.path.join(HERE, "images")),
    "localhost/flipbook-test-moto:bookworm": ("moto.Containerfile", os.path.join(REPO, "Tests", "s3")),
}


def ensure_test_images():
    """Builds the test images that are missing (kept for the next run; a few minutes the first
    time, mostly apt and pip)."""
    for image, (containerfile, context) in TEST_IMAGES.items():
        if engine.podman("image", "exists", image, check=False).returncode == 0:
            continue
        cert = os.environ.get("PIP_CERT", "")
        mount = ["--volume", f"{cert}:/run/pip-cert.pem:ro", "--build-arg", "PIP_CERT=/run/pip-cert.pem"] if cert else []
        engine.podman("build", "--network", "host", "--layers=false", *mount, "--build-arg", f"BASE={RUNTIME_BASE}",
                      "--tag", image, "-f", os.path.join(HERE, "images", containerfile), context, timeout=1200)


def make_network(kind):
    """A bridge network of the test on a /24 no other network of this machine uses → (name, the
    subnet's first three octets)."""
    used = set()
    for network in json.loads(engine.out("network", "inspect", *engine.out("network", "ls", "-q").split()) or "[]"):
        for subnet in network.get("subnets") or []:
            used.add(subnet["subnet"].rsplit(".", 1)[0])
    prefix = random.choice([f"172.29.{n}" for n in range(256) if f"172.29.{n}" not in used])
    network = engine.name(kind)
    engine.podman("network", "create", "--label", engine.RUN_LABEL, "--subnet", f"{prefix}.0/24", network)
    return network, prefix


class Project:
    """One `podman-compose -p NAME` project of docker-compose.yml + compose.test.yml, with the
    given profile and variables (CT_NETWORK/CT_NET, CT_NETWORK_S3/CT_NET_S3: networks made by
    make_network; FLIPBOOK_HTTP_PORT and the like as a user sets them)."""

    def __init__(self, name, env, profile=None):
        self.name = name
        self.env = dict(os.environ, FLIPBOOK_IMAGE=engine.IMAGE, **env)
        self.profile = profile

    def argv(self, *files):
        podman = engine.PODMAN
        argv = COMPOSE + ["--podman-path", podman[0], "--podman-args", " ".join(podman[1:]),
                          "--podman-run-args", " ".join(engine.ULIMITS + ["--label", engine.RUN_LABEL]),
                          "-p", self.name]
        for path in (COMPOSE_FILE, OVERRIDE) + files:
            argv += ["-f", path]
        return argv + (["--profile", self.profile] if self.profile else [])

    def compose(self, *args, files=(), check=True, timeout=600):
        argv = self.argv(*files) + list(args)
        result = subprocess.run(argv, cwd=REPO, env=self.env, text=True, capture_output=True, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(shlex.quote(a) for a in argv)} -> {result.returncode}\n"
                                 f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        return result

    def container(self, service):
        return f"{self.name}_{service}_1"

    def down(self):
        """`down -v`, then whatever of the project is left (a container or volume that `down`
        could not remove, e.g. after a failed `up`)."""
        self.compose("down", "-v", "-t", "5", check=False)
        label = f"label=io.podman.compose.project={self.name}"
        for c in engine.out("ps", "-a", "--filter", label, "--format", "{{.Names}}", check=False).split():
            engine.podman("rm", "-f", "-v", "-t", "0", c, check=False)
        for v in engine.out("volume", "ls", "--filter", label, "--format", "{{.Name}}", check=False).split():
            engine.podman("volume", "rm", "-f", v, check=False)


class Replica:
    """A replica container, as the harness drives a replica process: reached at its address on
    the test's network (`host`), started and stopped by podman. `name` is what its X-Served-By
    says (FLIPBOOK_SERVER_INSTANCENAME: the compose service, or the pod's host name under kube
    play), which is also its compose service."""

    def __init__(self, container, name, index, host):
        self.container = container
        self.index = index
        self.name = self.service = name
        self.host = host
        self.port = REPLICA_PORT

    def start(self):
        engine.podman("start", self.container)

    def wait_ready(self, timeout=60):
        engine.wait_ready(self.port, timeout, host=self.host)

    def alive(self):
        return engine.inspect(self.container, "{{.State.Running}}") == "true"

    def kill(self):
        """SIGKILL, as a crash would; waits until the container has exited."""
        engine.podman("kill", "-s", "KILL", self.container, check=False)
        deadline = time.monotonic() + 30
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.1)

    def terminate(self, timeout):
        """`podman stop` (SIGTERM, then SIGKILL after `timeout`) → the exit status, None when it
        had to be killed."""
        begun = time.monotonic()
        engine.podman("stop", "-t", str(int(timeout)), self.container)
        if time.monotonic() - begun >= timeout:
            return None
        return int(engine.inspect(self.container, "{{.State.ExitCode}}"))

    def log_text(self):
        return engine.logs(self.container)


class Nginx:
    """The proxy, on the loopback port the test published."""

    def __init__(self, container, port):
        self.container = container
        self.port = port

    def log_entries(self):
        """The access log (the image sends it to the container's standard output)."""
        entries = []
        for line in engine.podman("logs", self.container, check=False).stdout.splitlines():
            if line.startswith("{"):
                try:
                    entries.append(json.loads(line))
                except ValueError:
                    pass
        return entries


def wait_healthy(containers, timeout=180):
    """Waits until every container's own HEALTHCHECK passes (`podman healthcheck run`: without
    systemd, podman 4.3 schedules no healthchecks of its own, so the test asks)."""
    deadline = time.monotonic() + timeout
    pending = list(containers)
    while pending and time.monotonic() < deadline:
        pending = [c for c in pending if engine.podman("healthcheck", "run", c, check=False).returncode != 0]
        if pending:
            time.sleep(1)
    assert not pending, f"not healthy within {timeout}s: {pending}"


PROBES = 300


def reach(nginx_port, replicas):
    """What nginx reaches: PROBES ids that name no image, sent through it, are answered 404 by the
    replica the ring gives each to → (X-Served-By counts, problems). Each replica must answer at
    least a tenth (a fair ring gives a third); a replica that nginx cannot reach gets none, its
    ids going to the next replica of the ring."""
    served, problems = collections.Counter(), []
    for n in range(PROBES):
        probe = hashlib.sha256(f"compose-probe-{n}".encode()).hexdigest()
        status, headers, _ = engine.request(nginx_port, "GET", f"/images/{probe}")
        if status != 404:
            problems.append(f"GET /images/{probe[:12]}… via nginx -> {status}, expected 404")
        served[headers.get("x-served-by")] += 1
    for r in replicas:
        if served[r.name] < PROBES // 10:
            problems.append(f"nginx reached {r.name} for {served[r.name]} of {PROBES} ids: {dict(served)}")
    return served, problems
