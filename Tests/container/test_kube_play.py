"""Kubernetes, run (issue 32, item 6): deploy/kubernetes/ started by `podman kube play` — the
flipbook-s3 Secret, the ConfigMap and the three-replica Deployment, moto as the object store, and
the nginx front of nginx.yaml with its ConfigMap — and the checks of the image test through the
front: /readyz and /healthz, uploads, frames, a rendition, a preview, a storyboard, the liveness
probe as a healthcheck, the memory limit the cache follows, the topology checks (consistent
hashing by id, upload sessions routed: the replicas share the Secret's key), originals in the
bucket, and SIGTERM ending a replica with 0 while the front keeps serving from the others.

What kube play is given differs from the manifests only where a cluster would fill in, or where
podman 4.3 cannot do what a cluster does (each edit is made below, and fails when the manifest
no longer has what it edits):
- image: the one under test (the Deployment's) and the test image made from Debian's nginx
  (nginx.yaml's); the S3 endpoint: the moto pod of the test; names made unique per run.
- the Secret: podman 4.3's kube play stores a Secret it is given as YAML, but reads an envFrom
  secretRef only from a podman secret holding a JSON object of base64 values, so the test makes
  that from the manifest's keys (with values of its own) with `podman secret create`.
- ports: podman 4.3 publishes a containerPort without hostPort on the host's same port, so the
  replicas' port is dropped (their probes name 8080 instead of `http`); the test reaches them on
  its network. The front publishes a loopback port (hostPort), so there is one front, not two.
- the front's configuration: podman 4.3 mounts a configMap volume whole, ignoring subPath, so
  nginx reads it from a directory (`nginx -c`). Its upstream re-resolves the flipbook-pods
  headless Service (`resolve`, nginx 1.27.3 or later); Debian 12's nginx is 1.22, and podman has
  no Services, so the test names the three pods (resolved once, at nginx's start, by the
  network's DNS).
- probes: podman 4.3 makes an httpGet liveness probe a healthcheck running curl, which the image
  has not, and uses no readiness probe: the test asks /healthz and /readyz itself.
- the trusted proxies: the ConfigMap trusts the pod network (10.0.0.0/8); the test narrows it to
  the front's address, as the ConfigMap says to, so that the client it is (the network's gateway)
  is not trusted.
- ulimits: kube play has no --ulimit; CONTAINERS_CONF names a containers.conf whose
  default_ulimits are at or below the shell's (docs/DEPLOYMENT.md, "Podman")."""
import base64
import copy
import hashlib
import json
import os
import time
import types

import pytest
import yaml

import compose_cluster
import engine
import session_phase
import topology_test
from benchlib import gifgen
from test_kubernetes import documents, find

pytestmark = pytest.mark.usefixtures("image")

REPLICAS = 3
DRAIN_TIMEOUT = 20  # FLIPBOOK_SERVER_DRAINTIMEOUTSECONDS in flipbook-config.yaml
NGINX_IMAGE, MOTO_IMAGE = compose_cluster.TEST_IMAGES
UPSTREAM_LINE = "server flipbook-pods.NAMESPACE.svc.cluster.local:8080 resolve max_fails=1 fail_timeout=5s;"


def only(items, what):
    assert len(items) == 1, f"{what}: {len(items)} found"
    return items[0]


def containers_conf(directory):
    """A containers.conf with ulimits the machine grants (kube play applies them to every
    container, the pods' infra containers too) → the environment that names it."""
    path = directory / "containers.conf"
    path.write_text('[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n')
    return {"CONTAINERS_CONF": str(path)}


def secret_for_podman(secret, values):
    """The manifest's Secret as podman 4.3's kube play reads a secretRef: a JSON object of
    base64 values, for every key of the manifest (values: the test's own)."""
    assert set(secret["stringData"]) == set(values), (sorted(secret["stringData"]), sorted(values))
    return json.dumps({k: base64.b64encode(v.encode()).decode() for k, v in values.items()})


