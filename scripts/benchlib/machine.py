"""The machine a benchmark ran on, as the reports describe it: OS, cores, CPU model, memory, and
the load average at a moment."""
import os


def cpu_model():
    """The CPU's model name from /proc/cpuinfo ('?' when it says none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def os_name():
    """PRETTY_NAME from /etc/os-release ('?' when missing)."""
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return "?"


def memory_bytes():
    """MemTotal from /proc/meminfo."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return 0


def machine():
    """One line: 'Debian GNU/Linux 12 (bookworm), 2 cores (model), 24 GiB'."""
    return f"{os_name()}, {os.cpu_count()} cores ({cpu_model()}), {memory_bytes() / 2**30:.0f} GiB"


def loadavg():
    """The 1-minute load average, as /proc/loadavg writes it."""
    with open("/proc/loadavg") as f:
        return f.read().split()[0]
