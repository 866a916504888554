"""Part (a) of `make bench-serve`: cached frames, flipbook against nginx serving the same bytes.

100 frames (34 of small.gif, 33 of small-lossy.webp, 33 of small.apng, spread over each
animation) are fetched once from flipbook so they are in its cache (budget 1 GiB; the
decode-ahead that follows is waited out), and the same PNG bytes are written to a tmpfs directory
under the same URL paths for nginx, configured as operators run it for static files:
`worker_processes 2; sendfile on; tcp_nopush on; tcp_nodelay on; open_file_cache max=1000
inactive=60s;`. Two logging modes, each side by side:

- logs on: flipbook with its defaults (access log on, to stderr, which the benchmark sends to a
  file) against nginx with its default `access_log FILE combined;` (one write per request);
- logs off: flipbook with `--set log.accessLog=false` against nginx with `access_log off;`.

For each mode, each kind of request (GET → 200, GET with the frame's `If-None-Match` → 304, HEAD)
and each connection count, wrk (-t WRK_THREADS, keep-alive, a Lua script rotating over the 100
URLs, each thread starting at a different one) runs against the two servers in ROUNDS blocks of
four, nginx, flipbook, flipbook, nginx then flipbook, nginx, nginx, flipbook and so on — a 2 s
warm-up then DURATION seconds each — and each figure is the median of a server's 2 × ROUNDS runs.
One run's CPU per request moves by up to 30% with where the scheduler puts the four busy threads on
the two cores (docs/benchmarks/serving.md, "Eight connections"); the median of four or more, taken
in alternating order, is what a 5% difference can be read from. wrk
cannot measure HEAD (its parser waits for the body the response announces, wg/wrk#198): HEAD rows
use httpload.c, a small load generator built here that works the same way and prints wrk's lines.
Server CPU per request is the user + system CPU of the server's processes (nginx: master and
workers; flipbook: every thread, its access-log writer included) during the run divided by the
requests, read from /proc/PID/stat: it depends much less on the rest of the machine than req/s.
Its user-space part is reported too (the rest is the kernel's: TCP over loopback, sendfile).

A third mode, `heap` (not run by default), is logs off with flipbook's frames kept on the heap and
copied into the socket by `sendmsg` (`--set cache.frameArena=false`) instead of sent from its
memory file with `sendfile`: the body path measured in the real server.

Each row's CPU ratio comes with a 90% bootstrap interval (`benchlib.stats.median_ratio_interval`
over the two servers' runs): how far the spread between runs alone could move it.

CONTENDER=nginx puts a second nginx, configured as the first and serving the same files, in
flipbook's place (flipbook still makes the frames): the harness measured against itself, which
says how often a server that costs exactly what nginx costs would come out over 1.0 in a row
(`same_server.py` runs it and reports that).

Environment: DURATION (5), ROUNDS (2), CONNECTIONS ("8 64 256"), WRK_THREADS (2), MODES ("on off";
"heap" too), KINDS ("200 304 HEAD"), CONTENDER ("flipbook"; or "nginx").
"""
import http.client
import os
import statistics
import subprocess

from benchlib import log, wrk
from benchlib.machine import loadavg
from benchlib.nginx import Nginx
from benchlib.sampler import busy_processes
from benchlib.server import Server
from benchlib.stats import median_ratio_interval

DURATION = int(os.environ.get("DURATION", "5"))
ROUNDS = int(os.environ.get("ROUNDS", "2"))
CONNECTIONS = [int(c) for c in os.environ.get("CONNECTIONS", "8 64 256").split()]
WRK_THREADS = int(os.environ.get("WRK_THREADS", "2"))
MODES = os.environ.get("MODES", "on off").split()
KINDS = os.environ.get("KINDS", "200 304 HEAD").split()
CONTENDER = os.environ.get("CONTENDER", "flipbook")
CONTENDERS = ("flipbook", "nginx")
CACHED_SET = [("small.gif", 34), ("small-lossy.webp", 33), ("small.apng", 33)]

GOALS = {
    "on": {"ratio": 1.3, "cpu": 0.7},
    "off": {"ratio": 1.1, "cpu": 1.0},
    "heap": {"ratio": 1.1, "cpu": 1.0},
}
# Per mode: flipbook's extra flags, and nginx's access log (on or off).
MODE_SETTINGS = {
    "on": (["--set", "log.accessLog=true"], "on"),
    "off": ([], "off"),
    "heap": (["--set", "cache.frameArena=false"], "off"),
}

