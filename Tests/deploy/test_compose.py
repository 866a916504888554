"""docker-compose.yml validated without an engine: docker-compose 1.29 (`config -q`, from Debian),
the current compose-spec JSON schema (check-jsonschema's vendored copy), and the topology rules;
plus the Prometheus scrape example."""
import copy
import os
import shutil
import subprocess
import tempfile

import pytest
import yaml

from conftest import REPO, read, tool
from deploy_rules import REPLICAS, S3_REPLICAS, compose_violations, s3_profile_violations


def load():
    return yaml.safe_load(read("docker-compose.yml"))


def compose_config(text):
    """`docker-compose config -q` on `text`, from a copy of the repo's deploy files."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(REPO, "deploy"), os.path.join(tmp, "deploy"))
        with open(os.path.join(tmp, "docker-compose.yml"), "w") as f:
            f.write(text)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FLIPBOOK_", "COMPOSE_", "DOCKER_"))}
        return subprocess.run([tool("docker-compose"), "--project-directory", tmp, "-f",
                               os.path.join(tmp, "docker-compose.yml"), "config", "-q"],
                              capture_output=True, text=True, env=env, cwd=tmp)


def schema_check(text):
    with tempfile.NamedTemporaryFile("w", suffix=".yml") as f:
        f.write(text)
        f.flush()
        return subprocess.run([tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", f.name],
                              capture_output=True, text=True)


def test_docker_compose_accepts_the_file():
    result = compose_config(read("docker-compose.yml"))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("broken", [
    # nginx waits for a service that does not exist
    lambda t: t.replace("      flipbook-3:\n        condition: service_healthy",
                        "      flipbook-4:\n        condition: service_healthy"),
    # a volume that is not declared
    lambda t: t.replace("    - flipbook-data:/data", "    - flipbook-dta:/data"),
])
def test_docker_compose_rejects_broken_files(broken):
    text = broken(read("docker-compose.yml"))
    assert text != read("docker-compose.yml")
    assert compose_config(text).returncode != 0


def test_current_compose_spec_schema_accepts_the_file():
    result = schema_check(read("docker-compose.yml"))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("broken", [
    lambda t: t.replace("    interval: 10s\n", "    intervall: 10s\n", 1),
    lambda t: t.replace("  stop_signal: SIGTERM\n", "  stop_signal: [SIGTERM]\n", 1),
])
def test_compose_spec_schema_rejects_broken_files(broken):
    text = broken(read("docker-compose.yml"))
    assert text != read("docker-compose.yml")
    assert schema_check(text).returncode != 0


def test_topology_rules_hold():
    assert compose_violations(load(), read("deploy/nginx.conf")) == []


def drop_replica(doc):
    del doc["services"]["flipbook-3"]


def bind_mount(doc):
    doc["services"]["flipbook-2"]["volumes"] = ["./data:/data"]


def own_volume(doc):
    doc["volumes"]["other"] = None
    doc["services"]["flipbook-1"]["volumes"] = ["other:/data"]


def untrusted_proxy(doc):
    del doc["services"]["flipbook-1"]["environment"]["FLIPBOOK_SERVER_TRUSTEDPROXIES"]


def own_uploads_key(doc):
    doc["services"]["flipbook-2"]["environment"]["FLIPBOOK_UPLOADS_KEY"] = "00" * 32


def published_replica(doc):
    doc["services"]["flipbook-2"]["ports"] = ["8081:8080"]


def nginx_not_waiting(doc):
    del doc["services"]["nginx"]["depends_on"]


def same_instance_name(doc):
    doc["services"]["flipbook-3"]["environment"]["FLIPBOOK_SERVER_INSTANCENAME"] = "flipbook-1"


def curl_healthcheck(doc):
    doc["services"]["flipbook-1"]["healthcheck"]["test"] = ["CMD", "curl", "-f", "http://localhost:8080/healthz"]


def short_grace(doc):
    doc["services"]["flipbook-2"]["stop_grace_period"] = "10s"


def other_nginx_conf(doc):
    doc["services"]["nginx"]["volumes"] = ["./nginx.conf:/etc/nginx/nginx.conf:ro"]


@pytest.mark.parametrize("mutate", [drop_replica, bind_mount, own_volume, untrusted_proxy, own_uploads_key,
                                    published_replica,
                                    nginx_not_waiting, same_instance_name, curl_healthcheck, short_grace,
                                    other_nginx_conf], ids=lambda f: f.__name__)
def test_topology_rules_catch(mutate):
    doc = copy.deepcopy(load())
    # YAML anchors share objects between services: unshare them before changing one.
    for svc in doc["services"].values():
        for key in ("environment", "healthcheck", "volumes"):
            if key in svc:
                svc[key] = copy.deepcopy(svc[key])
    mutate(doc)
    assert compose_violations(doc, read("deploy/nginx.conf"))


def test_nginx_upstreams_must_match_the_replicas():
    conf = read("deploy/nginx.conf").replace("server flipbook-3:8080", "server flipbook-4:8080")
    assert compose_violations(load(), conf)


def test_prometheus_scrapes_every_replica_directly():
    prom = yaml.safe_load(read("deploy/prometheus.yml"))
    jobs = {job["job_name"]: job for job in prom["scrape_configs"]}
    targets = [t for sc in jobs["flipbook"]["static_configs"] for t in sc["targets"]]
    assert sorted(targets) == sorted(f"{r}:8080" for r in REPLICAS)
    assert jobs["flipbook"].get("metrics_path", "/metrics") == "/metrics"
    compose = load()
    mounts = compose["services"]["prometheus"]["volumes"]
    assert "./deploy/prometheus.yml:/etc/prometheus/prometheus.yml:ro" in mounts


def test_s3_profile_rules_hold():
    assert s3_profile_violations(load(), read("deploy/nginx.conf")) == []


def s3_shared_volume(doc):
    doc["services"]["flipbook-s3-2"]["volumes"] = ["flipbook-s3-1-cache:/data"]


def s3_fs_backend(doc):
    doc["services"]["flipbook-s3-1"]["environment"]["FLIPBOOK_STORAGE_BACKEND"] = "fs"


def s3_secret_in_file(doc):
    doc["services"]["flipbook-s3-3"]["environment"]["AWS_SECRET_ACCESS_KEY"] = "hunter2"


def s3_no_alias(doc):
    doc["services"]["flipbook-s3-2"]["networks"]["flipbook-s3"]["aliases"] = []


def s3_nginx_on_both_networks(doc):
    doc["services"]["nginx-s3"]["networks"]["flipbook"] = None


def s3_weed_without_gateway(doc):
    doc["services"]["seaweedfs"]["command"] = ["server", "-dir=/data"]


def s3_not_waiting_for_init(doc):
    del doc["services"]["flipbook-s3-1"]["depends_on"]


def s3_init_depends_on_weed(doc):
    doc["services"]["s3-init"]["depends_on"] = {"seaweedfs": {"condition": "service_healthy"}}


def s3_init_not_waiting(doc):
    doc["services"]["s3-init"]["command"] = [c.replace("until wget", "wget") for c in doc["services"]["s3-init"]["command"]]


def s3_not_waiting_for_weed(doc):
    doc["services"]["flipbook-s3-2"]["depends_on"] = {"s3-init": {"condition": "service_completed_successfully"}}


def s3_virtual_hosted(doc):
    doc["services"]["flipbook-s3-1"]["environment"]["FLIPBOOK_STORAGE_S3_PATHSTYLE"] = "false"


def s3_shared_data_volume(doc):
    doc["services"]["flipbook-s3-3"]["volumes"] = ["flipbook-data:/data"]


@pytest.mark.parametrize("mutate", [s3_shared_volume, s3_fs_backend, s3_secret_in_file, s3_no_alias,
                                    s3_nginx_on_both_networks, s3_weed_without_gateway, s3_not_waiting_for_init,
                                    s3_init_depends_on_weed, s3_init_not_waiting, s3_not_waiting_for_weed,
                                    s3_virtual_hosted, s3_shared_data_volume], ids=lambda f: f.__name__)
def test_s3_profile_rules_catch(mutate):
    doc = copy.deepcopy(load())
    for svc in doc["services"].values():
        for key in ("environment", "healthcheck", "volumes", "networks", "depends_on"):
            if key in svc:
                svc[key] = copy.deepcopy(svc[key])
    mutate(doc)
    assert s3_profile_violations(doc, read("deploy/nginx.conf"))


def test_the_s3_profile_is_off_by_default():
    """`docker compose up` without --profile s3 starts the fs stack only."""
    doc = load()
    for name in S3_REPLICAS + ["seaweedfs", "s3-init", "nginx-s3"]:
        assert doc["services"][name].get("profiles") == ["s3"]
    for name in REPLICAS + ["nginx"]:
        assert "profiles" not in doc["services"][name]
