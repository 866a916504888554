"""`make bench-cold-replica`: cold first frame on a replica that has never seen the image, `s3`
against `fs`.

An image is uploaded through replica A; the time of `GET /frames/{id}/0` on replica B is taken.
  fs: A and B share one data directory (B reads the record, maps the original, decodes);
  s3: A and B have a directory each and share a bucket of an S3 server (moto on loopback): B GETs
      the record, downloads the original into its local cache (verified, fsync'ed), maps, decodes.
Every trial uploads new bytes (the GIF with a comment extension of its own: a new content id,
the same frames), fs and s3 trials alternate, and the medians are compared. Then B serves the
frames of one image again and again: the S3 calls that costs are read from its /metrics.

  PYTHONPATH=scripts python3 -m bench.cold_replica --binary .build-…/release/flipbook \
      --moto .build-s3-venv/bin/moto_server [--runs 15] [--inputs FILE ...]
"""
import argparse
import hashlib
import http.client
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import REPO
from benchlib.ports import free_port


def call(port, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request(method, path, body=body)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def padded(gif, seed):
    """`gif` with a comment extension holding `seed` after its global colour table."""
    packed = gif[10]
    table = 3 << ((packed & 7) + 1) if packed & 0x80 else 0
    at = 13 + table
    note = f"flipbook bench {seed}".encode()
    return gif[:at] + bytes([0x21, 0xFE, len(note)]) + note + b"\0" + gif[at:]


def s3_calls(port):
    """flipbook_s3_requests_total by operation."""
    calls = {}
    for line in call(port, "GET", "/metrics")[1].decode().splitlines():
        if line.startswith("flipbook_s3_requests_total{"):
            operation = line.split('operation="', 1)[1].split('"', 1)[0]
            calls[operation] = calls.get(operation, 0) + float(line.rsplit(" ", 1)[1])
    return calls


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--moto", required=True)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--inputs", nargs="*")
    args = ap.parse_args()
    inputs = args.inputs or [p for p in [os.path.join(REPO, "bench-out/inputs/small.gif"),
                                         os.path.join(REPO, "bench-out/inputs/large.gif"),
                                         os.path.join(REPO, "../shared/corpus/pillow/gif/iss634.gif")]
                             if os.path.exists(p)]
    work = tempfile.mkdtemp(prefix="flipbook-cold-")
    procs = []
    try:
        moto_port = free_port()
        procs.append(subprocess.Popen([args.moto, "-H", "127.0.0.1", "-p", str(moto_port)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(300):
            try:
                if call(moto_port, "PUT", "/bench")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        env = dict(os.environ, FLIPBOOK_LOG_ACCESSLOG="false", FLIPBOOK_LOG_LEVEL="warning",
                   AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench-secret",
                   FLIPBOOK_STORAGE_LIBRARYDIRS="")
        s3 = ["--set", "storage.backend=s3", "--set", f"storage.s3.endpoint=http://127.0.0.1:{moto_port}",
              "--set", "storage.s3.bucket=bench", "--set", "storage.s3.pathStyle=true"]
        shared = os.path.join(work, "shared")
        ports = {}
        for name, data, extra in [("fs-a", shared, []), ("fs-b", shared, []),
                                  ("s3-a", os.path.join(work, "s3-a"), s3), ("s3-b", os.path.join(work, "s3-b"), s3)]:
            ports[name] = free_port()
            procs.append(subprocess.Popen([args.binary, "serve", "--host", "127.0.0.1", "--port", str(ports[name]),
                                           "--data-dir", data, "--cache-max-bytes", str(256 << 20)] + extra,
                                          env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, name + ".log"), "w")))
        for name, port in ports.items():
            for _ in range(600):
                try:
                    if call(port, "GET", "/readyz")[0] == 200:
                        break
                except OSError:
                    time.sleep(0.05)
        print(f"cold first frame on a replica that never saw the image; {args.runs} trials per input and backend;"
              f" load average {os.getloadavg()[0]:.2f}", flush=True)
        print(f"{'input':<12} {'bytes':>10} {'fs median ms':>13} {'s3 median ms':>13} {'s3/fs':>6}")
        ratios = []
        for path in inputs:
            gif = open(path, "rb").read()
            times = {"fs": [], "s3": []}
            for run in range(args.runs):
                for backend in ("fs", "s3"):
                    body = padded(gif, f"{backend}-{run}-{time.time_ns()}")
                    sha = hashlib.sha256(body).hexdigest()
                    status, _ = call(ports[backend + "-a"], "POST", "/images", body)
                    assert status == 201, (backend, status)
                    start = time.perf_counter()
                    status, png = call(ports[backend + "-b"], "GET", f"/frames/{sha}/0")
                    times[backend].append((time.perf_counter() - start) * 1000)
                    assert status == 200, (backend, status)
            fs_ms, s3_ms = statistics.median(times["fs"]), statistics.median(times["s3"])
            ratios.append(s3_ms / fs_ms)
            print(f"{os.path.basename(path):<12} {len(gif):>10} {fs_ms:>13.1f} {s3_ms:>13.1f} {s3_ms / fs_ms:>6.2f}", flush=True)
        # Cached frames on the s3 replica: no S3 call.
        body = padded(open(inputs[0], "rb").read(), f"cached-{time.time_ns()}")
        sha = hashlib.sha256(body).hexdigest()
        call(ports["s3-a"], "POST", "/images", body)
        call(ports["s3-b"], "GET", f"/frames/{sha}/0")
        before = s3_calls(ports["s3-b"])
        requests = 0
        start = time.monotonic()
        while requests < 500:
            for k in range(3):
                call(ports["s3-b"], "GET", f"/frames/{sha}/{k}")
                requests += 1
        elapsed = time.monotonic() - start
        after = s3_calls(ports["s3-b"])
        calls = {op: int(after[op] - before.get(op, 0)) for op in after if after[op] != before.get(op, 0)}
        print(f"cached frames on the s3 replica: {requests} requests in {elapsed:.1f} s; S3 calls meanwhile: {calls or 0}"
              " (HeadObject: the background recheck of the image's record, about one per storage.recheckSeconds"
              " while it is in use, whatever the request rate; no GetObject)")
        print(f"worst s3/fs ratio {max(ratios):.2f}; load average {os.getloadavg()[0]:.2f}")
    finally:
        procs[0].kill()  # moto does not exit on SIGTERM
        for p in procs[1:]:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
