#!/usr/bin/env python3
"""A normal client's latency while hostile clients run (issue 34: "the hostile-clients phases back
within p99 ≤ 2× unloaded").

`flipbook serve` (FLIPBOOK_BIN, access log on, to a file) with the 100 cached frames of
`make bench-serve` (`cached_frames.warm`). A normal keep-alive client fetches REQUESTS of them one
after another alone, then during a phase below, phase after phase, ROUNDS times; each phase runs
HOSTILE connections in a process of their own (so that they do not share the normal client's
interpreter), started PHASE_WARMUP seconds before the normal client and stopped after it:

  chunk-zeros      POST /images chunked, a 100 KB chunk-size line of leading zeros; reconnect
  chunk-extension  the same with one 100 KB chunk extension
  big-head         a GET with a 100 KB header line; reconnect
  garbage          a request line of random bytes; reconnect
  slowloris        a head sent one header line a second, never finished; reconnect when closed
  non-readers      GETs pipelined as fast as the socket takes them, never read
  idle             connections opened and left silent; reconnect when closed

Reports each phase's p99 against the unloaded run just before it (on a machine shared with other
work the load drifts between phases), each round and the median (goal ≤ 2×), the hostile
connections made, and the load. Writes bench-out/hostile_p99/result.json.

  FLIPBOOK_BIN=.build/release/flipbook PYTHONPATH=scripts python3 -m bench.serve.hostile_p99

The one-connection-per-payload phases (chunk-*, big-head, garbage) open at most RATE connections a
second each (4: 200 a second with 50), so that they measure how the server shares its loop, not how
many cores the client machine has left over.

Environment: REQUESTS (3000), HOSTILE (50), RATE (4), ROUNDS (3), PHASES (all, space-separated names),
PHASE_WARMUP (1), PEER (unset; `nginx`: the same phases against nginx, configured as `make bench-serve` runs it
with its access log, serving the PNGs Flipbook made — a control for how much of a ratio
is the machine rather than the server under test; writes bench-out/hostile_p99-nginx/).
"""
import datetime
import json
import multiprocessing
import os
import random
import shutil
import statistics
import socket
import threading
import time

from benchlib import REPO, head_commit, log
from benchlib.keepalive import normal_client
from benchlib.machine import loadavg, machine
from benchlib.nginx import Nginx
from benchlib.server import BINARY, Server
from benchlib.stats import percentile
from bench.serve.cached_frames import warm

