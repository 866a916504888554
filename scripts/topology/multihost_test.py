#!/usr/bin/env python3
"""Flipbook on separate hosts: three replicas with storage.backend=s3, nginx (deploy/nginx.conf)
and an S3 server (moto), each in a network namespace of its own, and no shared directory.

Network (made here, removed at the end; needs root and iproute2):
  front 10.231.N.0/24   nginx .20, replicas .11-.13, this driver .100  (bridge brf)
  back  10.232.N.0/24   S3 .10, replicas .11-.13, this driver .100     (bridge brb)
The bridges live in a namespace of their own; each host has a veth pair per network it is on,
so a replica's S3 path (its eth1) can be cut without cutting it off from nginx.

Checks (any failure makes the exit status 1):
  1. shared     images uploaded through each replica and through nginx are served, identical,
                by every replica; a cold replica's first frame is timed
  2. affinity   through nginx every image's frames come from one replica
  3. host-stop  the busiest replica's processes are killed (SIGKILL) under load through nginx: no
                request fails beyond those in flight; its images move, and come back after restart
  4. s3-cut     one replica's S3 link goes down: its uploads answer 503 with Retry-After, its
                cached frames keep being served, /readyz says degraded, uploads through nginx still
                succeed; the link comes back and so does the replica
  5. kill-9     a replica is killed with SIGKILL while uploads stream to it and through nginx: every
                acknowledged upload is served afterwards by another replica, and no image is
                visible without its original
"""
import argparse
import collections
import hashlib
import http.client
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from benchlib import gifgen
from topology_test import FAIL_TIMEOUT_S, Failures, Load, describe, kill_under_load, report, request

HERE = os.path.dirname(os.path.abspath(__file__))

REPLICA_PORT = 8080
NGINX_PORT = 8080
S3_PORT = 9000


def run(*argv):
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


class Network:
    """Namespaces, two bridges and the veth pairs between them."""

    def __init__(self):
        self.tag = "%04x" % random.randrange(1 << 16)
        n = random.randrange(1, 250)
        self.front = f"10.231.{n}"
        self.back = f"10.232.{n}"
        self.namespaces = []
        self.pairs = 0
        self.switch = self.ns("sw")

    def ns(self, role):
        name = f"fb{self.tag}{role}"
        run("ip", "netns", "add", name)
        self.namespaces.append(name)
        run("ip", "-n", name, "link", "set", "lo", "up")
        return name

    def build(self):
        for bridge in ("brf", "brb"):
            run("ip", "-n", self.switch, "link", "add", bridge, "type", "bridge")
            run("ip", "-n", self.switch, "link", "set", bridge, "up")

    def attach(self, namespace, interface, bridge, address):
        """A veth pair: `interface` with `address`/24 in `namespace` (None: this namespace), its
        peer on `bridge` in the switch namespace."""
        self.pairs += 1
        local, peer = f"v{self.tag}x{self.pairs}", f"v{self.tag}y{self.pairs}"
        run("ip", "link", "add", local, "type", "veth", "peer", "name", peer)
        run("ip", "link", "set", peer, "netns", self.switch)
        run("ip", "-n", self.switch, "link", "set", peer, "master", bridge, "up")
        if namespace is None:
            run("ip", "addr", "add", address + "/24", "dev", local)
            run("ip", "link", "set", local, "up")
            return local
        run("ip", "link", "set", local, "netns", namespace)
        run("ip", "-n", namespace, "link", "set", local, "name", interface)
        run("ip", "-n", namespace, "addr", "add", address + "/24", "dev", interface)
        run("ip", "-n", namespace, "link", "set", interface, "up")
        return interface

    def set_link(self, namespace, interface, up):
        run("ip", "-n", namespace, "link", "set", interface, "up" if up else "down")

    def remove(self):
        for name in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


class Host:
    """A process in a namespace, restartable."""

    def __init__(self, name, namespace, argv, env, log_path):
        self.name, self.namespace, self.argv, self.env, self.log_path = name, namespace, argv, env, log_path
        self.proc = None
        self.starts = 0

    def start(self):
        self.starts += 1
        with open(self.log_path, "ab") as log:
            log.write(f"--- start {self.starts} ---\n".encode())
            log.flush()
            self.proc = subprocess.Popen(["ip", "netns", "exec", self.namespace] + self.argv, stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.env)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None


