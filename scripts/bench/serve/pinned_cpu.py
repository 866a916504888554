#!/usr/bin/env python3
"""Server CPU per cached request with the scheduler's placement taken out: nginx and one or more
Flipbook builds, each server's threads pinned to CPU 0 and the load generator to CPU 1, in
rotating order, ROUNDS runs each; prints every run and each server's median ÷ nginx's.

`make bench-serve` leaves placement to the scheduler, as operators do. On this two-core machine,
at 8 connections, where the four busy threads (two loops or workers, two wrk threads) land moves
a server's CPU per request by up to 15% from run to run, more than the difference between the
servers. Pinned, a run answers the narrower question of what each request costs the server, and
two builds compare within about 1%. The machine also has a slow mode (every server ~25% more CPU
per request, whichever is running); compare runs taken in the same mode.

  BINS="/path/flipbook-a;/path/flipbook-b" KIND=304 CONNECTIONS=8 ROUNDS=5 \\
      PYTHONPATH=scripts python3 -m bench.serve.pinned_cpu

KIND is 200, 304 (wrk and bench-serve's Lua script) or HEAD (httpload). LOGS=off (the default):
nginx `access_log off`, Flipbook's access log off unless `|--set log.accessLog=true` follows a
path in BINS; LOGS=on: nginx's combined access log and every build's access log on, as
bench-serve's "logs on" rows. SECONDS (3) per run after bench-serve's 2 s warm-up. As in
bench-serve, everything lives in /dev/shm: nginx's files on tmpfs, where `sendfile` reads pages
as Flipbook's memory file has them. NGINX_DISK=1 adds a second nginx serving a copy of the files
from DISK_DIR (default /var/tmp, a disk filesystem's page cache, where operators' files usually
are, and where the kernel looks pages up for `sendfile` in batches: less CPU per 200).
"""
import os
import shutil
import statistics
import subprocess
import tempfile

import benchlib.server as server_module
from benchlib import REPO, wrk
from benchlib.nginx import Nginx
from benchlib.process import tree
from benchlib.wrk import raise_descriptor_limit
from bench.serve.cached_frames import get, load_for, warm

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(REPO, "bench-out", "inputs")
KIND = os.environ.get("KIND", "304")
CONNECTIONS = int(os.environ.get("CONNECTIONS", "8"))
SECONDS = int(os.environ.get("SECONDS", "3"))
ROUNDS = int(os.environ.get("ROUNDS", "5"))
LOGS = os.environ.get("LOGS", "off")
NGINX_DISK = os.environ.get("NGINX_DISK", "0") == "1"
DISK_DIR = os.environ.get("DISK_DIR", "/var/tmp")


def pin(pid, cpu):
    """Pins every thread of process `pid` and its children (nginx's workers) to `cpu`; threads
    they start later inherit it."""
    for process in tree(pid):
        for thread in os.listdir(f"/proc/{process}/task"):
            os.sched_setaffinity(int(thread), {cpu})


def pinned_command(command):
    """bench-serve's load generator command, run on CPU 1."""
    return lambda *args, **kwargs: ["taskset", "-c", "1"] + command(*args, **kwargs)


def start_servers(work, specs):
    """The Flipbook builds of `specs` ("path" or "path|flags"), warmed with the bench frames, and
    nginx serving the same bytes; {name: (port, pid, etags)} and the objects to stop."""
    targets, stoppable, paths = {}, [], None
    root = os.path.join(work, "root")
    for index, spec in enumerate(specs):
        binary, _, flags = spec.strip().partition("|")
        server_module.BINARY = binary
        extra = flags.split() + (["--set", "log.accessLog=true"] if LOGS == "on" else [])
        server = server_module.Server(os.path.join(work, f"data-{index}"), budget=1 << 30, extra=extra,
                                      log_path=os.path.join(work, f"flipbook-{index}.stderr"))
        stoppable.append(server)
        found, _ = warm(server, INPUTS, root if paths is None else None)
        paths = paths or found
        name = f"{os.path.basename(binary)}{' ' + flags if flags else ''}"
        targets[name] = (server.port, server.pid, {p: get(server.port, p)[1]["etag"] for p in paths})
    nginx = Nginx(work, LOGS, root, access_log=LOGS == "on")
    stoppable.append(nginx)
    targets["nginx"] = (nginx.port, nginx.pid, {p: get(nginx.port, p)[1]["etag"] for p in paths})
    if NGINX_DISK:
        disk = tempfile.mkdtemp(prefix="pinned-cpu-disk.", dir=DISK_DIR)
        shutil.copytree(root, os.path.join(disk, "root"))
        on_disk = Nginx(disk, f"{LOGS}-disk", os.path.join(disk, "root"), access_log=LOGS == "on")
        stoppable += [on_disk, Removed(disk)]
        for path in paths:
            if get(on_disk.port, path)[2] != get(nginx.port, path)[2]:
                raise RuntimeError(f"the nginx on disk differs on {path}")
        targets["nginx-disk"] = (on_disk.port, on_disk.pid, {p: get(on_disk.port, p)[1]["etag"] for p in paths})
    return targets, stoppable, paths


class Removed:
    """A directory removed when the run stops (with the servers)."""

    def __init__(self, path):
        self.path = path

    def stop(self):
        shutil.rmtree(self.path, ignore_errors=True)


def main():
    raise_descriptor_limit()
    if LOGS not in ("on", "off"):
        raise SystemExit(f"LOGS={LOGS!r}: expected on or off")
    work = tempfile.mkdtemp(prefix="pinned-cpu.", dir="/dev/shm")
    httpload = os.path.join(work, "httpload")
    subprocess.run(["cc", "-O2", "-o", httpload, os.path.join(HERE, "httpload.c"), "-lpthread"], check=True)
    targets, stoppable, paths = start_servers(work, os.environ["BINS"].split(";"))
    try:
        for _, pid, _ in targets.values():
            pin(pid, 0)
        wrk.command = pinned_command(wrk.command)
        names = list(targets)
        cpu = {name: [] for name in names}
        for round_ in range(ROUNDS):
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                port, pid, etags = targets[name]
                load = load_for(work, name.replace(" ", "_").replace("/", "_"), KIND, paths, etags, httpload)
                run = wrk.run(port, CONNECTIONS, load, os.path.join(work, "load.txt"), pid, SECONDS)
                cpu[name].append(run["cpuUsPerRequest"])
                print(f"round {round_} {name}: {run['cpuUsPerRequest']:.2f} µs a request "
                      f"(user {run['userUsPerRequest']:.2f}), {run['rps']:,.0f} req/s", flush=True)
        reference = statistics.median(cpu["nginx"])
        for name in names:
            median = statistics.median(cpu[name])
            print(f"{KIND}, {CONNECTIONS} connections, logs {LOGS}, pinned: {name} median {median:.2f} µs "
                  f"({median / reference:.3f}× nginx's)")
    finally:
        for item in stoppable:
            item.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
