"""What Flipbook's benchmarks and load tests share, once: the flipbook server wrapper, nginx,
load generators, /proc readings, the machine description and the report splicer.

How everything under scripts/ finds it: scripts/ is on the import path, and each benchmark is a
package run as a module, e.g.

    PYTHONPATH=scripts python3 -m bench.playback

(the `make` targets in mk/*.mk do exactly this). Nothing inserts into sys.path.

  benchlib.server    a `flipbook serve` process on loopback; the release build benchmarks use
  benchlib.nginx     nginx as operators run it for static files: its config and its process
  benchlib.wrk       wrk (and httpload for HEAD) runs, parsed; CPU per request from /proc
  benchlib.process   one process's memory and CPU time from /proc
  benchlib.sampler   what else is busy on the machine; a server's RSS polled during a run
  benchlib.machine   one line describing the machine; the load average
  benchlib.splice    replaces one `## ` section of a report under docs/benchmarks/
  benchlib.stats     percentiles and MiB formatting
  benchlib.ports     free loopback ports
  benchlib.gifgen    GIF files written in plain Python (LZW without a dictionary)
  benchlib.inputs    upload mixes made on the fly: valid, damaged and bomb files
"""
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def log(*args):
    """A progress line on stderr (stdout is for the report)."""
    print(*args, file=sys.stderr, flush=True)


def head_commit():
    """The short hash of the commit checked out in the repository (what a report names)."""
    import subprocess
    return subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