PEER = os.environ.get("PEER", "")
OUT = os.path.join(REPO, "bench-out", "hostile_p99" + (f"-{PEER}" if PEER else ""))
INPUTS = os.path.join(REPO, "bench-out", "inputs")
REQUESTS = int(os.environ.get("REQUESTS", "3000"))
HOSTILE = int(os.environ.get("HOSTILE", "50"))
WARMUP = float(os.environ.get("PHASE_WARMUP", "1"))
RATE = float(os.environ.get("RATE", "4"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
LINE = 100_000
CHUNKED = b"POST /images HTTP/1.1\r\nHost: bench\r\nTransfer-Encoding: chunked\r\nContent-Type: image/gif\r\n\r\n"


def send_and_drain(port, payload):
    """One connection: `payload` sent (as much as the server takes), read until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        try:
            sock.sendall(payload)
        except OSError:
            pass  # closed before taking it all
        try:
            while sock.recv(65536):
                pass
        except OSError:
            pass


def one_shot(payload_of):
    """A phase whose connections each send one payload and are closed by the server."""
    def run(port, stop, made):
        rng = random.Random()
        next_start = time.monotonic()
        while not stop.is_set():
            send_and_drain(port, payload_of(rng))
            made.append(1)
            next_start += 1 / RATE
            stop.wait(max(0.0, next_start - time.monotonic()))
    return run


def slowloris(port, stop, made):
    while not stop.is_set():
        with socket.create_connection(("127.0.0.1", port)) as sock:
            made.append(1)
            try:
                sock.sendall(b"GET / HTTP/1.1\r\nHost: bench\r\n")
                while not stop.wait(1):
                    sock.sendall(b"X-Slow: 1\r\n")
            except OSError:
                pass  # the server gave up on the head: open another


def idle(port, stop, made):
    while not stop.is_set():
        with socket.create_connection(("127.0.0.1", port)) as sock:
            made.append(1)
            sock.settimeout(1)
            while not stop.is_set():
                try:
                    if not sock.recv(1):
                        break  # closed by the server
                except socket.timeout:
                    continue
                except OSError:
                    break


def non_reader(paths):
    def run(port, stop, made):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        sock.settimeout(1)
        made.append(1)
        requests = b"".join(f"GET {p} HTTP/1.1\r\nHost: bench\r\n\r\n".encode() for p in paths)
        while not stop.is_set():
            try:
                sock.send(requests)
            except socket.timeout:
                continue
            except OSError:
                break
        sock.close()
    return run


# What each one-shot phase's connection sends (`rng` a random.Random); hostile_cpu.py sends the same.
# Each made in a few µs: the clients share the server's cores (512 bytes drawn one at a time in Python
# took 358 µs a connection and was most of the garbage phase's ratio, nginx's as much as Flipbook's).
PAYLOADS = {
    "chunk-zeros": lambda rng: CHUNKED + b"0" * (LINE - 3) + b"1\r\n",
    "chunk-extension": lambda rng: CHUNKED + b"1;x=" + b"a" * (LINE - 6) + b"\r\n",
    "big-head": lambda rng: b"GET / HTTP/1.1\r\nHost: bench\r\nX-Big: " + b"b" * LINE + b"\r\n\r\n",
    "garbage": lambda rng: rng.randbytes(512) + b"\r\n\r\n",
}


def phases(paths):
    return {
        **{name: one_shot(payload_of) for name, payload_of in PAYLOADS.items()},
        "slowloris": slowloris,
        "non-readers": non_reader(paths),
        "idle": idle,
    }


def hostile_process(name, port, paths, count, stop, made_total):
    """Runs `count` connections of phase `name` on threads until `stop` is set."""
    run = phases(paths)[name]
    stop_here = threading.Event()
    made = []
    threads = [threading.Thread(target=run, args=(port, stop_here, made), daemon=True) for _ in range(count)]
    for thread in threads:
        thread.start()
    stop.wait()
    stop_here.set()
    for thread in threads:
        thread.join(timeout=5)
    made_total.value = len(made)


def measure(server, paths, name):
    """The normal client's latencies while phase `name` runs, and the hostile connections made."""
    stop = multiprocessing.Event()
    made = multiprocessing.Value("i", 0)
    worker = multiprocessing.Process(target=hostile_process, args=(name, server.port, paths, HOSTILE, stop, made))
    worker.start()
    time.sleep(WARMUP)
    latencies = normal_client(server.port, paths, REQUESTS)
    stop.set()
    worker.join(timeout=30)
    if worker.is_alive():
        worker.kill()
    time.sleep(1)
    return latencies, made.value


def summary(latencies):
    return {"p50": percentile(latencies, 50), "p99": percentile(latencies, 99), "max": max(latencies)}


def main():
    names = os.environ.get("PHASES", "").split() or list(phases([]))
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    load_before = loadavg()
    server = Server(os.path.join(OUT, "data"), budget=256 << 20, log_path=os.path.join(OUT, "server.log"),
                    extra=["--set", "log.accessLog=true", "--set", f"log.accessLogFile={OUT}/access.log"])
    rows = {name: {"ratios": [], "p99": [], "p50": [], "connections": 0} for name in names}
    alone = []
    target = server
    try:
        if PEER == "nginx":
            # Flipbook makes the PNGs once; nginx serves those bytes under the same paths.
            paths, _ = warm(server, INPUTS, root=os.path.join(OUT, "root"))
            server.stop()
            target = Nginx(OUT, "hostile", os.path.join(OUT, "root"), access_log=True)
        elif PEER:
            raise SystemExit(f"PEER={PEER}: only nginx is known")
        else:
            paths, _ = warm(server, INPUTS)
        normal_client(target.port, paths, len(paths))
        for round_index in range(ROUNDS):
            for name in names:
                # Each phase against the unloaded run just before it: on a shared machine the
                # others' load drifts between phases.
                before = summary(normal_client(target.port, paths, REQUESTS))
                alone.append(before)
                latencies, made = measure(target, paths, name)
                row = rows[name]
                row["p50"].append(percentile(latencies, 50))
                row["p99"].append(percentile(latencies, 99))
                row["ratios"].append(row["p99"][-1] / before["p99"])
                row["connections"] += made
                log(f"hostile p99: round {round_index + 1} {name}: p99 {row['p99'][-1]:.3f} ms against "
                    f"{before['p99']:.3f} alone ({row['ratios'][-1]:.2f}×), {made} connections")
    finally:
        target.stop()
        if target is not server:
            server.stop()
    for row in rows.values():
        row["ratio"] = statistics.median(row["ratios"])
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "commit": head_commit(),
        "binary": "nginx" if PEER else BINARY, "machine": machine(), "requests": REQUESTS, "hostile": HOSTILE, "rate": RATE,
        "rounds": ROUNDS, "alone": alone, "phases": rows, "load": {"before": load_before, "after": loadavg()},
    }
    with open(os.path.join(OUT, "result.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(f"{result['date']}, {result['binary']}, load {load_before} → {result['load']['after']}; {ROUNDS} rounds of "
          f"{REQUESTS} requests, {HOSTILE} hostile connections per phase (one-shot ones at ≤ {RATE:g}/s each)")
    print("| phase | p99 ms (each round) | p99 ÷ the run alone before it (each round) | median | hostile connections | met (≤ 2×) |")
    print("|---|---|---|---:|---:|---|")
    for name, row in rows.items():
        print(f"| {name} | {' / '.join(f'{v:.3f}' for v in row['p99'])} | "
              f"{' / '.join(f'{v:.2f}×' for v in row['ratios'])} | {row['ratio']:.2f}× | {row['connections']:,} | "
              f"{'yes' if row['ratio'] <= 2 else '**no**'} |")
    alone_p99 = " / ".join(f"{run['p99']:.3f}" for run in alone)
    print(f"runs alone, p99 ms: {alone_p99}")

if __name__ == "__main__":
    main()