def front_documents(docs, deployment, replicas_prefix, port):
    """nginx.yaml's ConfigMap and Deployment, the upstream naming the replica pods."""
    config = copy.deepcopy(find(docs, "ConfigMap", "flipbook-nginx"))
    conf = config["data"]["nginx.conf"]
    resolver = only([line for line in conf.splitlines() if line.strip().startswith("resolver ")], "resolver line")
    assert UPSTREAM_LINE in conf, "nginx.yaml's upstream line changed: update this test"
    servers = "\n".join(f"server {replicas_prefix}-pod-{i}:8080 max_fails=1 fail_timeout=5s;" for i in range(REPLICAS))
    config["data"]["nginx.conf"] = conf.replace(resolver + "\n", "").replace(UPSTREAM_LINE, servers)
    config["metadata"]["name"] = f"{deployment}-conf"
    front = copy.deepcopy(find(docs, "Deployment", "flipbook-nginx"))
    front["metadata"]["name"] = deployment
    front["spec"]["replicas"] = 1
    pod = front["spec"]["template"]["spec"]
    only([v for v in pod["volumes"] if v["name"] == "conf"], "conf volume")["configMap"]["name"] = config["metadata"]["name"]
    container = only(pod["containers"], "front containers")
    container["image"] = NGINX_IMAGE
    container["ports"][0].update(hostPort=port, hostIP="127.0.0.1")
    # podman 4.3 mounts a configMap volume whole, ignoring subPath: the file is read from there.
    mount = only([m for m in container["volumeMounts"] if m["name"] == "conf"], "conf mount")
    assert mount.pop("subPath") == "nginx.conf" and mount["mountPath"] == "/etc/nginx/nginx.conf"
    mount["mountPath"] = "/etc/nginx/kube"
    container["command"] = ["nginx", "-c", "/etc/nginx/kube/nginx.conf", "-g", "daemon off;"]
    return [config, front]


def replica_documents(docs, deployment, endpoint, proxy, secret_name):
    """flipbook-config.yaml and the Deployment of flipbook-deployment.yaml (its Service, HPA and
    PDB are for a cluster: kube play ignores them)."""
    config = copy.deepcopy(find(docs, "ConfigMap", "flipbook-config"))
    assert config["data"]["FLIPBOOK_STORAGE_BACKEND"] == "s3"
    config["data"].update(FLIPBOOK_STORAGE_S3_ENDPOINT=endpoint, FLIPBOOK_SERVER_TRUSTEDPROXIES=f"{proxy}/32")
    app = copy.deepcopy(find(docs, "Deployment", "flipbook"))
    app["metadata"]["name"] = deployment
    assert app["spec"]["replicas"] == REPLICAS
    container = only(app["spec"]["template"]["spec"]["containers"], "flipbook containers")
    container["image"] = engine.IMAGE
    # podman 4.3 publishes a containerPort without hostPort on the host's same port (all
    # addresses): the three pods would each take the host's 8080. The test reaches them on its
    # network instead, so their port is not declared, and the probes name it by number.
    assert only(container.pop("ports"), "flipbook ports") == {"name": "http", "containerPort": 8080}
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"]["port"] == "http"
        container[probe]["httpGet"]["port"] = 8080
    only([e for e in container["envFrom"] if "secretRef" in e], "secretRef")["secretRef"]["name"] = secret_name
    return [config, app]


class Played:
    """What the test played, removed in reverse order (kube down, then the pods by name)."""

    def __init__(self, env):
        self.env, self.files, self.pods, self.secrets, self.volumes = env, [], [], [], []

    def play(self, path, docs, network, ips, pods):
        path.write_text(yaml.safe_dump_all(docs))
        self.files.append(path)
        self.pods += pods
        args = [a for ip in ips for a in ("--ip", ip)]
        engine.podman("kube", "play", "--network", network, *args, str(path), env=self.env, timeout=900)

    def remove(self):
        for path in reversed(self.files):
            engine.podman("kube", "down", str(path), check=False, timeout=300)
        for pod in self.pods:
            engine.podman("pod", "rm", "-f", "-t", "0", pod, check=False)
        for volume in self.volumes:  # a configMap volume is a named volume under kube play
            engine.podman("volume", "rm", "-f", volume, check=False)
        for secret in self.secrets:
            engine.podman("secret", "rm", secret, check=False)


