"""The topology test must be able to fail: run it against fake replicas that keep the contract
(it passes) and against fakes that break it one way each (it fails, naming the problem)."""
import os
import subprocess
import sys

import pytest

from conftest import REPO, tool

HARNESS = os.path.join(REPO, "scripts", "topology", "topology_test.py")


def run_harness(tmp_path, phases, misbehave="", images=6, drain_timeout=2):
    """Runs the harness with its work directory under `tmp_path`: a failed run keeps its logs
    there (as it does for a user), and pytest removes them, not /tmp."""
    tool("nginx")
    env = dict(os.environ, FAKE_MISBEHAVE=misbehave, PYTHONPATH=os.path.join(REPO, "scripts"),
               TMPDIR=str(tmp_path))
    return subprocess.run([sys.executable, HARNESS, "--fake", "--binary", "none", "--phases", phases,
                           "--images", str(images), "--drain-timeout", str(drain_timeout)],
                          capture_output=True, text=True, env=env, timeout=300)


def test_a_good_fake_passes_upload_and_affinity(tmp_path):
    result = run_harness(tmp_path, "upload,affinity", images=12)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "images served by exactly one replica: 12/12" in result.stdout


@pytest.mark.parametrize("misbehave,phases,expected", [
    ("no-served-by", "upload,affinity", "X-Served-By"),
    ("no-shared-dir", "upload", "expected 200"),
    ("flaky", "upload,affinity", "-> 500"),
    ("ignore-term", "rolling", "after SIGTERM"),
])
def test_a_broken_replica_fails_the_topology_test(tmp_path, misbehave, phases, expected):
    result = run_harness(tmp_path, phases, misbehave)
    assert result.returncode == 1, result.stdout[-3000:]
    assert "topology-test: FAILED" in result.stdout
    assert expected in result.stdout, result.stdout[-3000:]
