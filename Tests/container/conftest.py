"""The container tests (`make container-test`): the image `make container-image` built, run by
podman as a user runs it. Each test removes what it made (engine.cleanup at the end of the run);
the images stay for the next run."""
import os

import pytest

import engine

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture(scope="session", autouse=True)
def cleanup():
    """At the end of the run, removes what the run made (containers, volumes, networks)."""
    yield
    engine.cleanup()


@pytest.fixture(scope="session")
def image():
    """The image under test; a test that needs it fails (never skips) when it is missing."""
    if engine.podman("image", "exists", engine.IMAGE, check=False).returncode != 0:
        pytest.fail(f"{engine.IMAGE} not found: `make container-test` builds it (make container-image)")
    return engine.IMAGE


@pytest.fixture
def repo():
    return REPO
