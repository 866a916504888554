#!/usr/bin/env python3
"""Run the Dockerfile's runtime stage without Docker: on a Debian bookworm minbase root
filesystem (debootstrap; what debian:bookworm-slim is made from), execute the stage's
instructions in a chroot — RUN as root, COPY --from=build as the static release binary, COPY of
repository paths, ENV, WORKDIR, USER — then start ENTRYPOINT + CMD as that user with that
environment, and run the HEALTHCHECK command. Exit 0 when the healthcheck says healthy, an image
can be uploaded and a frame fetched, and SIGTERM stops the server with status 0.

Needs root (chroot, mount), debootstrap, and network access to the Debian archive.
  make docker-runtime-check     (builds the static binary first)
"""
import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

from deploy_rules import parse_dockerfile  # Tests/deploy, on PYTHONPATH (make docker-runtime-check)


def sh(argv, **kw):
    print("+ " + " ".join(shlex.quote(a) for a in argv), flush=True)
    return subprocess.run(argv, check=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, help="flipbook built with --static-swift-stdlib")
    ap.add_argument("--rootfs", help="reuse this debootstrapped directory (default: a fresh one)")
    ap.add_argument("--mirror", default="http://deb.debian.org/debian")
    ap.add_argument("--port", type=int, default=18777)
    args = ap.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(repo, "Dockerfile")) as f:
        stages, _ = parse_dockerfile(f.read())
    runtime = stages[-1]

    root = args.rootfs or tempfile.mkdtemp(prefix="flipbook-rootfs-")
    os.chmod(root, 0o755)  # it becomes "/", which every user must be able to enter
    if not os.path.exists(os.path.join(root, "bin", "sh")):
        sh(["debootstrap", "--variant=minbase", "bookworm", root, args.mirror], stdout=subprocess.DEVNULL)
    shutil.copy("/etc/resolv.conf", os.path.join(root, "etc", "resolv.conf"))
    proc_mount = os.path.join(root, "proc")
    sh(["mount", "-t", "proc", "proc", proc_mount])
    env = {}
    workdir = "/"
    user = "0:0"
    server = None
    try:
        for instruction, value in runtime["instructions"]:
            if instruction == "RUN":
                script = " ".join(f"export {k}={shlex.quote(v)};" for k, v in env.items()) + f" cd {workdir} && " + value
                sh(["chroot", root, "/bin/sh", "-c", script])
            elif instruction == "COPY":
                words = value.split()
                if words[0].startswith("--from="):
                    dest = os.path.join(root, words[-1].lstrip("/"))
                    os.makedirs(os.path.dirname(dest), exist_ok=True)
                    shutil.copy(args.binary, dest)
                    os.chmod(dest, 0o755)
                else:
                    src, dest = words[0], os.path.join(root, words[-1].lstrip("/"))
                    shutil.copytree(os.path.join(repo, src), dest, dirs_exist_ok=True)
            elif instruction == "ENV":
                for item in shlex.split(value.replace("\\\n", " ")):
                    k, _, v = item.partition("=")
                    env[k] = v
            elif instruction == "WORKDIR":
                workdir = value.strip()
                os.makedirs(os.path.join(root, workdir.lstrip("/")), exist_ok=True)
            elif instruction == "USER":
                name, _, group = value.strip().partition(":")
                uid = subprocess.run(["chroot", root, "id", "-u", name], capture_output=True, text=True, check=True)
                gid = subprocess.run(["chroot", root, "id", "-g", name], capture_output=True, text=True, check=True)
                user = f"{uid.stdout.strip()}:{gid.stdout.strip()}"
        values = {i: v for i, v in runtime["instructions"]}
        entrypoint = json.loads(values.get("ENTRYPOINT", "[]"))
        cmd = json.loads(values.get("CMD", "[]"))
        healthcheck = json.loads(values["HEALTHCHECK"].split("CMD", 1)[1].strip())
        env["FLIPBOOK_SERVER_PORT"] = str(args.port)
        env_argv = ["/usr/bin/env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin"] + [f"{k}={v}" for k, v in env.items()]
        start = ["chroot", f"--userspec={user}", root] + env_argv + \
            ["/bin/sh", "-c", f"cd {shlex.quote(workdir)} && exec " + " ".join(shlex.quote(a) for a in entrypoint + cmd)]
        print("+ " + " ".join(start), flush=True)
        server = subprocess.Popen(start)
        time.sleep(1)
        healthy = False
        for _ in range(60):
            result = subprocess.run(["chroot", f"--userspec={user}", root] + env_argv + healthcheck,
                                    capture_output=True, text=True)
            if result.returncode == 0:
                healthy = True
                print(f"HEALTHCHECK {healthcheck}: {result.stdout.strip()}")
                break
            time.sleep(0.5)
        if not healthy:
            raise SystemExit(f"HEALTHCHECK never passed: {result.stderr.strip()}")
        sample = sorted(os.listdir(os.path.join(repo, "Samples")))[0]
        with open(os.path.join(repo, "Samples", sample), "rb") as f:
            body = f.read()
        req = urllib.request.Request(f"http://127.0.0.1:{args.port}/images", data=body, method="POST")
        with urllib.request.urlopen(req) as resp:
            location = resp.headers["Location"]
            print(f"POST /images ({sample}) -> {resp.status} {location}")
        with urllib.request.urlopen(f"http://127.0.0.1:{args.port}/frames/{location.rsplit('/', 1)[1]}/0") as resp:
            print(f"GET frame 0 -> {resp.status} {resp.headers['Content-Type']} {len(resp.read())} bytes")
        owner = os.stat(os.path.join(root, env["FLIPBOOK_STORAGE_DATADIR"].lstrip("/")))
        print(f"data directory owned by {owner.st_uid}:{owner.st_gid}; server ran as {user}")
        server.send_signal(signal.SIGTERM)
        code = server.wait(30)
        server = None
        print(f"SIGTERM -> exit {code}")
        if code != 0:
            raise SystemExit(f"server exited {code} after SIGTERM")
        print("runtime-rootfs-check: the runtime stage works on bookworm minbase")
    finally:
        if server is not None:
            server.kill()
        subprocess.run(["umount", proc_mount])
        if not args.rootfs:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
