#!/usr/bin/env python3
"""The measurements of `make bench-serve` (run by scripts/bench-serve.sh, which builds flipbook and
makes bench-out/inputs first).

(a) Cached frames: 100 frames (34 of small.gif, 33 of small-lossy.webp, 33 of small.apng, spread
    over each animation) are fetched once from flipbook so they are in its cache (budget 1 GiB;
    the decode-ahead that follows is waited out), and the same PNG bytes are written to a tmpfs
    directory under the same URL paths, served by Debian's nginx (worker_processes 2, access_log
    off, sendfile on, keep-alive). wrk (-t WRK_THREADS, keep-alive, a Lua script rotating over the
    100 URLs, each thread starting at a different one) runs against nginx and flipbook in turn at
    each connection count, a 2 s warm-up then DURATION seconds each. flipbook runs with
    `--set log.accessLog=false` and default event-loop threads.
(b) Cold first frame: for every input of scripts/make-bench-inputs.sh, RUNS times: a fresh
    `flipbook serve` on an empty data directory, POST /images (timed: includes storing the file
    durably and verifying every frame), then GET /frames/{id}/0 (timed: the cache is cold, the
    frame is decoded and encoded for this request); against `convert 'IN[0]' out.png` and
    `vips copy 'IN[page=0]' out.png` (process start included, as a user would run them), run
    interleaved with flipbook's runs. Medians reported.

RENDER_ONLY=1 rewrites the section from bench-out/serve/result.json without running anything.
Environment: DURATION=10 CONNECTIONS="8 64 256" WRK_THREADS=2 RUNS=5 BENCH_WRITE=1 ONLY=a|b
"""
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "playback"))
import flipbook_bench as fb  # noqa: E402

OUT = os.path.join(fb.REPO, "bench-out", "serve")
INPUTS = os.path.join(fb.REPO, "bench-out", "inputs")
DURATION = int(os.environ.get("DURATION", "10"))
CONNECTIONS = [int(c) for c in os.environ.get("CONNECTIONS", "8 64 256").split()]
WRK_THREADS = int(os.environ.get("WRK_THREADS", "2"))
RUNS = int(os.environ.get("RUNS", "5"))
WRITE = os.environ.get("BENCH_WRITE", "1") == "1"
ONLY = os.environ.get("ONLY", "")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
MAGICK_ENV = dict(os.environ, MAGICK_CONFIGURE_PATH=os.path.join(fb.REPO, "scripts", "bench", "imagemagick"))

COLD_INPUTS = ["small.gif", "large.gif", "small-lossy.webp", "large-lossy.webp", "small-lossless.webp",
               "small.apng", "large.apng"]
CACHED_SET = [("small.gif", 34), ("small-lossy.webp", 33), ("small.apng", 33)]


# --- (a) cached frames vs nginx -------------------------------------------------------------

NGINX_CONF = """worker_processes 2;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  types {{ }}
  default_type image/png;
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 65;
  keepalive_requests 100000000;
  client_body_temp_path {work}/tmp/body;
  proxy_temp_path {work}/tmp/proxy;
  fastcgi_temp_path {work}/tmp/fastcgi;
  uwsgi_temp_path {work}/tmp/uwsgi;
  scgi_temp_path {work}/tmp/scgi;
  server {{
    listen 127.0.0.1:{port} reuseport backlog=4096;
    root {root};
    location / {{ }}
  }}
}}
"""

LUA = """-- Rotates over the 100 frame URLs; each wrk thread starts at a different one.
local paths = {{ {paths} }}
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
  return wrk.format("GET", paths[(counter % #paths) + 1])
end
"""


def parse_ms(text):
    m = re.match(r"([\d.]+)(us|ms|s)$", text)
    if not m:
        return float("nan")
    v = float(m.group(1))
    return {"us": v / 1000, "ms": v, "s": v * 1000}[m.group(2)]