def wait_until(what, check, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return True
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{what} not within {timeout}s")


def unique_gif(seed, size=None, frames=None):
    """A generated GIF; distinct seeds give distinct bytes, so distinct content ids."""
    data, count = gifgen.make_gif(seed, size=size, frames=frames)
    return data, count, hashlib.sha256(data).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--moto", required=True, help="moto_server executable")
    ap.add_argument("--images", type=int, default=18)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--summary")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("multihost-test: FAILED: network namespaces need root (ip netns add); run as root")
        return 1

    repo = os.path.dirname(os.path.dirname(HERE))
    workdir = tempfile.mkdtemp(prefix="flipbook-multihost-")
    os.chmod(workdir, 0o755)
    fails = Failures()
    summary = {"mode": "multihost"}
    net = None
    hosts = []
    try:
        net = Network()
        net.build()
        s3_ns, lb_ns = net.ns("s3"), net.ns("lb")
        replica_ns = [net.ns(f"r{i}") for i in (1, 2, 3)]
        net.attach(s3_ns, "eth1", "brb", f"{net.back}.10")
        net.attach(lb_ns, "eth0", "brf", f"{net.front}.20")
        for i, namespace in enumerate(replica_ns, start=1):
            net.attach(namespace, "eth0", "brf", f"{net.front}.1{i}")
            net.attach(namespace, "eth1", "brb", f"{net.back}.1{i}")
        net.attach(None, "front", "brf", f"{net.front}.100")
        net.attach(None, "back", "brb", f"{net.back}.100")
    except (RuntimeError, OSError) as exc:
        print(f"multihost-test: FAILED: cannot build the test network: {exc}")
        if net:
            net.remove()
        return 1
    print(f"multihost-test: namespaces {', '.join(net.namespaces)}; front {net.front}.0/24, back {net.back}.0/24;"
          f" work directory {workdir}", flush=True)

    endpoint = f"http://{net.back}.10:{S3_PORT}"
    bucket = "flipbook-multihost"
    env = dict(os.environ)
    env.update({
        "FLIPBOOK_STORAGE_BACKEND": "s3", "FLIPBOOK_STORAGE_S3_ENDPOINT": endpoint,
        "FLIPBOOK_STORAGE_S3_BUCKET": bucket, "FLIPBOOK_STORAGE_S3_PATHSTYLE": "true",
        "FLIPBOOK_STORAGE_S3_PREFIX": "flipbook/", "FLIPBOOK_STORAGE_S3_RETRIES": "2",
        "FLIPBOOK_STORAGE_S3_REQUESTTIMEOUTSECONDS": "5",
        "AWS_ACCESS_KEY_ID": "multihost", "AWS_SECRET_ACCESS_KEY": "multihost-secret",
        "FLIPBOOK_SERVER_TRUSTEDPROXIES": f"{net.front}.20/32", "FLIPBOOK_SERVER_DRAINTIMEOUTSECONDS": "10",
        "FLIPBOOK_LOG_FORMAT": "json", "FLIPBOOK_LOG_LEVEL": "info", "FLIPBOOK_LOG_ACCESSLOG": "false",
    })
    moto = Host("s3", s3_ns, [args.moto, "-H", f"{net.back}.10", "-p", str(S3_PORT)], dict(os.environ),
                os.path.join(workdir, "s3.log"))
    replicas = []
    for i, namespace in enumerate(replica_ns, start=1):
        data = os.path.join(workdir, f"replica-{i}-data")  # its own disk: nothing is shared
        os.makedirs(data)
        replicas.append(Host(f"replica-{i}", namespace,
                             [args.binary, "serve", "--host", "0.0.0.0", "--port", str(REPLICA_PORT),
                              "--data-dir", data, "--instance-name", f"replica-{i}"],
                             env, os.path.join(workdir, f"replica-{i}.log")))
        replicas[-1].address = f"{net.front}.1{i}"
    nginx_dir = os.path.join(workdir, "nginx")
    os.makedirs(nginx_dir)
    os.chmod(nginx_dir, 0o755)
    conf = os.path.join(nginx_dir, "nginx.conf")
    subprocess.run([sys.executable, os.path.join(HERE, "render-nginx-conf.py"), "--quiet",
                    "--src", os.path.join(repo, "deploy", "nginx.conf"), "--out", conf, "--dir", nginx_dir,
                    "--listen", f"{net.front}.20:{NGINX_PORT}"]
                   + sum((["--replica", f"{r.address}:{REPLICA_PORT}"] for r in replicas), []), check=True)
    nginx = Host("nginx", lb_ns, ["nginx", "-p", nginx_dir + "/", "-c", conf, "-g", "daemon off;"], dict(os.environ),
                 os.path.join(workdir, "nginx.log"))
    lb = f"{net.front}.20"
    hosts = [moto, nginx] + replicas

    def get(host, path, **kw):
        return request(REPLICA_PORT, "GET", path, host=host, **kw)

    def ready(replica):
        return get(replica.address, "/readyz", timeout=2)[0] == 200

    try:
        moto.start()
        wait_until("the S3 server", lambda: request(S3_PORT, "GET", "/", host=f"{net.back}.10", timeout=2)[0] > 0, 60)
        status = request(S3_PORT, "PUT", f"/{bucket}", host=f"{net.back}.10")[0]
        fails.check(status == 200, f"bucket not created: {status}")
        for r in replicas:
            r.start()
        for r in replicas:
            wait_until(f"{r.name} ready", lambda r=r: ready(r), 90)
        nginx.start()
        wait_until("nginx", lambda: request(NGINX_PORT, "GET", "/nginx-health", host=lb, timeout=2)[0] == 200, 20)
        print(f"multihost-test: S3 {endpoint}; nginx {lb}:{NGINX_PORT}; "
              + ", ".join(f"{r.name} {r.address}" for r in replicas), flush=True)

        # 1. An upload through any replica (or nginx) is served, identically, by every replica.
        print("\n[1/5] uploads through each replica and nginx, served by every replica", flush=True)
        images = {}
        cold_ms = []
        for n in range(args.images):
            data, frames, sha = unique_gif(1000 + n)
            via = replicas[n % 3] if n % 4 != 3 else None
            status, headers, body = request(REPLICA_PORT if via else NGINX_PORT, "POST", "/images", body=data,
                                            host=via.address if via else lb)
            fails.check(status == 201, f"upload {n} via {via.name if via else 'nginx'} -> {status} {body[:200]!r}")
            images[sha] = frames
            uploader = headers.get("x-served-by")
            frames_by = {}
            for r in replicas:
                start = time.monotonic()
                status, _, png = get(r.address, f"/frames/{sha}/0")
                if r.name != uploader:
                    cold_ms.append((time.monotonic() - start) * 1000)
                fails.check(status == 200, f"{r.name} frame 0 of {sha[:12]} -> {status}")
                frames_by[r.name] = png
                status, _, last = get(r.address, f"/frames/{sha}/{frames - 1}")
                fails.check(status == 200, f"{r.name} last frame of {sha[:12]} -> {status}")
            fails.check(len(set(frames_by.values())) == 1, f"replicas disagree on frame 0 of {sha[:12]}")
        pairs = len(images) * len(replicas)
        print(f"  {len(images)} images x {len(replicas)} replicas = {pairs} pairs served, identical;"
              f" cold replica's first frame: median {statistics.median(cold_ms):.1f} ms,"
              f" max {max(cold_ms):.1f} ms ({len(cold_ms)} cold requests: record + original from S3, decode)")
        summary["shared"] = {"images": len(images), "pairs": pairs,
                             "coldFirstFrameMs": {"median": round(statistics.median(cold_ms), 2),
                                                  "max": round(max(cold_ms), 2), "n": len(cold_ms)}}

        # 2. Consistent hashing through nginx.
        print("\n[2/5] affinity through nginx", flush=True)
        served = collections.defaultdict(collections.Counter)
        for _ in range(2):
            for sha, frames in images.items():
                for k in range(frames):
                    status, headers, _ = request(NGINX_PORT, "GET", f"/frames/{sha}/{k}", host=lb)
                    fails.check(status == 200, f"frame {k} of {sha[:12]} via nginx -> {status}")
                    served[sha][headers.get("x-served-by")] += 1
        split = [s for s, c in served.items() if len(c) != 1]
        owner = {s: c.most_common(1)[0][0] for s, c in served.items()}
        by_replica = collections.Counter(owner.values())
        fails.check(not split, f"{len(split)} images served by more than one replica")
        print(f"  {len(images) - len(split)}/{len(images)} images served by one replica; images per replica "
              + ", ".join(f"{r.name} {by_replica[r.name]}" for r in replicas))
        summary["affinity"] = {"splitImages": len(split), "imagesByReplica": dict(by_replica)}

        # 3. A host's processes stop under load: only its images move, nothing fails beyond in-flight.
        victim = max(replicas, key=lambda r: (by_replica[r.name], r.name))
        victim_images = {s for s, o in owner.items() if o == victim.name}
        print(f"\n[3/5] SIGKILL {victim.name} (owner of {len(victim_images)} images) under load through nginx", flush=True)
        uploads = [unique_gif(5000 + i, size=(96, 64), frames=3)[0] for i in range(4)]
        load = Load(NGINX_PORT, images, args.threads, "frames", uploads=uploads, host=lb)

        def restart():
            victim.start()
            wait_until(f"{victim.name} ready again", lambda: ready(victim), 90)
        run = kill_under_load(load, victim.name, victim_images, victim.kill, restart)
        results, kill_at, restarted_at, back_at = run.results, run.kill_at, run.restarted_at, run.back_at
        in_flight, bad, bad_beyond, after = run.in_flight, run.bad, run.bad_beyond, run.after
        moved = sum(1 for s in after if s in victim_images and victim.name not in after[s])
        stayed = sum(1 for s in after if s not in victim_images and list(after[s]) == [owner[s]])
        others = sum(1 for s in after if s not in victim_images)
        print(f"  {len(results)} requests ({sum(1 for r in results if r[2] == 'POST /images')} uploads);"
              f" {len(in_flight)} in flight at the kill; failed {len(bad)} ({len(bad_beyond)} beyond in-flight)")
        for r in bad_beyond[:10]:
            print(f"    failed: {describe(r)}")
        window = [r for r in results if r[0] >= kill_at + 0.2 and r[1] <= restarted_at]
        before = [r for r in results if r[1] < kill_at]
        during = [r for r in results if kill_at <= r[0] <= restarted_at]

        def p50_p99(rs):
            ms = sorted((r[1] - r[0]) * 1000 for r in rs) or [0.0]
            return f"p50 {ms[len(ms) // 2]:.1f} ms, p99 {ms[min(len(ms) - 1, int(len(ms) * 0.99))]:.1f} ms"
        print(f"  latency before the kill {p50_p99(before)} ({len(before)} requests);"
              f" started while it was down {p50_p99(during)} ({len(during)} requests)")
        print(f"  while down ({restarted_at - kill_at:.1f}s, {len(window)} requests done): {moved}/{len(victim_images)} of its"
              f" images moved, {stayed}/{others} others stayed;"
              + (f" back on it {back_at - restarted_at:.1f}s after its restart" if back_at else " never came back"))
        fails.check(not bad_beyond, f"{len(bad_beyond)} requests failed beyond those in flight at the kill")
        fails.check(stayed == others, f"only {stayed}/{others} images of live replicas stayed put")
        fails.check(back_at is not None, f"{victim.name}'s images did not return after its restart")
        summary["hostStop"] = {"victim": victim.name, "requests": len(results), "inFlight": len(in_flight),
                               "failed": len(bad), "failedBeyondInFlight": len(bad_beyond),
                               "victimImages": len(victim_images), "othersStayed": stayed, "others": others}
        time.sleep(FAIL_TIMEOUT_S)

        # 4. One replica loses its S3 link.
        cut = replicas[1]
        cut_ns = replica_ns[1]
        mine = sorted(images)[:6]
        for sha in mine:  # its originals are local now
            get(cut.address, f"/frames/{sha}/0")
        print(f"\n[4/5] {cut.name}'s S3 link down (ip link set eth1 down in its namespace)", flush=True)
        net.set_link(cut_ns, "eth1", False)
        time.sleep(1.5)  # past storage.recheckSeconds: records are due for a recheck that cannot happen
        statuses = collections.Counter()
        retry_after = set()
        for i in range(5):
            data, _, _ = unique_gif(7000 + i, size=(64, 48), frames=2)
            status, headers, _ = request(REPLICA_PORT, "POST", "/images", body=data, host=cut.address)
            statuses[status] += 1
            retry_after.add(headers.get("retry-after"))
        frame_statuses = collections.Counter()
        for sha in mine:
            for k in range(images[sha]):
                frame_statuses[get(cut.address, f"/frames/{sha}/{k}")[0]] += 1
        status, _, body = get(cut.address, "/readyz")
        readiness = json.loads(body or b"{}").get("status")
        via_nginx = collections.Counter()
        for i in range(6):
            data, _, _ = unique_gif(7100 + i, size=(64, 48), frames=2)
            via_nginx[request(NGINX_PORT, "POST", "/images", body=data, host=lb)[0]] += 1
        print(f"  direct uploads: {dict(statuses)} (Retry-After {sorted(map(str, retry_after))});"
              f" its cached frames: {dict(frame_statuses)}; /readyz {status} {readiness};"
              f" uploads through nginx: {dict(via_nginx)}")
        fails.check(statuses == {503: 5}, f"uploads to the cut replica: {dict(statuses)}, want 503 only")
        fails.check(retry_after == {"2"}, f"Retry-After {retry_after}")
        fails.check(set(frame_statuses) == {200}, f"cached frames during the cut: {dict(frame_statuses)}")
        fails.check(status == 200 and readiness == "degraded", f"/readyz during the cut: {status} {readiness}")
        fails.check(set(via_nginx) <= {200, 201}, f"uploads through nginx during the cut: {dict(via_nginx)}")
        net.set_link(cut_ns, "eth1", True)
        t0 = time.monotonic()
        wait_until("the cut replica ready again",
                   lambda: json.loads(get(cut.address, "/readyz")[2] or b"{}").get("status") == "ready", 30)
        recovered = time.monotonic() - t0
        data, _, _ = unique_gif(7200, size=(64, 48), frames=2)
        status = request(REPLICA_PORT, "POST", "/images", body=data, host=cut.address)[0]
        print(f"  link up: ready again after {recovered:.1f}s; a direct upload -> {status}")
        fails.check(status == 201, f"upload after the link came back -> {status}")
        summary["s3Cut"] = {"replica": cut.name, "directUploads": dict(statuses), "cachedFrames": dict(frame_statuses),
                            "readyz": readiness, "viaNginx": dict(via_nginx), "recoveredSeconds": round(recovered, 2)}
        time.sleep(FAIL_TIMEOUT_S)

        # 5. kill -9 while uploads stream: nothing acknowledged is lost.
        target = replicas[2]
        print(f"\n[5/5] SIGKILL {target.name} while uploads stream to it and through nginx", flush=True)
        acked, unacked = {}, {}
        lock = threading.Lock()
        stop = threading.Event()

        def uploader(first, host, port):
            n = first
            while not stop.is_set():
                data, _, sha = unique_gif(n, size=(160, 120), frames=4)
                n += 1
                try:
                    status, headers, body = request(port, "POST", "/images", body=data, host=host, timeout=30)
                except (OSError, http.client.HTTPException):
                    status = None
                with lock:
                    (acked if status in (200, 201) else unacked)[sha] = status
        threads = [threading.Thread(target=uploader, args=(20000, target.address, REPLICA_PORT)),
                   threading.Thread(target=uploader, args=(30000, target.address, REPLICA_PORT)),
                   threading.Thread(target=uploader, args=(40000, lb, NGINX_PORT))]
        for t in threads:
            t.start()
        time.sleep(2.5)
        target.kill()
        time.sleep(1.5)
        stop.set()
        for t in threads:
            t.join(60)
        target.start()
        wait_until(f"{target.name} ready again", lambda: ready(target), 90)
        reader = replicas[0]
        lost = [s for s in acked if get(reader.address, f"/images/{s}")[0] != 200
                or get(reader.address, f"/frames/{s}/0")[0] != 200]
        partial = [s for s in unacked if get(reader.address, f"/images/{s}")[0] == 200
                   and get(reader.address, f"/frames/{s}/0")[0] != 200]
        print(f"  {len(acked)} uploads acknowledged, {len(unacked)} not (connection cut by the kill);"
              f" acknowledged but not served by {reader.name}: {len(lost)}; visible without their original: {len(partial)}")
        fails.check(len(acked) > 10, f"only {len(acked)} uploads acknowledged")
        fails.check(not lost, f"{len(lost)} acknowledged uploads lost: {[s[:12] for s in lost[:5]]}")
        fails.check(not partial, f"{len(partial)} images visible without their original")
        fails.check(len(unacked) >= 1, "the kill interrupted no upload: nothing was tested")
        summary["kill9"] = {"acknowledged": len(acked), "notAcknowledged": len(unacked), "lost": len(lost),
                            "partial": len(partial)}
    except Exception as exc:  # a crash of the harness or of a host is a failure, with its reason
        fails.check(False, f"{type(exc).__name__}: {exc}")
    finally:
        for host in hosts:
            host.kill()
        net.remove()

    return report("multihost-test", fails, summary, args.summary, workdir, args.keep)

if __name__ == "__main__":
    sys.exit(main())
