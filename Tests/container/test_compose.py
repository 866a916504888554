"""Compose, behind nginx (issue 32, item 4): docker-compose.yml started by podman-compose, with
the test-only images, subnets and loopback port of compose.test.yml (which says what differs
from what users run, and why).

Default profile (one project for the module, torn down at its end): only nginx is published, on
loopback; the topology checks of `make topology-test` (scripts/topology/topology_test.py
`run_checks`) pass through it — upload, upload sessions routed, consistent hashing by id (with
request ids and X-Forwarded-For), a replica killed under load while the others serve, a rolling
restart; a replica recreated (a new container, same address) is reached again by the nginx that
was running; and a replica nginx cannot reach (one that listens on its own loopback only, healthy
by its own healthcheck) is caught. Profile s3: three replicas sharing no volume, behind their own
nginx, share originals through the object store."""
import collections
import hashlib
import json
import os
import time
import types

import pytest

import compose_cluster
import engine
import session_phase
import topology_test
from benchlib import gifgen

pytestmark = pytest.mark.usefixtures("image")

IMAGES = 12
THREADS = 4
DRAIN_TIMEOUT = 20  # FLIPBOOK_SERVER_DRAINTIMEOUTSECONDS in docker-compose.yml


def up(project, services, nginx, replicas):
    """`up -d` of `services`, then every replica and nginx healthy by their own healthchecks, and
    nginx answering on its published port."""
    begun = time.monotonic()
    project.compose("up", "-d", *services)
    compose_cluster.wait_healthy([r.container for r in replicas] + [nginx.container])
    engine.wait_ready(nginx.port, 60, path="/nginx-health")
    return time.monotonic() - begun


def published(container):
    return engine.out("port", container).splitlines()


@pytest.fixture(scope="module")
def cluster():
    compose_cluster.ensure_test_images()
    network, prefix = compose_cluster.make_network("compose")
    port = engine.free_port()
    env = {"CT_NETWORK": network, "CT_NET": prefix, "FLIPBOOK_HTTP_PORT": f"127.0.0.1:{port}",
           # unused by the default profile, but the override names them
           "CT_NETWORK_S3": network, "CT_NET_S3": prefix,
           "FLIPBOOK_UPLOADS_KEY": session_phase.ENV["FLIPBOOK_UPLOADS_KEY"]}
    project = compose_cluster.Project(engine.name("compose"), env)
    replicas = [compose_cluster.Replica(project.container(f"flipbook-{i}"), f"flipbook-{i}", i, f"{prefix}.1{i}") for i in (1, 2, 3)]
    nginx = compose_cluster.Nginx(project.container("nginx"), port)
    try:
        seconds = up(project, [], nginx, replicas)
        print(f"\ncompose: up -d and healthy in {seconds:.1f}s (nginx on 127.0.0.1:{port}, replicas on {prefix}.0/24)")
        yield types.SimpleNamespace(project=project, replicas=replicas, nginx=nginx, prefix=prefix, owners={})
    finally:
        project.down()


def test_only_nginx_is_published_and_on_loopback(cluster):
    assert published(cluster.nginx.container) == [f"80/tcp -> 127.0.0.1:{cluster.nginx.port}"]
    for r in cluster.replicas:
        assert published(r.container) == [], f"{r.name} publishes a port"
        assert engine.inspect(r.container, "{{.Config.User}}") not in ("", "root", "0")


def test_the_topology_checks_pass_through_nginx(cluster):
    served, problems = compose_cluster.reach(cluster.nginx.port, cluster.replicas)
    assert not problems, problems
    topology = types.SimpleNamespace(replicas=cluster.replicas, nginx=cluster.nginx, images=IMAGES,
                                     drain_timeout=DRAIN_TIMEOUT, fake=False, peers_preserved=False)
    fails, summary = topology_test.Failures(), {}
    topology_test.run_checks(topology, {"upload", "sessions", "affinity", "kill", "rolling"}, fails, summary,
                             threads=THREADS)
    print("compose topology: " + json.dumps(summary, sort_keys=True))
    assert not fails.items, fails.items


def owners(port, seeds):
    """Uploads the GIFs of `seeds` through nginx → {replica: [image ids it serves]}."""
    found = collections.defaultdict(list)
    for seed in seeds:
        data, _ = gifgen.make_gif(seed)
        assert engine.request(port, "POST", "/images", body=data)[0] in (200, 201)
        image_id = hashlib.sha256(data).hexdigest()
        status, headers, _ = engine.request(port, "GET", f"/images/{image_id}")
        assert status == 200, (image_id, status)
        found[headers.get("x-served-by")].append(image_id)
    return found


def test_a_recreated_replica_is_reached_again(cluster):
    """`up -d --force-recreate --no-deps flipbook-2`: a new container on the same address; the
    nginx that was running (it resolved the names once, at its start) sends its images to it
    again. Fails on a compose file whose replicas' addresses change when recreated."""
    port, victim = cluster.nginx.port, cluster.replicas[1]
    images = owners(port, range(70, 100))
    assert images[victim.name], f"no image hashed to {victim.name}: {dict(images)}"
    old_victim, old_nginx = engine.inspect(victim.container, "{{.Id}}"), engine.inspect(cluster.nginx.container, "{{.Id}}")
    cluster.project.compose("up", "-d", "--force-recreate", "--no-deps", victim.service)
    assert engine.inspect(victim.container, "{{.Id}}") != old_victim, "the replica was not recreated"
    assert engine.inspect(cluster.nginx.container, "{{.Id}}") == old_nginx, "nginx was recreated too"
    victim.wait_ready()
    time.sleep(topology_test.FAIL_TIMEOUT_S + 1)  # nginx tries a replica it saw fail again after this
    served = collections.Counter(engine.request(port, "GET", f"/images/{i}")[1].get("x-served-by")
                                 for i in images[victim.name] for _ in range(3))
    assert served == {victim.name: 3 * len(images[victim.name])}, f"after recreating {victim.name}: {served}"
    print(f"compose: recreated {victim.name} serves its {len(images[victim.name])} images again through the same nginx")


