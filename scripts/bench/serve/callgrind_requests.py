#!/usr/bin/env python3
"""Instructions per cached frame request, counted by valgrind's callgrind: repeatable on a shared,
noisy machine where times are not.

Starts `flipbook serve` under `valgrind --tool=callgrind --instr-atstart=no`, uploads the three
small bench inputs, warms the same 100 frames `make bench-serve` uses, then, for each kind of
request, waits until the decode-ahead has stopped (the requests before may have woken it),
switches instrumentation on, sends REQUESTS requests over one keep-alive
connection (rotating over the 100 frames), switches it off and dumps. Reports the server's
instructions (user space: every thread of the process; the kernel's share is not counted) per
request, for GET (200), GET with a matching If-None-Match (304) and HEAD.

  FLIPBOOK_BIN=.build-playback/release/flipbook REQUESTS=2000 ACCESS_LOG=1 \
      PYTHONPATH=scripts python3 -m bench.serve.callgrind_requests

With RENDITION set (e.g. RENDITION='width=320&format=webp&quality=80', issue 21's hit-path goal),
the same 100 frames are then asked for once more with that query (the rendition's frames cached
and its decode-ahead waited out), and the three kinds are counted again for `path?RENDITION` in
the same process, after the full-size ones: the report gives each kind's ratio rendition ÷
full size. KEEP=1 keeps the dumps (in the order full size GET 200, 304, HEAD, then the
rendition's) for callgrind_annotate or `callgrind_calls.py DIR REQUESTS 6`. HEADERS=browser sends
the field lines a browser sends with an image request besides `Host` (BROWSER_HEADERS below).
"""
import glob
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

from benchlib import REPO, log
from benchlib.ports import free_port, wait_until_listening
from benchlib.server import BINARY, Server
from bench.serve.cached_frames import warm

INPUTS = os.path.join(REPO, "bench-out", "inputs")
REQUESTS = int(os.environ.get("REQUESTS", "2000"))
ACCESS_LOG = os.environ.get("ACCESS_LOG", "1") == "1"
RENDITION = os.environ.get("RENDITION", "")
# HEADERS=browser: each request also carries the header lines Chromium sends with an <img> request
# (about 600 bytes; the Accept line is the one it sends for images), not only Host.
BROWSER_HEADERS = (
    "Connection: keep-alive\r\n"
    'sec-ch-ua-platform: "Linux"\r\n'
    "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
    "Safari/537.36\r\n"
    'sec-ch-ua: "Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"\r\n'
    "sec-ch-ua-mobile: ?0\r\n"
    "Accept: image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8\r\n"
    "Sec-Fetch-Site: same-origin\r\n"
    "Sec-Fetch-Mode: no-cors\r\n"
    "Sec-Fetch-Dest: image\r\n"
    "Referer: http://127.0.0.1/player.html\r\n"
    "Accept-Encoding: gzip, deflate, br, zstd\r\n"
    "Accept-Language: en-US,en;q=0.9\r\n"
)
HEADER_SETS = {"": "", "browser": BROWSER_HEADERS}
if os.environ.get("HEADERS", "") not in HEADER_SETS:
    raise SystemExit(f"HEADERS={os.environ['HEADERS']!r}: expected browser (or unset)")
HEADERS = HEADER_SETS[os.environ.get("HEADERS", "")]

# valgrind 3.19 (Debian 12) rewrites the signal mask given to sigsuspend in place; libdispatch's
# signal thread passes one in read-only memory, which crashes valgrind itself. This preload hands
# sigsuspend a writable copy.
SIGSUSPEND_SHIM = r"""
#define _GNU_SOURCE
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>
int sigsuspend(const sigset_t *mask) {
  sigset_t copy = *mask;
  return syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}
"""


def read_response(sock, buf, head_only):
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise RuntimeError("connection closed")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    m = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
    length = int(m.group(1)) if m and not head_only and status != 304 else 0
    while len(rest) < length:
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise RuntimeError("connection closed")
        rest += chunk
    headers = {k.strip().lower(): v.strip() for k, _, v in
               (line.partition(b":") for line in head.split(b"\r\n")[1:])}
    return status, headers, rest[length:]


def run_requests(port, paths, count, method="GET", etags=None):
    sock = socket.create_connection(("127.0.0.1", port))
    buf = b""
    statuses = {}
    for i in range(count):
        path = paths[i % len(paths)]
        extra = f"If-None-Match: {etags[path]}\r\n" if etags else ""
        sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{HEADERS}{extra}\r\n".encode())
        status, _, buf = read_response(sock, buf, method == "HEAD")
        statuses[status] = statuses.get(status, 0) + 1
    sock.close()
    return statuses


def callgrind(pid, *args):
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, stdout=subprocess.DEVNULL)


def total_instructions(out_dir, before):
    """The instructions of the dumps written since `before` (one file per dump)."""
    files = sorted(set(glob.glob(os.path.join(out_dir, "callgrind.out.*"))) - before)
    total = 0
    for path in files:
        with open(path) as f:
            for line in f:
                if line.startswith("totals:"):
                    total += int(line.split()[1])
    return total, files


