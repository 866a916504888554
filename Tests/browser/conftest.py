"""Fixtures of the browser tests: a real `flipbook serve` with the samples, headless Chromium,
and what the tests record in the page.

  FLIPBOOK_BIN       the flipbook to run (default .build/debug/flipbook)
  SCREENSHOTS_DIR    where screenshots go (default build/screenshots)
"""
import os
import time
import urllib.request

import pytest

import chromium
from flipbook_server import FlipbookServer

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# Installed in every document before the page's scripts: records the player's events (a
# capturing listener on the document sees every element's events, bubbling or not), every
# animation-frame timestamp, and Content-Security-Policy violations.
RECORDER = r"""
(() => {
  const record = { events: [], ticks: [], csp: [] };
  window.__flipbook = record;
  for (const type of ['frame', 'play', 'pause', 'stall', 'ended', 'error', 'loadedmetadata', 'progress']) {
    document.addEventListener(type, (event) => {
      if (!event.target || event.target.localName !== 'flipbook-player') return;
      const detail = type === 'loadedmetadata' ? { id: event.detail.id } : event.detail;
      record.events.push({ type, id: event.target.id || '', detail: JSON.parse(JSON.stringify(detail || {})),
                           at: performance.now() });
    }, true);
  }
  document.addEventListener('securitypolicyviolation', (event) => {
    record.csp.push({ directive: event.violatedDirective, blocked: event.blockedURI, source: event.sourceFile });
  }, true);
  const tick = (now) => { record.ticks.push(now); if (record.ticks.length > 20000) record.ticks.splice(0, 10000);
                          requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
})();
"""


class Flipbook(FlipbookServer):
    """A running `flipbook serve` with the samples as its library and the repository's web UI."""

    def __init__(self, binary, extra_arguments=()):
        super().__init__(binary, ["--library-dir", os.path.join(REPO, "Samples"), "--instance-name", "browser-test",
                                  "--set", f"ui.dir={os.path.join(REPO, 'web')}", *extra_arguments])


def flipbook_binary():
    binary = os.path.abspath(os.environ.get("FLIPBOOK_BIN") or os.path.join(REPO, ".build", "debug", "flipbook"))
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no flipbook binary at {binary}: build it (make browser-test does) or set FLIPBOOK_BIN")
    return binary


@pytest.fixture(scope="session")
def flipbook():
    server = Flipbook(flipbook_binary())
    yield server
    server.stop()


@pytest.fixture(scope="session")
def screenshots():
    directory = os.environ.get("SCREENSHOTS_DIR") or os.path.join(REPO, "build", "screenshots")
    os.makedirs(directory, exist_ok=True)
    return directory


@pytest.fixture(scope="session")
def browser():
    driver = chromium.launch()
    chromium.on_new_document(driver, RECORDER)
    yield driver
    driver.quit()


@pytest.fixture
def page(browser):
    """The shared browser, with the console drained before and checked after the test: a test
    that leaves a console error or a CSP violation behind fails."""
    chromium.console_errors(browser)
    yield browser
    errors = chromium.console_errors(browser)
    assert errors == [], f"console errors: {errors}"
    violations = browser.execute_script("return window.__flipbook ? window.__flipbook.csp : []")
    assert violations == [], f"Content-Security-Policy violations: {violations}"


def wait_until(driver, script, timeout=30, message="condition", *args):
    """Polls `script` (a JS expression body returning a truthy value) until it holds."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = driver.execute_script(script, *args)
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {message} (last value {value!r})")


def open_player(driver, base, image_id):
    """Opens /player/{id}; returns once the player has its metadata."""
    driver.get(f"{base}/player/{urllib.request.quote(image_id, safe='')}")
    wait_until(driver, "const p = document.getElementById('player'); return p && p.currentFrame !== undefined;",
               message=f"the metadata of {image_id}")
