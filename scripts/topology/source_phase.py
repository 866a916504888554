"""The topology test's source phase: a registration by URL whose origin fails (502) or is too
slow (504) is answered once, not retried on the other replicas, and takes no replica out of
nginx's ring. A replica's own 502/504 says the *origin* failed; were nginx to read it as the
replica failing, one bad URL would take every replica out for fail_timeout.

The replicas run with FLIPBOOK_SOURCES_ALLOWEDNETWORKS=127.0.0.1/32 and
FLIPBOOK_SOURCES_TIMEOUTSECONDS=SOURCE_TIMEOUT_S (see ENV) so that they may fetch from the
origin this phase starts on loopback.
"""
import collections
import http.server
import json
import threading
import time

SOURCE_TIMEOUT_S = 2
ENV = {
    "FLIPBOOK_SOURCES_ALLOWEDNETWORKS": "127.0.0.1/32",
    "FLIPBOOK_SOURCES_TIMEOUTSECONDS": str(SOURCE_TIMEOUT_S),
}


class Origin:
    """A loopback origin: /missing.gif answers 404, /slow.gif answers after longer than the
    replicas' source timeout; counts the requests for each path."""

    def __init__(self):
        self.hits = collections.Counter()
        origin = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                origin.hits[self.path] += 1
                if self.path == "/slow.gif":
                    time.sleep(SOURCE_TIMEOUT_S + 2)
                body = b"no such image"
                try:
                    self.send_response(404)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the replica gave up first

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


def run(request, nginx, images, fails, summary):
    """Registers two failing URLs through nginx, then reads every image through nginx: each
    replica must still answer for its own images."""
    origin = Origin()
    try:
        owners_before = owners(request, nginx, images)
        log_mark = len(nginx.log_entries())
        answers = {}
        for path, expected in (("/missing.gif", 502), ("/slow.gif", 504)):
            body = json.dumps({"url": f"http://127.0.0.1:{origin.port}{path}"}).encode()
            started = time.monotonic()
            status, _, text = request(nginx.port, "POST", "/images", body=body,
                                      headers={"Content-Type": "application/json"})
            answers[path] = (status, round(time.monotonic() - started, 2))
            fails.check(status == expected, f"POST /images by URL {path} -> {status} {text[:120]!r}, expected {expected}")
            fails.check(origin.hits[path] == 1,
                        f"{path}: the origin was asked {origin.hits[path]} times, expected once (no retry)")
        entries = nginx.log_entries()[log_mark:]
        retried = [e for e in entries if "," in e.get("upstream_status", "") or ":" in e.get("upstream_status", "")]
        fails.check(not retried, f"nginx retried {len(retried)} source registrations on another replica")
        owners_after = owners(request, nginx, images)
        moved = [i for i in images if owners_after.get(i) != owners_before.get(i)]
        fails.check(not moved, f"{len(moved)} images moved to another replica after the origin failed")
        print(f"  POST /images by URL through nginx: {answers} (status, seconds); origin asked "
              f"{dict(origin.hits)}; retried by nginx: {len(retried)}; images that moved: {len(moved)}"
              f" of {len(images)}", flush=True)
        summary["sources"] = {"answers": {k: v[0] for k, v in answers.items()}, "originHits": dict(origin.hits),
                              "retried": len(retried), "moved": len(moved)}
    finally:
        origin.stop()


def owners(request, nginx, images):
    """The replica nginx sends each image's metadata request to."""
    found = {}
    for image_id in images:
        status, headers, _ = request(nginx.port, "GET", f"/images/{image_id}")
        found[image_id] = headers.get("x-served-by") if status == 200 else None
    return found
