#!/usr/bin/env python3
"""System calls per cached frame request, flipbook against nginx: counts, so repeatable on a shared,
noisy machine where times are not.

Starts flipbook and nginx as `make bench-serve` does (the same 100 frames, nginx with sendfile,
tcp_nopush, tcp_nodelay and open_file_cache), attaches `strace -f -c` to every thread of each
server, sends REQUESTS requests over CONNECTIONS keep-alive connections (each connection one
request at a time, rotating over the 100 frames), detaches and prints each server's system calls
per request, for GET (200), GET with the frame's If-None-Match (304) and HEAD, with the access
logs on (flipbook's default; nginx `access_log FILE combined`) or off (LOGS=off).

  FLIPBOOK_BIN=.build-playback/release/flipbook REQUESTS=2000 CONNECTIONS=1 LOGS=off \
      PYTHONPATH=scripts python3 -m bench.serve.syscalls_per_request
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

from benchlib import REPO
from benchlib.nginx import Nginx
from benchlib.server import BINARY, Server
from bench.serve.cached_frames import get, warm
from bench.serve.callgrind_requests import read_response

REQUESTS = int(os.environ.get("REQUESTS", "2000"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "1"))
LOGS = os.environ.get("LOGS", "on")


def client(port, paths, count, method, etags, offset, statuses, lock):
    sock = socket.create_connection(("127.0.0.1", port))
    buf = b""
    for i in range(count):
        path = paths[(i + offset) % len(paths)]
        extra = f"If-None-Match: {etags[path]}\r\n" if etags else ""
        sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n".encode())
        status, _, buf = read_response(sock, buf, method == "HEAD")
        with lock:
            statuses[status] = statuses.get(status, 0) + 1
    sock.close()


def load(port, paths, method, etags):
    statuses, lock = {}, threading.Lock()
    per = REQUESTS // CONNECTIONS
    threads = [threading.Thread(target=client, args=(port, paths, per, method, etags, c * 37, statuses, lock))
               for c in range(CONNECTIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def threads_of(pids):
    out = []
    for pid in pids:
        out += [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    return out


def counted(pids, run):
    """Runs `run()` with strace counting the system calls of every thread of `pids`; returns
    {syscall: calls} and run's result."""
    args = ["strace", "-c", "-f", "-qq"]
    for tid in threads_of(pids):
        args += ["-p", str(tid)]
    out = tempfile.NamedTemporaryFile(prefix="strace.", delete=False)
    out.close()
    proc = subprocess.Popen(args + ["-o", out.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)  # attached
    result = run()
    time.sleep(0.3)  # the access-log writer's 100 ms flush and nginx's lingering calls
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    calls = {}
    with open(out.name) as f:
        for line in f:
            m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$", line)
            if m and m.group(2) != "total":
                calls[m.group(2)] = calls.get(m.group(2), 0) + int(m.group(1))
    os.unlink(out.name)
    return calls, result


def nginx_workers(master):
    with open(f"/proc/{master}/task/{master}/children") as f:
        return [int(p) for p in f.read().split()]


def main():
    work = tempfile.mkdtemp(prefix="flipbook-syscalls.")
    root = os.path.join(work, "root")
    server, nginx = None, None
    try:
        extra = ["--set", f"log.accessLog={'true' if LOGS == 'on' else 'false'}"]
        server = Server(os.path.join(work, "data"), budget=1 << 30, extra=extra,
                        log_path=os.path.join(work, "flipbook.stderr"))
        paths, _ = warm(server, os.path.join(REPO, "bench-out", "inputs"), root)
        nginx = Nginx(work, LOGS, root, access_log=LOGS == "on")
        etags = {"nginx": {}, "flipbook": {}}
        for path in paths:
            etags["nginx"][path] = get(nginx.port, path)[1]["etag"]
            etags["flipbook"][path] = get(server.port, path)[1]["etag"]
        targets = {"nginx": (nginx.port, nginx_workers(nginx.pid)), "flipbook": (server.port, [server.pid])}
        for name, (port, _) in targets.items():
            load(port, paths, "GET", None)  # warm the connection paths
        print(f"binary {BINARY}, logs {LOGS}, {REQUESTS} requests over {CONNECTIONS} connection(s), "
              f"load average {os.getloadavg()[0]:.2f}:")
        for label, method, tagged in (("GET 200", "GET", False), ("GET 304", "GET", True), ("HEAD", "HEAD", False)):
            for name, (port, pids) in targets.items():
                calls, statuses = counted(pids, lambda: load(port, paths, method, etags[name] if tagged else None))
                total = sum(calls.values())
                detail = ", ".join(f"{k} {v / REQUESTS:.2f}" for k, v in sorted(calls.items(), key=lambda kv: -kv[1])
                                   if v / REQUESTS >= 0.005)
                print(f"  {label:8} {name:8} {total / REQUESTS:5.2f} per request: {detail}  {statuses}")
    finally:
        if server:
            server.stop()
        if nginx:
            nginx.stop()
        if os.environ.get("KEEP") != "1":
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
