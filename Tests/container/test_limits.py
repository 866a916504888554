"""Memory and CPU limits honoured (issue 32, item 3): under `--memory 256m --cpus 1` the cache's
budget derives from 256 MiB (this host has cgroup v1: the v1 files are what the service reads
here; v2 is covered by the unit tests over fake trees), and a 2-minute mixed load ends with the
container running, not OOM-killed, the limit never failing a charge (`memory.failcnt` 0), no 5xx
but the documented 503s, and the working set (usage less inactive page cache, sampled every
second) below the limit. `memory.max_usage_in_bytes`, which counts the page cache of the files
the service writes and maps (uploads, previews) until the kernel reclaims it, is printed.
CONTAINER_LOAD_SECONDS shortens or lengthens the load (default 120)."""
import hashlib
import json
import os
import re
import threading

import pytest

import engine
import load

pytestmark = pytest.mark.usefixtures("image")

LIMIT = 256 << 20
LOAD_SECONDS = int(os.environ.get("CONTAINER_LOAD_SECONDS", "120"))


@pytest.fixture(scope="module")
def limited():
    container, port, vol = engine.name("limits"), engine.free_port(), engine.volume(engine.name("data"))
    engine.run_container(container, *engine.HARDENED, "--memory", "256m", "--memory-swap", "256m", "--cpus", "1",
                         "-v", f"{vol}:/data", "-p", f"127.0.0.1:{port}:8080")
    engine.wait_ready(port, timeout=30)
    yield container, port
    engine.podman("rm", "-f", "-v", "-t", "0", container, check=False)


def cgroup_file(container, name):
    """A file of the container's memory cgroup (v1), as the container sees it."""
    return engine.out("exec", container, "cat", f"/sys/fs/cgroup/memory/{name}")


def test_budget_derives_from_the_memory_limit(limited):
    """Fails on a server that ignores the (v1) limit: its budget would follow the host's memory."""
    container, port = limited
    stats = engine.get_json(port, "/stats")
    assert stats["budgetBytes"] == int(LIMIT * 0.2), f"budget {stats['budgetBytes']} is not 20% of 256 MiB"
    assert stats["decodeThreads"] == 1, f"--cpus 1 not honoured: {stats['decodeThreads']} decode threads"
    ready = [line for line in engine.logs(container).splitlines() if "frame cache ready" in line]
    assert ready, engine.logs(container)[-2000:]
    assert re.search(r'memoryLimitBytes"?[:=]\s*"?268435456', ready[0]), ready[0]
    assert re.search(r'fromCgroup"?[:=]\s*"?true', ready[0]), ready[0]


def test_two_minutes_of_mixed_load_within_the_limit(limited):
    container, port = limited
    animations = load.make_animations(4, size=(400, 300), frames=20)
    ids = {}
    for data in animations:
        status, _, body = engine.request(port, "POST", "/images", body=data, headers={"Content-Type": "image/gif"})
        assert status == 201, body[:300]
        ids[hashlib.sha256(data).hexdigest()] = json.loads(body)["frameCount"]
    run = load.MixedLoad(port, ids, LOAD_SECONDS)
    working_sets, done = [], threading.Event()

    def sample():
        while not done.is_set():
            stat = dict(line.split() for line in cgroup_file(container, "memory.stat").splitlines())
            usage = int(cgroup_file(container, "memory.usage_in_bytes"))
            working_sets.append(usage - int(stat["total_inactive_file"]))
            done.wait(1.0)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        stats = run.run()
    finally:
        done.set()
        sampler.join()
    peak = int(cgroup_file(container, "memory.max_usage_in_bytes"))
    failcnt = int(cgroup_file(container, "memory.failcnt"))
    oom_control = cgroup_file(container, "memory.oom_control")
    oom_kills = int(re.search(r"oom_kill (\d+)", oom_control).group(1)) if "oom_kill " in oom_control else 0
    cache = engine.get_json(port, "/stats")
    summary = {
        "seconds": LOAD_SECONDS, "frames": run.frames, "previewsAndStoryboards": run.previews,
        "uploads": run.uploaded, "statuses": dict(stats.statuses),
        "byKind": {k: dict(v) for k, v in stats.by_kind.items()},
        "maxUsageMiB": round(peak / 2**20, 1), "peakWorkingSetMiB": round(max(working_sets) / 2**20, 1),
        "samples": len(working_sets), "limitMiB": LIMIT >> 20, "failcnt": failcnt,
        "oomKills": oom_kills, "budgetBytes": cache["budgetBytes"],
    }
    print("container load: " + json.dumps(summary))
    assert engine.inspect(container, "{{.State.Running}}") == "true", engine.logs(container)[-3000:]
    assert engine.inspect(container, "{{.State.OOMKilled}}") == "false"
    assert oom_kills == 0, oom_control
    assert not stats.unexpected_5xx, stats.unexpected_5xx[:20]
    assert not stats.connection_errors, stats.connection_errors[:20]
    assert failcnt == 0, f"the limit failed {failcnt} charges"
    assert len(working_sets) >= LOAD_SECONDS // 4, f"only {len(working_sets)} samples"
    assert max(working_sets) < LIMIT, f"working set {max(working_sets)} reached the limit {LIMIT}"
    assert run.frames > 100 * LOAD_SECONDS // 60 and run.uploaded > 0 and run.previews > 0, summary
