"""Load runs against one server: wrk with a Lua script (or httpload, which prints wrk's lines, for
HEAD: wrk waits for the body a HEAD answer announces, wg/wrk#198), a 2 s warm-up first, and the
server's CPU per request from /proc beside req/s and latency — with the load generator's own CPU
and the whole machine's, which bound what any server could reach on the same cores."""
import re
import resource
import subprocess

from benchlib.process import machine_cpu, tree_cpu, tree_switches


def raise_descriptor_limit(wanted=65536):
    """Raises this process's soft limit on open files (inherited by wrk and the servers it starts)
    to `wanted`, or to the hard limit when that is lower: hundreds of connections need them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def parse_ms(text):
    """wrk's '812.00us' / '1.20ms' / '2.01s' → milliseconds (NaN when unreadable)."""
    m = re.match(r"([\d.]+)(us|ms|s)$", text)
    if not m:
        return float("nan")
    v = float(m.group(1))
    return {"us": v / 1000, "ms": v, "s": v * 1000}[m.group(2)]


def command(port, conns, load, seconds, threads):
    """The load generator's argv: `load` is ("wrk", lua script) or ("httpload", binary, paths
    file)."""
    if load[0] == "wrk":
        return ["wrk", f"-t{threads}", f"-c{conns}", f"-d{seconds}s", "--latency", "-s", load[1],
                f"http://127.0.0.1:{port}/"]
    return [load[1], "127.0.0.1", str(port), str(conns), str(threads), str(seconds), "HEAD", load[2]]


def run(port, conns, load, log_path, pid, seconds, threads=2):
    """A 2 s warm-up, then `seconds` of load; the output goes to `log_path`. Returns req/s,
    p50/p99 ms, the error lines, and, per request in µs: the CPU (user + system, and user alone) of
    process `pid` and its children, the load generator's CPU (its rusage as a waited child), and
    the whole machine's busy CPU (every core, the kernel's softirq time included) with the share
    of the machine that was busy; and the context switches per request of the server's threads
    (involuntary: preempted) and of the load generator (voluntary: it slept with nothing to read)."""
    subprocess.run(command(port, conns, load, 2, threads), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    before, generator_before, machine_before = tree_cpu(pid), children_cpu(), machine_cpu()
    switches_before, generator_switches_before = tree_switches(pid), children_switches()
    p = subprocess.run(command(port, conns, load, seconds, threads), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    after, generator_after, machine_after = tree_cpu(pid), children_cpu(), machine_cpu()
    switches_after, generator_switches_after = tree_switches(pid), children_switches()
    user, system = after[0] - before[0], after[1] - before[1]
    busy, total = machine_after[0] - machine_before[0], machine_after[1] - machine_before[1]
    with open(log_path, "w") as f:
        f.write(p.stdout)
    out = p.stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p50 = parse_ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))
    p99 = parse_ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))
    errors = "; ".join(m.group(0).strip() for m in re.finditer(r"(Socket errors:.*|Non-2xx or 3xx responses:.*)", out))
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    return {"rps": rps, "p50": p50, "p99": p99, "errors": errors,
            "cpuUsPerRequest": (user + system) * 1e6 / max(1, requests),
            "userUsPerRequest": user * 1e6 / max(1, requests),
            "generatorUsPerRequest": (generator_after - generator_before) * 1e6 / max(1, requests),
            "machineUsPerRequest": busy * 1e6 / max(1, requests),
            "machineBusy": busy / total if total > 0 else float("nan"),
            "serverPreemptionsPerRequest": (switches_after[1] - switches_before[1]) / max(1, requests),
            "generatorSleepsPerRequest": (generator_switches_after[0] - generator_switches_before[0]) / max(1, requests)}


def children_switches():
    """(voluntary, involuntary) context switches of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_nvcsw, usage.ru_nivcsw


def children_cpu():
    """User + system CPU seconds of this process's waited-for children so far (the load
    generator's runs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
