"""Headless Chromium from Debian, driven by Selenium through Debian's chromedriver.

One way to start the browser for every test under Tests/browser: `launch()` returns a WebDriver
whose console log can be read (`console_errors`), with scripts that may be installed in every new
document before the page's own (`on_new_document`, through the DevTools protocol: such scripts
are not subject to the page's Content-Security-Policy, so they can watch for its violations).
Selenium Manager is never asked to download anything: the binary and the driver are Debian's.
"""
import os
import shutil
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

NAME = "chromium"
BINARY_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
DRIVER_CANDIDATES = ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver")


def _first(env, candidates, name):
    path = os.environ.get(env) or next((c for c in candidates if os.path.exists(c)), None) or shutil.which(name)
    if not path:
        raise RuntimeError(f"{name} not found: apt-get install chromium chromium-driver (or set {env})")
    return path


def binary():
    """The Chromium binary: $CHROMIUM_BIN, Debian's, or the one on PATH (RuntimeError if none)."""
    return _first("CHROMIUM_BIN", BINARY_CANDIDATES, "chromium")


def launch(width=1280, height=900, extra_arguments=()):
    """A headless Chromium window of `width`×`height` CSS pixels at device scale 1, with colour
    management pinned to sRGB (screenshots do not depend on the machine), autoplay allowed, and
    the browser console kept for `console_errors`."""
    options = webdriver.ChromeOptions()
    options.binary_location = binary()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--force-color-profile=srgb", "--force-device-scale-factor=1", "--hide-scrollbars",
                     "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                     "--disable-background-networking", "--disable-component-update",
                     "--autoplay-policy=no-user-gesture-required", "--mute-audio",
                     f"--window-size={width},{height}", *extra_arguments):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # chromedriver makes its profile in TMPDIR and Chromium its singleton socket directory there
    # (org.chromium.Chromium.*, left behind at every run): both go to a directory of this
    # browser's, removed by quit().
    scratch = tempfile.mkdtemp(prefix="flipbook-chromium-")
    service = Service(executable_path=_first("CHROMEDRIVER_BIN", DRIVER_CANDIDATES, "chromedriver"),
                      env=dict(os.environ, TMPDIR=scratch))
    try:
        driver = webdriver.Chrome(service=service, options=options)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    quit_browser = driver.quit

    def quit_and_clean_up():
        try:
            quit_browser()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    driver.quit = quit_and_clean_up
    driver.engine = sys.modules[__name__]  # what conftest and the tests ask engine-specific things of
    driver.set_script_timeout(60)
    # The window size above includes browser chrome in some versions; make the viewport exact.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    return driver


def resize(driver, width, height, mobile=False, scale=1):
    """Sets the viewport to `width`×`height` CSS pixels at device pixel ratio `scale`."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": mobile})


def reduced_motion(driver, reduce):
    """Makes `prefers-reduced-motion: reduce` match (or not)."""
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}] if reduce else []})


def on_new_document(driver, source):
    """Runs `source` in every document the driver opens from now on, before the page's scripts."""
    return driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": source})["identifier"]


def console_errors(driver):
    """The console messages at level SEVERE since the last call (the log is drained)."""
    return [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
