#!/usr/bin/env python3
"""Runs schemathesis (generated requests) against a fresh Flipbook server for check.sh.

The server is started and stopped by the browser tests' FlipbookServer (its own data directory,
a free port; run in this directory, for its Config/flipbook.json and web/), with the samples as
its library directory and every sample also uploaded under its
content id and a name, and the preset `thumb` (the spec's example of `r`), so that generated
requests find real images and renditions. It fails when schemathesis
fails or the server logs an error or a critical line meanwhile.

  schemathesis_run.py --flipbook PATH --st PATH --spec openapi.yaml --samples DIR --reports DIR
                      [--max-examples N] [--seed N] [--keep-log PATH]
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys

# The one way the tests start and stop a server (shared with the browser tests).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "browser"))
from flipbook_server import FlipbookServer  # noqa: E402

ADMIN_TOKEN = "openapi-admin"
# The preset openapi.yaml's example of `r` names, so that generated requests with it are served.
PRESETS = "thumb:width=160&format=webp&quality=75"
CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,"
          "response_headers_conformance")


def upload_samples(server, samples):
    """Every sample under its content id (POST) and under the name `named-<file name>` (PUT)."""
    for name in sorted(os.listdir(samples)):
        with open(os.path.join(samples, name), "rb") as f:
            data = f.read()
        for method, path in (("POST", "/images"), ("PUT", f"/images/named-{name}")):
            status, _, body = server.request(method, path, data)
            if status not in (200, 201):
                raise RuntimeError(f"{method} {path}: {status} {body[:300]!r}")


def logged_errors(log_path):
    """The server's error and critical lines (text log format)."""
    with open(log_path, encoding="utf-8", errors="replace") as f:
        return [line.rstrip("\n") for line in f if re.match(r"[^ ]+ (error|critical) ", line)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flipbook", required=True, help="the flipbook binary")
    parser.add_argument("--st", required=True, help="the schemathesis command")
    parser.add_argument("--spec", required=True)
    parser.add_argument("--samples", required=True, help="the library directory; each is also uploaded")
    parser.add_argument("--reports", required=True, help="where schemathesis writes its JUnit report")
    parser.add_argument("--max-examples", type=int, default=50)
    parser.add_argument("--seed", help="schemathesis' seed (none: a new one)")
    parser.add_argument("--keep-log", help="where the server's log is copied when the run fails")
    args = parser.parse_args()
    # A timeout's SIGTERM stops the server too (the `finally` below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))

    os.makedirs(args.reports, exist_ok=True)
    server = FlipbookServer(
        os.path.abspath(args.flipbook),
        ["--library-dir", os.path.abspath(args.samples), "--instance-name", "openapi-check", "--log-format", "text",
         "--set", f"auth.adminToken={ADMIN_TOKEN}", "--set", f"renditions.presets={PRESETS}",
         # Generated registrations by URL stay on this machine: no generated URL matches this
         # prefix, so each is refused (422) before any lookup or connection.
         "--set", "sources.allowedPrefixes=https://sources.invalid/",
         # schemathesis' not_a_server_error counts every 5xx, the documented 503 of a preview
         # build that outlasts derived.maxWaitSeconds (10 s) too: a debug build makes a 1280-px
         # preview of orbit.gif in 9.5-21 s on a loaded 2-core machine. The 503 itself is
         # tested (DerivedRoutesTests.aSlowBuildAnswers503AndGoesOn); here builds take their time.
         "--set", "derived.maxWaitSeconds=120"],
        prefix="flipbook-openapi-st-", access_log=True, cwd=os.getcwd())
    failed = True
    try:
        upload_samples(server, args.samples)
        command = [args.st, "--no-color", "run", os.path.abspath(args.spec), "--url", server.base,
                   "-H", f"Authorization: Bearer {ADMIN_TOKEN}", "--checks", CHECKS,
                   "--max-examples", str(args.max_examples), *(["--seed", args.seed] if args.seed else []),
                   "--generation-database", "none", "--report", "junit",
                   "--report-dir", os.path.abspath(args.reports)]
        failed = subprocess.run(command, cwd=server.work).returncode != 0
        errors = logged_errors(server.log_path)
        if errors:
            print("openapi-check: the server logged errors during the schemathesis run:", file=sys.stderr)
            print("\n".join(errors[:20]), file=sys.stderr)
            failed = True
    finally:
        if failed and args.keep_log:
            server.log.flush()
            shutil.copyfile(server.log_path, args.keep_log)
        server.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
