"""Free TCP ports on 127.0.0.1, for servers that take a port number (the machine is shared: never
a fixed one)."""
import socket


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
