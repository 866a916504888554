"""`make bench-http` (python3 -m bench.http, PYTHONPATH=scripts): nginx and http-bench-server
(HTTPServer alone, without the rest of Flipbook) serving the same 100 PNG-like payloads (5–60 KB)
from tmpfs / memory, measured with wrk on loopback, side by side.

Each connection count is measured REPEAT times, alternating which server goes first; the table
has the medians, and the servers' CPU time per request (from /proc; nginx: master and workers) as
a load-independent measure. nginx runs as operators run it for static files (benchlib.nginx:
sendfile, tcp_nopush, open_file_cache). BODIES=file (default) sends the test server's bodies with
sendfile from a tmpfs file, as Flipbook sends cached frames; BODIES=memory copies them from
[UInt8] into the socket.

Writes the table to OUT (bench-out/http.md) and prints it. Environment: DURATION=10
CONNECTIONS="8 64 512" WRK_THREADS=2 REPEAT=3 LOOPS=2 (the test server's event loops)
BODIES=file|memory OUT; NGINX_PORT / FLIPBOOK_PORT pin the ports (default: free ones).
"""
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

from benchlib import REPO, log, wrk
from benchlib.inputs import png_chunk, png_signature
from benchlib.machine import cpu_model
from benchlib.nginx import Nginx
from benchlib.ports import free_port

DURATION = int(os.environ.get("DURATION", "10"))
CONNECTIONS = [int(c) for c in os.environ.get("CONNECTIONS", "8 64 512").split()]
WRK_THREADS = int(os.environ.get("WRK_THREADS", "2"))
REPEAT = int(os.environ.get("REPEAT", "3"))
LOOPS = os.environ.get("LOOPS", "2")
BODIES = os.environ.get("BODIES", "file")
OUT = os.path.join(REPO, os.environ.get("OUT", "bench-out/http.md"))
SERVER_BIN = os.path.join(REPO, ".build-http", "release", "http-bench-server")

# Spreads requests over the 100 payload paths, a different order per wrk thread.
LUA = """local paths = {}
for i = 0, 99 do paths[#paths + 1] = string.format("/frame-%03d.png", i) end
local counter = 0
function init(args)
  counter = math.random(0, 99)
end
function request()
  counter = counter + 1
  return wrk.format("GET", paths[(counter % #paths) + 1])
end
"""


def payloads(directory):
    """100 distinct PNG-like files: a real signature and IHDR, then random IDAT data, 5–60 KB."""
    rng = random.Random(20261123)
    for i in range(100):
        size = rng.randint(5 * 1024, 60 * 1024)
        head = png_signature() + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 64 + i, 64, 8, 6, 0, 0, 0))
        tail = png_chunk(b"IEND", b"")
        body = rng.randbytes(max(0, size - len(head) - len(tail) - 12))
        with open(os.path.join(directory, f"frame-{i:03d}.png"), "wb") as f:
            f.write(head + png_chunk(b"IDAT", body) + tail)


def serves_payloads(port, directory):
    """Waits (up to 10 s) for `port` to answer, then checks it serves frame 42 byte for byte."""
    deadline = time.monotonic() + 10
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/frame-042.png", timeout=2) as response:
                body = response.read()
            break
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
    with open(os.path.join(directory, "frame-042.png"), "rb") as f:
        return body == f.read()


def main():
    log("bench-http: building http-bench-server (release)")
    subprocess.run(["timeout", "1800", "swift", "build", "-c", "release", "--scratch-path", ".build-http",
                    "--product", "http-bench-server"], cwd=REPO, check=True, stdout=sys.stderr)
    wrk.raise_descriptor_limit()
    work = tempfile.mkdtemp(prefix="flipbook-bench-http.", dir="/dev/shm")
    nginx = server = None
    try:
        root = os.path.join(work, "payloads")
        os.makedirs(root)
        payloads(root)
        lua = os.path.join(work, "paths.lua")
        with open(lua, "w") as f:
            f.write(LUA)
        nginx = Nginx(work, "http", root, port=int(os.environ.get("NGINX_PORT") or 0) or None)
        port = int(os.environ.get("FLIPBOOK_PORT") or 0) or free_port()
        with open(os.path.join(work, "server.log"), "wb") as server_log:
            server = subprocess.Popen([SERVER_BIN, root, str(port), LOOPS, BODIES], stdout=server_log,
                                      stderr=subprocess.STDOUT)
        servers = {"nginx": (nginx.port, nginx.pid), "flipbook": (port, server.pid)}
        for name, (p, _) in servers.items():
            if not serves_payloads(p, root):
                sys.exit(f"bench-http: {name} on {p} does not serve the payloads")
        table = ["| connections | nginx req/s | flipbook req/s | ratio | nginx p50 ms | flipbook p50 ms | nginx p99 ms "
                 "| flipbook p99 ms | p99 ratio | nginx CPU µs/req | flipbook CPU µs/req |",
                 "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for c in CONNECTIONS:
            rounds = {"nginx": [], "flipbook": []}
            for r in range(1, REPEAT + 1):
                # Alternate which server goes first, so that load from elsewhere hits both alike.
                for name in ("nginx", "flipbook") if r % 2 else ("flipbook", "nginx"):
                    p, pid = servers[name]
                    result = wrk.run(p, c, ("wrk", lua), os.path.join(work, f"wrk-{name}-{c}-{r}.txt"), pid,
                                     DURATION, WRK_THREADS)
                    rounds[name].append(result)
                    log(f"bench-http: {name} c={c} round {r}: {result['rps']:.0f} req/s, p50 {result['p50']:.3f} ms, "
                        f"p99 {result['p99']:.3f} ms, {result['cpuUsPerRequest']:.1f} µs CPU/req, "
                        f"errors: {result['errors'] or 'none'}")
            m = {name: {k: statistics.median(x[k] for x in rs) for k in ("rps", "p50", "p99", "cpuUsPerRequest")}
                 for name, rs in rounds.items()}
            n, f_ = m["nginx"], m["flipbook"]
            table.append(f"| {c} | {n['rps']:.0f} | {f_['rps']:.0f} | {f_['rps'] / n['rps']:.2f}× | {n['p50']:.2f} | "
                         f"{f_['p50']:.2f} | {n['p99']:.2f} | {f_['p99']:.2f} | {f_['p99'] / n['p99']:.2f}× | "
                         f"{n['cpuUsPerRequest']:.1f} | {f_['cpuUsPerRequest']:.1f} |")
        os.makedirs(os.path.dirname(OUT), exist_ok=True)
        with open(OUT, "w") as f:
            f.write("\n".join(table) + "\n")
        print(f"\nHTTP serving: median of {REPEAT} rounds of {DURATION}s, wrk -t{WRK_THREADS}, keep-alive, 100 "
              f"payloads of 5–60 KB, flipbook's bodies from {BODIES}, nginx with open_file_cache; {os.cpu_count()} cores "
              f"({cpu_model()})")
        print("\n".join(table))
    finally:
        if server is not None:
            server.kill()
            server.wait()
        if nginx is not None:
            nginx.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
