"""What every part of `make bench-serve` (and `make bench-body-paths`) needs before it measures:
the release flipbook (SKIP_BUILD=1 reuses .build-playback's), the inputs of
scripts/make-bench-inputs.sh in bench-out/inputs, and file descriptors for 256 connections."""
import os
import subprocess
import sys

from benchlib import REPO
from benchlib.server import build
from benchlib.wrk import raise_descriptor_limit

INPUTS = os.path.join(REPO, "bench-out", "inputs")


def prepare():
    """Builds, makes the inputs (reused when up to date) and raises the descriptor limit."""
    build()
    subprocess.run([os.path.join(REPO, "scripts", "make-bench-inputs.sh"), INPUTS], check=True, stdout=sys.stderr)
    raise_descriptor_limit()
