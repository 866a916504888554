"""Upload sessions (issue 23), measured.

1. Latency: `large.gif` sent to `PUT /uploads/{id}` at 1 MB/s (4 KiB every 4 ms) while 5 readers
   each ask for the next frame (`GET /frames/{id}/{k}`, `Prefer: wait=10`). For each frame k the
   uploader notes when the chunk holding k's last byte went out (loopback: it is at the server
   then); each reader notes when frame k's whole answer came back. Latency = the difference, for
   the requests that were waiting when the byte went out (a reader still busy with frame k-1 then
   is counted apart: its time includes its own request). Frame k's last byte is found by walking
   the GIF's blocks here (the image data's block terminator).
2. Cut points (`--cuts`): each input cut at 20 points; the frame count an upload session reports
   for that prefix vs the complete frames headless Chromium decodes from it
   (`../shared/tools/browser-frames`; for WebP, whose cut files Chromium refuses, the frames whose
   `ANMF` chunk is complete), and every frame served during the upload against the finished
   image's bytes.

  PYTHONPATH=scripts python3 -m bench.uploads [--cuts] [--leaks [--leak-rounds N]] [--flood N]
  (FLIPBOOK_BIN=… to skip the build)
"""
import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

from benchlib import REPO, head_commit, log
from benchlib.machine import machine
from benchlib.server import Server, build

INPUTS = os.path.join(REPO, "bench-out", "inputs")
READERS = 5
RATE = 1_000_000
CHUNK = 4096


def gif_frame_ends(data):
    """Offsets of the last byte of each frame's image data (its block terminator)."""
    pos = 13
    flags = data[10]
    if flags & 0x80:
        pos += 3 * (2 << (flags & 7))
    ends = []
    while pos < len(data):
        kind = data[pos]
        if kind == 0x3B:
            break
        if kind == 0x21:
            pos += 2
        elif kind == 0x2C:
            flags = data[pos + 9]
            pos += 10
            if flags & 0x80:
                pos += 3 * (2 << (flags & 7))
            pos += 1  # LZW minimum code size
        else:
            raise ValueError(f"unexpected GIF block {kind:#x} at {pos}")
        while data[pos] != 0:
            pos += data[pos] + 1
        if kind == 0x2C:
            ends.append(pos)
        pos += 1
    return ends


