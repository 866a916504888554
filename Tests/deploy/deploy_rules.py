"""The deployment rules of issue 5, as functions that list every violation they find.

The tests run them on the real files (no violation allowed) and on broken copies (each must be
caught), so a rule that can no longer fail is noticed.
"""
import json
import re
import shlex
import tempfile

from dockerfile_parse import DockerfileParser

# libcurl4-openssl-dev: the static Foundation links FoundationNetworking against libcurl (-lcurl),
# and the source fetcher (CCurl) calls its C API.
# libpixman-1-dev: enlarging scaled renditions (CResample; its reductions are Flipbook's own C).
# libsqlite3-dev: the listing index of storage.backend=fs (CSQLite).
# libavif-dev: AVIF previews (CAVIF, module AnimationEncoding; libavif15 at run time).
# libx264-dev: MP4 previews' H.264 encoder (CX264, module AnimationEncoding; libx264-164 at run time).
# libvpx-dev: WebM previews' VP9 encoder (CVPX, module AnimationEncoding; libvpx7 at run time).
BUILD_PACKAGES = {"libgif-dev", "libwebp-dev", "libpng-dev", "zlib1g-dev", "libdeflate-dev", "libcurl4-openssl-dev",
                  "libpixman-1-dev", "libsqlite3-dev", "libavif-dev", "libx264-dev", "libvpx-dev",
                  "pkg-config"}
RUNTIME_PACKAGES = {"libgif7", "libwebp7", "libwebpdemux2", "libwebpmux3", "libpng16-16", "zlib1g", "libdeflate0",
                    "libcurl4", "libpixman-1-0", "libsqlite3-0", "libavif15", "libx264-164",
                    "libvpx7"}
REPLICAS = ["flipbook-1", "flipbook-2", "flipbook-3"]


def parse_dockerfile(text):
    """→ (stages, parent images): each stage is {"from": ..., "name": ..., "instructions": [...]}."""
    with tempfile.TemporaryDirectory() as tmp:
        parser = DockerfileParser(path=tmp)
        parser.content = text
        structure = parser.structure
        parents = parser.parent_images
    stages = []
    for item in structure:
        if item["instruction"] == "FROM":
            words = item["value"].split()
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            stages.append({"from": words[0], "name": name, "instructions": []})
        elif stages and item["instruction"] != "COMMENT":
            stages[-1]["instructions"].append((item["instruction"], item["value"]))
    return stages, parents


def apt_installed(run_value):
    """Package names passed to `apt-get install` in one RUN line."""
    packages = set()
    for command in re.split(r"&&|;|\|\|", run_value):
        words = shlex.split(command.replace("\\\n", " "))
        if len(words) >= 2 and words[0] in ("apt-get", "apt") and "install" in words:
            after = words[words.index("install") + 1:]
            packages |= {w for w in after if not w.startswith("-")}
    return packages


def exec_form(value):
    """A JSON exec form (["a", "b"]) as a list, or None for the shell form."""
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, list) and all(isinstance(x, str) for x in parsed) else None


