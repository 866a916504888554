#!/usr/bin/env python3
"""Flipbook topology test: nginx (deploy/nginx.conf) in front of three `flipbook serve` replicas
on loopback that share one data directory, checked with real HTTP requests.

Phases (each prints its numbers; any failed check makes the exit status 1):
  1. upload      images posted through nginx; each readable through every replica directly
  2. affinity    every image's frames are served by exactly one replica (X-Served-By); the share
                 of images and requests per replica; listings spread over replicas; request ids
                 and X-Forwarded-For passed through
  3. kill        SIGKILL the replica that owns the most images while clients play through nginx:
                 only its images move, each to one other replica, and no request fails beyond
                 those in flight at the kill; after a restart its images come back
  4. rolling     SIGTERM each replica in turn (drain, exit, restart) while clients play
                 animations through nginx: no request fails
  sources        (after 1; not with --fake) registrations by URL whose origin fails (502) or is
                 too slow (504) are answered once, not retried, and move no image off its
                 replica (scripts/topology/source_phase.py)
  sessions       (after 1; not with --fake) upload sessions through nginx: minted by any replica,
                 made by the one their id hashes to, a frame read while the body streams
                 (scripts/topology/session_phase.py)
"""
import argparse
import collections
import hashlib
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types

from benchlib import gifgen
from benchlib.ports import free_ports

import session_phase
import source_phase

# Ids the affinity check sends through the proxy to see the ring spread them (each replica must
# get at least a tenth: with three replicas a fair ring gives a third, and nginx's 160 points per
# server keep each share well above a tenth).
PROBE_IDS = 300

HERE = os.path.dirname(os.path.abspath(__file__))

FAIL_TIMEOUT_S = 5  # deploy/nginx.conf: fail_timeout=5s


class Failures:
    def __init__(self):
        self.items = []

    def check(self, ok, message):
        if not ok:
            self.items.append(message)
            print(f"  FAIL: {message}", flush=True)
        return ok


def request(port, method, path, body=None, headers=None, timeout=30, source=None, host="127.0.0.1"):
    """One request on a fresh connection → (status, headers dict lower-case, body)."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout,
                                      source_address=(source, 0) if source else None)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    finally:
        conn.close()


class Replica:
    def __init__(self, index, port, workdir, datadir, command, env):
        self.index = index
        self.name = f"replica-{index}"
        self.host = "127.0.0.1"
        self.port = port
        self.workdir = workdir
        self.datadir = datadir
        self.command = command
        self.env = env
        self.proc = None
        self.starts = 0
        self.log_path = os.path.join(workdir, f"{self.name}.log")

    def start(self):
        self.starts += 1
        log = open(self.log_path, "ab")
        log.write(f"--- start {self.starts} ---\n".encode())
        log.flush()
        argv = self.command + ["serve", "--host", "127.0.0.1", "--port", str(self.port),
                               "--data-dir", self.datadir, "--instance-name", self.name]
        self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                     stdin=subprocess.DEVNULL)
        log.close()

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode} while starting; see {self.log_path}")
            try:
                status, _, _ = request(self.port, "GET", "/readyz", timeout=2)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} not ready within {timeout}s; see {self.log_path}")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def terminate(self, timeout):
        """SIGTERM, then its exit status within `timeout` s (None: still running, then killed)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def log_text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()


