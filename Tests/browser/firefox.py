"""Headless Firefox ESR from Debian (`firefox-esr`), driven by Mozilla's marionette_driver (PyPI)
with no geckodriver.

`launch()` starts `firefox-esr --headless --marionette -remote-allow-system-access --profile DIR`
on a profile of its own in a scratch directory (removed by `quit()`). The profile's user.js sets
`marionette.port` to 0: Firefox listens on a free port and writes it to the profile's
MarionetteActivePort, so runs side by side on one machine never collide. The returned `Firefox`
has the part of Selenium's WebDriver API the tests use (`get`, `refresh`, `execute_script`,
`execute_async_script`, `find_element`, `save_screenshot`, `quit`); this module's functions do
what chromium.py does through the DevTools protocol:

- `on_new_document`: a temporary WebExtension whose content script runs in the page's own world
  at document_start (before the page's scripts, and not subject to its Content-Security-Policy).
- `console_errors`: the script errors of pages (uncaught exceptions, unhandled rejections, CSP
  reports) from the browser's console service, and `console.error` calls the page made, which
  the recorder keeps (conftest.RECORDER). Unlike Chromium, Firefox logs no console error for an
  HTTP error answer (a 404 or 415 fetched): tests expecting those say so.
- `resize`: the window (the browser's toolbars hidden by userChrome.css, so the viewport is the
  window; their 450-px minimum width is lifted), and the device pixel ratio through the
  `layout.css.devPixelsPerPx` preference (Firefox has no device-metrics emulation; the window
  keeps its size in CSS pixels).
- `reduced_motion`: the `ui.prefersReducedMotion` preference.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

with warnings.catch_warnings():  # its dependencies import what Python 3.11 deprecates (telnetlib, …)
    warnings.simplefilter("ignore", DeprecationWarning)
    from marionette_driver.addons import Addons
    from marionette_driver.marionette import Marionette

NAME = "firefox"
BINARY_CANDIDATES = ("/usr/bin/firefox-esr", "/usr/lib/firefox-esr/firefox-esr", "/usr/bin/firefox")

USER_JS = """
user_pref("marionette.port", 0);
user_pref("toolkit.legacyUserProfileCustomizations.stylesheets", true);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.page", 0);
user_pref("browser.aboutwelcome.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("app.normandy.enabled", false);
user_pref("media.autoplay.default", 0);
user_pref("xpinstall.signatures.required", false);
user_pref("gfx.color_management.mode", 2);
"""
# The toolbars take no room and set no minimum width: the viewport is the window.
USER_CHROME_CSS = """
:root { min-width: 0 !important; min-height: 0 !important; }
#navigator-toolbox { visibility: collapse !important; }
"""
# What a page's `console.error` calls add to the recorder (conftest.RECORDER): read and emptied.
PAGE_CONSOLE_ERRORS = "const r = window.__flipbook; if (!r || !r.consoleErrors) return []; return r.consoleErrors.splice(0);"
# The console service's script errors from content since the last reading (which resets it).
SCRIPT_ERRORS = r"""
const found = [];
for (const message of Services.console.getMessageArray() || []) {
  if (!(message instanceof Ci.nsIScriptError) || message.isFromChromeContext) continue;
  if (message.flags & (Ci.nsIScriptError.warningFlag | Ci.nsIScriptError.infoFlag)) continue;
  if (/^(chrome|resource|moz-extension|about|jar):/.test(message.sourceName || '')) continue;  // the browser's own
  found.push({ level: 'SEVERE', source: message.category, message: `${message.sourceName} ${message.errorMessage}` });
}
Services.console.reset();
return found;
"""


def binary():
    """The Firefox binary: $FIREFOX_BIN, Debian's firefox-esr, or `firefox` (RuntimeError if none)."""
    path = os.environ.get("FIREFOX_BIN") or next((c for c in BINARY_CANDIDATES if os.path.exists(c)), None) \
        or shutil.which("firefox-esr") or shutil.which("firefox")
    if not path:
        raise RuntimeError("Firefox not found: apt-get install firefox-esr (or set FIREFOX_BIN)")
    return path


class Firefox:
    """One headless Firefox and its Marionette session, with Selenium's method names."""

    engine = None  # this module, set below (conftest reads `driver.engine`)

    def __init__(self, process, client, scratch, log):
        self.process, self.client, self.scratch, self.log = process, client, scratch, log
        self.scale = 1

    # Scripts run in the page's own global, as WebDriver's do (Marionette's default sandbox would
    # not see the page's globals, such as window.__flipbook).
    def execute_script(self, script, *args):
        return self.client.execute_script(script, script_args=list(args), sandbox=None, new_sandbox=False)

    def execute_async_script(self, script, *args):
        return self.client.execute_async_script(script, script_args=list(args), sandbox=None, new_sandbox=False)

    def get(self, url):
        self.client.navigate(url)

    def refresh(self):
        self.client.refresh()

    def find_element(self, by, value):
        return self.client.find_element(by, value)

    def save_screenshot(self, path):
        """The viewport as PNG, as Selenium's save_screenshot takes it."""
        with open(path, "wb") as file:
            file.write(self.client.screenshot(format="binary", full=False))
        return True

    def chrome_script(self, script, *args):
        """Runs `script` with the browser's own privileges (Services, preferences)."""
        with self.client.using_context(self.client.CONTEXT_CHROME):
            return self.client.execute_script(script, script_args=list(args))

    def quit(self):
        try:
            try:
                self.client.delete_session()
            except Exception:  # the browser may be gone already
                pass
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        finally:
            self.log.close()
            shutil.rmtree(self.scratch, ignore_errors=True)


Firefox.engine = sys.modules[__name__]


def _port(profile, process, log_path, timeout=90):
    """The port Marionette wrote to the profile once listening (RuntimeError with the log if the
    browser exits or says nothing in `timeout` seconds)."""
    path = os.path.join(profile, "MarionetteActivePort")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as file:
                text = file.read().strip()
            if text.isdigit():
                return int(text)
        if process.poll() is not None:
            break
        time.sleep(0.1)
    with open(log_path, errors="replace") as file:
        raise RuntimeError(f"Firefox did not start Marionette:\n{file.read()[-4000:]}")


def launch(width=1280, height=900):
    """A headless Firefox whose viewport is `width`×`height` CSS pixels at device pixel ratio 1,
    colour-managing tagged images only (Firefox's default: untagged ones are drawn as they are),
    with autoplay allowed."""
    scratch = tempfile.mkdtemp(prefix="flipbook-firefox-")
    profile = os.path.join(scratch, "profile")
    os.makedirs(os.path.join(profile, "chrome"))
    with open(os.path.join(profile, "user.js"), "w") as file:
        file.write(USER_JS)
    with open(os.path.join(profile, "chrome", "userChrome.css"), "w") as file:
        file.write(USER_CHROME_CSS)
    log_path = os.path.join(scratch, "firefox.log")
    log = open(log_path, "w")
    # The headless screen must hold the largest window the tests ask for (1280×900 at ratio 2).
    env = dict(os.environ, TMPDIR=scratch, MOZ_HEADLESS="1", MOZ_HEADLESS_WIDTH="2600", MOZ_HEADLESS_HEIGHT="1900")
    try:
        process = subprocess.Popen(
            [binary(), "--headless", "--marionette", "-remote-allow-system-access", "--no-remote",
             "--profile", profile, "about:blank"],
            stdout=log, stderr=subprocess.STDOUT, env=env)
    except BaseException:
        log.close()
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    try:
        client = Marionette(host="127.0.0.1", port=_port(profile, process, log_path))
        client.start_session()
        client.timeout.script = 60
        client.timeout.page_load = 60
    except BaseException:
        process.kill()
        process.wait()
        log.close()
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    driver = Firefox(process, client, scratch, log)
    resize(driver, width, height)
    return driver


def resize(driver, width, height, mobile=False, scale=1):
    """Sets the viewport to `width`×`height` CSS pixels at device pixel ratio `scale` (`mobile`
    is Chromium's; Firefox lays the page out the same either way)."""
    if scale != driver.scale:
        driver.client.set_pref("layout.css.devPixelsPerPx", f"{float(scale)}")
        driver.scale = scale
    for _ in range(3):  # the window's frame may take a few pixels: measure and correct
        driver.client.set_window_rect(width=width, height=height)
        inner = driver.execute_script("return [window.innerWidth, window.innerHeight, window.devicePixelRatio];")
        if inner[:2] == [width, height]:
            break
        rect = driver.client.window_rect
        driver.client.set_window_rect(width=rect["width"] + width - inner[0], height=rect["height"] + height - inner[1])
        inner = driver.execute_script("return [window.innerWidth, window.innerHeight, window.devicePixelRatio];")
        if inner[:2] == [width, height]:
            break
    if inner != [width, height, scale]:
        raise RuntimeError(f"Firefox's viewport is {inner}, not {[width, height, scale]}")


def reduced_motion(driver, reduce):
    """Makes `prefers-reduced-motion: reduce` match (or not) in every page."""
    if reduce:
        driver.client.set_pref("ui.prefersReducedMotion", 1)
    else:
        driver.client.clear_pref("ui.prefersReducedMotion")


def on_new_document(driver, source):
    """Runs `source` in every document the driver opens from now on, before the page's scripts
    (a temporary WebExtension's content script in the page's own world, at document_start)."""
    directory = tempfile.mkdtemp(prefix="preload-", dir=driver.scratch)
    manifest = {
        "manifest_version": 3, "name": "flipbook test preload", "version": "1.0",
        "browser_specific_settings": {"gecko": {"id": f"preload-{os.path.basename(directory)}@flipbook.invalid"}},
        "content_scripts": [{"matches": ["<all_urls>"], "js": ["preload.js"], "run_at": "document_start",
                             "world": "MAIN", "all_frames": True}],
    }
    with open(os.path.join(directory, "manifest.json"), "w") as file:
        json.dump(manifest, file)
    with open(os.path.join(directory, "preload.js"), "w") as file:
        file.write(source)
    return Addons(driver.client).install(directory, temp=True)


def console_errors(driver):
    """The console errors since the last call (both sources are emptied): script errors of pages
    from the browser's console service, and the current page's `console.error` calls."""
    errors = driver.chrome_script(SCRIPT_ERRORS)
    try:
        calls = driver.execute_script(PAGE_CONSOLE_ERRORS)
    except Exception:  # no page (about:blank before the first test) or one being replaced
        calls = []
    return errors + [{"level": "SEVERE", "source": "console-api", "message": " ".join(map(str, call))} for call in calls]