def dockerfile_violations(text, repo_paths_exist=None):
    """Every way `text` breaks the Dockerfile rules; [] when it keeps them all.

    `repo_paths_exist(path) -> bool`, when given, checks that the COPY sources of the runtime
    stage exist in the repository.
    """
    problems = []
    stages, parents = parse_dockerfile(text)
    if len(stages) < 2:
        return [f"not multi-stage: {len(stages)} FROM"]
    build, runtime = stages[0], stages[-1]

    if not re.fullmatch(r"swift:6(\.\d+)*-bookworm", parents[0] or ""):
        problems.append(f"build stage is {parents[0]!r}, want the official swift:6.x-bookworm image")
    if parents[-1] != "debian:bookworm-slim":
        problems.append(f"runtime stage is {parents[-1]!r}, want debian:bookworm-slim")
    if not build["name"]:
        problems.append("build stage has no name (FROM ... AS build)")

    build_runs = " ".join(v for i, v in build["instructions"] if i == "RUN")
    build_packages = set().union(*[apt_installed(v) for i, v in build["instructions"] if i == "RUN"])
    if build_packages != BUILD_PACKAGES:
        problems.append(f"build stage installs {sorted(build_packages)}, want {sorted(BUILD_PACKAGES)}")
    segments = re.split(r"&&|;|\|\|", build_runs)
    if not any(re.search(r"\bswift build\b", c) and "-c release" in c and "--static-swift-stdlib" in c
               and "--product flipbook" in c and "--show-bin-path" not in c for c in segments):
        problems.append("build stage does not run `swift build -c release --static-swift-stdlib --product flipbook`")

    runtime_runs = [v for i, v in runtime["instructions"] if i == "RUN"]
    runtime_packages = set().union(*[apt_installed(v) for v in runtime_runs]) if runtime_runs else set()
    if runtime_packages != RUNTIME_PACKAGES:
        extra = sorted(runtime_packages - RUNTIME_PACKAGES)
        missing = sorted(RUNTIME_PACKAGES - runtime_packages)
        problems.append(f"runtime packages differ: extra {extra}, missing {missing}")
    for v in runtime_runs:
        if apt_installed(v):
            if "--no-install-recommends" not in v:
                problems.append("runtime apt-get install without --no-install-recommends")
            if "rm -rf /var/lib/apt/lists" not in v:
                problems.append("runtime apt lists not removed in the same layer")

    users = [v.strip() for i, v in runtime["instructions"] if i == "USER"]
    if not users:
        problems.append("runtime stage has no USER (runs as root)")
    elif users[-1].split(":")[0] in ("root", "0"):
        problems.append(f"runtime stage runs as {users[-1]!r}")
    elif not any(re.search(rf"useradd\b.*\b{re.escape(users[-1].split(':')[0])}\b", v) for v in runtime_runs):
        problems.append(f"user {users[-1]!r} is not created in the runtime stage")

    def values(name):
        return [v for i, v in runtime["instructions"] if i == name]

    healthchecks = values("HEALTHCHECK")
    if len(healthchecks) != 1:
        problems.append(f"{len(healthchecks)} HEALTHCHECK instructions in the runtime stage, want 1")
    else:
        m = re.search(r"\bCMD\s+(.*)$", healthchecks[0], re.S)
        command = exec_form(m.group(1).strip()) if m else None
        if not command or command[:2] != ["flipbook", "healthcheck"]:
            problems.append(f"HEALTHCHECK is not the exec form of `flipbook healthcheck`: {healthchecks[0]!r}")
    exposed = " ".join(values("EXPOSE")).split()
    if exposed != ["8080"] and exposed != ["8080/tcp"]:
        problems.append(f"EXPOSE {exposed}, want 8080 only")
    if [v.strip() for v in values("STOPSIGNAL")] != ["SIGTERM"]:
        problems.append(f"STOPSIGNAL {values('STOPSIGNAL')}, want SIGTERM")
    volumes = []
    for v in values("VOLUME"):
        volumes += exec_form(v) or v.split()
    if volumes != ["/data"]:
        problems.append(f"VOLUME {volumes}, want /data")
    env = " ".join(values("ENV"))
    if not re.search(r"\bFLIPBOOK_STORAGE_DATADIR=/data\b", env):
        problems.append("ENV FLIPBOOK_STORAGE_DATADIR=/data missing")
    # The pages and the player component are files beside the binary's config, not in it.
    if not re.search(r"\bFLIPBOOK_UI_DIR=/app/web\b", env):
        problems.append("ENV FLIPBOOK_UI_DIR=/app/web missing (the web UI's files)")

    copies = [v.split() for v in values("COPY")]
    if not any(c[0].startswith("--from=") and "flipbook" in c[-1] for c in copies):
        problems.append("runtime stage does not copy the flipbook binary from the build stage")
    local_sources = [c[0] for c in copies if not c[0].startswith("--")]
    for want in ("Config/", "Samples/", "web/"):
        if not any(src.rstrip("/") == want.rstrip("/") for src in local_sources):
            problems.append(f"runtime stage does not copy {want}")
    if repo_paths_exist:
        for src in local_sources:
            if not repo_paths_exist(src):
                problems.append(f"COPY source {src} does not exist in the repository")
    entrypoint = [exec_form(v) for v in values("ENTRYPOINT")]
    cmd = [exec_form(v) for v in values("CMD")]
    if (entrypoint and entrypoint[-1] is None) or (cmd and cmd[-1] is None):
        problems.append("ENTRYPOINT/CMD in shell form: SIGTERM would go to a shell, not to flipbook (use exec form)")
    full = (entrypoint[-1] or [] if entrypoint else []) + (cmd[-1] or [] if cmd else [])
    if full[:2] != ["flipbook", "serve"] and full[:2] != ["/usr/local/bin/flipbook", "serve"]:
        problems.append(f"the container does not run `flipbook serve` in exec form: {full}")
    return problems


