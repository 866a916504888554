"""One process's memory and CPU time, read from /proc (a measure the rest of a shared machine
disturbs far less than wall-clock rates)."""
import os


def proc_memory(pid):
    """{'VmRSS', 'VmHWM', 'RssAnon', 'RssFile', 'RssShmem': bytes} from /proc/PID/status (RssAnon
    is the heap and stacks; RssFile the pages of mapped files — the binary, its libraries, mapped
    images; RssShmem shared memory, where the frame cache's arena lives)."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:", "RssShmem:")):
                key, value = line.split(":", 1)
                out[key] = int(value.split()[0]) * 1024
    return out


def stat_fields(text):
    """The fields of a /proc/PID/stat line after the command name (field 3 onwards)."""
    return text[text.rindex(")") + 2:].split()


def cpu_times(pid):
    """(user, system) CPU seconds of a process so far, every thread included."""
    with open(f"/proc/{pid}/stat") as f:
        fields = stat_fields(f.read())
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    return sum(cpu_times(pid))


def tree(pid):
    """A process and its children, recursively (nginx's master and its workers): their pids."""
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            for child in f.read().split():
                pids.extend(tree(int(child)))
    except OSError:
        pass  # ended meanwhile
    return pids


def tree_cpu(pid):
    """(user, system) CPU seconds of a process and its children (nginx's workers)."""
    times = [cpu_times(p) for p in tree(pid)]
    return sum(t[0] for t in times), sum(t[1] for t in times)


def tree_switches(pid):
    """(voluntary, involuntary) context switches so far of every thread of a process and of its
    children: a thread that blocks (in `epoll_wait`, say) switches voluntarily; one the scheduler
    takes the core from while it could still run (a woken task preempting it) involuntarily."""
    voluntary = involuntary = 0
    for process in tree(pid):
        for task in os.listdir(f"/proc/{process}/task"):
            try:
                with open(f"/proc/{process}/task/{task}/status") as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches:"):
                            voluntary += int(line.split()[1])
                        elif line.startswith("nonvoluntary_ctxt_switches:"):
                            involuntary += int(line.split()[1])
            except OSError:
                pass  # a thread that ended meanwhile
    return voluntary, involuntary


def machine_cpu():
    """(busy, total) CPU seconds of the whole machine so far, all cores, from /proc/stat's first
    line: busy is user + nice + system + irq + softirq + steal (the kernel's softirq work for
    loopback TCP lands there whichever task it ran beside); total adds idle and iowait."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    tick = os.sysconf("SC_CLK_TCK")
    busy = user + nice + system + irq + softirq + steal
    return busy / tick, (busy + idle + iowait) / tick
