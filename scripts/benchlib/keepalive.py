"""The well-behaved client of the serving benchmarks: sequential keep-alive GETs, timed."""
import socket
import time


def normal_client(port, paths, count):
    """Latencies (ms) of `count` sequential keep-alive GETs of the cached frames `paths`."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    reader = sock.makefile("rb")
    latencies = []
    for k in range(count):
        request = f"GET {paths[k % len(paths)]} HTTP/1.1\r\nHost: bench\r\n\r\n".encode()
        start = time.perf_counter()
        sock.sendall(request)
        status = reader.readline()
        length = 0
        while True:
            line = reader.readline()
            if line in (b"\r\n", b""):
                break
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        body = reader.read(length)
        latencies.append((time.perf_counter() - start) * 1000)
        if b" 200 " not in status or len(body) != length:
            raise RuntimeError(f"request {k}: {status!r}")
    sock.close()
    return latencies
