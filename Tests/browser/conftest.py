"""Fixtures of the browser tests: a real `flipbook serve` with the samples, headless Chromium,
and what the tests record in the page.

  FLIPBOOK_BIN       the flipbook to run (default .build/debug/flipbook)
  SCREENSHOTS_DIR    where screenshots go (default build/screenshots)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "scripts", "topology"))

import chromium  # noqa: E402

# Installed in every document before the page's scripts: records the player's events (a
# capturing listener on the document sees every element's events, bubbling or not), every
# animation-frame timestamp, and Content-Security-Policy violations.
RECORDER = r"""
(() => {
  const record = { events: [], ticks: [], csp: [] };
  window.__flipbook = record;
  for (const type of ['frame', 'play', 'pause', 'stall', 'ended', 'error', 'loadedmetadata']) {
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


def wait_for_port(log_path, process, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            match = re.search(r"port=(\d+) .*HTTP server listening", f.read())
        if match:
            return int(match.group(1))
        if process.poll() is not None:
            break
        time.sleep(0.1)
    with open(log_path, encoding="utf-8", errors="replace") as f:
        raise RuntimeError(f"flipbook serve did not start:\n{f.read()}")


class Flipbook:
    """A running `flipbook serve` on a free loopback port."""

    def __init__(self, binary, extra_arguments=()):
        self.work = tempfile.mkdtemp(prefix="flipbook-browser-")
        self.log_path = os.path.join(self.work, "server.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", os.path.join(self.work, "data"),
             "--library-dir", os.path.join(REPO, "Samples"), "--instance-name", "browser-test",
             "--set", f"ui.dir={os.path.join(REPO, 'web')}", "--set", "log.accessLog=false", *extra_arguments],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=self.work)
        self.port = wait_for_port(self.log_path, self.process)
        self.base = f"http://127.0.0.1:{self.port}"

    def request(self, method, path, body=None):
        request = urllib.request.Request(self.base + path, data=body, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def json(self, path):
        status, _, body = self.request("GET", path)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    def upload(self, data):
        status, _, body = self.request("POST", "/images", data)
        assert status in (200, 201), (status, body[:300])
        return json.loads(body)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        shutil.rmtree(self.work, ignore_errors=True)


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