class Nginx:
    def __init__(self, repo, workdir, port, replicas):
        self.workdir = os.path.join(workdir, "nginx")
        os.makedirs(self.workdir)
        # When the test runs as root, nginx's workers run as an unprivileged user: let them in.
        os.chmod(workdir, 0o755)
        os.chmod(self.workdir, 0o755)
        self.conf = os.path.join(self.workdir, "nginx.conf")
        self.port = port
        self.access_log = os.path.join(self.workdir, "access.log")
        subprocess.run([sys.executable, os.path.join(HERE, "render-nginx-conf.py"),
                        "--src", os.path.join(repo, "deploy", "nginx.conf"), "--out", self.conf,
                        "--dir", self.workdir, "--listen", f"127.0.0.1:{port}"]
                       + sum((["--replica", f"127.0.0.1:{r.port}"] for r in replicas), []), check=True)
        subprocess.run(["nginx", "-t", "-q", "-p", self.workdir + "/", "-c", self.conf], check=True)
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(["nginx", "-p", self.workdir + "/", "-c", self.conf, "-g", "daemon off;"],
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if request(self.port, "GET", "/nginx-health", timeout=2)[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nginx did not come up")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def log_entries(self):
        entries = []
        with open(self.access_log) as f:
            for line in f:
                try:
                    entries.append(json.loads(line))
                except ValueError:
                    pass
        return entries


class Load:
    """Client threads playing animations through nginx on keep-alive connections."""

    def __init__(self, port, images, threads, mode, uploads=(), host="127.0.0.1"):
        self.host = host
        self.port = port
        self.images = images  # id -> frame count
        self.threads = threads
        self.mode = mode  # "frames": frame requests only; "play": metadata, frames in order, ?t=
        self.uploads = list(uploads)  # bodies one more thread keeps posting (201 or 200 expected)
        self.stop_flag = threading.Event()
        self.lock = threading.Lock()
        self.results = []  # (start, end, path, image, status, served_by, error)
        self.workers = []

    def _worker(self, seed):
        rng = random.Random(seed)
        conn = None
        ids = sorted(self.images)
        while not self.stop_flag.is_set():
            image = rng.choice(ids)
            if self.mode == "play":
                paths = [f"/images/{image}"] + [f"/frames/{image}/{i}" for i in range(self.images[image])]
                paths.append(f"/frames/{image}?t={rng.randrange(0, 5000)}")
            else:
                paths = [f"/frames/{image}/{rng.randrange(self.images[image])}"]
            for path in paths:
                if self.stop_flag.is_set():
                    break
                start = time.monotonic()
                status, served_by, error = None, None, None
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
                    conn.request("GET", path, headers={"X-Request-ID": f"load-{seed}-{len(self.results)}"})
                    resp = conn.getresponse()
                    resp.read()
                    status = resp.status
                    served_by = resp.getheader("X-Served-By")
                    if resp.getheader("Connection", "").lower() == "close":
                        conn.close()
                        conn = None
                except (OSError, http.client.HTTPException) as exc:
                    error = f"{type(exc).__name__}: {exc}"
                    if conn is not None:
                        conn.close()
                    conn = None
                end = time.monotonic()
                with self.lock:
                    self.results.append((start, end, path, image, status, served_by, error))
        if conn is not None:
            conn.close()

    def _uploader(self):
        conn = None
        n = 0
        while not self.stop_flag.is_set():
            body = self.uploads[n % len(self.uploads)]
            n += 1
            start = time.monotonic()
            status, served_by, error = None, None, None
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
                conn.request("POST", "/images", body=body, headers={"Content-Type": "image/gif"})
                resp = conn.getresponse()
                resp.read()
                status = 200 if resp.status in (200, 201) else resp.status
                served_by = resp.getheader("X-Served-By")
            except (OSError, http.client.HTTPException) as exc:
                error = f"{type(exc).__name__}: {exc}"
                if conn is not None:
                    conn.close()
                conn = None
            with self.lock:
                self.results.append((start, time.monotonic(), "POST /images", None, status, served_by, error))
        if conn is not None:
            conn.close()

    def start(self):
        for i in range(self.threads):
            t = threading.Thread(target=self._worker, args=(i + 1,), daemon=True)
            t.start()
            self.workers.append(t)
        if self.uploads:
            t = threading.Thread(target=self._uploader, daemon=True)
            t.start()
            self.workers.append(t)

    def stop(self):
        self.stop_flag.set()
        for t in self.workers:
            t.join(90)

    def snapshot(self):
        with self.lock:
            return list(self.results)


def failed(result):
    return result[6] is not None or result[4] != 200


def describe(result):
    start, end, path, image, status, served_by, error = result
    return f"{path} -> {error or status} (served by {served_by})"


def owners_by_image(results, since=None, until=None):
    seen = collections.defaultdict(collections.Counter)
    for start, end, path, image, status, served_by, error in results:
        if image is not None and (since is None or start >= since) and (until is None or end <= until) \
                and status == 200:
            seen[image][served_by] += 1
    return seen


def kill_under_load(load, victim_name, victim_images, kill, restart):
    """Starts `load`; 1.5 s later `kill()`s the victim (SIGKILL, returning once it is dead), 3 s
    later `restart()`s it (start and wait until ready), then watches until one of `victim_images`
    is served by `victim_name` again (at most fail_timeout + 15 s), and stops the load 1 s after.
    Returns the run: results, kill_at, restarted_at, back_at (None: its images never came back),
    in_flight (requests open while the kill was under way), bad (failed), bad_beyond (failed and
    not in flight then), after (who served each image from the victim's death until its restart
    began). A kill through a container engine takes a while to land, and a start a while to
    return after the replica is serving: the windows are bounded by the calls, not by instants."""
    load.start()
    time.sleep(1.5)
    kill_at = time.monotonic()
    kill()
    dead_at = time.monotonic()
    time.sleep(3.0)
    restart_begun = time.monotonic()
    restart()
    restarted_at = time.monotonic()
    # After fail_timeout nginx tries the replica again and its images return to it.
    back_at = None
    deadline = restarted_at + FAIL_TIMEOUT_S + 15
    while time.monotonic() < deadline and back_at is None:
        time.sleep(0.25)
        recent = owners_by_image(load.snapshot(), since=time.monotonic() - 0.5)
        if any(victim_name in recent.get(i, {}) for i in victim_images):
            back_at = time.monotonic()
    time.sleep(1.0)
    load.stop()
    results = load.snapshot()
    bad = [r for r in results if failed(r)]

    def open_at_kill(r):
        return r[0] < dead_at and r[1] > kill_at
    return types.SimpleNamespace(
        results=results, kill_at=kill_at, restarted_at=restarted_at, back_at=back_at,
        in_flight=[r for r in results if open_at_kill(r)], bad=bad,
        bad_beyond=[r for r in bad if not open_at_kill(r)],
        after=owners_by_image(results, since=dead_at + 0.2, until=restart_begun))


def run_checks(cluster, phases, fails, summary, threads):
    """The phases (module docstring) against `cluster`: `.replicas` (each with `name`, `index`,
    `host` and `port` for direct requests, `start()`, `wait_ready()`, `alive()`, `kill()` (SIGKILL,
    waited for), `terminate(timeout)` (SIGTERM → exit status, None if still running), `log_text()`),
    `.nginx` (`port`, `log_entries()`), `.images` (how many to upload), `.drain_timeout`, `.fake`
    and `.peers_preserved` (whether a replica sees a client's own loopback address: true on
    loopback, false through a container engine's port forwarding, which masquerades). The local
    run below and the compose run of `make container-test` (Tests/container) share it."""
    # 1. Upload through nginx, read through every replica.
    print("\n[1/4] upload through the proxy, read through every replica", flush=True)
    images = {}
    upload_served = collections.Counter()
    # While replicas are killed and restarted, one more client keeps uploading these larger
    # GIFs (about 0.5 MB each), so that some signals land while a request body is in flight.
    big = [gifgen.make_gif(1000 + k, size=(240, 240), frames=8)[0] for k in range(3)]
    for seed in range(1, cluster.images + 1):
        data, frames = gifgen.make_gif(seed)
        image_id = hashlib.sha256(data).hexdigest()
        status, headers, body = request(cluster.nginx.port, "POST", "/images", body=data,
                                        headers={"Content-Type": "image/gif"})
        upload_served[headers.get("x-served-by")] += 1
        fails.check(status == 201, f"upload {seed}: POST /images -> {status}, expected 201")
        fails.check(headers.get("location") == f"/images/{image_id}",
                    f"upload {seed}: Location {headers.get('location')!r}, expected /images/{image_id}")
        again = request(cluster.nginx.port, "POST", "/images", body=data, headers={"Content-Type": "image/gif"})[0]
        fails.check(again == 200, f"upload {seed} again: POST /images -> {again}, expected 200")
        images[image_id] = frames
    readable = 0
    for image_id, frames in images.items():
        for r in cluster.replicas:
            s1, h1, b1 = request(r.port, "GET", f"/images/{image_id}", host=r.host)
            s2, h2, _ = request(r.port, "GET", f"/frames/{image_id}/{frames - 1}", host=r.host)
            ok = s1 == 200 and s2 == 200 and h2.get("content-type", "").startswith("image/png")
            if ok:
                try:
                    ok = json.loads(b1).get("frameCount") == frames
                except ValueError:
                    ok = False
            readable += ok
            fails.check(ok, f"{image_id[:12]} through {r.name} directly: metadata {s1}, last frame {s2}")
            fails.check(h1.get("x-served-by") == r.name, f"{r.name} answered X-Served-By {h1.get('x-served-by')!r}")
    total_reads = len(images) * len(cluster.replicas)
    print(f"  uploads: {len(images)} images ({sum(images.values())} frames) through nginx; "
          f"upload requests went to {dict(sorted(upload_served.items(), key=str))}")
    print(f"  read back directly from each replica: {readable}/{total_reads} image x replica pairs OK")
    summary["upload"] = {"images": len(images), "readableEverywhere": readable, "pairs": total_reads,
                         "uploadsByReplica": dict(upload_served)}

    if "sources" in phases and not cluster.fake:
        print("\n[sources] a failing or slow origin behind a registration by URL", flush=True)
        source_phase.run(request, cluster.nginx, images, fails, summary)

    if "sessions" in phases and not cluster.fake:
        print("\n[sessions] upload sessions through the proxy", flush=True)
        session_phase.run(request, cluster.nginx, fails, summary)

    if "affinity" in phases:
        # 2. Affinity: every image's frames from one replica.
        print("\n[2/4] affinity: consistent hashing on the image id", flush=True)
        served = collections.defaultdict(collections.Counter)
        requests_by_replica = collections.Counter()
        missing_header = 0
        for rnd in range(3):
            for image_id, frames in images.items():
                for index in range(frames):
                    status, headers, _ = request(cluster.nginx.port, "GET", f"/frames/{image_id}/{index}")
                    fails.check(status == 200, f"GET /frames/{image_id[:12]}/{index} via nginx -> {status}")
                    who = headers.get("x-served-by")
                    missing_header += who is None
                    served[image_id][who] += 1
                    requests_by_replica[who] += 1
                status, headers, _ = request(cluster.nginx.port, "GET", f"/images/{image_id}")
                served[image_id][headers.get("x-served-by")] += 1
                requests_by_replica[headers.get("x-served-by")] += 1
        fails.check(missing_header == 0, f"{missing_header} responses without X-Served-By")
        split = [i for i, c in served.items() if len(c) != 1]
        fails.check(not split, f"{len(split)} images served by more than one replica: "
                    + "; ".join(f"{i[:12]} {dict(served[i])}" for i in split[:5]))
        owner = {i: c.most_common(1)[0][0] for i, c in served.items()}
        images_by_replica = collections.Counter(owner.values())
        total_requests = sum(requests_by_replica.values())
        print(f"  {total_requests} requests (3 rounds of every frame and the metadata of {len(images)} images)")
        print(f"  images served by exactly one replica: {len(images) - len(split)}/{len(images)}")
        for r in cluster.replicas:
            print(f"  {r.name}: owns {images_by_replica[r.name]:2d} images ({pct(images_by_replica[r.name], len(images))}),"
                  f" served {requests_by_replica[r.name]:4d} requests ({pct(requests_by_replica[r.name], total_requests)})")
        # The spread is judged on many ids, not on the few images above: nginx places each
        # replica on its ring by address and port (free ports, different every run), so one
        # replica owning none of 12 images happens by chance (about 2% of runs). 300 ids that
        # name no image are answered 404 by the replica the ring gives them to.
        probes = collections.Counter()
        for n in range(PROBE_IDS):
            probe_id = hashlib.sha256(f"topology-probe-{n}".encode()).hexdigest()
            status, headers, _ = request(cluster.nginx.port, "GET", f"/images/{probe_id}")
            fails.check(status == 404, f"GET /images/{probe_id[:12]}… (no such image) via nginx -> {status}")
            probes[headers.get("x-served-by")] += 1
        print(f"  {PROBE_IDS} ids naming no image (404) went to {dict(sorted(probes.items(), key=str))}")
        for r in cluster.replicas:
            fails.check(probes[r.name] >= PROBE_IDS // 10,
                        f"{r.name} got {probes[r.name]} of {PROBE_IDS} ids: the hash does not spread")
        listing = collections.Counter()
        for _ in range(12):
            status, headers, body = request(cluster.nginx.port, "GET", "/images")
            fails.check(status == 200, f"GET /images via nginx -> {status}")
            listing[headers.get("x-served-by")] += 1
        print(f"  GET /images (no image id) x12 went to {dict(sorted(listing.items(), key=str))}")
        fails.check(len(listing) >= 2, "listings all went to one replica: requests without an id are not spread")
        # Request ids: the client's is passed through, a missing one is made by cluster.nginx.
        status, headers, _ = request(cluster.nginx.port, "GET", "/healthz", headers={"X-Request-ID": "topology-rid-1"})
        fails.check(headers.get("x-request-id") == "topology-rid-1",
                    f"X-Request-ID not passed through: {headers.get('x-request-id')!r}")
        status, headers, _ = request(cluster.nginx.port, "GET", "/healthz")
        generated = headers.get("x-request-id", "")
        fails.check(len(generated) >= 16, f"no X-Request-ID generated at the proxy: {generated!r}")
        print(f"  X-Request-ID: client's passed through; generated when absent ({generated})")
        # X-Forwarded-For: the replicas trust nginx only. A client on 127.0.0.9 through nginx must
        # be logged with the address nginx saw (taken from X-Forwarded-For: 127.0.0.9 on loopback;
        # the engine's gateway through a container engine's port forwarding); a client on
        # 127.0.0.7 talking to a replica directly must be logged with its own address whatever
        # X-Forwarded-For says.
        # (Port forwarding answers only the loopback address it was reached from: there the
        # clients keep the default source address.)
        some_id = sorted(images)[0]
        proxied_from, direct_from = ("127.0.0.9", "127.0.0.7") if cluster.peers_preserved else (None, None)
        request(cluster.nginx.port, "GET", f"/images/{some_id}", source=proxied_from,
                headers={"X-Request-ID": "topology-xff-proxied"})
        request(cluster.nginx.port, "GET", f"/images/{some_id}", source=proxied_from,
                headers={"X-Request-ID": "topology-xff-spoofed", "X-Forwarded-For": "203.0.113.9"})
        request(cluster.replicas[0].port, "GET", f"/images/{some_id}", source=direct_from,
                host=cluster.replicas[0].host,
                headers={"X-Request-ID": "topology-xff-direct", "X-Forwarded-For": "198.51.100.66"})
        time.sleep(0.5)
        lines = []
        for r in cluster.replicas:
            lines += r.log_text().splitlines()
        proxied = [l for l in lines if "topology-xff-proxied" in l]
        spoofed = [l for l in lines if "topology-xff-spoofed" in l]
        direct = [l for l in lines if "topology-xff-direct" in l]
        seen = [e.get("client") for e in cluster.nginx.log_entries() if e.get("request_id") == "topology-xff-proxied"]
        client = seen[0] if seen else None
        fails.check(client is not None and (client == "127.0.0.9" or not cluster.peers_preserved),
                    f"nginx logged the proxied request from {client!r}, expected 127.0.0.9")
        if proxied and direct and client:
            fails.check(any(f'"{client}"' in l or f"={client}" in l or f" {client}" in l for l in proxied),
                        "request through the trusted proxy not logged with the client address from X-Forwarded-For"
                        f" ({client}): {proxied[0][:300]}")
            fails.check(all("198.51.100.66" not in l for l in direct)
                        and (not cluster.peers_preserved or any("127.0.0.7" in l for l in direct)),
                        f"direct request from an untrusted peer logged with its spoofed X-Forwarded-For: {direct[0][:300]}")
            print(f"  client address in replica logs: from X-Forwarded-For via the trusted proxy ({client});"
                  " the peer's own address from an untrusted peer, its X-Forwarded-For ignored")
            if spoofed:
                trusted_right = any(client in l and "203.0.113.9" not in l for l in spoofed)
                print("  client-supplied X-Forwarded-For through the proxy: logged "
                      + (f"the proxy's peer {client} (rightmost untrusted hop; a spoofed value is not believed)"
                         if trusted_right else "203.0.113.9, the client's own claim (leftmost hop; spoofable)"))
                summary["xffSpoofBelieved"] = not trusted_right
        else:
            fails.check(False, "replica logs carry no lines with the request id; cannot check the logged client address")
        summary["affinity"] = {"requests": total_requests, "splitImages": len(split),
                               "imagesByReplica": {r.name: images_by_replica[r.name] for r in cluster.replicas},
                               "requestsByReplica": {r.name: requests_by_replica[r.name] for r in cluster.replicas},
                               "listingsByReplica": dict(listing)}

    if "kill" in phases:
        # 3. SIGKILL the busiest replica under load.
        victim = {r.name: r for r in cluster.replicas}[max(cluster.replicas, key=lambda r: (images_by_replica[r.name], -r.index)).name]
        victim_images = {i for i, o in owner.items() if o == victim.name}
        print(f"\n[3/4] SIGKILL {victim.name} (owner of {len(victim_images)} images) under load", flush=True)
        load = Load(cluster.nginx.port, images, threads, "frames", uploads=big)

        def restart():
            victim.start()
            victim.wait_ready()
        run = kill_under_load(load, victim.name, victim_images, victim.kill, restart)
        results, kill_at, restarted_at, back_at = run.results, run.kill_at, run.restarted_at, run.back_at
        in_flight, bad, bad_beyond, after = run.in_flight, run.bad, run.bad_beyond, run.after
        moved_to = collections.Counter()
        stayed = 0
        for image_id, counter in after.items():
            fails.check(len(counter) == 1, f"after the kill {image_id[:12]} was served by {dict(counter)}")
            now_owner = counter.most_common(1)[0][0]
            if image_id in victim_images:
                fails.check(now_owner != victim.name, f"{image_id[:12]} still served by the dead {victim.name}")
                moved_to[now_owner] += 1
            else:
                stayed += now_owner == owner[image_id]
                fails.check(now_owner == owner[image_id],
                            f"{image_id[:12]} moved from {owner[image_id]} to {now_owner} though its replica lived")
        survivors = len([i for i in after if i not in victim_images])
        print(f"  {len(results)} requests through nginx by {threads} clients and 1 uploader"
              f" ({sum(1 for r in results if r[2] == 'POST /images')} uploads); {len(in_flight)} in flight at the kill;"
              f" failed: {len(bad)} ({len(bad_beyond)} beyond the in-flight ones)")
        for r in bad[:10]:
            print(f"    failed: {describe(r)}")
        print(f"  while {victim.name} was down: its {len(victim_images)} images moved to {dict(moved_to)};"
              f" {stayed}/{survivors} other images stayed on their replica")
        if back_at:
            print(f"  restarted {victim.name}: ready after {restarted_at - kill_at:.1f}s from the kill;"
                  f" its images back on it {back_at - restarted_at:.1f}s later (fail_timeout={FAIL_TIMEOUT_S}s)")
        fails.check(back_at is not None, f"{victim.name}'s images did not return to it after its restart")
        fails.check(not bad_beyond, f"{len(bad_beyond)} requests failed beyond the in-flight ones at the kill")
        summary["kill"] = {"victim": victim.name, "victimImages": len(victim_images), "requests": len(results),
                           "inFlightAtKill": len(in_flight), "failed": len(bad), "failedBeyondInFlight": len(bad_beyond),
                           "movedTo": dict(moved_to), "othersStayed": stayed, "others": survivors,
                           "backAfterRestartSeconds": round(back_at - restarted_at, 2) if back_at else None}
    if "rolling" in phases:
        if "kill" in phases:
            time.sleep(FAIL_TIMEOUT_S)  # let nginx forget the failure before the next phase

        # 4. Rolling restart under playback.
        print("\n[4/4] rolling restart (SIGTERM, drain, restart each replica in turn) under playback", flush=True)
        log_mark = len(cluster.nginx.log_entries())
        load = Load(cluster.nginx.port, images, threads, "play", uploads=big)
        load.start()
        time.sleep(1.5)
        drains = {}
        for r in cluster.replicas:
            t0 = time.monotonic()
            code = r.terminate(cluster.drain_timeout + 10)
            if code is None:
                fails.check(False, f"{r.name} still running {cluster.drain_timeout + 10}s after SIGTERM")
            drains[r.name] = time.monotonic() - t0
            fails.check(code == 0, f"{r.name} exited with {code} after SIGTERM, expected 0")
            fails.check(drains[r.name] <= cluster.drain_timeout + 2,
                        f"{r.name} took {drains[r.name]:.1f}s to exit, drain timeout is {cluster.drain_timeout}s")
            r.start()
            r.wait_ready()
            print(f"  {r.name}: exited {code} {drains[r.name]:.2f}s after SIGTERM; restarted and ready after"
                  f" {time.monotonic() - t0:.2f}s", flush=True)
            # nginx has no active health checks: a replica it saw fail stays out for fail_timeout.
            # Restarting the next one sooner could take every replica out at once ("no live
            # upstreams"), so a rolling restart waits that long between replicas (docs/DEPLOYMENT.md).
            time.sleep(FAIL_TIMEOUT_S + 1)
        time.sleep(1.0)
        load.stop()
        results = load.snapshot()
        bad = [r for r in results if failed(r)]
        played_by = collections.Counter(r[5] for r in results if r[4] == 200)
        entries = cluster.nginx.log_entries()[log_mark:]
        retried = [e for e in entries if "," in e.get("upstream_status", "") or ":" in e.get("upstream_status", "")]
        print(f"  {len(results)} requests by {threads} players and 1 uploader"
              f" ({sum(1 for r in results if '/images/' in r[2])} metadata,"
              f" {sum(1 for r in results if '/frames/' in r[2])} frames,"
              f" {sum(1 for r in results if r[2] == 'POST /images')} uploads of ~{len(big[0]) // 1024} KiB);"
              f" failed: {len(bad)}")
        for r in bad[:10]:
            print(f"    failed: {describe(r)}")
        print(f"  answered by {dict(sorted(played_by.items(), key=str))}; nginx retried {len(retried)} requests on"
              " another replica")
        fails.check(not bad, f"{len(bad)} requests failed during the rolling restart")
        fails.check(len(results) > 50, f"only {len(results)} requests during the rolling restart")
        summary["rolling"] = {"requests": len(results), "failed": len(bad), "retriedByNginx": len(retried),
                              "drainSeconds": {k: round(v, 2) for k, v in drains.items()},
                              "answeredBy": dict(played_by)}

def pct(part, whole):
    return f"{100.0 * part / whole:.1f}%" if whole else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, help="flipbook executable (or the fake replica script)")
    ap.add_argument("--fake", action="store_true", help="run scripts/topology/fake_replica.py replicas")
    ap.add_argument("--images", type=int, default=24)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--drain-timeout", type=int, default=10)
    ap.add_argument("--phases", default="upload,sources,sessions,affinity,kill,rolling",
                    help="comma-separated subset (upload always runs; kill needs affinity)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--summary", help="write the numbers as JSON here")
    args = ap.parse_args()
    phases = set(args.phases.split(",")) | {"upload"}
    if "kill" in phases:
        phases.add("affinity")

    repo = os.path.dirname(os.path.dirname(HERE))
    workdir = tempfile.mkdtemp(prefix="flipbook-topology-")
    datadir = os.path.join(workdir, "data")
    os.makedirs(datadir)
    print(f"topology-test: work directory {workdir}", flush=True)

    command = [sys.executable, os.path.join(HERE, "fake_replica.py")] if args.fake else [args.binary]
    env = dict(os.environ)
    env.update({
        "FLIPBOOK_SERVER_TRUSTEDPROXIES": "127.0.0.1/32",
        "FLIPBOOK_SERVER_DRAINTIMEOUTSECONDS": str(args.drain_timeout),
        "FLIPBOOK_LOG_FORMAT": "json",
        "FLIPBOOK_LOG_LEVEL": "info",
    })
    env.update(source_phase.ENV)
    env.update(session_phase.ENV)
    ports = free_ports(4)
    replicas = [Replica(i + 1, ports[i + 1], workdir, datadir, command, env) for i in range(3)]
    by_name = {r.name: r for r in replicas}
    nginx = Nginx(repo, workdir, ports[0], replicas)
    fails = Failures()
    summary = {"mode": "fake" if args.fake else "flipbook", "replicas": [r.name for r in replicas]}

    try:
        for r in replicas:
            r.start()
        for r in replicas:
            r.wait_ready()
        nginx.start()
        print(f"topology-test: nginx on 127.0.0.1:{nginx.port} -> "
              + ", ".join(f"{r.name} 127.0.0.1:{r.port}" for r in replicas), flush=True)

        cluster = types.SimpleNamespace(replicas=replicas, nginx=nginx, images=args.images,
                                        drain_timeout=args.drain_timeout, fake=args.fake, peers_preserved=True)
        run_checks(cluster, phases, fails, summary, args.threads)
    except Exception as exc:  # a crash of the harness or of a replica is a failure, with its reason
        fails.check(False, f"{type(exc).__name__}: {exc}")
    finally:
        for r in replicas:
            if r.alive():
                r.proc.send_signal(signal.SIGKILL)
                r.proc.wait()
        nginx.stop()

    return report("topology-test", fails, summary, args.summary, workdir, args.keep)


def report(name, fails, summary, summary_path, workdir, keep):
    """Writes the summary, prints the verdict, removes the work directory after a pass (unless
    `keep`); returns the exit status."""
    summary["failures"] = fails.items
    if summary_path:
        with open(summary_path, "w") as f:
            json.dump(summary, f, indent=2, sort_keys=True)
    if fails.items:
        print(f"\n{name}: FAILED ({len(fails.items)} checks); logs in {workdir}")
        for item in fails.items[:20]:
            print(f"  - {item}")
        return 1
    print(f"\n{name}: all checks passed")
    if not keep:
        subprocess.run(["rm", "-rf", workdir])
    return 0


if __name__ == "__main__":
    sys.exit(main())