@pytest.fixture(scope="module")
def kube(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kube")
    compose_cluster.ensure_test_images()
    docs = documents()
    network, prefix = compose_cluster.make_network("kube")
    played = Played(containers_conf(tmp))
    run = engine.name("kube")
    port = engine.free_port()
    values = {"AWS_ACCESS_KEY_ID": "kube-" + os.urandom(4).hex(), "AWS_SECRET_ACCESS_KEY": os.urandom(16).hex(),
              "FLIPBOOK_UPLOADS_KEY": session_phase.ENV["FLIPBOOK_UPLOADS_KEY"]}
    try:
        begun = time.monotonic()
        secret_file = tmp / "secret.json"
        secret_file.write_text(secret_for_podman(find(docs, "Secret", "flipbook-s3"), values))
        engine.podman("secret", "create", f"{run}-s3", str(secret_file))
        played.secrets.append(f"{run}-s3")
        s3 = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{run}-s3"},
              "spec": {"containers": [{"name": "moto", "image": MOTO_IMAGE}]}}
        played.play(tmp / "s3.yaml", [s3], network, [f"{prefix}.20"], [f"{run}-s3"])
        engine.podman("exec", f"{run}-s3-moto", "python3", "-c",
                      "import boto3, time\n"
                      "s3 = boto3.client('s3', endpoint_url='http://127.0.0.1:8333', region_name='us-east-1',"
                      " aws_access_key_id='k', aws_secret_access_key='s')\n"
                      "for _ in range(300):\n"
                      "    try:\n"
                      "        s3.create_bucket(Bucket='flipbook'); break\n"
                      "    except Exception: time.sleep(0.2)\n"
                      "else: raise SystemExit('moto did not answer')\n")
        app = f"{run}-flipbook"
        pods = [f"{app}-pod-{i}" for i in range(REPLICAS)]
        played.play(tmp / "flipbook.yaml", replica_documents(docs, app, f"http://{run}-s3:8333", f"{prefix}.10", f"{run}-s3"),
                    network, [f"{prefix}.1{i + 1}" for i in range(REPLICAS)], pods)
        replicas = [compose_cluster.Replica(f"{pod}-flipbook", pod, i + 1, f"{prefix}.1{i + 1}") for i, pod in enumerate(pods)]
        for r in replicas:
            r.wait_ready(timeout=120)
        front = f"{run}-front"
        played.volumes.append(f"{front}-conf")
        played.play(tmp / "front.yaml", front_documents(docs, front, app, port), network, [f"{prefix}.10"], [f"{front}-pod-0"])
        nginx = compose_cluster.Nginx(f"{front}-pod-0-nginx", port)
        engine.wait_ready(port, 60, path="/nginx-health")
        print(f"\nkube play: Secret, 3 replicas, moto and the front up and ready in {time.monotonic() - begun:.1f}s")
        yield types.SimpleNamespace(replicas=replicas, nginx=nginx, port=port, values=values, s3=f"{run}-s3-moto")
    finally:
        played.remove()
        engine.podman("network", "rm", "-f", network, check=False)


def test_the_replicas_run_as_the_deployment_says(kube):
    for r in kube.replicas:
        assert engine.out("exec", r.container, "id", "-u") == "10001"
        assert engine.inspect(r.container, "{{.HostConfig.ReadonlyRootfs}}") == "true"
        for key, value in kube.values.items():
            assert engine.out("exec", r.container, "printenv", key) == value, f"{key} from the Secret"
        limit = engine.out("exec", r.container, "sh", "-c",
                           "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max")
        assert int(limit) == 1 << 30, f"the Deployment's memory limit is not applied: {limit}"
        stats = engine.get_json(r.port, "/stats", host=r.host)
        assert stats["budgetBytes"] == int((1 << 30) * 0.2), stats["budgetBytes"]
        # What the probes ask (podman 4.3 turns an httpGet probe into a healthcheck running curl,
        # which the image does not have: the probes are asked here instead).
        for path in ("/healthz", "/readyz"):
            assert engine.request(r.port, "GET", path, host=r.host)[0] == 200, (r.name, path)