def test_a_replica_nginx_cannot_reach_is_caught(cluster, tmp_path):
    """flipbook-3 recreated from a compose file that binds it to its own loopback
    (FLIPBOOK_SERVER_HOST=127.0.0.1, a classic container mistake): its healthcheck, run inside
    it, passes, but nginx cannot reach it — and the reach check that the topology test starts
    with says so. Fails when that check cannot tell."""
    victim = cluster.replicas[2]
    broken = tmp_path / "unreachable.yml"
    broken.write_text(f"services:\n  {victim.service}:\n    environment:\n      FLIPBOOK_SERVER_HOST: 127.0.0.1\n")
    cluster.project.compose("up", "-d", "--force-recreate", "--no-deps", victim.service, files=(str(broken),))
    compose_cluster.wait_healthy([victim.container], timeout=60)
    time.sleep(topology_test.FAIL_TIMEOUT_S + 1)
    served, problems = compose_cluster.reach(cluster.nginx.port, cluster.replicas)
    print(f"compose: with {victim.service} on its own loopback, nginx served the probes from {dict(served)}")
    assert served[victim.name] == 0, served
    assert any(victim.name in p for p in problems), problems


def test_s3_profile_shares_originals_through_the_object_store():
    """Profile s3 (`up -d` of its replicas and nginx-s3; SeaweedFS and the one-shot s3-init come
    with them as their dependencies): each replica has a volume of its own, the bucket was made by
    s3-init, and every image uploaded through nginx is read through every replica directly — two of
    the three never had its bytes but from the bucket; upload sessions and consistent hashing
    through nginx-s3."""
    compose_cluster.ensure_test_images()
    network, prefix = compose_cluster.make_network("compose-s3")
    port = engine.free_port()
    env = {"CT_NETWORK_S3": network, "CT_NET_S3": prefix, "FLIPBOOK_S3_HTTP_PORT": f"127.0.0.1:{port}",
           "CT_NETWORK": network, "CT_NET": prefix,
           "FLIPBOOK_UPLOADS_KEY": session_phase.ENV["FLIPBOOK_UPLOADS_KEY"],
           "FLIPBOOK_S3_ACCESS_KEY_ID": "flipbook-test", "FLIPBOOK_S3_SECRET_ACCESS_KEY": os.urandom(16).hex()}
    project = compose_cluster.Project(engine.name("compose-s3"), env, profile="s3")
    replicas = [compose_cluster.Replica(project.container(f"flipbook-s3-{i}"), f"flipbook-s3-{i}", i, f"{prefix}.1{i}") for i in (1, 2, 3)]
    nginx = compose_cluster.Nginx(project.container("nginx-s3"), port)
    try:
        seconds = up(project, [r.service for r in replicas] + ["nginx-s3"], nginx, replicas)
        print(f"\ncompose s3: up -d and healthy in {seconds:.1f}s")
        assert engine.inspect(project.container("s3-init"), "{{.State.ExitCode}}") == "0", \
            engine.logs(project.container("s3-init"))[-2000:]
        volumes = [engine.inspect(r.container, "{{range .Mounts}}{{.Name}}{{end}}") for r in replicas]
        assert len(set(volumes)) == 3 and all(volumes), f"the replicas' /data volumes: {volumes}"
        assert published(nginx.container) == [f"80/tcp -> 127.0.0.1:{port}"]
        served, problems = compose_cluster.reach(port, replicas)
        assert not problems, problems
        topology = types.SimpleNamespace(replicas=replicas, nginx=nginx, images=9, drain_timeout=DRAIN_TIMEOUT,
                                         fake=False, peers_preserved=False)
        fails, summary = topology_test.Failures(), {}
        topology_test.run_checks(topology, {"upload", "sessions", "affinity"}, fails, summary, threads=THREADS)
        print("compose s3: " + json.dumps(summary, sort_keys=True))
        assert not fails.items, fails.items
        assert summary["upload"]["readableEverywhere"] == summary["upload"]["pairs"] == 27, summary["upload"]
        keys = engine.out("exec", project.container("seaweedfs"), "python3", "-c",
                          "import boto3; print('\\n'.join(o['Key'] for o in boto3.client('s3', endpoint_url="
                          "'http://127.0.0.1:8333', region_name='us-east-1', aws_access_key_id='a', "
                          "aws_secret_access_key='b').list_objects_v2(Bucket='flipbook').get('Contents', [])))")
        uploaded = [hashlib.sha256(gifgen.make_gif(seed)[0]).hexdigest() for seed in range(1, 10)]
        missing = [i for i in uploaded if i not in keys]
        assert not missing, f"originals not in the bucket: {missing}; keys: {keys[:2000]}"
    finally:
        project.down()