LUA = """-- Rotates over the 100 frame URLs ({kind}); each wrk thread starts at a different one.
local paths = {{ {paths} }}
local etags = {{ {etags} }}
local counter = 0
local threads = 0
function setup(thread)
  thread:set("start", threads * 37)
  threads = threads + 1
end
function init(args)
  counter = start or 0
end
function request()
  counter = counter + 1
  local i = (counter % #paths) + 1
  {request}
end
"""

REQUESTS = {
    "200": 'return wrk.format("GET", paths[i])',
    "304": 'return wrk.format("GET", paths[i], {["If-None-Match"] = etags[i]})',
}


def run_wrk(port, conns, load, log_path, pid):
    return wrk.run(port, conns, load, log_path, pid, DURATION, WRK_THREADS)


FIGURES = ("rps", "p50", "p99", "cpuUsPerRequest", "userUsPerRequest", "generatorUsPerRequest",
           "machineUsPerRequest", "machineBusy", "serverPreemptionsPerRequest", "generatorSleepsPerRequest")


def median_runs(runs):
    """Each figure's median over one server's runs of a row (each figure on its own), the errors
    of all of them and every run's req/s."""
    out = {key: statistics.median(run[key] for run in runs) for key in FIGURES}
    out.update(errors="; ".join(run["errors"] for run in runs if run["errors"]), rpsRuns=[run["rps"] for run in runs])
    return out


def block_order(block):
    """The servers' order in block `block` of a row: nginx, flipbook, flipbook, nginx, then the
    reverse, so that neither server always runs first or last."""
    ends, middle = ("nginx", "flipbook") if block % 2 == 0 else ("flipbook", "nginx")
    return (ends, middle, middle, ends)