def create_session(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", "/uploads")
    r = conn.getresponse()
    body = json.loads(r.read())
    conn.close()
    return body["uploadId"]


def reader(port, upload_id, frames, sent_at, out):
    """Asks for frames 0… in order, each with a wait; records (k, requested, answered, status)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for k in range(frames):
        requested = time.perf_counter()
        conn.request("GET", f"/frames/{upload_id}/{k}", headers={"Prefer": "wait=10"})
        r = conn.getresponse()
        r.read()
        out.append((k, requested, time.perf_counter(), r.status))
        if r.status != 200:
            break
    conn.close()


def latency_run(port, path):
    with open(path, "rb") as f:
        data = f.read()
    ends = gif_frame_ends(data)
    upload_id = create_session(port)
    sent_at = [None] * len(ends)
    results = [[] for _ in range(READERS)]
    threads = [threading.Thread(target=reader, args=(port, upload_id, len(ends), sent_at, results[i]))
               for i in range(READERS)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(f"PUT /uploads/{upload_id} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n".encode())
    start = time.perf_counter()
    frame = 0
    for offset in range(0, len(data), CHUNK):
        target = start + offset / RATE
        delay = target - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        chunk = data[offset:offset + CHUNK]
        sock.sendall(chunk)
        now = time.perf_counter()
        while frame < len(ends) and ends[frame] < offset + len(chunk):
            sent_at[frame] = now
            frame += 1
    answer = sock.recv(65536).split(b"\r\n", 1)[0].decode()
    upload_seconds = time.perf_counter() - start
    sock.close()
    for t in threads:
        t.join()
    waiting, behind = [], []
    statuses = {}
    for rows in results:
        for k, requested, answered, status in rows:
            statuses[status] = statuses.get(status, 0) + 1
            if status != 200 or sent_at[k] is None:
                continue
            ms = (answered - sent_at[k]) * 1000
            (waiting if requested <= sent_at[k] else behind).append(ms)
    return {"input": os.path.basename(path), "bytes": len(data), "frames": len(ends), "readers": READERS,
            "uploadSeconds": round(upload_seconds, 2), "uploadAnswer": answer, "statuses": statuses,
            "waiting": summary(waiting), "behind": summary([max(0.0, x) for x in behind])}


def summary(values):
    if not values:
        return {"n": 0}
    values = sorted(values)

    def pct(p):
        return round(values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))], 2)
    return {"n": len(values), "p50": pct(50), "p90": pct(90), "p99": pct(99), "max": round(values[-1], 2),
            "mean": round(statistics.mean(values), 2)}


def webp_complete_frames(prefix):
    """ANMF chunks wholly inside a cut WebP (what issue 23 counts for WebP)."""
    pos, count = 12, 0
    while pos + 8 <= len(prefix):
        kind = prefix[pos:pos + 4]
        size = struct.unpack("<I", prefix[pos + 4:pos + 8])[0]
        end = pos + 8 + size + (size & 1)
        if pos + 8 + size > len(prefix):
            break
        if kind == b"ANMF":
            count += 1
        pos = end
    return count


def chromium_frames(prefix, kind, scratch):
    path = os.path.join(scratch, "prefix")
    with open(path, "wb") as f:
        f.write(prefix)
    out = os.path.join(scratch, "out")
    subprocess.run(["rm", "-rf", out])
    tool = os.path.join(REPO, "..", "shared", "tools", "browser-frames")
    run = subprocess.run([tool, path, out, "--type", kind], capture_output=True, timeout=120)
    try:
        with open(os.path.join(out, "meta.json")) as f:
            meta = json.load(f)
    except OSError:
        return 0, run.stderr.decode(errors="replace")[-200:]
    return sum(1 for frame in meta.get("frames", []) if "error" not in frame), None


def cuts_run(port, path, kind, scratch):
    with open(path, "rb") as f:
        data = f.read()
    upload_id = create_session(port)
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(f"PUT /uploads/{upload_id} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n".encode())
    rows, served, sent = [], {}, 0
    for i in range(1, 21):
        cut = len(data) * i // 21
        sock.sendall(data[sent:cut])
        sent = cut
        for _ in range(500):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", f"/uploads/{upload_id}")
            progress = json.loads(conn.getresponse().read())
            conn.close()
            if progress["bytesReceived"] == cut:
                break
            time.sleep(0.01)
        count = progress["frameCount"]
        if count > 0 and count - 1 not in served:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", f"/frames/{upload_id}/{count - 1}")
            served[count - 1] = conn.getresponse().read()
            conn.close()
        if kind == "image/webp":
            reference, note = webp_complete_frames(data[:cut]), "ANMF"
        else:
            reference, note = chromium_frames(data[:cut], kind, scratch)
        rows.append({"cut": cut, "session": count, "reference": reference, "note": note})
    sock.sendall(data[sent:])
    answer = b""
    while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        answer += chunk
    sock.close()
    stored = json.loads(answer.split(b"\r\n\r\n", 1)[1] or b"{}")
    identical = 0
    for k, body in served.items():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", f"/frames/{stored.get('id')}/{k}")
        identical += conn.getresponse().read() == body
        conn.close()
    return {"input": os.path.basename(path), "rows": rows, "matches": sum(r["session"] == r["reference"] for r in rows),
            "servedDuringUpload": len(served), "identical": identical}


def leaks_run(server, path, cuts=200, malformed=50, seed=23):
    """`cuts` uploads cut off at random points (the client closes mid-body) and `malformed` bodies
    that are no image, each with a reader that reads frame 0 (staged in the frame cache when it
    arrives) and then waits on a frame past the cut; then: every waiter answered, no temporary
    file, no record, no staged frame, and the server's RSS and the cache's bytes before and
    after."""
    import random
    from benchlib.process import proc_memory
    rng = random.Random(seed)
    with open(path, "rb") as f:
        data = f.read()
    rss_before = proc_memory(server.pid)
    stats_before = server.json("/stats")
    answers = {}

    def wait_on(upload_id, out):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        conn.request("GET", f"/frames/{upload_id}/0", headers={"Prefer": "wait=10"})
        response = conn.getresponse()
        response.read()
        out.append(("frame 0", response.status))
        conn.request("GET", f"/frames/{upload_id}/99", headers={"Prefer": "wait=10"})
        out.append(("frame 99", conn.getresponse().status))
        conn.close()

    for i in range(cuts + malformed):
        upload_id = create_session(server.port)
        statuses = []
        waiter = threading.Thread(target=wait_on, args=(upload_id, statuses))
        waiter.start()
        body = data if i < cuts else bytes(rng.randrange(256) for _ in range(rng.randrange(1, 20000)))
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(f"PUT /uploads/{upload_id} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode())
        if i < cuts:
            sock.sendall(body[:rng.randrange(1, len(body))])
            sock.close()
        else:
            sock.sendall(body)
            sock.recv(65536)
            sock.close()
        waiter.join()
        for frame, status in statuses or [("none", None)]:
            key = f"{'cut' if i < cuts else 'malformed'} {frame} {status}"
            answers[key] = answers.get(key, 0) + 1
    time.sleep(1)
    leftovers = os.listdir(os.path.join(server.data_dir, "tmp"))
    images = server.json("/images?limit=1000")["images"]
    stats_after = server.json("/stats")
    return {"cut": cuts, "malformed": malformed, "waiterAnswers": answers,
            "tmpFilesLeft": len(leftovers), "imagesStored": len(images),
            "stagedFramesAfter": stats_after["stagedFrames"], "stagedBytesAfter": stats_after["stagedBytes"],
            "cacheBytesBefore": stats_before["usedBytes"], "cacheBytesAfter": stats_after["usedBytes"],
            "rssBefore": rss_before, "rssAfter": proc_memory(server.pid)}


def flood_run(server, path, sessions, every=1000):
    """`sessions` uploads cut off after a random prefix as fast as one client can (no waiter):
    what a client hostile to the session table does. The server's memory after every `every`:
    each ending is remembered for `uploads.aliasSeconds`, at most UploadSessions.maxEndedSessions
    of them, so the heap grows until that many and then stays."""
    import random
    from benchlib.process import proc_memory
    rng = random.Random(7)
    with open(path, "rb") as f:
        data = f.read()
    readings = [{"sessions": 0, **proc_memory(server.pid)}]
    for i in range(1, sessions + 1):
        upload_id = create_session(server.port)
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(f"PUT /uploads/{upload_id} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n".encode())
        sock.sendall(data[:rng.randrange(1, len(data))])
        sock.close()
        if i % every == 0:
            time.sleep(0.5)
            readings.append({"sessions": i, **proc_memory(server.pid)})
            log(f"flood: {i} sessions, RssAnon {readings[-1]['RssAnon'] / 2**20:.1f} MiB")
    leftovers = os.listdir(os.path.join(server.data_dir, "tmp"))
    return {"sessions": sessions, "readings": readings, "tmpFilesLeft": len(leftovers)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cuts", action="store_true", help="also the cut-point comparison with Chromium")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--leaks", action="store_true", help="also 200 cut and 50 malformed uploads with waiters")
    parser.add_argument("--leak-rounds", type=int, default=1,
                        help="with --leaks: that many rounds of 250 sessions, memory read after each")
    parser.add_argument("--flood", type=int, default=0, metavar="N",
                        help="also N sessions cut off as fast as one client can, memory every 1000")
    args = parser.parse_args()
    binary = build()
    log(f"bench.uploads: {binary}")
    scratch = tempfile.mkdtemp(prefix="flipbook-bench-uploads-")
    server = Server(os.path.join(scratch, "data"))
    result = {"machine": machine(), "commit": head_commit(), "latency": [], "cuts": [], "leaks": None, "flood": None}
    try:
        for _ in range(args.runs):
            run = latency_run(server.port, os.path.join(INPUTS, "large.gif"))
            log(json.dumps(run))
            result["latency"].append(run)
        if args.cuts:
            for name, kind in (("small.gif", "image/gif"), ("small.apng", "image/png"), ("small-lossy.webp", "image/webp"),
                               ("small-lossless.webp", "image/webp")):
                run = cuts_run(server.port, os.path.join(INPUTS, name), kind, scratch)
                log(json.dumps(run))
                result["cuts"].append(run)
        if args.leaks:
            result["leaks"] = []
            for round_number in range(args.leak_rounds):
                run = leaks_run(server, os.path.join(INPUTS, "small.gif"), seed=23 + round_number)
                log(json.dumps(run))
                result["leaks"].append(run)
        if args.flood:
            result["flood"] = flood_run(server, os.path.join(INPUTS, "small.gif"), args.flood)
    finally:
        server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    sys.exit(main())
