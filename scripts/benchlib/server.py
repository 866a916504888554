"""Helpers shared by scripts/bench-playback.py and scripts/bench/serve/*.py: start and stop a
`flipbook serve`, talk HTTP/1.1 to it, read its memory from /proc, describe the machine, and
replace one section of BENCHMARKS.md."""
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BINARY = os.environ.get("FLIPBOOK_BIN") or os.path.join(REPO, ".build-playback", "release", "flipbook")


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def build():
    """The release flipbook binary, built into .build-playback (skipped with SKIP_BUILD=1)."""
    if os.environ.get("SKIP_BUILD") == "1" and os.path.exists(BINARY):
        log(f"bench: SKIP_BUILD=1, using {BINARY}")
        return BINARY
    log("bench: building flipbook (release, .build-playback)")
    subprocess.run(["timeout", "1800", "swift", "build", "-c", "release", "--scratch-path", ".build-playback",
                    "--product", "flipbook"], cwd=REPO, check=True, stdout=sys.stderr)
    return BINARY


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `flipbook serve` process on 127.0.0.1 with a data directory of its own."""

    def __init__(self, data_dir, budget=None, extra=(), port=None, log_path=None):
        self.port = port or free_port()
        self.data_dir = data_dir
        os.makedirs(data_dir, exist_ok=True)
        args = [BINARY, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--data-dir", data_dir,
                "--log-level", "warning", "--set", "log.accessLog=false"]
        if budget is not None:
            args += ["--cache-max-bytes", str(int(budget))]
        args += list(extra)
        self.args = args
        self.log_file = open(log_path or os.path.join(data_dir, "..", f"server-{self.port}.log"), "ab")
        self.proc = subprocess.Popen(args, cwd=REPO, stdout=self.log_file, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"flipbook serve exited with {self.proc.returncode}; see {self.log_file.name}")
            try:
                status, _, _ = self.request("GET", "/healthz", timeout=1)
                if status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("flipbook serve did not answer /healthz within 30 s")
            time.sleep(0.05)

    def request(self, method, path, body=None, timeout=60, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            conn.close()

    def json(self, path):
        status, _, body = self.request("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body[:200]!r}")
        return json.loads(body)

    def upload(self, path):
        """POST the file; returns (metadata, seconds from first byte sent to the whole answer)."""
        with open(path, "rb") as f:
            data = f.read()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        try:
            t = time.perf_counter()
            conn.request("POST", "/images", body=data, headers={"Content-Type": "application/octet-stream"})
            r = conn.getresponse()
            body = r.read()
            elapsed = time.perf_counter() - t
        finally:
            conn.close()
        if r.status not in (200, 201):
            raise RuntimeError(f"upload of {path}: {r.status} {body[:300]!r}")
        return json.loads(body), elapsed

    def wait_for_decodes(self, poll=0.5, limit=600):
        """Waits until the cache's decode-ahead has stopped (no new decodes between two polls and
        nothing queued)."""
        last = -1
        for _ in range(limit):
            st = self.json("/stats")
            if st["decodes"] == last and st["queueDepth"] == 0:
                return
            last = st["decodes"]
            time.sleep(poll)

    def memory(self):
        return proc_memory(self.pid)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()


def proc_memory(pid):
    """{'VmRSS', 'VmHWM', 'RssAnon', 'RssFile': bytes} from /proc/PID/status (RssAnon is the heap
    and stacks; RssFile the pages of mapped files — the binary, its libraries, mapped images)."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:")):
                key, value = line.split(":", 1)
                out[key] = int(value.split()[0]) * 1024
    return out


def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine():
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) * 1024
    osname = "?"
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                osname = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return f"{osname}, {os.cpu_count()} cores ({model}), {mem / 2**30:.0f} GiB"


def _cpu_ticks():
    ticks = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        ticks[int(pid)] = (name, int(fields[11]) + int(fields[12]))
    return ticks


def busy_processes(exclude=(), limit=5, seconds=1.0):
    """The processes using the most CPU over the next second (from /proc), as one line, leaving
    out `exclude` (our own): the machine is shared with other work."""
    a = _cpu_ticks()
    time.sleep(seconds)
    b = _cpu_ticks()
    hz = os.sysconf("SC_CLK_TCK")
    rows = []
    for pid, (name, t) in b.items():
        if pid in exclude or pid == os.getpid() or pid not in a:
            continue
        pct = (t - a[pid][1]) / hz / seconds * 100
        if pct >= 5:
            rows.append((pct, name))
    rows.sort(reverse=True)
    total = sum(p for p, _ in rows)
    if not rows:
        return "none above 5% of a core"
    return f"{total:.0f}% of a core in all: " + ", ".join(f"{n} {p:.0f}%" for p, n in rows[:limit])


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def replace_section(path, heading, body):
    """Replaces the body of `## heading` in BENCHMARKS.md (up to the next `## `), nothing else."""
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    start = None
    for i, line in enumerate(lines):
        if line.strip() == f"## {heading}":
            start = i
            break
    if start is None:
        raise RuntimeError(f"{path} has no '## {heading}' section")
    end = len(lines)
    for j in range(start + 1, len(lines)):
        if lines[j].startswith("## "):
            end = j
            break
    new = lines[:start + 1] + [""] + body.strip("\n").split("\n") + [""] + lines[end:]
    if end == len(lines):
        new = lines[:start + 1] + [""] + body.strip("\n").split("\n") + [""]
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(new))
    os.replace(path + ".tmp", path)


def percentile(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def mib(n):
    return f"{n / 2**20:.1f}"
