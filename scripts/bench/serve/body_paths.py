"""`make bench-body-paths` (python3 -m bench.serve.body_paths, PYTHONPATH=scripts): the three ways of sending a cached frame's body, measured alone.

The 100 frames of `make bench-serve` (asked once from a flipbook server, written to a tmpfs
directory) are served by bodypath.c — a minimal 2-thread epoll server, so that nothing but the
body path differs — with writev (one sendmsg of head and body from user memory), sendfile (the
body from a memfd, the head before it with MSG_MORE) and MSG_ZEROCOPY (one sendmsg, pages pinned,
completions read from the error queue). wrk -t2 -c CONNECTIONS, a 2 s warm-up then DURATION s, the
modes in turn, ROUNDS rounds with the order rotated; medians of the server's CPU per request
(user + system from /proc/PID/stat, which the rest of the machine's load disturbs far less than
req/s) and of req/s.

Prints the table and writes it (BENCH_WRITE=0 to skip), with body-paths-notes.md, as the section
"Sending a cached frame's body" of docs/benchmarks/serving.md.

  make bench-body-paths DURATION=5 ROUNDS=5 CONNECTIONS=64 BENCH_WRITE=1

MODES chooses the paths (default "writev sendfile zerocopy"); "vmsplice" is a fourth: the body's
pages taken from the memfd's mapping into a pipe by vmsplice(2) and spliced to the socket
(docs/benchmarks/serving.md, twentieth round: no cheaper than sendfile).
"""
import datetime
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from benchlib import REPO, head_commit, log, wrk
from benchlib.machine import loadavg, machine
from benchlib.ports import free_port
from benchlib.server import Server
from benchlib.splice import replace_section
from bench.serve import cached_frames
from bench.serve.prepare import INPUTS, prepare

DURATION = int(os.environ.get("DURATION", "5"))
ROUNDS = int(os.environ.get("ROUNDS", "5"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "64"))
WRITE = os.environ.get("BENCH_WRITE", "1") == "1"
MODES = os.environ.get("MODES", "writev sendfile zerocopy").split()
SECTION = "Sending a cached frame's body"
LABELS = {
    "writev": "one `sendmsg` of head + body from user memory (the kernel copies the body)",
    "sendfile": "head with `MSG_MORE`, body by `sendfile(2)` from a memfd (page references, no copy)",
    "zerocopy": "one `sendmsg` with `MSG_ZEROCOPY` (pages pinned; completions read from the error queue)",
    "vmsplice": "head with `MSG_MORE`, body's pages from the memfd's mapping by `vmsplice(2)` into a pipe, "
                "`splice(2)` to the socket",
}
if not MODES or set(MODES) - set(LABELS):
    raise SystemExit(f"MODES={' '.join(MODES)!r}: expected some of {', '.join(LABELS)}")


def main():
    prepare()
    here = os.path.dirname(os.path.abspath(__file__))
    work = tempfile.mkdtemp(prefix="flipbook-body-paths.", dir="/dev/shm")
    try:
        binary = os.path.join(work, "bodypath")
        subprocess.run(["cc", "-O2", "-o", binary, os.path.join(here, "bodypath.c"), "-lpthread"], check=True)
        root = os.path.join(work, "root")
        server = Server(os.path.join(work, "data"), budget=1 << 30, log_path=os.path.join(work, "server.log"))
        try:
            paths, sizes = cached_frames.warm(server, INPUTS, root)
        finally:
            server.stop()
        lua = cached_frames.load_for(work, "bodypath", "200", paths, {p: "" for p in paths}, None)
        results = {mode: [] for mode in MODES}
        load_before = loadavg()
        for round_ in range(ROUNDS):
            order = MODES[round_ % len(MODES):] + MODES[:round_ % len(MODES)]
            for mode in order:
                port = free_port()
                proc = subprocess.Popen([binary, root, str(port), mode], stderr=subprocess.DEVNULL)
                time.sleep(0.5)
                try:
                    row = wrk.run(port, CONNECTIONS, lua, os.path.join(work, f"wrk-{mode}.txt"), proc.pid,
                                  DURATION, cached_frames.WRK_THREADS)
                finally:
                    proc.kill()
                    proc.wait()
                results[mode].append(row)
                log(f"body paths: round {round_ + 1} {mode}: {row['rps']:,.0f} req/s, "
                       f"{row['cpuUsPerRequest']:.1f} µs CPU per request")
        commit = head_commit()
        lines = [
            f"`make bench-body-paths` (scripts/bench/serve/body_paths.py → bodypath.c), "
            f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}, commit {commit}, {machine()}. The "
            f"{len(paths)} frames of `make bench-serve` ({min(sizes) // 1024}–{max(sizes) // 1024} KiB, median "
            f"{sorted(sizes)[len(sizes) // 2] // 1024} KiB) served by a minimal 2-thread epoll server in C, so that "
            f"nothing but the body path differs; wrk -t{cached_frames.WRK_THREADS} -c{CONNECTIONS}, {ROUNDS} rounds of "
            f"a 2 s warm-up then {DURATION} s per path, the order rotated each round; medians (min–max). Load average "
            f"{load_before} before, {loadavg()} after.",
            "",
            "| body path | server CPU µs per request | req/s |",
            "|---|---:|---:|",
        ]
        for mode in MODES:
            cpu = [r["cpuUsPerRequest"] for r in results[mode]]
            rps = [r["rps"] for r in results[mode]]
            lines.append(f"| {mode}: {LABELS[mode]} | {statistics.median(cpu):.1f} ({min(cpu):.1f}–{max(cpu):.1f}) | "
                         f"{statistics.median(rps):,.0f} ({min(rps):,.0f}–{max(rps):,.0f}) |")
        notes = os.path.join(here, "body-paths-notes.md")
        if os.path.exists(notes):
            lines += ["", open(notes).read().strip()]
        report = "\n".join(lines)
        print(report)
        if WRITE:
            replace_section(os.path.join(REPO, "docs", "benchmarks", "serving.md"), SECTION, report)
            log(f"body paths: docs/benchmarks/serving.md section '{SECTION}' written")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