def get(port, path, headers=None, method="GET"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def warm(server, inputs, root=None, etags=None, timeout=60, poll=0.5):
    """Uploads the inputs, asks for the 100 frames once (writing them under `root`, their ETags
    into `etags`), waits out the decode-ahead; returns the paths and their sizes."""
    paths, sizes = [], []
    for name, count in CACHED_SET:
        meta, _ = server.upload(os.path.join(inputs, name))
        n = meta["frameCount"]
        for j in range(count):
            path = f"/frames/{meta['id']}/{j * n // count}"
            status, headers, body = server.request("GET", path, timeout=timeout)
            if status != 200:
                raise RuntimeError(f"{path}: {status}")
            if etags is not None:
                etags[path] = headers.get("ETag") or headers.get("Etag")
            if root:
                os.makedirs(os.path.dirname(root + path), exist_ok=True)
                with open(root + path, "wb") as f:
                    f.write(body)
            paths.append(path)
            sizes.append(len(body))
    server.wait_for_decodes(poll=poll)
    return paths, sizes


def load_for(work, name, kind, paths, etags, httpload):
    """How to load a server with `kind` requests: wrk and a Lua script, or httpload for HEAD."""
    if kind == "HEAD":
        path = os.path.join(work, "paths.txt")
        with open(path, "w") as f:
            f.write("".join(p + "\n" for p in paths))
        return ("httpload", httpload, path)
    path = os.path.join(work, f"{name}-{kind}.lua")
    with open(path, "w") as f:
        f.write(LUA.format(kind=kind, paths=", ".join(f'"{p}"' for p in paths),
                           etags=", ".join('"' + etags[p].replace('"', '\\"') + '"' for p in paths),
                           request=REQUESTS[kind]))
    return ("wrk", path)


def run(work, inputs, out):
    if CONTENDER not in CONTENDERS:
        raise SystemExit(f"CONTENDER={CONTENDER!r}: expected one of {', '.join(CONTENDERS)}")
    root = os.path.join(work, "root")
    os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
    httpload = os.path.join(work, "httpload")
    subprocess.run(["cc", "-O2", "-o", httpload, os.path.join(os.path.dirname(os.path.abspath(__file__)), "httpload.c"),
                    "-lpthread"], check=True)
    servers, nginxes, contenders = {}, {}, {}
    result = {"modes": {}, "duration": DURATION, "rounds": ROUNDS, "wrkThreads": WRK_THREADS, "contender": CONTENDER}
    try:
        for mode in MODES:
            extra = MODE_SETTINGS[mode][0]
            servers[mode] = Server(os.path.join(work, f"data-{mode}"), budget=1 << 30, extra=extra,
                                      log_path=os.path.join(work, f"flipbook-{mode}.stderr"))
        paths, sizes = None, None
        for mode in MODES:
            paths, sizes = warm(servers[mode], inputs, root if paths is None else None)
        for logging in sorted({MODE_SETTINGS[mode][1] for mode in MODES}):
            nginxes[logging] = Nginx(work, logging, root, access_log=logging == "on")
            if CONTENDER == "nginx":
                contenders[logging] = Nginx(work, f"{logging}-contender", root, access_log=logging == "on")
        # Each mode's server for the "flipbook" runs (port, pid): flipbook itself, or the second nginx.
        measured = {}
        for mode in MODES:
            server = contenders.get(MODE_SETTINGS[mode][1], servers[mode])
            measured[mode] = (server.port, server.pid)
        # Same bytes from both; each server's own ETags for the 304 rows.
        etags = {}
        for mode in MODES:
            nginx_port = nginxes[MODE_SETTINGS[mode][1]].port
            etags[mode] = {"nginx": {}, "flipbook": {}}
            for path in paths:
                ns, nh, nb = get(nginx_port, path)
                fs, fh, fbody = get(measured[mode][0], path)
                if ns != 200 or fs != 200 or nb != fbody:
                    raise RuntimeError(f"nginx and flipbook differ on {path} ({ns}, {fs})")
                etags[mode]["nginx"][path] = nh["etag"]
                etags[mode]["flipbook"][path] = fh["etag"]
            for name, port in (("nginx", nginx_port), ("flipbook", measured[mode][0])):
                status, _, _ = get(port, paths[0], {"If-None-Match": etags[mode][name][paths[0]]})
                if status != 304:
                    raise RuntimeError(f"{name} answered {status} to a matching If-None-Match")
        result["frameBytes"] = {"min": min(sizes), "median": sorted(sizes)[len(sizes) // 2], "max": max(sizes),
                                "count": len(sizes)}
        result["load"] = {"before": loadavg(), "busyBefore": busy_processes(
            exclude=tuple(s.pid for s in servers.values()))}
        for mode in MODES:
            server = servers[mode]
            nginx = nginxes[MODE_SETTINGS[mode][1]]
            nginx_port = nginx.port
            stats_before = server.json("/stats")
            rows = []
            for kind in KINDS:
                luas = {name: load_for(work, f"{name}-{mode}", kind, paths, etags[mode][name], httpload)
                        for name in ("nginx", "flipbook")}
                targets = {"nginx": (nginx_port, nginx.pid), "flipbook": measured[mode]}
                for conns in CONNECTIONS:
                    log(f"bench-serve: logs {mode}, {kind}, wrk -c{conns}: {ROUNDS} blocks of 4 runs")
                    stem = os.path.join(out, f"wrk-{mode}-{kind}-{conns}")
                    runs = {"nginx": [], "flipbook": []}
                    for block in range(ROUNDS):
                        for name in block_order(block):
                            port, pid = targets[name]
                            runs[name].append(run_wrk(port, conns, luas[name],
                                                      f"{stem}-{name}-{len(runs[name]) + 1}.txt", pid))
                    interval = median_ratio_interval([r["cpuUsPerRequest"] for r in runs["flipbook"]],
                                                     [r["cpuUsPerRequest"] for r in runs["nginx"]])
                    rows.append({"kind": kind, "connections": conns, "nginx": median_runs(runs["nginx"]),
                                 "flipbook": median_runs(runs["flipbook"]), "runs": runs,
                                 "cpuRatioInterval": list(interval)})
            stats_after = server.json("/stats")
            result["modes"][mode] = {
                "rows": rows, "hits": stats_after["hits"] - stats_before["hits"],
                "misses": stats_after["misses"] - stats_before["misses"],
                "accessLog": stats_after.get("accessLog"),
            }
        result["load"].update(after=loadavg(), busyAfter=busy_processes(
            exclude=tuple(s.pid for s in servers.values())))
        return result
    finally:
        for server in servers.values():
            server.stop()
        for nginx in list(nginxes.values()) + list(contenders.values()):
            nginx.stop()


def order(c):
    """How the runs of a row were taken, as the results say (results from before ROUNDS had one
    block and the mean of two runs)."""
    if "rounds" not in c:
        return "in the order nginx, flipbook, flipbook, nginx; each figure is the mean of a server's two runs"
    return (f"in {c['rounds']} block(s) of four runs, nginx, flipbook, flipbook, nginx, then the reverse; "
            f"each figure is the median of a server's {2 * c['rounds']} runs")


def render(c):
    met = lambda ok: "**met**" if ok else "**not met**"  # noqa: E731
    fbytes = c["frameBytes"]
    lines = [
        f"{fbytes['count']} frames (34 of `small.gif`, 33 of `small-lossy.webp`, 33 of `small.apng`; PNGs of "
        f"{fbytes['min'] / 1024:.0f}–{fbytes['max'] / 1024:.0f} KiB, median {fbytes['median'] / 1024:.0f} KiB) "
        "warmed in flipbook's cache; the same bytes in tmpfs for nginx as operators run it for static files "
        "(`worker_processes 2; sendfile on; tcp_nopush on; tcp_nodelay on; open_file_cache max=1000 inactive=60s;`) "
        f"under the same URLs. wrk -t{c['wrkThreads']}, keep-alive, a Lua script rotating over the URLs; a 2 s warm-up "
        f"then {c['duration']} s per run, {order(c)} (req/s of each run in brackets). *Logs on*: flipbook's defaults (access log on, to stderr, sent "
        "to a file) vs nginx's default `access_log FILE combined;`. *Logs off*: `--set log.accessLog=false` vs "
        "`access_log off;`. *304*: GET with the frame's own `If-None-Match`; *HEAD*: no body. Server CPU per request "
        "= user + system CPU of the server's processes during the run ÷ requests (`/proc/PID/stat`; flipbook's "
        "access-log writer thread included; in brackets its user-space part, the rest being the kernel's). Load average "
        f"{c['load']['before']} before, {c['load']['after']} after (CPU of other processes over 1 s before: "
        f"{c['load']['busyBefore']}; after: {c['load']['busyAfter']}).",
    ]
    titles = {"on": "Logs on", "off": "Logs off",
              "heap": "Logs off, flipbook's frames on the heap (`cache.frameArena=false`: copied into the socket by sendmsg)"}
    for mode in ("on", "off", "heap"):
        if mode not in c["modes"]:
            continue
        m = c["modes"][mode]
        goal = GOALS[mode]
        log = m.get("accessLog") or {}
        lines += [
            "",
            f"**{titles[mode]}** (goals: req/s ≥ {goal['ratio']}× nginx's, p99 ≤ nginx's, CPU per request ≤ "
            f"{goal['cpu']}× nginx's). flipbook's cache answered {m['hits']:,} hits and {m['misses']:,} misses"
            + (f"; its access log wrote {log.get('linesWritten', 0):,} lines and dropped "
               f"{log.get('linesDropped', 0):,}." if mode == "on" else "."),
            "",
            "| request | conns | nginx req/s | flipbook req/s | ratio | nginx p50 / p99 ms | flipbook p50 / p99 ms | p99 | "
            "CPU µs/req nginx / flipbook (user part) | CPU ratio (90% interval) | errors |",
            "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|",
        ]
        for row in m["rows"]:
            n, f_ = row["nginx"], row["flipbook"]
            ratio = f_["rps"] / n["rps"]
            cpu_ratio = f_["cpuUsPerRequest"] / n["cpuUsPerRequest"]
            errs = "; ".join(x for x in (("nginx: " + n["errors"]) if n["errors"] else "",
                                          ("flipbook: " + f_["errors"]) if f_["errors"] else "") if x) or "none"
            nr = "/".join(f"{x:,.0f}" for x in n["rpsRuns"])
            fr = "/".join(f"{x:,.0f}" for x in f_["rpsRuns"])
            label = {"200": "GET 200", "304": "GET 304", "HEAD": "HEAD 200"}[row["kind"]]
            lines.append(
                f"| {label} | {row['connections']} | {n['rps']:,.0f} ({nr}) | {f_['rps']:,.0f} ({fr}) | "
                f"{ratio:.2f}× {met(ratio >= goal['ratio'])} | {n['p50']:.2f} / {n['p99']:.2f} | "
                f"{f_['p50']:.2f} / {f_['p99']:.2f} | {met(f_['p99'] <= n['p99'])} | "
                f"{n['cpuUsPerRequest']:.1f} ({n['userUsPerRequest']:.1f}) / {f_['cpuUsPerRequest']:.1f} "
                f"({f_['userUsPerRequest']:.1f}) | {cpu_ratio:.2f}{interval_text(row)} {met(cpu_ratio <= goal['cpu'])} | "
                f"{errs} |")
    lines += ceiling_table(c)
    return "\n".join(lines)


def interval_text(row):
    """' (0.91–1.04)': the row's CPU ratio's bootstrap interval ('' for results from before it)."""
    if "cpuRatioInterval" not in row:
        return ""
    low, high = row["cpuRatioInterval"]
    return f" ({low:.2f}–{high:.2f})"


def ceiling(row):
    """The most req/s any server could reach, as a multiple of nginx's, if it spent no user-space
    time at all and kept flipbook's kernel work: both load generator and server share the same
    cores, so with the machine busy, req/s ≈ cores ÷ machine CPU per request, and removing the
    server's user-space time is the most a server can change."""
    n, f_ = row["nginx"], row["flipbook"]
    return n["machineUsPerRequest"] / (f_["machineUsPerRequest"] - f_["userUsPerRequest"])


def switches(n, f_):
    """The switches cell of a row ('–' for results recorded before they were counted)."""
    if "serverPreemptionsPerRequest" not in f_:
        return "–"
    return (f"{n['serverPreemptionsPerRequest']:.2f}, {n['generatorSleepsPerRequest']:.2f} / "
            f"{f_['serverPreemptionsPerRequest']:.2f}, {f_['generatorSleepsPerRequest']:.2f}")


def ceiling_table(c):
    """What the machine allows: where each request's CPU goes (the whole machine's, the load
    generator's, the server's user space) and the ceiling above. Empty for results recorded before
    these figures were."""
    rows = [(mode, row) for mode in ("on", "off", "heap") if mode in c["modes"] for row in c["modes"][mode]["rows"]]
    if not rows or "machineUsPerRequest" not in rows[0][1]["flipbook"]:
        return []
    lines = [
        "",
        "**What the machine allows.** wrk and the server share the 2 cores, and most of each request's CPU is the "
        "kernel's (TCP over loopback on both ends, the body's copy into wrk) and wrk's own. Machine CPU per request = "
        "busy CPU of all cores (`/proc/stat`: user, nice, system, irq, softirq, steal) ÷ requests; load generator = "
        "wrk's (or httpload's) own user + system CPU; server user = the server's user-space CPU. With the machine "
        "busy, req/s ≈ cores ÷ machine CPU per request, so a server that spent *no* user-space time at all, with "
        "flipbook's kernel work, would reach at most nginx's machine CPU per request ÷ (flipbook's − flipbook's "
        "user) × nginx's req/s: the ceiling column. Switches per request: the server's involuntary context "
        "switches (a woken wrk thread taking its core) and the load generator's voluntary ones (it slept with no "
        "answer to read); where both are near one per request, each answer costs two context switches.",
        "",
        "| logs | request | conns | machine busy nginx / flipbook | machine CPU µs/req nginx / flipbook | "
        "load generator µs/req nginx / flipbook | server user µs/req nginx / flipbook | ceiling | "
        "switches/req: server preempted, generator slept, nginx / flipbook |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for mode, row in rows:
        n, f_ = row["nginx"], row["flipbook"]
        label = {"200": "GET 200", "304": "GET 304", "HEAD": "HEAD 200"}[row["kind"]]
        lines.append(
            f"| {mode} | {label} | {row['connections']} | {n['machineBusy']:.0%} / {f_['machineBusy']:.0%} | "
            f"{n['machineUsPerRequest']:.1f} / {f_['machineUsPerRequest']:.1f} | "
            f"{n['generatorUsPerRequest']:.1f} / {f_['generatorUsPerRequest']:.1f} | "
            f"{n['userUsPerRequest']:.1f} / {f_['userUsPerRequest']:.1f} | {ceiling(row):.2f}× | {switches(n, f_)} |")
    return lines
