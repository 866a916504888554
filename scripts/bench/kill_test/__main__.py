"""make kill-test ROUNDS=20: uploads under SIGKILL. Each round starts `flipbook serve` on the same
data directory, runs 6 concurrent uploaders (new valid GIF/APNG/WebP files from the soak's
generator, some of them megabytes so that kills land mid-body, and non-images that are refused),
SIGKILLs the server at a random moment 0.5–3 s in, and looks at the data directory: files a
crash can leave (objects without a record, files in tmp/) are counted. Then the server is started
again and, once it answers, every upload that was acknowledged (a 200/201 received) in any round
must still be listed, described and served (its first frame), and the data directory must hold
no orphan: every object has its record and tmp/ is empty.

Prints one line per round and a summary; exit status 1 when an acknowledged upload is lost or an
orphan survives a start. Environment: ROUNDS (20), SKIP_BUILD=1 (reuse
.build-playback/release/flipbook), KILL_SEED.
"""
import http.client
import json
import os
import random
import shutil
import signal
import sys
import threading
import time

from benchlib import REPO, gifgen, inputs
from benchlib.server import Server, build

OUT = os.path.join(REPO, "bench-out", "kill-test")
ROUNDS = int(os.environ.get("ROUNDS", "20"))
SEED = int(os.environ.get("KILL_SEED", "1"))
UPLOADERS = 6


def leftovers(data):
    """(objects without a record, files in tmp/) of the data directory."""
    objects = set(os.listdir(os.path.join(data, "objects")))
    records = {name[:-5] for name in os.listdir(os.path.join(data, "meta")) if name.endswith(".json")}
    orphans = sorted(objects - records)
    temporary = sorted(os.listdir(os.path.join(data, "tmp")))
    return orphans, temporary


def large_gif(rng):
    """A 1000×1000 GIF of about 1.1 MB (one code per pixel), to be made unique per upload."""
    side = 1000
    row = bytes((x // 7 + rng.randrange(2)) % 4 for x in range(side))
    return gifgen.gif(side, side, [gifgen.lzw_plain(row * side)], [(0, 0, 0), (255, 0, 0), (0, 255, 0), (0, 0, 255)])


def uploader(port, rng, workdir, acknowledged, stop, large):
    """Uploads until `stop` is set or the server dies; records what was acknowledged."""
    generator = inputs.Generator(rng, workdir, large_every=0)
    count = 0
    while not stop.is_set():
        count += 1
        roll = rng.random()
        if roll < 0.15:
            body, kind = os.urandom(rng.randrange(1 << 20, 4 << 20)), "noise"  # refused (415), after the body
        elif roll < 0.35:
            # bytes after the trailer are not read, but make a new content id
            body, kind = large + count.to_bytes(4, "big") + rng.randbytes(8), "large gif"
        else:
            kind, body = generator.valid()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("POST", "/images", body=body)
            response = conn.getresponse()
            answer = response.read()
            conn.close()
        except (OSError, http.client.HTTPException):
            return  # the server was killed
        if response.status in (200, 201):
            acknowledged[json.loads(answer)["id"]] = kind


def check(server, acknowledged):
    """Acknowledged uploads that are not fully served: missing from the list, no metadata, or
    no first frame."""
    lost = []
    listed = set()
    after = None
    while True:
        page = server.json("/images?limit=1000" + (f"&after={after}" if after else ""))
        listed |= {image["id"] for image in page["images"]}
        after = page.get("next")
        if not after:
            break
    for image_id in acknowledged:
        status_meta, _, _ = server.request("GET", f"/images/{image_id}")
        status_frame, _, body = server.request("GET", f"/frames/{image_id}/0")
        if image_id not in listed or status_meta != 200 or status_frame != 200 or body[:4] != b"\x89PNG":
            lost.append((image_id, status_meta, status_frame))
    return lost


def main():
    os.makedirs(OUT, exist_ok=True)
    build()
    data = os.path.join(OUT, "data")
    shutil.rmtree(data, ignore_errors=True)
    rng = random.Random(SEED)
    acknowledged = {}
    large = large_gif(rng)
    totals = {"leftObjects": 0, "leftTemporary": 0, "lost": 0, "orphansAfterStart": 0}
    failures = []
    for round_number in range(1, ROUNDS + 1):
        server = Server(data, log_path=os.path.join(OUT, "server.log"))
        # Whatever the last kill left has been reconciled by this start.
        orphans, temporary = leftovers(data)
        if round_number > 1:
            totals["orphansAfterStart"] += len(orphans) + len(temporary)
            if orphans or temporary:
                failures.append(f"round {round_number}: after start, {len(orphans)} orphan objects, "
                                f"{len(temporary)} tmp files")
        lost = check(server, acknowledged)
        totals["lost"] += len(lost)
        if lost:
            failures.append(f"round {round_number}: {len(lost)} acknowledged uploads not served: {lost[:3]}")
        before = len(acknowledged)
        stop = threading.Event()
        threads = [threading.Thread(target=uploader, args=(server.port, random.Random(rng.random()), OUT, acknowledged,
                                                           stop, large), daemon=True) for _ in range(UPLOADERS)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.5, 3.0))
        os.kill(server.pid, signal.SIGKILL)
        server.proc.wait()
        stop.set()
        for t in threads:
            t.join(timeout=30)
        server.log_file.close()
        orphans, temporary = leftovers(data)
        totals["leftObjects"] += len(orphans)
        totals["leftTemporary"] += len(temporary)
        print(f"round {round_number:3}: {len(acknowledged) - before:4} uploads acknowledged before the kill; "
              f"it left {len(orphans)} object(s) without a record and {len(temporary)} tmp file(s)", flush=True)
    # A last start: everything acknowledged is there, nothing is left over.
    server = Server(data, log_path=os.path.join(OUT, "server.log"))
    try:
        orphans, temporary = leftovers(data)
        totals["orphansAfterStart"] += len(orphans) + len(temporary)
        if orphans or temporary:
            failures.append(f"final start: {len(orphans)} orphan objects, {len(temporary)} tmp files")
        lost = check(server, acknowledged)
        totals["lost"] += len(lost)
        if lost:
            failures.append(f"final start: {len(lost)} acknowledged uploads not served: {lost[:3]}")
    finally:
        server.stop()
    print(f"kill-test: {ROUNDS} SIGKILLs, {len(acknowledged)} uploads acknowledged, {totals['lost']} lost; "
          f"the kills left {totals['leftObjects']} objects without a record and {totals['leftTemporary']} tmp files, "
          f"{totals['orphansAfterStart']} of them still there after the next start")
    for failure in failures:
        print("kill-test: " + failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