def dockerignore_violations(text, needed=("Package.swift", "Sources", "Tests", "Benchmarks", "Config", "Samples", "web")):
    patterns = [l.strip() for l in text.splitlines() if l.strip() and not l.startswith("#")]
    problems = []
    for must in (".git", ".build*"):
        if must not in patterns:
            problems.append(f".dockerignore does not exclude {must}")
    for path in needed:
        for p in patterns:
            if not p.startswith("!") and re.fullmatch(p.rstrip("/").replace(".", r"\.").replace("*", ".*"), path):
                problems.append(f".dockerignore excludes {path} (pattern {p!r}), which the build needs")
    return problems


def compose_violations(doc, nginx_conf_text):
    """Every way a loaded docker-compose.yml breaks the topology rules."""
    problems = []
    services = doc.get("services") or {}
    for name in REPLICAS:
        if name not in services:
            problems.append(f"service {name} missing")
    replicas = {n: s for n, s in services.items() if n in REPLICAS}
    volumes_declared = set((doc.get("volumes") or {}).keys())
    data_volumes = set()
    for name, svc in replicas.items():
        mounts = [v for v in svc.get("volumes", []) if isinstance(v, str) and v.split(":")[1:2] == ["/data"]]
        if len(mounts) != 1:
            problems.append(f"{name}: no single volume mounted on /data")
            continue
        source = mounts[0].split(":")[0]
        if source.startswith((".", "/")):
            problems.append(f"{name}: /data is a bind mount ({source}), want the shared named volume")
        elif source not in volumes_declared:
            problems.append(f"{name}: volume {source} is not declared under volumes:")
        data_volumes.add(source)
        env = svc.get("environment") or {}
        if isinstance(env, list):
            env = dict(e.split("=", 1) if "=" in e else (e, None) for e in env)
        if env.get("FLIPBOOK_SERVER_INSTANCENAME") != name:
            problems.append(f"{name}: FLIPBOOK_SERVER_INSTANCENAME is {env.get('FLIPBOOK_SERVER_INSTANCENAME')!r}")
        if env.get("FLIPBOOK_STORAGE_DATADIR") != "/data":
            problems.append(f"{name}: FLIPBOOK_STORAGE_DATADIR is not /data")
        if not env.get("FLIPBOOK_SERVER_TRUSTEDPROXIES"):
            problems.append(f"{name}: FLIPBOOK_SERVER_TRUSTEDPROXIES not set (X-Forwarded-For would be ignored)")
        # One secret for all replicas, from the shell or .env, never written in the file.
        if not re.fullmatch(r"\$\{FLIPBOOK_UPLOADS_KEY(:-)?\}", str(env.get("FLIPBOOK_UPLOADS_KEY", ""))):
            problems.append(f"{name}: FLIPBOOK_UPLOADS_KEY is not taken from the variable FLIPBOOK_UPLOADS_KEY")
        test = (svc.get("healthcheck") or {}).get("test") or []
        if test[:3] != ["CMD", "flipbook", "healthcheck"]:
            problems.append(f"{name}: healthcheck is not `flipbook healthcheck`: {test}")
        if "ports" in svc:
            problems.append(f"{name}: publishes ports; only nginx should be reachable from outside")
        grace = str(svc.get("stop_grace_period", "10s"))
        drain = int(env.get("FLIPBOOK_SERVER_DRAINTIMEOUTSECONDS") or 20)
        m = re.fullmatch(r"(\d+)s", grace)
        if not m or int(m.group(1)) <= drain:
            problems.append(f"{name}: stop_grace_period {grace} does not exceed the drain timeout {drain}s")
    if len(data_volumes) > 1:
        problems.append(f"replicas mount different data volumes: {sorted(data_volumes)}")

    nginx = services.get("nginx")
    if not nginx:
        problems.append("service nginx missing")
    else:
        if not any(isinstance(v, str) and v.startswith("./deploy/nginx.conf:/etc/nginx/nginx.conf")
                   for v in nginx.get("volumes", [])):
            problems.append("nginx does not mount ./deploy/nginx.conf as /etc/nginx/nginx.conf")
        depends = nginx.get("depends_on") or {}
        for name in REPLICAS:
            cond = depends.get(name, {}).get("condition") if isinstance(depends, dict) else None
            if cond != "service_healthy":
                problems.append(f"nginx does not wait for {name} to be healthy")
        if not nginx.get("ports"):
            problems.append("nginx publishes no port")
        if not nginx.get("healthcheck"):
            problems.append("nginx has no healthcheck")
    upstreams = re.findall(r"^\s*server\s+([\w.-]+):(\d+)", nginx_conf_text, re.M)
    if sorted(h for h, _ in upstreams) != sorted(REPLICAS) or any(p != "8080" for _, p in upstreams):
        problems.append(f"nginx.conf upstream servers {upstreams} do not match the compose replicas on 8080")
    return problems


