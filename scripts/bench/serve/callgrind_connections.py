#!/usr/bin/env python3
"""Simulated cache misses per cached request with many connections: what 256 connections' state
does to the cache, counted where this VM has no hardware counters (and repeatably).

Starts `flipbook serve` under callgrind with `--cache-sim=yes` and the last level simulated as a
512 KiB cache (a core's L2; LL=size,ways,line to change it), warms the 100 frames, opens CONNS
keep-alive connections and sends ROUNDS rounds of one request on each (all sent, then all read)
after two warm rounds. Prints, per request: instructions (Ir), data reads and writes, and the
first-level and last-level misses (D1mr, D1mw, DLmr, DLmw). METHOD is HEAD or 304 (a GET with
the frame's If-None-Match). The kernel is not simulated. KEEP=1 keeps the dump for
`callgrind_annotate --sort=DLmr,DLmw`.

  FLIPBOOK_BIN=.build/release/flipbook CONNS=256 ROUNDS=8 METHOD=HEAD ACCESS_LOG=0 \
      PYTHONPATH=scripts python3 -m bench.serve.callgrind_connections
"""
import glob
import os
import socket
import subprocess
import tempfile
import time

from bench.serve import callgrind_requests as cr
from bench.serve.cached_frames import warm
from benchlib.ports import free_port, wait_until_listening
from benchlib.server import Server

CONNS = int(os.environ.get("CONNS", "256"))
ROUNDS = int(os.environ.get("ROUNDS", "8"))
METHOD = os.environ.get("METHOD", "HEAD")
ACCESS_LOG = os.environ.get("ACCESS_LOG", "0") == "1"
LL = os.environ.get("LL", "524288,8,64")


def round_(socks, paths, k, etags):
    for i, s in enumerate(socks):
        p = paths[(i + k) % len(paths)]
        extra = f"If-None-Match: {etags[p]}\r\n" if etags else ""
        s.sendall(f"{'GET' if METHOD == '304' else METHOD} {p} HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode())
    for s in socks:
        buf = b""
        while b"\r\n\r\n" not in buf:
            c = s.recv(65536)
            if not c:
                raise RuntimeError("closed")
            buf += c
        assert buf.split(b" ", 2)[1] in (b"200", b"304"), buf[:100]


def main():
    work = tempfile.mkdtemp(prefix="flipbook-callgrind-conns.")
    os.environ["CALLGRIND_OPTS"] = f"--cache-sim=yes --LL={LL} " + os.environ.get("CALLGRIND_OPTS", "")
    valgrind, shim, out_dir = cr.under_callgrind(work)
    port = free_port()
    args = valgrind + ["serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", os.path.join(work, "data"),
                       "--cache-max-bytes", str(1 << 30), "--set", f"log.accessLog={'true' if ACCESS_LOG else 'false'}"]
    log = open(os.path.join(work, "server.log"), "wb")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, LD_PRELOAD=shim, VIPS_NOVECTOR="1"))
    try:
        wait_until_listening(proc, port, 300, "server", log.name)
        server = Server.__new__(Server)
        server.port = port
        etags = {}
        paths, _ = warm(server, cr.INPUTS, etags=etags, timeout=600, poll=1)
        socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(CONNS)]
        tags = etags if METHOD == "304" else None
        for k in range(2):
            round_(socks, paths, k, tags)
        server.wait_for_decodes(poll=1)
        before = set(glob.glob(os.path.join(out_dir, "callgrind.out.*")))
        cr.callgrind(proc.pid, "--zero")
        cr.callgrind(proc.pid, "--instr=on")
        for k in range(ROUNDS):
            round_(socks, paths, k, tags)
        cr.callgrind(proc.pid, "--instr=off")
        cr.callgrind(proc.pid, "--dump")
        time.sleep(1)
        files = sorted(set(glob.glob(os.path.join(out_dir, "callgrind.out.*"))) - before)
        events, totals = None, None
        for path in files:
            for line in open(path):
                if line.startswith("events:"):
                    events = line.split()[1:]
                if line.startswith("totals:"):
                    vals = [int(x) for x in line.split()[1:]]
                    totals = vals if totals is None else [a + b for a, b in zip(totals, vals)]
        n = CONNS * ROUNDS
        print(f"{os.environ.get('FLIPBOOK_BIN')} {METHOD} conns {CONNS} rounds {ROUNDS} log {ACCESS_LOG} LL {LL}")
        print("  " + "  ".join(f"{e} {t / n:,.1f}" for e, t in zip(events, totals)))
        print(f"  dumps: {' '.join(files)}")
        for s in socks:
            s.close()
    finally:
        cr.stop_under_callgrind(proc, log, work, "callgrind_connections", timeout=120)


if __name__ == "__main__":
    main()
