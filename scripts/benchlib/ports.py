"""Free TCP ports on 127.0.0.1, for servers that take a port number (the machine is shared: never
a fixed one)."""
import socket
import time


def free_ports(count):
    """`count` distinct ports that were free a moment ago (all bound at once, then released)."""
    sockets, ports = [], []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
        ports.append(s.getsockname()[1])
    for s in sockets:
        s.close()
    return ports


def free_port():
    """One port that was free a moment ago."""
    return free_ports(1)[0]


def wait_until_listening(proc, port, seconds, what, log_path):
    """Returns once something accepts connections on 127.0.0.1:`port`; raises when `proc` (the
    server, started a moment ago, e.g. under valgrind) exits first or `seconds` pass."""
    deadline = time.time() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"{what} did not start; see {log_path}")
            time.sleep(0.5)