def nginx_conf_violations(text):
    """The routing rules of deploy/nginx.conf."""
    problems = []
    checks = [
        (r"map\s+\$uri\s+\$flipbook_image\s*\{", "no `map $uri $flipbook_image`"),
        (r"\^/\(\?:images\|frames\|uploads\)/", "the map does not key /images/, /frames/ and /uploads/ on their id"),
        (r"hash\s+\$flipbook_image\s+consistent\s*;", "upstream is not `hash $flipbook_image consistent`"),
        (r"proxy_next_upstream\s+error\s+timeout\s+http_503\s*;",
         "proxy_next_upstream does not cover error timeout http_503"),
        (r"server\s+\S+\s+[^;]*max_fails=\d+[^;]*fail_timeout=\d+s", "upstream servers lack max_fails/fail_timeout"),
        (r"proxy_set_header\s+X-Forwarded-For\s+\$proxy_add_x_forwarded_for\s*;", "X-Forwarded-For not passed"),
        (r"proxy_set_header\s+X-Request-ID\s+\S+;", "X-Request-ID not passed"),
        (r"client_max_body_size\s+256m\s*;", "client_max_body_size is not the service's 256 MiB upload limit"),
        (r"proxy_buffers\s+\d+\s+\d+k\s*;", "no proxy_buffers"),
        (r"proxy_read_timeout\s+\d+s\s*;", "no proxy_read_timeout"),
        (r"proxy_connect_timeout\s+\d+s\s*;", "no proxy_connect_timeout"),
    ]
    for pattern, message in checks:
        if not re.search(pattern, text):
            problems.append(message)
    # Session bodies must stream through, or no frame is served before the last byte is in.
    if not re.search(r"location\s+/uploads/\s*\{[^}]*proxy_request_buffering\s+off\s*;", text):
        problems.append("location /uploads/ does not stream bodies (proxy_request_buffering off)")
    # A replica's own 502/504 say a source's origin failed, not the replica: retrying them
    # fetches the bad URL on every replica and takes them all out of the ring.
    if re.search(r"proxy_next_upstream\b[^;]*\bhttp_50[24]\b", text):
        problems.append("proxy_next_upstream treats a replica's 502/504 (a source origin's failure) as the replica's")
    return problems


S3_REPLICAS = ["flipbook-s3-1", "flipbook-s3-2", "flipbook-s3-3"]


