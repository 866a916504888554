"""Dockerfile and .dockerignore rules (parsed with dockerfile-parse). The image they make is built
and run by podman in `make container-test` (Tests/container), which also proves the runtime
package list against the binary in it."""
import os
import re

import pytest

from conftest import REPO, read
from deploy_rules import dockerfile_violations, dockerignore_violations


def exists_in_repo(src):
    return os.path.exists(os.path.join(REPO, src))


def test_dockerfile_keeps_every_rule():
    assert dockerfile_violations(read("Dockerfile"), repo_paths_exist=exists_in_repo) == []


def sub(pattern, replacement, count=1):
    def mutate(text):
        changed, n = re.subn(pattern, replacement, text, count=count, flags=re.M)
        assert n, f"mutation pattern {pattern!r} no longer matches the Dockerfile"
        return changed
    return mutate


MUTATIONS = {
    "single stage": (lambda t: t[t.index("FROM ${RUNTIME_IMAGE}"):], "multi-stage"),
    "full debian runtime": (sub(r"RUNTIME_IMAGE=debian:bookworm-slim", "RUNTIME_IMAGE=debian:bookworm"), "runtime stage"),
    "ubuntu toolchain": (sub(r"SWIFT_IMAGE=swift:6.2-bookworm", "SWIFT_IMAGE=swift:6.2-jammy"), "build stage is"),
    "no USER": (sub(r"^USER .*\n", ""), "no USER"),
    "USER root": (sub(r"^USER .*$", "USER root"), "runs as"),
    "curl in runtime": (sub(r"libgif7 libwebp7", "curl libgif7 libwebp7"), "extra ['curl']"),
    "libpng missing": (sub(r" libpng16-16 zlib1g", " zlib1g"), "missing ['libpng16-16']"),
    "recommends": (sub(r"install -y -q --no-install-recommends \\\n        libgif7",
                       "install -y -q \\\n        libgif7"), "--no-install-recommends"),
    "curl healthcheck": (sub(r'CMD \["flipbook", "healthcheck"[^\]]*\]',
                             'CMD curl -f http://localhost:8080/healthz'), "HEALTHCHECK"),
    "no healthcheck": (sub(r"^HEALTHCHECK [^\n]*\\\n[^\n]*\n", ""), "HEALTHCHECK"),
    "expose 80": (sub(r"^EXPOSE 8080", "EXPOSE 80"), "EXPOSE"),
    "SIGINT": (sub(r"^STOPSIGNAL SIGTERM", "STOPSIGNAL SIGINT"), "STOPSIGNAL"),
    "no volume": (sub(r"^VOLUME /data\n", ""), "VOLUME"),
    "no data dir env": (sub(r"FLIPBOOK_STORAGE_DATADIR=/data", "FLIPBOOK_STORAGE_DATADIR=/srv"), "DATADIR"),
    "dynamic stdlib": (sub(r"swift build -c release --static-swift-stdlib --product",
                           "swift build -c release --product"), "static-swift-stdlib"),
    "no samples": (sub(r"^COPY Samples/ /app/Samples/\n", ""), "Samples/"),
    "no web ui": (sub(r"^COPY web/ /app/web/\n", ""), "web/"),
    "no ui dir env": (sub(r"FLIPBOOK_UI_DIR=/app/web", "FLIPBOOK_UI_DIR=/srv/web"), "FLIPBOOK_UI_DIR"),
    "shell-form entrypoint": (sub(r'^ENTRYPOINT \["flipbook"\]', "ENTRYPOINT flipbook"), "exec form"),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_a_broken_dockerfile_is_caught(name):
    mutate, expected = MUTATIONS[name]
    problems = dockerfile_violations(mutate(read("Dockerfile")))
    assert problems, f"the rules accepted a Dockerfile with: {name}"
    assert any(expected in p for p in problems), problems


def test_copy_sources_must_exist():
    problems = dockerfile_violations(read("Dockerfile"), repo_paths_exist=lambda src: src != "Samples/")
    assert problems == ["COPY source Samples/ does not exist in the repository"]


def test_dockerignore_keeps_the_context_small_but_complete():
    assert dockerignore_violations(read(".dockerignore")) == []
    assert dockerignore_violations(read(".dockerignore") + "\nSources\n")
    assert dockerignore_violations(read(".dockerignore").replace(".build*\n", ""))
