"""Samplers that run beside a measurement: which other processes are busy (the machine is shared,
and a busy neighbour changes every timing), and a server's RSS polled while it works."""
import os
import threading
import time

from benchlib.process import proc_memory, stat_fields


def cpu_ticks():
    """{pid: (command name, user + system clock ticks so far)} of every process, from /proc."""
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
        fields = stat_fields(stat)
        ticks[int(pid)] = (name, int(fields[11]) + int(fields[12]))
    return ticks


def busy_processes(exclude=(), limit=5, seconds=1.0):
    """The processes using the most CPU over the next second (from /proc), as one line, leaving
    out `exclude` (our own): the machine is shared with other work."""
    a = cpu_ticks()
    time.sleep(seconds)
    b = cpu_ticks()
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


def end_of_run(server):
    """What a run's report says of its end: the server's peak RSS (`VmHWM`), the load average and
    the busiest other processes."""
    from benchlib.machine import loadavg

    return server.memory()["VmHWM"], loadavg(), busy_processes(exclude=(server.pid,))


class RSSPoller(threading.Thread):
    """Reads a process's memory every `interval` seconds until `stop()`: the peak VmRSS, the
    file-backed part at that peak, the peak anonymous RSS, and how many samples were taken."""

    def __init__(self, pid, interval=0.05):
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self.peak_anon = 0
        self.file_at_peak = 0
        self.samples = 0
        self.stop_flag = threading.Event()

    def run(self):
        while not self.stop_flag.is_set():
            try:
                mem = proc_memory(self.pid)
                rss = mem["VmRSS"]
            except (OSError, KeyError):
                break
            if rss > self.peak:
                self.peak = rss
                self.file_at_peak = mem.get("RssFile", 0)
            self.peak_anon = max(self.peak_anon, mem.get("RssAnon", 0))
            self.samples += 1
            time.sleep(self.interval)

    def stop(self):
        """Stops polling and waits for the thread."""
        self.stop_flag.set()
        self.join()