def s3_profile_violations(doc, nginx_conf_text):
    """Every way the compose file's `s3` profile breaks its rules: three replicas on
    storage.backend=s3 against the SeaweedFS service, sharing no volume, credentials only from
    variables, behind their own nginx running the same deploy/nginx.conf (network aliases give the
    replicas the upstream names it routes to)."""
    problems = []
    services = doc.get("services") or {}
    upstreams = sorted(h for h, _ in re.findall(r"^\s*server\s+([\w.-]+):(\d+)", nginx_conf_text, re.M))

    def in_profile(name):
        return "s3" in ((services.get(name) or {}).get("profiles") or [])

    weed = services.get("seaweedfs")
    if not weed or not in_profile("seaweedfs"):
        problems.append("no seaweedfs service in profile s3")
    else:
        command = weed.get("command") or []
        command = command if isinstance(command, list) else shlex.split(command)
        if command[:1] != ["server"] or "-s3" not in command:
            problems.append(f"seaweedfs does not run `weed server -s3`: {command}")
        if not weed.get("healthcheck"):
            problems.append("seaweedfs has no healthcheck")
    init = services.get("s3-init")
    if not init or not in_profile("s3-init"):
        problems.append("no s3-init service in profile s3 (identity and bucket)")
    else:
        # It waits for SeaweedFS in its own command, not by depends_on: podman 4.3 cannot start a
        # replica whose exited dependency (s3-init) depends on a running one (docs/DEPLOYMENT.md,
        # "Compose with Podman").
        if init.get("depends_on"):
            problems.append(f"s3-init depends_on {sorted(init['depends_on'])}: podman 4.3 then starts no replica")
        command = init.get("command") or []
        script = " ".join(command if isinstance(command, list) else [command])
        if not re.search(r"until wget [^;]*http://seaweedfs:9333/", script):
            problems.append("s3-init does not wait for the seaweedfs master itself")

    volume_users = {}
    for name, svc in services.items():
        for v in svc.get("volumes") or []:
            if isinstance(v, str) and not v.startswith((".", "/")):
                volume_users.setdefault(v.split(":")[0], []).append(name)
    nginx = services.get("nginx-s3") or {}
    nginx_address = ((nginx.get("networks") or {}).get("flipbook-s3") or {}).get("ipv4_address")
    aliases = []
    for name in S3_REPLICAS:
        svc = services.get(name)
        if not svc:
            problems.append(f"service {name} missing")
            continue
        if not in_profile(name):
            problems.append(f"{name}: not in profile s3")
        env = svc.get("environment") or {}
        if env.get("FLIPBOOK_STORAGE_BACKEND") != "s3":
            problems.append(f"{name}: FLIPBOOK_STORAGE_BACKEND is {env.get('FLIPBOOK_STORAGE_BACKEND')!r}, want s3")
        if not str(env.get("FLIPBOOK_STORAGE_S3_ENDPOINT", "")).startswith("http://seaweedfs:"):
            problems.append(f"{name}: FLIPBOOK_STORAGE_S3_ENDPOINT does not name the seaweedfs service")
        if str(env.get("FLIPBOOK_STORAGE_S3_PATHSTYLE")).lower() != "true":
            problems.append(f"{name}: SeaweedFS needs path-style requests (FLIPBOOK_STORAGE_S3_PATHSTYLE=true)")
        if not env.get("FLIPBOOK_STORAGE_S3_BUCKET"):
            problems.append(f"{name}: no bucket")
        for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            if not re.fullmatch(r"\$\{[A-Z0-9_]+(:-)?\}", str(env.get(key, ""))):
                problems.append(f"{name}: {key} is not taken from a variable (secrets stay out of the file)")
        if env.get("FLIPBOOK_SERVER_INSTANCENAME") != name:
            problems.append(f"{name}: FLIPBOOK_SERVER_INSTANCENAME is {env.get('FLIPBOOK_SERVER_INSTANCENAME')!r}")
        if nginx_address and env.get("FLIPBOOK_SERVER_TRUSTEDPROXIES") != f"{nginx_address}/32":
            problems.append(f"{name}: trusts {env.get('FLIPBOOK_SERVER_TRUSTEDPROXIES')!r}, not nginx-s3 ({nginx_address})")
        mounts = [v for v in svc.get("volumes") or [] if isinstance(v, str)]
        for v in mounts:
            source = v.split(":")[0]
            if source.startswith((".", "/")):
                problems.append(f"{name}: bind mount {v}")
            elif len(volume_users.get(source, [])) > 1:
                problems.append(f"{name}: volume {source} is shared with {sorted(set(volume_users[source]) - {name})}")
        if ((svc.get("depends_on") or {}).get("s3-init") or {}).get("condition") != "service_completed_successfully":
            problems.append(f"{name}: does not wait for s3-init to complete")
        if ((svc.get("depends_on") or {}).get("seaweedfs") or {}).get("condition") != "service_healthy":
            problems.append(f"{name}: does not wait for seaweedfs to be healthy")
        test = (svc.get("healthcheck") or {}).get("test") or []
        if test[:3] != ["CMD", "flipbook", "healthcheck"]:
            problems.append(f"{name}: healthcheck is not `flipbook healthcheck`")
        networks = svc.get("networks") or {}
        if list(networks) != ["flipbook-s3"]:
            problems.append(f"{name}: on networks {list(networks)}, want flipbook-s3 only")
        aliases += (networks.get("flipbook-s3") or {}).get("aliases") or []
        if "ports" in svc:
            problems.append(f"{name}: publishes ports")
    if sorted(aliases) != upstreams:
        problems.append(f"s3 replicas' aliases {sorted(aliases)} are not nginx.conf's upstreams {upstreams}")

    if not nginx or "s3" not in (nginx.get("profiles") or []):
        problems.append("no nginx-s3 service in profile s3")
    else:
        if not any(isinstance(v, str) and v.startswith("./deploy/nginx.conf:/etc/nginx/nginx.conf")
                   for v in nginx.get("volumes", [])):
            problems.append("nginx-s3 does not mount ./deploy/nginx.conf")
        if list(nginx.get("networks") or {}) != ["flipbook-s3"]:
            problems.append("nginx-s3 is not on the flipbook-s3 network only (the aliases would clash)")
        depends = nginx.get("depends_on") or {}
        for name in S3_REPLICAS:
            if (depends.get(name) or {}).get("condition") != "service_healthy":
                problems.append(f"nginx-s3 does not wait for {name} to be healthy")
        if not nginx.get("ports"):
            problems.append("nginx-s3 publishes no port")
    return problems