def tree_cpu(pid):
    """CPU seconds of a process and its children (nginx's workers)."""
    total = fb.cpu_seconds(pid)
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            for child in f.read().split():
                total += tree_cpu(int(child))
    except OSError:
        pass
    return total


def run_wrk(port, conns, lua, log_path, pid):
    url = f"http://127.0.0.1:{port}/"
    subprocess.run(["wrk", f"-t{WRK_THREADS}", f"-c{conns}", "-d2s", "-s", lua, url],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cpu = tree_cpu(pid)
    p = subprocess.run(["wrk", f"-t{WRK_THREADS}", f"-c{conns}", f"-d{DURATION}s", "--latency", "-s", lua, url],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    cpu = tree_cpu(pid) - cpu
    with open(log_path, "w") as f:
        f.write(p.stdout)
    out = p.stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p50 = parse_ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))
    p99 = parse_ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))
    mb = re.search(r"Transfer/sec:\s+(\S+)", out).group(1)
    errors = "; ".join(m.group(0).strip() for m in re.finditer(r"(Socket errors:.*|Non-2xx or 3xx responses:.*)", out))
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    return {"rps": rps, "p50": p50, "p99": p99, "transfer": mb, "errors": errors,
            "cpuUsPerRequest": cpu * 1e6 / max(1, requests)}


def mean_runs(a, b):
    return {"rps": (a["rps"] + b["rps"]) / 2, "p50": (a["p50"] + b["p50"]) / 2, "p99": (a["p99"] + b["p99"]) / 2,
            "errors": "; ".join(x for x in (a["errors"], b["errors"]) if x), "rpsRuns": [a["rps"], b["rps"]],
            "cpuUsPerRequest": (a["cpuUsPerRequest"] + b["cpuUsPerRequest"]) / 2}