def test_through_the_front(kube):
    port = kube.port
    for path in ("/readyz", "/healthz"):
        status, headers, body = engine.request(port, "GET", path)
        assert status == 200 and headers.get("x-served-by"), (path, status, body[:200])
    assert json.loads(engine.request(port, "GET", "/readyz")[2]).get("status") == "ready"
    data, frames = gifgen.make_gif(4242, size=(80, 60), frames=5)
    image_id = hashlib.sha256(data).hexdigest()
    status, _, body = engine.request(port, "POST", "/images", body=data, headers={"Content-Type": "image/gif"})
    assert status == 201, body[:300]
    owner = {engine.request(port, "GET", f"/frames/{image_id}/{n}")[1].get("x-served-by") for n in range(frames)}
    assert len(owner) == 1, f"the frames of one image came from {owner}"
    status, headers, _ = engine.request(port, "GET", f"/frames/{image_id}/1?width=40&format=webp")
    assert status == 200 and headers["content-type"] == "image/webp"
    status, headers, _ = engine.request(port, "GET", f"/images/{image_id}/preview?width=40", timeout=120)
    assert status == 200 and headers["content-type"] == "image/webp"
    assert engine.request(port, "GET", f"/images/{image_id}/storyboard?tile=32", timeout=120)[0] == 200
    assert engine.request(port, "GET", "/metrics")[0] == 404, "the front must not proxy /metrics"

    served, problems = compose_cluster.reach(port, kube.replicas)
    assert not problems, problems
    topology = types.SimpleNamespace(replicas=kube.replicas, nginx=kube.nginx, images=9, drain_timeout=DRAIN_TIMEOUT,
                                     fake=False, peers_preserved=False)
    fails, summary = topology_test.Failures(), {}
    topology_test.run_checks(topology, {"upload", "sessions", "affinity"}, fails, summary, threads=4)
    print("kube play: " + json.dumps(summary, sort_keys=True))
    assert not fails.items, fails.items
    keys = engine.out("exec", kube.s3, "python3", "-c",
                      "import boto3; print('\\n'.join(o['Key'] for o in boto3.client('s3', endpoint_url="
                      "'http://127.0.0.1:8333', region_name='us-east-1', aws_access_key_id='a', "
                      "aws_secret_access_key='b').list_objects_v2(Bucket='flipbook').get('Contents', [])))")
    uploaded = [image_id] + [hashlib.sha256(gifgen.make_gif(seed)[0]).hexdigest() for seed in range(1, 10)]
    missing = [i for i in uploaded if i not in keys]
    assert not missing, f"originals not in the bucket: {missing}"


def test_a_replica_stopped_and_the_others_serve(kube):
    """`podman stop` (SIGTERM; the pod's grace period is 30 s, the drain 20 s): exit 0, and every
    id the front is asked for is served by the two others."""
    victim = kube.replicas[0]
    begun = time.monotonic()
    engine.podman("stop", "-t", "30", victim.container)
    took = time.monotonic() - begun
    assert took < DRAIN_TIMEOUT + 5, f"stopping took {took:.1f}s"
    assert engine.inspect(victim.container, "{{.State.ExitCode}}") == "0"
    served, _ = compose_cluster.reach(kube.port, kube.replicas[1:])
    assert served[victim.name] == 0 and sum(served.values()) == compose_cluster.PROBES, dict(served)
    assert all(served[r.name] > 0 for r in kube.replicas[1:]), dict(served)
    print(f"kube play: {victim.name} exited 0 {took:.2f}s after SIGTERM; the front served every probe from {dict(served)}")
