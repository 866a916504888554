#!/usr/bin/env python3
"""Instructions the server spends on one hostile connection that sends an over-long chunk-size
line (issue 34's hostile-clients phase: 100 KB chunk-size lines), counted by valgrind's callgrind
the way `callgrind_requests.py` counts cached requests.

Starts `flipbook serve` under `valgrind --tool=callgrind --instr-atstart=no`; each connection sends
`POST /images` with `Transfer-Encoding: chunked`, then one chunk-size line of LINE_BYTES bytes
(KIND=zeros: leading zeros before `1`; KIND=extension: `1;x=aaa…`), reads the answer (a 400) until
the server closes. KIND=garbage sends instead what `hostile_p99`'s garbage phase sends (512 random
bytes and an empty line, no head), KIND=big-head its GET with a LINE_BYTES header line. After 5 connections to warm up, CONNECTIONS more with instrumentation on;
reports user-space instructions per connection (every thread of the process).

  FLIPBOOK_BIN=.build/release/flipbook CONNECTIONS=50 KIND=zeros \
      PYTHONPATH=scripts python3 -m bench.serve.callgrind_chunk_lines

KEEP=1 keeps the dump for callgrind_annotate.
"""
import glob
import os
import random
import socket
import subprocess
import tempfile
import time

from benchlib import REPO, log
from benchlib.ports import free_port, wait_until_listening
from benchlib.server import BINARY
from bench.serve.callgrind_requests import callgrind, stop_under_callgrind, total_instructions, under_callgrind
from bench.serve.hostile_p99 import PAYLOADS

CONNECTIONS = int(os.environ.get("CONNECTIONS", "50"))
LINE_BYTES = int(os.environ.get("LINE_BYTES", "100000"))
KIND = os.environ.get("KIND", "zeros")
HEAD = b"POST /images HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nContent-Type: image/gif\r\n\r\n"


def line():
    if KIND == "garbage":
        return PAYLOADS["garbage"](random)
    if KIND == "big-head":
        return b"GET / HTTP/1.1\r\nHost: bench\r\nX-Big: " + b"b" * LINE_BYTES + b"\r\n\r\n"
    if KIND == "zeros":
        return b"0" * (LINE_BYTES - 3) + b"1\r\n"
    if KIND == "extension":
        return b"1;x=" + b"a" * (LINE_BYTES - 6) + b"\r\n"
    raise SystemExit(f"KIND={KIND}: zeros, extension, garbage or big-head")


def hostile_connection(port, payload):
    """One connection: the head, the long line; the status line of the answer."""
    sock = socket.create_connection(("127.0.0.1", port))
    answer = b""
    try:
        sock.sendall(payload if KIND in ("garbage", "big-head") else HEAD + payload)
    except OSError:
        pass  # the server may close before taking all of it
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    except OSError:
        pass
    sock.close()
    return answer.split(b"\r\n", 1)[0].decode(errors="replace")


def main():
    work = tempfile.mkdtemp(prefix="flipbook-chunk-lines.")
    valgrind, shim, out_dir = under_callgrind(work)
    port = free_port()
    args = valgrind + ["serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", os.path.join(work, "data")]
    server_log = open(os.path.join(work, "server.log"), "wb")
    proc = subprocess.Popen(args, stdout=server_log, stderr=subprocess.STDOUT, cwd=REPO,
                            env=dict(os.environ, LD_PRELOAD=shim))
    try:
        wait_until_listening(proc, port, 300, "server", server_log.name)
        payload = line()
        for _ in range(5):
            hostile_connection(port, payload)
        before = set(glob.glob(os.path.join(out_dir, "callgrind.out.*")))
        callgrind(proc.pid, "--zero")
        callgrind(proc.pid, "--instr=on")
        statuses = {}
        for _ in range(CONNECTIONS):
            status = hostile_connection(port, payload)
            statuses[status] = statuses.get(status, 0) + 1
        callgrind(proc.pid, "--instr=off")
        callgrind(proc.pid, "--dump")
        time.sleep(1)
        total, _ = total_instructions(out_dir, before)
        log(f"callgrind chunk lines: {total / CONNECTIONS:,.0f} instructions per connection")
        print(f"binary {BINARY}, {CONNECTIONS} connections, a {LINE_BYTES}-byte chunk-size line of {KIND} each:")
        print(f"  {total / CONNECTIONS:,.0f} instructions per connection  {statuses}")
    finally:
        stop_under_callgrind(proc, server_log, work, "callgrind chunk lines", timeout=120)


if __name__ == "__main__":
    main()
