"""Kubernetes (issue 32, item 6): deploy/kubernetes/ validated against the Kubernetes schemas
(kubernetes-validate --strict), and its promises checked: probes on /healthz and /readyz,
non-root, read-only root, a memory limit, a grace period longer than the drain, S3 keys by
Secret, the nginx front routing as deploy/nginx.conf does."""
import glob
import os
import shutil
import subprocess

import yaml


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MANIFESTS = sorted(glob.glob(os.path.join(REPO, "deploy", "kubernetes", "*.yaml")))


def documents():
    docs = []
    for path in MANIFESTS:
        with open(path) as f:
            docs += [d for d in yaml.safe_load_all(f) if d]
    return docs


def find(docs, kind, name):
    matches = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(matches) == 1, f"{kind}/{name}: {len(matches)} found"
    return matches[0]


def validate(paths):
    tool = shutil.which("kubernetes-validate")
    assert tool, "kubernetes-validate not found (make container-test installs it)"
    return subprocess.run([tool, "--strict", *paths], capture_output=True, text=True)


def test_manifests_match_the_kubernetes_schemas(tmp_path):
    assert MANIFESTS, "deploy/kubernetes/ has no manifests"
    result = validate(MANIFESTS)
    assert result.returncode == 0, result.stdout + result.stderr
    # The validator catches a manifest that is wrong: a field the schema does not know.
    broken = documents()
    find(broken, "Deployment", "flipbook")["spec"]["template"]["spec"]["containers"][0]["readinessprobe"] = {}
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump_all(broken))
    assert validate([str(path)]).returncode != 0


def test_the_deployment_keeps_its_promises():
    docs = documents()
    pod = find(docs, "Deployment", "flipbook")["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["resources"]["limits"]["memory"], "no memory limit: the cache would size itself by the node"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert pod["terminationGracePeriodSeconds"] > int(find(docs, "ConfigMap", "flipbook-config")["data"]
                                                      ["FLIPBOOK_SERVER_DRAINTIMEOUTSECONDS"])
    assert {"configMapRef": {"name": "flipbook-config"}} in container["envFrom"]
    assert {"secretRef": {"name": "flipbook-s3"}} in container["envFrom"]
    hpa = find(docs, "HorizontalPodAutoscaler", "flipbook")
    assert hpa["spec"]["scaleTargetRef"]["name"] == "flipbook"
    assert find(docs, "PodDisruptionBudget", "flipbook")["spec"]["maxUnavailable"] == 1
    assert find(docs, "Service", "flipbook-pods")["spec"]["clusterIP"] == "None"
    nginx_conf = find(docs, "ConfigMap", "flipbook-nginx")["data"]["nginx.conf"]
    assert "hash $flipbook_image consistent;" in nginx_conf and "flipbook-pods." in nginx_conf
    with open(os.path.join(REPO, "deploy", "nginx.conf")) as f:
        compose_conf = f.read()
    # The routing is deploy/nginx.conf's: the same id map and proxy settings.
    for line in compose_conf.splitlines():
        if line.strip().startswith(("\"~^/(?:images", "proxy_next_upstream", "client_max_body_size")):
            assert line.strip() in nginx_conf, line
