#!/usr/bin/env python3
"""Instructions per request of nginx serving the same frames, counted by valgrind's callgrind the
way `callgrind_requests.py` counts Flipbook's: the peer's side of issue 34's table.

Flipbook (FLIPBOOK_BIN, not under valgrind) uploads the three small bench inputs and writes the
same 100 frames `make bench-serve` uses under a root directory; nginx then serves that root as
operators run it for static files (`benchlib.nginx`: sendfile, tcp_nopush, tcp_nodelay,
open_file_cache, the combined access log with ACCESS_LOG=1), but as one process
(`master_process off; worker_processes 1;`) under `valgrind --tool=callgrind --instr-atstart=no`.
For GET (200), GET with a matching If-None-Match (304) and HEAD: 200 requests to warm the
connection path and the open-file cache, then instrumentation on, REQUESTS requests over one
keep-alive connection (rotating over the 100 frames), off, dump. Reports user-space instructions
per request.

  FLIPBOOK_BIN=.build/release/flipbook REQUESTS=2000 ACCESS_LOG=1 \
      PYTHONPATH=scripts python3 -m bench.serve.callgrind_nginx

KEEP=1 keeps the dumps (GET 200, 304, HEAD) for callgrind_annotate. CALLGRIND_OPTS adds options,
as for callgrind_requests.py: `--cache-sim=yes` counts simulated cache misses (the dump's totals
line: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw). HEADERS=browser: a browser's field lines besides
`Host`, as for callgrind_requests.py (the requests are sent by its `run_requests`).
"""
import glob
import os
import socket
import subprocess
import tempfile
import time

from benchlib import REPO, log
from benchlib.nginx import binary as nginx_binary, config as nginx_config
from benchlib.ports import free_port, wait_until_listening
from benchlib.server import Server
from bench.serve.cached_frames import warm
from bench.serve.callgrind_requests import callgrind, run_requests, stop_under_callgrind, total_instructions

INPUTS = os.path.join(REPO, "bench-out", "inputs")
REQUESTS = int(os.environ.get("REQUESTS", "2000"))
ACCESS_LOG = os.environ.get("ACCESS_LOG", "1") == "1"


def frames_under(root, work):
    """The 100 frames written under `root` by a Flipbook warm-up; their paths."""
    flipbook = Server(os.path.join(work, "data"), budget=1 << 30, log_path=os.path.join(work, "flipbook.stderr"))
    try:
        paths, _ = warm(flipbook, INPUTS, root)
    finally:
        flipbook.stop()
    return paths


def one_process(config_text):
    """The operators' config as a single process, so that callgrind sees every request."""
    text = config_text.replace("worker_processes 2;", "worker_processes 1;\nmaster_process off;")
    assert "master_process off;" in text
    return text


def etags_of(port, paths):
    etags = {}
    for path in paths:
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(f"HEAD {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            head = b""
            while chunk := sock.recv(65536):
                head += chunk
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"etag:"):
                etags[path] = line.split(b":", 1)[1].strip().decode()
    return etags


def main():
    work = tempfile.mkdtemp(prefix="nginx-callgrind.")
    root = os.path.join(work, "root")
    paths = frames_under(root, work)
    subprocess.run(["chmod", "-R", "a+rX", work], check=True)
    os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
    port = free_port()
    conf = os.path.join(work, "nginx.conf")
    with open(conf, "w") as f:
        f.write(one_process(nginx_config(work, "cg", port, root, access_log=ACCESS_LOG)))
    out_dir = os.path.join(work, "cg")
    os.makedirs(out_dir)
    args = ["valgrind", "--tool=callgrind", "--instr-atstart=no", *os.environ.get("CALLGRIND_OPTS", "").split(),
            f"--callgrind-out-file={out_dir}/callgrind.out.%p.%n", nginx_binary(), "-p", work, "-c", conf, "-g", "daemon off;"]
    server_log = open(os.path.join(work, "nginx.valgrind.log"), "wb")
    proc = subprocess.Popen(args, stdout=server_log, stderr=subprocess.STDOUT)
    try:
        wait_until_listening(proc, port, 120, "nginx under valgrind", server_log.name)
        etags = etags_of(port, paths)
        results = {}
        for label, method, tags in (("GET 200", "GET", None), ("GET 304", "GET", etags), ("HEAD", "HEAD", None)):
            run_requests(port, paths, 200, method, tags)  # the open-file cache and the connection path
            before = set(glob.glob(os.path.join(out_dir, "callgrind.out.*")))
            callgrind(proc.pid, "--zero")
            callgrind(proc.pid, "--instr=on")
            statuses = run_requests(port, paths, REQUESTS, method, tags)
            callgrind(proc.pid, "--instr=off")
            callgrind(proc.pid, "--dump")
            time.sleep(1)
            total, files = total_instructions(out_dir, before)
            results[label] = (total / REQUESTS, statuses)
            log(f"callgrind nginx: {label}: {total / REQUESTS:,.0f} instructions per request ({statuses})")
        print(f"nginx {nginx_binary()}, one process, access log {'on' if ACCESS_LOG else 'off'}, {REQUESTS} requests each:")
        for label, (per, statuses) in results.items():
            print(f"  {label}: {per:,.0f} instructions per request  {statuses}")
    finally:
        stop_under_callgrind(proc, server_log, work, "callgrind nginx", timeout=60)


if __name__ == "__main__":
    main()
