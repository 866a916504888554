import os
import shutil

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def read(relative):
    with open(os.path.join(REPO, relative)) as f:
        return f.read()


def tool(name):
    """A command-line tool the lint needs; `make deploy-lint` installs them all."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} not found on PATH; run `make deploy-lint` (it installs the deploy tools)")
    return path


@pytest.fixture
def repo():
    return REPO