def cached(work):
    root = os.path.join(work, "root")
    os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
    server = fb.Server(os.path.join(work, "data"), budget=1 << 30, log_path=os.path.join(OUT, "server-cached.log"))
    nginx = None
    try:
        paths = []
        sizes = []
        for name, count in CACHED_SET:
            meta, _ = server.upload(os.path.join(INPUTS, name))
            n = meta["frameCount"]
            for j in range(count):
                k = j * n // count
                path = f"/frames/{meta['id']}/{k}"
                status, headers, body = server.request("GET", path)
                if status != 200:
                    raise RuntimeError(f"{path}: {status}")
                os.makedirs(os.path.dirname(root + path), exist_ok=True)
                with open(root + path, "wb") as f:
                    f.write(body)
                paths.append(path)
                sizes.append(len(body))
        # Wait out the decode-ahead the warm-up started, then check every frame is a hit.
        server.wait_for_decodes()
        before = server.json("/stats")
        for path in paths:
            server.request("GET", path)
        after = server.json("/stats")
        if after["misses"] != before["misses"]:
            raise RuntimeError(f"warm-up left {after['misses'] - before['misses']} of 100 frames uncached")
        lua = os.path.join(work, "frames.lua")
        with open(lua, "w") as f:
            f.write(LUA.format(paths=", ".join(f'"{p}"' for p in paths)))
        nginx_port = fb.free_port()
        with open(os.path.join(work, "nginx.conf"), "w") as f:
            f.write(NGINX_CONF.format(work=work, port=nginx_port, root=root))
        subprocess.run(["chmod", "-R", "a+rX", work])
        nginx = subprocess.Popen([NGINX, "-p", work, "-c", os.path.join(work, "nginx.conf"), "-g", "daemon off;"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import http.client
        for _ in range(100):
            try:
                c = http.client.HTTPConnection("127.0.0.1", nginx_port, timeout=1)
                c.request("GET", paths[42])
                body = c.getresponse().read()
                c.close()
                break
            except OSError:
                time.sleep(0.1)
        for path in (paths[0], paths[42], paths[99]):
            c = http.client.HTTPConnection("127.0.0.1", nginx_port, timeout=5)
            c.request("GET", path)
            a = c.getresponse().read()
            c.close()
            _, _, b = server.request("GET", path)
            if a != b:
                raise RuntimeError(f"nginx and flipbook differ on {path}")
        rows = []
        load_before = fb.loadavg()
        busy_before = fb.busy_processes(exclude=(server.pid,))
        stats_before = server.json("/stats")
        for conns in CONNECTIONS:
            # A B B A: the machine is shared, so each side runs twice, once early and once late,
            # and the row is the mean of the two (both runs are kept in result.json).
            fb.log(f"bench-serve: wrk -c{conns}: nginx, flipbook, flipbook, nginx")
            n1 = run_wrk(nginx_port, conns, lua, os.path.join(OUT, f"wrk-nginx-{conns}-1.txt"), nginx.pid)
            f1 = run_wrk(server.port, conns, lua, os.path.join(OUT, f"wrk-flipbook-{conns}-1.txt"), server.pid)
            f2 = run_wrk(server.port, conns, lua, os.path.join(OUT, f"wrk-flipbook-{conns}-2.txt"), server.pid)
            n2 = run_wrk(nginx_port, conns, lua, os.path.join(OUT, f"wrk-nginx-{conns}-2.txt"), nginx.pid)
            rows.append({"connections": conns, "nginx": mean_runs(n1, n2), "flipbook": mean_runs(f1, f2),
                         "runs": {"nginx": [n1, n2], "flipbook": [f1, f2]}})
        stats_after = server.json("/stats")
        return {"rows": rows, "frameBytes": {"min": min(sizes), "median": sorted(sizes)[50], "max": max(sizes),
                                             "total": sum(sizes)},
                "misses": stats_after["misses"] - stats_before["misses"],
                "hits": stats_after["hits"] - stats_before["hits"],
                "load": {"before": load_before, "after": fb.loadavg(), "busyBefore": busy_before,
                         "busyAfter": fb.busy_processes(exclude=(server.pid,))}}
    finally:
        server.stop()
        if nginx:
            nginx.send_signal(signal.SIGQUIT)
            try:
                nginx.wait(timeout=10)
            except subprocess.TimeoutExpired:
                nginx.kill()


# --- (b) cold first frames --------------------------------------------------------------------

def timed(cmd, env=None):
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - t
    return elapsed, p.returncode, p.stderr.decode(errors="replace")[-300:]


def cold(work):
    results = {}
    for name in COLD_INPUTS:
        src = os.path.join(INPUTS, name)
        r = {"upload": [], "first": [], "cachedBefore": [], "convert": [], "vips": [], "convertError": "",
             "vipsError": "", "fileBytes": os.path.getsize(src)}
        for run in range(RUNS):
            data = os.path.join(work, f"cold-{run}")
            shutil.rmtree(data, ignore_errors=True)
            server = fb.Server(data, log_path=os.path.join(OUT, "server-cold.log"))
            try:
                meta, up = server.upload(src)
                st = server.json("/stats")
                r["cachedBefore"].append(st["cachedFrames"])
                t = time.perf_counter()
                status, _, body = server.request("GET", f"/frames/{meta['id']}/0")
                first = time.perf_counter() - t
                if status != 200 or body[:4] != b"\x89PNG":
                    raise RuntimeError(f"{name}: frame 0 answered {status}")
                r["upload"].append(up)
                r["first"].append(first)
                r.update(width=meta["width"], height=meta["height"], frames=meta["frameCount"])
            finally:
                server.stop()
                shutil.rmtree(data, ignore_errors=True)
            out = os.path.join(work, "out.png")
            s, rc, err = timed(["convert", f"{src}[0]", out], env=MAGICK_ENV)
            if rc == 0:
                r["convert"].append(s)
            else:
                r["convertError"] = err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"
            s, rc, err = timed(["vips", "copy", f"{src}[page=0]", out])
            if rc != 0 and name.endswith(".apng"):
                # vips 8.14 reads PNGs with libspng/libpng, which ignore APNG chunks: no `page`
                # option, but the default image is frame 0 of these files (apngasm writes it so).
                r["vipsNote"] = "APNG read as a still PNG (its default image = frame 0): `vips copy IN out.png`"
                s, rc, err = timed(["vips", "copy", src, out])
            if rc == 0:
                r["vips"].append(s)
            else:
                r["vipsError"] = err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"
        fb.log(f"bench-serve: cold {name}: upload {fb.percentile(r['upload'], 50) * 1000:.0f} ms, "
               f"first frame {fb.percentile(r['first'], 50) * 1000:.1f} ms")
        results[name] = r
    return results


# --- report -----------------------------------------------------------------------------------

def render(res):
    met = lambda ok: "**met**" if ok else "**not met**"  # noqa: E731
    lines = [f"`make bench-serve` (scripts/bench-serve.sh → scripts/bench/serve/serve_bench.py), {res['date']}, "
             f"{res['machine']}. Everything (servers, wrk, the peers) runs on the same machine, over loopback."]
    if "cached" in res:
        c = res["cached"]
        fbytes = c["frameBytes"]
        lines += [
            "",
            "### Cached frames: flipbook vs nginx serving the same PNG bytes",
            "",
            f"100 frames (34 of `small.gif`, 33 of `small-lossy.webp`, 33 of `small.apng`; PNGs of "
            f"{fbytes['min'] / 1024:.0f}–{fbytes['max'] / 1024:.0f} KiB, median {fbytes['median'] / 1024:.0f} KiB) "
            f"warmed in flipbook's cache; the same bytes in tmpfs for nginx (worker_processes 2, access_log off, "
            f"sendfile on, keep-alive) under the same URLs. wrk -t{WRK_THREADS}, keep-alive, a Lua script rotating "
            f"over the 100 URLs, 2 s warm-up then {DURATION} s per run, in the order nginx, flipbook, flipbook, nginx "
            f"at each connection count; each figure is the mean of its two runs (req/s of each run in brackets); "
            f"server CPU per request = user + system CPU of the server's processes (nginx: master and workers) "
            f"during the run ÷ requests, which depends much less on the other load of the machine than req/s; flipbook with `--set log.accessLog=false` and "
            f"default event-loop threads. Load average {c['load']['before']} before, {c['load']['after']} after "
            f"(CPU of other processes over 1 s before: {c['load']['busyBefore']}; after: {c['load']['busyAfter']}). During the "
            f"flipbook runs its cache answered {c['hits']:,} hits and {c['misses']:,} misses.",
            "",
            "| connections | nginx req/s | flipbook req/s | ratio (goal ≥ 0.9×) | nginx p50 / p99 ms | flipbook p50 / p99 ms | server CPU µs per request: nginx / flipbook | errors |",
            "|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for row in c["rows"]:
            n, f_ = row["nginx"], row["flipbook"]
            ratio = f_["rps"] / n["rps"]
            errs = "; ".join(x for x in (("nginx: " + n["errors"]) if n["errors"] else "",
                                          ("flipbook: " + f_["errors"]) if f_["errors"] else "") if x) or "none"
            nr = "/".join(f"{x:,.0f}" for x in n.get("rpsRuns", []))
            fr = "/".join(f"{x:,.0f}" for x in f_.get("rpsRuns", []))
            lines.append(f"| {row['connections']} | {n['rps']:,.0f} ({nr}) | {f_['rps']:,.0f} ({fr}) | {ratio:.2f}× {met(ratio >= 0.9)} | "
                         f"{n['p50']:.2f} / {n['p99']:.2f} | {f_['p50']:.2f} / {f_['p99']:.2f} | "
                         f"{n.get('cpuUsPerRequest', float('nan')):.0f} / {f_.get('cpuUsPerRequest', float('nan')):.0f} | {errs} |")
    if "cold" in res:
        lines += [
            "",
            "### Cold first frame after upload vs ImageMagick and libvips",
            "",
            f"Median of {RUNS} runs each, interleaved. flipbook: a fresh server on an empty data directory per run; "
            "*upload* = `POST /images` until the 201 (the file is stored durably and every frame is verified); "
            "*first frame* = `GET /frames/{id}/0` right after (cold cache: decoded and PNG-encoded for the "
            "request). Peers: `convert 'IN[0]' out.png` (ImageMagick 6, with scripts/bench/imagemagick/policy.xml) "
            "and `vips copy 'IN[page=0]' out.png`, wall-clock time of the whole process.",
            "",
            "| input | size, frames | file | upload ms | first frame ms | upload + first frame ms | convert ms | vips ms | first frame ÷ convert | first frame ÷ vips |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        vips_note = ""
        for name, r in res["cold"].items():
            up = fb.percentile(r["upload"], 50) * 1000
            first = fb.percentile(r["first"], 50) * 1000
            cv = fb.percentile(r["convert"], 50) * 1000 if r["convert"] else None
            vp = fb.percentile(r["vips"], 50) * 1000 if r["vips"] else None
            cvs = f"{cv:.0f}" if cv else f"fails ({r['convertError'][:60]})"
            vps = f"{vp:.0f}" if vp else f"fails ({r['vipsError'][:60]})"
            if vp and r.get("vipsNote"):
                vps += "¹"
                vips_note = r["vipsNote"]
            rc = f"{first / cv:.2f}×" if cv else "–"
            rv = f"{first / vp:.2f}×" if vp else "–"
            lines.append(f"| `{name}` | {r.get('width')}×{r.get('height')}, {r.get('frames')} | "
                         f"{r['fileBytes'] / 1024:.0f} KiB | {up:.0f} | {first:.1f} | {up + first:.0f} | {cvs} | {vps} | {rc} | {rv} |")
        if vips_note:
            lines += ["", "¹ " + vips_note + "."]
        warm = sorted({n for n, r in res["cold"].items() if any(r["cachedBefore"])})
        if warm:
            lines += ["", "Note: after the upload the cache already held frames of " + ", ".join(warm)
                      + " (so the first frame was not cold there)."]
    notes = os.path.join(fb.REPO, "scripts", "bench", "serve", "notes.md")
    if os.path.exists(notes):
        lines += ["", open(notes).read().strip()]
    return "\n".join(lines)


def main():
    os.makedirs(OUT, exist_ok=True)
    if not os.path.exists(fb.BINARY):
        sys.exit(f"bench-serve: {fb.BINARY} is missing (run scripts/bench-serve.sh)")
    if os.environ.get("RENDER_ONLY") == "1":
        # Rewrite the section from the last result.json (after editing notes.md).
        with open(os.path.join(OUT, "result.json")) as f:
            report = render(json.load(f))
        print(report)
        if WRITE:
            fb.replace_section(os.path.join(fb.REPO, "BENCHMARKS.md"), "Serving cached frames and cold first frames",
                               report)
        return
    work = tempfile.mkdtemp(prefix="flipbook-bench-serve.", dir="/dev/shm")
    res = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "machine": fb.machine()}
    result_path = os.path.join(OUT, "result.json")
    if ONLY and os.path.exists(result_path):
        with open(result_path) as f:
            old = json.load(f)
        res.update({k: v for k, v in old.items() if k in ("cached", "cold")})
    try:
        if ONLY in ("", "a"):
            res["cached"] = cached(work)
        if ONLY in ("", "b"):
            res["cold"] = cold(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(result_path, "w") as f:
        json.dump(res, f, indent=1)
    report = render(res)
    print(report)
    if WRITE:
        fb.replace_section(os.path.join(fb.REPO, "BENCHMARKS.md"), "Serving cached frames and cold first frames", report)
        fb.log("bench-serve: BENCHMARKS.md section written")


if __name__ == "__main__":
    main()
