"""Fixtures of the browser tests: a real `flipbook serve` with the samples, a headless browser
of each engine (chromium.py: Chromium through Selenium; firefox.py: Firefox ESR through
Marionette), and what the tests record in the page.

  FLIPBOOK_BIN       the flipbook to run (default .build/debug/flipbook)
  SCREENSHOTS_DIR    where screenshots go (default build/screenshots)
  FLIPBOOK_BROWSERS  the engines to run, separated by spaces or commas (default "chromium firefox")

Every test that uses the `browser` (or `page`, or `flipbook`) fixture runs once per engine
(`[chromium]`, `[firefox]` in its id), all of one engine's tests with one browser and one
server, then the other's. A test (or
module) marked `chromium_only("why")` runs in Chromium alone: the reason says what it depends on
that only Chromium has here (WebCodecs' ImageDecoder as the pixel reference, the DevTools
protocol's key events, timing measured against Chromium's animation frames, …). The engine's own
functions (resize, reduced_motion, console_errors, on_new_document) are `driver.engine.*`.
"""
import os
import re
import time
import urllib.request

import pytest

import chromium
import firefox
from flipbook_server import FlipbookServer

ENGINES = {chromium.NAME: chromium, firefox.NAME: firefox}
ENGINE_OF = {}  # test id → the engine it runs in (for the summary)
ENGINE_SECONDS = {}  # engine → seconds from its browser's start to its end

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# Installed in every document before the page's scripts: records the player's events (a
# capturing listener on the document sees every element's events, bubbling or not), every
# animation-frame timestamp, and Content-Security-Policy violations.
RECORDER = r"""
(() => {
  const record = { events: [], ticks: [], csp: [], consoleErrors: [] };
  window.__flipbook = record;
  // console.error calls (Firefox's driver reads them from here; Chromium's from its log).
  const consoleError = console.error;
  console.error = (...args) => {
    record.consoleErrors.push(args.map((arg) => { try { return String(arg); } catch { return '?'; } }));
    return consoleError.apply(console, args);
  };
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

    def __init__(self, binary, extra_arguments=(), access_log=False):
        super().__init__(binary, ["--library-dir", os.path.join(REPO, "Samples"), "--instance-name", "browser-test",
                                  "--set", f"ui.dir={os.path.join(REPO, 'web')}", *extra_arguments],
                         access_log=access_log)


def flipbook_binary():
    binary = os.path.abspath(os.environ.get("FLIPBOOK_BIN") or os.path.join(REPO, ".build", "debug", "flipbook"))
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no flipbook binary at {binary}: build it (make browser-test does) or set FLIPBOOK_BIN")
    return binary


@pytest.fixture(scope="session")
def flipbook(engine):
    """The server of one engine's tests: each engine starts from a fresh one (the tests upload
    the same images, and an image already there answers differently)."""
    server = Flipbook(flipbook_binary())
    yield server
    server.stop()


@pytest.fixture(scope="session")
def screenshots():
    directory = os.environ.get("SCREENSHOTS_DIR") or os.path.join(REPO, "build", "screenshots")
    os.makedirs(directory, exist_ok=True)
    return directory


def selected_engines():
    names = re.split(r"[\s,]+", os.environ.get("FLIPBOOK_BROWSERS", "chromium firefox").strip())
    names = [name for name in names if name]
    unknown = [name for name in names if name not in ENGINES]
    if unknown or not names:
        raise pytest.UsageError(f"FLIPBOOK_BROWSERS: {unknown or names} (known: {', '.join(ENGINES)})")
    return names


def pytest_configure(config):
    config.addinivalue_line("markers", "chromium_only(reason): runs in Chromium alone, for the reason given")


def pytest_generate_tests(metafunc):
    """Runs every test that uses a browser (or the server, one per engine) once per engine
    (Chromium alone when marked so)."""
    if "engine" not in metafunc.fixturenames:
        return
    only = metafunc.definition.get_closest_marker("chromium_only")
    metafunc.parametrize("engine", [chromium.NAME] if only else list(ENGINES), scope="session")


def pytest_collection_modifyitems(config, items):
    """Leaves out the engines FLIPBOOK_BROWSERS does not name."""
    wanted = set(selected_engines())
    kept, dropped = [], []
    for item in items:
        engine = item.callspec.params.get("engine") if hasattr(item, "callspec") else None
        if engine:
            ENGINE_OF[item.nodeid] = engine
        (dropped if engine and engine not in wanted else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_terminal_summary(terminalreporter):
    """One line per engine: its tests' outcomes and the time its browser ran (what CI's log
    reports per engine)."""
    counts = {}
    for outcome in ("passed", "failed", "error", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            engine = ENGINE_OF.get(report.nodeid)
            if engine and (report.when == "call" or outcome != "passed"):
                counts.setdefault(engine, {}).setdefault(outcome, set()).add(report.nodeid)
    for engine, outcomes in counts.items():
        text = ", ".join(f"{len(ids)} {outcome}" for outcome, ids in outcomes.items())
        seconds = f" in {ENGINE_SECONDS[engine]:.0f} s" if engine in ENGINE_SECONDS else ""
        terminalreporter.write_line(f"browser tests in {engine}: {text}{seconds}")


@pytest.fixture(scope="session")
def browser(engine):
    started = time.monotonic()
    driver = ENGINES[engine].launch()
    driver.engine.on_new_document(driver, RECORDER)
    yield driver
    driver.quit()
    ENGINE_SECONDS[engine] = ENGINE_SECONDS.get(engine, 0) + time.monotonic() - started


@pytest.fixture
def page(browser):
    """The shared browser, with the console drained before and checked after the test: a test
    that leaves a console error or a CSP violation behind fails."""
    browser.engine.console_errors(browser)
    yield browser
    errors = browser.engine.console_errors(browser)
    assert errors == [], f"console errors: {errors}"
    violations = browser.execute_script("return window.__flipbook ? window.__flipbook.csp : []")
    assert violations == [], f"Content-Security-Policy violations: {violations}"


def shot_name(driver, name):
    """A screenshot's file name: Chromium's keep theirs (docs/ shows them), Firefox's say so."""
    return f"{name}.png" if driver.engine is chromium else f"{name}-{driver.engine.NAME}.png"


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