def stop_under_callgrind(proc, server_log, work, name, timeout):
    """Ends a server run under callgrind (valgrind takes its time to exit) and removes its
    scratch directory unless KEEP=1."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
    server_log.close()
    if os.environ.get("KEEP") != "1":
        shutil.rmtree(work, ignore_errors=True)
    else:
        log(f"{name}: kept {work}")


def under_callgrind(work):
    """(the command that starts the flipbook binary under callgrind, instrumentation off until
    `callgrind_control --instr=on`; the SIGSUSPEND shim to preload; the directory its counts go
    to), all made in `work`."""
    # Debian 12's valgrind (3.19) cannot read the DWARF 5 debug information Swift 6 writes: count
    # instructions on a copy without it (symbols stay, so callgrind_annotate still names functions).
    binary = os.path.join(work, "flipbook")
    shutil.copy(BINARY, binary)
    subprocess.run(["strip", "--strip-debug", binary], check=True)
    shim = os.path.join(work, "sigsuspend_shim.so")
    with open(shim + ".c", "w") as f:
        f.write(SIGSUSPEND_SHIM)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", shim, shim + ".c"], check=True)
    out_dir = os.path.join(work, "cg")
    os.makedirs(out_dir)
    # CALLGRIND_OPTS adds options, e.g. `--dump-instr=yes` for costs per instruction address
    # (mapped to source lines with `addr2line` on the unstripped binary: callgrind_sites.py).
    command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", *os.environ.get("CALLGRIND_OPTS", "").split(),
               f"--callgrind-out-file={out_dir}/callgrind.out.%p.%n", binary]
    return command, shim, out_dir


def main():
    work = tempfile.mkdtemp(prefix="flipbook-callgrind.")
    valgrind, shim, out_dir = under_callgrind(work)
    port = free_port()
    args = valgrind + ["serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", os.path.join(work, "data"),
            "--cache-max-bytes", str(1 << 30), "--set", f"log.accessLog={'true' if ACCESS_LOG else 'false'}"]
    server_log = open(os.path.join(work, "server.log"), "wb")
    proc = subprocess.Popen(args, stdout=server_log, stderr=subprocess.STDOUT, cwd=REPO,
                            # libvips's orc JIT code (scaling a rendition) crashes under valgrind:
                            # its plain C paths instead (hits scale nothing; only warming does).
                            env=dict(os.environ, LD_PRELOAD=shim, VIPS_NOVECTOR="1"))
    try:
        wait_until_listening(proc, port, 300, "server", server_log.name)
        server = Server.__new__(Server)
        server.port = port
        etags = {}
        paths, _ = warm(server, INPUTS, etags=etags, timeout=600, poll=1)
        run_requests(port, paths, 200)  # warm the connection path
        results = {}
        kinds = [("GET 200", "GET", None, paths), ("GET 304", "GET", etags, paths), ("HEAD", "HEAD", None, paths)]
        if RENDITION:
            # The rendition of the same 100 frames, each asked for once (cached with its answers).
            rpaths = [f"{p}?{RENDITION}" for p in paths]
            for path in rpaths:
                status, headers, _ = server.request("GET", path, timeout=600)
                if status != 200:
                    raise RuntimeError(f"{path}: {status}")
                etags[path] = headers.get("ETag") or headers.get("Etag")
            server.wait_for_decodes(poll=1)
            run_requests(port, rpaths, 200)
            kinds += [
                ("rendition GET 200", "GET", None, rpaths), ("rendition GET 304", "GET", etags, rpaths),
                ("rendition HEAD", "HEAD", None, rpaths)]
        for label, method, tags, kind_paths in kinds:
            # The requests before this run moved the playhead, which may have woken the
            # decode-ahead: let it finish so that no decoding is counted with the requests.
            server.wait_for_decodes(poll=1)
            stats_before = server.json("/stats")
            before = set(glob.glob(os.path.join(out_dir, "callgrind.out.*")))
            callgrind(proc.pid, "--zero")
            callgrind(proc.pid, "--instr=on")
            statuses = run_requests(port, kind_paths, REQUESTS, method, tags)
            callgrind(proc.pid, "--instr=off")
            callgrind(proc.pid, "--dump")
            time.sleep(1)
            total, files = total_instructions(out_dir, before)
            stats_after = server.json("/stats")
            # Every request a hit (304s and HEADs included): no miss, no decode in the window.
            statuses.update({f"cache {k}": stats_after[k] - stats_before[k] for k in ("hits", "misses", "decodes")})
            results[label] = (total / REQUESTS, statuses)
            log(f"callgrind: {label}: {total / REQUESTS:,.0f} instructions per request ({statuses}; {len(files)} dump files)")
        print(f"binary {BINARY}, access log {'on' if ACCESS_LOG else 'off'}, {REQUESTS} requests each:")
        for label, (per, statuses) in results.items():
            ratio = ""
            if label.startswith("rendition "):
                ratio = f"  ({per / results[label[len('rendition '):]][0]:.3f}× full size)"
            print(f"  {label}: {per:,.0f} instructions per request  {statuses}{ratio}")
        if RENDITION:
            print(f"  (rendition: ?{RENDITION})")
    finally:
        stop_under_callgrind(proc, server_log, work, "callgrind", timeout=120)


if __name__ == "__main__":
    main()
