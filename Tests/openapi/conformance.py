#!/usr/bin/env python3
"""Checks a running Flipbook server against openapi.yaml on the cases a generator cannot reach.

Schemathesis (run by check.sh) sends generated requests; it cannot make a valid image, a token
mismatch on a server with an upload token, or a malformed request line. This script sends those
requests itself, over plain sockets, and checks every answer against the spec: the status is
documented for the operation, the Content-Type is one the spec lists, a JSON body validates
against the schema, and every required header is present and matches its schema. It also checks
what the spec says in words (201 then 200, 304 on the ETag, paging, Location, Content-Location).

  conformance.py --spec openapi.yaml --flipbook PATH [--samples DIR]

It starts its own servers (a fresh data directory each, on free ports) and stops them.
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import re
import socket
import sys
import threading
import urllib.parse

import jsonschema
import yaml

# The one way the tests start and stop a server (shared with the browser tests).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "browser"))
from flipbook_server import FlipbookServer  # noqa: E402

ADMIN_TOKEN = "admin-secret"
UPLOAD_TOKEN = "upload-secret"


# ----------------------------------------------------------------------------- the spec

class Spec:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.doc = yaml.safe_load(f)
        self.paths = self.doc["paths"]

    def resolve(self, node):
        """Follows local $refs (recursively, into every nested object)."""
        if isinstance(node, dict):
            if "$ref" in node:
                target = self.doc
                for part in node["$ref"].lstrip("#/").split("/"):
                    target = target[part.replace("~1", "/").replace("~0", "~")]
                return self.resolve(target)
            return {k: self.resolve(v) for k, v in node.items()}
        if isinstance(node, list):
            return [self.resolve(v) for v in node]
        return node

    def response(self, method, template, status):
        operation = self.paths[template].get(method.lower())
        if operation is None:
            return None, f"{method} {template} is not in the spec"
        responses = operation["responses"]
        entry = responses.get(str(status)) or responses.get(f"{str(status)[0]}XX") or responses.get("default")
        if entry is None:
            return None, f"{method} {template}: status {status} is not documented (has {sorted(responses)})"
        return self.resolve(entry), None


def header_value_ok(schema, value):
    """Validates a header's text against its schema (integers are parsed first)."""
    kind = schema.get("type")
    candidate = value
    if kind == "integer":
        if not re.fullmatch(r"-?[0-9]+", value):
            return False
        candidate = int(value)
    try:
        jsonschema.Draft202012Validator(schema).validate(candidate)
        return True
    except jsonschema.ValidationError:
        return False


# ----------------------------------------------------------------------------- HTTP

class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-case name -> list of values
        self.body = body

    def header(self, name):
        values = self.headers.get(name.lower())
        return values[0] if values else None

    def json(self):
        return json.loads(self.body.decode("utf-8"))


def raw_exchange(port, data, timeout=10.0, head=False):
    """Sends raw request bytes, reads one response (Content-Length framing, or to EOF)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)

        def read_head(buffer):
            """Reads until a blank line ends a head; returns its lines and the bytes after it."""
            while b"\r\n\r\n" not in buffer:
                chunk = s.recv(65536)
                if not chunk:
                    break
                buffer += chunk
            head_bytes, _, after = buffer.partition(b"\r\n\r\n")
            return head_bytes.decode("latin-1").split("\r\n"), after

        lines, rest = read_head(b"")
        status_line = lines[0]
        while status_line.startswith("HTTP/1.1 100"):
            # 100 Continue: the real response follows.
            lines, rest = read_head(rest)
            status_line = lines[0]
        match = re.match(r"HTTP/1\.[01] ([0-9]{3})", status_line)
        if not match:
            raise AssertionError(f"no status line in {status_line[:200]!r}")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers.setdefault(name.strip().lower(), []).append(value.strip())
        status = int(match.group(1))
        length = headers.get("content-length")
        body = rest
        if head or status in (204, 304):
            body = b""
        elif length is not None:
            want = int(length[0])
            while len(body) < want:
                chunk = s.recv(65536)
                if not chunk:
                    break
                body += chunk
            body = body[:want]
        else:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                body += chunk
        return Response(status, headers, body)


def request(port, method, target, body=None, headers=None):
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    payload = b""
    if body is not None:
        payload = body
        lines.append(f"Content-Length: {len(payload)}")
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload
    return raw_exchange(port, data, head=(method == "HEAD"))


# ----------------------------------------------------------------------------- the checks

class Checker:
    def __init__(self, spec):
        self.spec = spec
        self.passed = 0
        self.failed = []

    def conforms(self, label, method, template, response, expect=None):
        """Checks `response` against the spec for `method template`; returns the problems."""
        problems = []
        if expect is not None and response.status != expect:
            problems.append(f"status {response.status}, expected {expect}: {response.body[:300]!r}")
        entry, why = self.spec.response(method, template, response.status)
        if entry is None:
            problems.append(why)
        else:
            content = entry.get("content") or {}
            content_type = response.header("content-type")
            if content and method != "HEAD":
                if content_type is None:
                    problems.append("no Content-Type")
                else:
                    media = content_type.split(";")[0].strip().lower()
                    documented = {k.split(";")[0].strip().lower(): v for k, v in content.items()}
                    if media not in documented:
                        problems.append(f"Content-Type {content_type!r} is not among {sorted(content)}")
                    elif media.endswith("json"):
                        try:
                            document = response.json()
                        except ValueError as error:
                            problems.append(f"body is not JSON: {error}")
                        else:
                            schema = documented[media].get("schema", {})
                            errors = sorted(jsonschema.Draft202012Validator(
                                schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
                                .iter_errors(document), key=str)
                            problems += [f"body: {e.message} at {list(e.absolute_path)}" for e in errors[:5]]
                    elif media == "image/png" and not response.body.startswith(b"\x89PNG\r\n\x1a\n"):
                        problems.append("body is not a PNG")
            for name, header in (entry.get("headers") or {}).items():
                value = response.header(name)
                if value is None:
                    if header.get("required"):
                        problems.append(f"required header {name} missing")
                elif "schema" in header and not header_value_ok(header["schema"], value):
                    problems.append(f"header {name}: {value!r} does not match {header['schema']}")
        return self.record(label, problems)

    def expect(self, label, condition, detail=""):
        return self.record(label, [] if condition else [detail or "condition false"])

    def record(self, label, problems):
        if not problems:
            self.passed += 1
            print(f"ok    {label}")
            return True
        print(f"FAIL  {label}")
        for problem in problems:
            print(f"        {problem}")
        self.failed.append(label)
        return False


def sample_files(samples):
    files = {}
    for name in sorted(os.listdir(samples)):
        if name.rsplit(".", 1)[-1] in ("gif", "png", "webp"):
            with open(os.path.join(samples, name), "rb") as f:
                files[name] = f.read()
    return files


def main_server_checks(c, port, samples):
    auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    ids = {}

    # Uploads: 201, then 200 with the same id; Location; ETag; metadata schema.
    for name, data in samples.items():
        first = request(port, "POST", "/images", data, {"Content-Type": "application/octet-stream"})
        c.conforms(f"POST /images {name} → 201", "POST", "/images", first, 201)
        if first.status != 201:
            continue
        meta = first.json()
        digest = hashlib.sha256(data).hexdigest()
        c.expect(f"POST /images {name}: id is the SHA-256", meta.get("id") == digest, f"{meta.get('id')} != {digest}")
        c.expect(f"POST /images {name}: Location", first.header("location") == f"/images/{digest}", first.header("location"))
        again = request(port, "POST", "/images", data)
        c.conforms(f"POST /images {name} again → 200", "POST", "/images", again, 200)
        c.expect(f"POST /images {name} again: same id", again.status == 200 and again.json().get("id") == digest)
        ids[name] = (digest, meta)

    # Named uploads: 201, 200 unchanged, 200 replaced; 409 on a library name; 400 on bad names.
    names = list(samples)
    named = "openapi-named.anim"
    c.conforms("PUT new name → 201", "PUT", "/images/{id}", request(port, "PUT", f"/images/{named}", samples[names[0]]), 201)
    c.conforms("PUT same bytes → 200", "PUT", "/images/{id}", request(port, "PUT", f"/images/{named}", samples[names[0]]), 200)
    if len(names) > 1:
        replaced = request(port, "PUT", f"/images/{named}", samples[names[1]])
        c.conforms("PUT other bytes (replace) → 200", "PUT", "/images/{id}", replaced, 200)
        c.expect("PUT replace: new sha256 in the list",
                 any(i["id"] == named and i["sha256"] == hashlib.sha256(samples[names[1]]).hexdigest()
                     for i in request(port, "GET", "/images?limit=1000").json()["images"]))
    c.conforms("PUT library name → 409", "PUT", "/images/{id}", request(port, "PUT", f"/images/{names[0]}", samples[names[0]]), 409)
    for bad in ["a" * 129, "...", "a" * 64, "bad%20name", "x%2Fy"]:
        c.conforms(f"PUT name {bad[:20]!r} → 400", "PUT", "/images/{id}", request(port, "PUT", f"/images/{bad}", b"GIF89a"), 400)

    # Bodies that are not images.
    c.conforms("POST empty body → 400", "POST", "/images", request(port, "POST", "/images", b""), 400)
    c.conforms("POST text → 415", "POST", "/images", request(port, "POST", "/images", b"hello, not an image"), 415)
    c.conforms("POST truncated GIF → 422", "POST", "/images",
               request(port, "POST", "/images", b"GIF89a\x10\x00\x10\x00\x00\x00\x00;"), 422)
    c.conforms("PUT text → 415", "PUT", "/images/{id}", request(port, "PUT", "/images/not-an-image", b"plain text"), 415)

    # Metadata, delays, frames; ETags and 304s; HEAD.
    for name, (digest, meta) in ids.items():
        for label, target in ((f"content id of {name}", digest), (f"library {name}", name)):
            got = request(port, "GET", f"/images/{target}")
            c.conforms(f"GET /images/{{id}} ({label}) → 200", "GET", "/images/{id}", got, 200)
            etag = got.header("etag")
            c.conforms(f"GET /images/{{id}} ({label}) If-None-Match → 304", "GET", "/images/{id}",
                       request(port, "GET", f"/images/{target}", headers={"If-None-Match": f'W/"x", {etag}'}), 304)
            c.conforms(f"HEAD /images/{{id}} ({label}) → 200", "HEAD", "/images/{id}",
                       request(port, "HEAD", f"/images/{target}"), 200)
            delays = request(port, "GET", f"/images/{target}/delays")
            c.conforms(f"GET delays ({label}) → 200", "GET", "/images/{id}/delays", delays, 200)
            if delays.status == 200:
                d = delays.json()
                c.expect(f"GET delays ({label}) agrees with metadata",
                         d["delaysMs"] == [f["delayMs"] for f in meta["frames"]]
                         and d["timestampsMs"] == [f["timestampMs"] for f in meta["frames"]]
                         and d["durationMs"] == meta["durationMs"] and d["playCount"] == meta["playCount"])
                c.conforms(f"GET delays ({label}) If-None-Match → 304", "GET", "/images/{id}/delays",
                           request(port, "GET", f"/images/{target}/delays", headers={"If-None-Match": delays.header("etag")}), 304)
        count = meta["frameCount"]
        last = count - 1
        frame = request(port, "GET", f"/frames/{digest}/{last}")
        c.conforms(f"GET /frames/{{id}}/{last} ({name}) → 200", "GET", "/frames/{id}/{index}", frame, 200)
        c.expect(f"GET frame ({name}): immutable caching for a content id",
                 frame.header("cache-control") == "public, max-age=31536000, immutable", frame.header("cache-control"))
        c.expect(f"GET frame ({name}): X-Frame-Index/Count/Delay-Ms",
                 frame.header("x-frame-index") == str(last) and frame.header("x-frame-count") == str(count)
                 and frame.header("x-frame-delay-ms") == str(meta["frames"][last]["delayMs"]))
        c.conforms(f"GET frame ({name}) If-None-Match → 304", "GET", "/frames/{id}/{index}",
                   request(port, "GET", f"/frames/{digest}/{last}", headers={"If-None-Match": frame.header("etag")}), 304)
        c.conforms(f"HEAD frame ({name}) → 200", "HEAD", "/frames/{id}/{index}", request(port, "HEAD", f"/frames/{digest}/0"), 200)
        library_frame = request(port, "GET", f"/frames/{name}/0")
        c.conforms(f"GET library frame ({name}) → 200", "GET", "/frames/{id}/{index}", library_frame, 200)
        c.expect(f"GET library frame ({name}): no-cache", library_frame.header("cache-control") == "no-cache")
        c.conforms(f"GET frame {count} ({name}) → 404", "GET", "/frames/{id}/{index}",
                   request(port, "GET", f"/frames/{digest}/{count}"), 404)
        for bad in ("-1", "1.5", "x", "1e3", "9" * 19):
            c.conforms(f"GET frame index {bad!r} → 400", "GET", "/frames/{id}/{index}",
                       request(port, "GET", f"/frames/{digest}/{bad}"), 400)
        # t: the frame on screen at t, with Content-Location.
        starts = [f["timestampMs"] for f in meta["frames"]]
        probe = starts[last] if count > 1 else 0
        at = request(port, "GET", f"/frames/{digest}?t={probe}")
        c.conforms(f"GET /frames/{{id}}?t={probe} ({name}) → 200", "GET", "/frames/{id}", at, 200)
        c.expect(f"GET ?t ({name}): Content-Location names the frame",
                 at.header("content-location") == f"/frames/{digest}/{last}", at.header("content-location"))
        c.conforms(f"GET ?t ({name}) If-None-Match → 304", "GET", "/frames/{id}",
                   request(port, "GET", f"/frames/{digest}?t={probe}", headers={"If-None-Match": at.header("etag") or "-"}), 304)
        c.conforms(f"HEAD ?t ({name}) → 200", "HEAD", "/frames/{id}", request(port, "HEAD", f"/frames/{digest}?t=0"), 200)
        for query in ("", "?t=", "?t=-5", "?t=abc", "?x=1"):
            c.conforms(f"GET /frames/{{id}}{query} → 400", "GET", "/frames/{id}", request(port, "GET", f"/frames/{digest}{query}"), 400)

    unknown = "0" * 64
    for method, template, target in (("GET", "/images/{id}", f"/images/{unknown}"),
                                     ("GET", "/images/{id}/delays", f"/images/{unknown}/delays"),
                                     ("GET", "/frames/{id}/{index}", f"/frames/{unknown}/0"),
                                     ("GET", "/frames/{id}", f"/frames/{unknown}?t=0"),
                                     ("GET", "/images/{id}", "/images/..%2F..%2Fetc%2Fpasswd"),
                                     ("HEAD", "/images/{id}", f"/images/{unknown}")):
        c.conforms(f"{method} {target[:40]} → 404", method, template, request(port, method, target), 404)

    # Paging: limit=1 walks every image exactly once, in order.
    everything = request(port, "GET", "/images?limit=1000")
    c.conforms("GET /images → 200", "GET", "/images", everything, 200)
    all_ids = [i["id"] for i in everything.json()["images"]]
    walked, after, pages = [], None, 0
    while pages < 100:
        page = request(port, "GET", "/images?limit=1" + (f"&after={after}" if after else ""))
        c.conforms(f"GET /images?limit=1 page {pages}", "GET", "/images", page, 200)
        document = page.json()
        walked += [i["id"] for i in document["images"]]
        pages += 1
        after = document["next"]
        if after is None:
            break
    c.expect("GET /images paging sees every id once, sorted", walked == all_ids == sorted(all_ids), f"{walked} vs {all_ids}")
    for bad in ("0", "-1", "x", "99999999999999999999"):
        c.conforms(f"GET /images?limit={bad} → 400", "GET", "/images", request(port, "GET", f"/images?limit={bad}"), 400)

    # Operations.
    for path, op in (("/healthz", "/healthz"), ("/readyz", "/readyz"), ("/metrics", "/metrics"), ("/stats", "/stats")):
        c.conforms(f"GET {path} → 200", "GET", op, request(port, "GET", path), 200)
        c.conforms(f"HEAD {path} → 200", "HEAD", op, request(port, "HEAD", path), 200)
    c.conforms("POST memory-pressure without a token → 401", "POST", "/admin/memory-pressure",
               request(port, "POST", "/admin/memory-pressure?level=warning"), 401)
    c.conforms("POST memory-pressure with a wrong token → 401", "POST", "/admin/memory-pressure",
               request(port, "POST", "/admin/memory-pressure?level=warning", headers={"Authorization": "Bearer nope"}), 401)
    for level in ("", "normal", "WARNING"):
        c.conforms(f"POST memory-pressure level={level!r} → 400", "POST", "/admin/memory-pressure",
                   request(port, "POST", f"/admin/memory-pressure?level={level}", headers=auth), 400)
    for level in ("warning", "critical"):
        raised = request(port, "POST", f"/admin/memory-pressure?level={level}", headers=auth)
        c.conforms(f"POST memory-pressure level={level} → 200", "POST", "/admin/memory-pressure", raised, 200)
        c.expect(f"memory-pressure {level}: the purge is in the history",
                 raised.status == 200 and any(p["level"] == level and p["source"] == "admin" for p in raised.json()["purges"]))
    c.conforms("POST memory-pressure body over 4096 bytes → 413", "POST", "/admin/memory-pressure",
               request(port, "POST", "/admin/memory-pressure?level=warning", b"x" * 5000, auth), 413)

    # Delete: 401 without/with a wrong token, 204, then 404; 409 for a library image.
    if ids:
        name, (digest, _) = next(iter(ids.items()))
        c.conforms("DELETE without a token → 401", "DELETE", "/images/{id}", request(port, "DELETE", f"/images/{digest}"), 401)
        c.conforms("DELETE with a wrong token → 401", "DELETE", "/images/{id}",
                   request(port, "DELETE", f"/images/{digest}", headers={"Authorization": "Bearer wrong"}), 401)
        c.conforms("DELETE → 204", "DELETE", "/images/{id}", request(port, "DELETE", f"/images/{digest}", headers=auth), 204)
        c.conforms("DELETE again → 404", "DELETE", "/images/{id}", request(port, "DELETE", f"/images/{digest}", headers=auth), 404)
        c.conforms("GET deleted image → 404", "GET", "/images/{id}", request(port, "GET", f"/images/{digest}"), 404)
        c.conforms("GET frame of deleted image → 404", "GET", "/frames/{id}/{index}", request(port, "GET", f"/frames/{digest}/0"), 404)
        c.conforms("DELETE library image → 409", "DELETE", "/images/{id}", request(port, "DELETE", f"/images/{name}", headers=auth), 409)
    c.conforms("DELETE named image → 204", "DELETE", "/images/{id}", request(port, "DELETE", f"/images/{named}", headers=auth), 204)

    # X-Request-ID: echoed when acceptable, replaced otherwise.
    echoed = request(port, "GET", "/healthz", headers={"X-Request-ID": "openapi-check-1"})
    c.expect("X-Request-ID echoed", echoed.header("x-request-id") == "openapi-check-1", echoed.header("x-request-id"))
    replaced = request(port, "GET", "/healthz", headers={"X-Request-ID": "x" * 129})
    c.expect("X-Request-ID over 128 characters replaced", re.fullmatch(r"[0-9a-f]{16}", replaced.header("x-request-id") or ""),
             replaced.header("x-request-id"))

    # 405 with Allow (the spec's description: methods a path does not have).
    not_allowed = request(port, "POST", "/images/anything")
    c.expect("POST /images/{id} → 405 with Allow, problem+json",
             not_allowed.status == 405 and set((not_allowed.header("allow") or "").replace(" ", "").split(","))
             == {"PUT", "GET", "HEAD", "DELETE", "OPTIONS"} and not_allowed.header("content-type") == "application/problem+json",
             f"{not_allowed.status} {not_allowed.headers}")

    # Answers of the HTTP layer, checked against the spec's responses for GET /healthz.
    c.conforms("request line over 8 KiB → 414", "GET", "/healthz", request(port, "GET", "/healthz?" + "a" * 9000), 414)
    many = {f"X-Filler-{i}": "y" for i in range(120)}
    c.conforms("120 header fields → 431", "GET", "/healthz", request(port, "GET", "/healthz", headers=many), 431)
    c.conforms("HTTP/2.0 → 505", "GET", "/healthz",
               raw_exchange(port, b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n"), 505)
    c.conforms("Transfer-Encoding: gzip → 501", "GET", "/healthz",
               raw_exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"), 501)
    c.conforms("Expect: something → 417", "GET", "/healthz",
               raw_exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: something\r\n\r\n"), 417)
    c.conforms("HTTP/1.1 without Host → 400", "GET", "/healthz", raw_exchange(port, b"GET /healthz HTTP/1.1\r\n\r\n"), 400)
    c.conforms("upload declared over server.maxUploadBytes → 413", "POST", "/images",
               raw_exchange(port, b"POST /images HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\n"), 413)


def token_server_checks(c, port, samples):
    data = next(iter(samples.values()))
    c.conforms("upload token: POST without a token → 401", "POST", "/images", request(port, "POST", "/images", data), 401)
    c.conforms("upload token: PUT with a wrong token → 401", "PUT", "/images/{id}",
               request(port, "PUT", "/images/tokened", data, {"Authorization": "Bearer nope"}), 401)
    c.conforms("upload token: POST with it → 201", "POST", "/images",
               request(port, "POST", "/images", data, {"Authorization": f"Bearer {UPLOAD_TOKEN}"}), 201)
    c.conforms("no admin token: DELETE → 403", "DELETE", "/images/{id}",
               request(port, "DELETE", "/images/anything", headers={"Authorization": "Bearer x"}), 403)
    c.conforms("no admin token: memory-pressure → 403", "POST", "/admin/memory-pressure",
               request(port, "POST", "/admin/memory-pressure?level=warning"), 403)
    # Past 64 KiB of refused body the server answers at once and closes; the 401 still carries
    # WWW-Authenticate (RFC 9110 §11.6.1) and the Flipbook headers.
    c.conforms("upload token: POST of 200 KB without a token → 401", "POST", "/images",
               request(port, "POST", "/images", data + bytes(200_000)), 401)
    c.conforms("upload token: PUT of 200 KB to a bad name → 400", "PUT", "/images/{id}",
               request(port, "PUT", "/images/bad%20name", data + bytes(200_000), {"Authorization": f"Bearer {UPLOAD_TOKEN}"}), 400)


def limits_server_checks(c, port, samples):
    # Every sample has more than one frame; with limits.maxFrames=1 each is refused, saying which limit.
    for name, data in samples.items():
        refused = request(port, "POST", "/images", data)
        c.conforms(f"limits.maxFrames=1: POST {name} → 422", "POST", "/images", refused, 422)
        c.expect(f"limits.maxFrames=1: the 422 names the limit ({name})",
                 refused.status == 422 and "maxFrames" in refused.json().get("detail", ""), refused.body[:200])


URL_KEY, URL_SALT = "736563726574", "68656c6c6f"


def sign(target):
    """The documented signature (README, "Signed URLs"): sig over path ? query."""
    path, _, query = target.partition("?")
    mac = hmac.new(bytes.fromhex(URL_KEY), bytes.fromhex(URL_SALT) + f"{path}?{query}".encode(), hashlib.sha256)
    return target + ("&" if "?" in target else "?") + "sig=" + base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode()


def source_server_checks(c, port, samples):
    """Registration by URL and signed URLs: 403, 422, 502, 504 and 409 as documented. Origins
    are on loopback only (127.0.0.1 allowed; a closed port; a listener that never answers)."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    held = []
    threading.Thread(target=lambda: [held.append(silent.accept()) for _ in range(4)], daemon=True).start()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, not listening: connections are refused
    json_type = {"Content-Type": "application/json"}

    def by_url(url, signed=True):
        target = "/images?url=" + urllib.parse.quote(url, safe="")
        return request(port, "POST", sign(target) if signed else target)

    c.conforms("by URL, unsigned → 403", "POST", "/images",
               request(port, "POST", "/images", b'{"url":"http://127.0.0.1/a.gif"}', json_type), 403)
    c.conforms("by URL, signed, refused address → 422", "POST", "/images", by_url("http://10.0.0.1/a.gif"), 422)
    c.conforms("by URL, signed, credentials → 422", "POST", "/images", by_url("http://u@example.com/a.gif"), 422)
    c.conforms("by URL, signed, closed port → 502", "POST", "/images",
               by_url(f"http://127.0.0.1:{closed.getsockname()[1]}/a.gif"), 502)
    c.conforms("by URL, signed, silent origin → 504", "POST", "/images",
               by_url(f"http://127.0.0.1:{silent.getsockname()[1]}/a.gif"), 504)
    c.conforms("by URL, signed, malformed body → 400", "POST", "/images",
               request(port, "POST", sign("/images?url=http%3A%2F%2Fa.example%2F"), b"{", json_type), 400)
    c.conforms("by URL, signed, URL only in the body → 403", "POST", "/images",
               request(port, "POST", sign("/images"), b'{"url":"http://a.example/"}', json_type), 403)
    name = next(iter(samples))
    c.conforms("refresh unsigned → 403", "POST", "/images/{id}/refresh", request(port, "POST", f"/images/{name}/refresh"), 403)
    c.conforms("refresh of a library image → 409", "POST", "/images/{id}/refresh",
               request(port, "POST", sign(f"/images/{name}/refresh")), 409)
    c.conforms("refresh of an unknown image → 404", "POST", "/images/{id}/refresh",
               request(port, "POST", sign("/images/no-such-image/refresh")), 404)
    c.conforms("rendition parameter, unsigned → 403", "GET", "/frames/{id}/{index}",
               request(port, "GET", f"/frames/{name}/0?width=10"), 403)
    c.conforms("frame without rendition parameters → 200", "GET", "/frames/{id}/{index}",
               request(port, "GET", f"/frames/{name}/0"), 200)
    closed.close()
    silent.close()


def start_server(binary, library, settings):
    """A server of its own (fresh data directory, free port) run in this directory (its
    Config/flipbook.json and web/), with text logs and `settings`, serving `library` as its
    library directory."""
    arguments = ["--log-format", "text", "--instance-name", "openapi-check", "--library-dir", library]
    for setting in settings:
        arguments += ["--set", setting]
    return FlipbookServer(binary, arguments, prefix="flipbook-openapi-", access_log=True, cwd=os.getcwd())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spec", default="openapi.yaml")
    parser.add_argument("--flipbook", required=True, help="the flipbook binary")
    parser.add_argument("--samples", default="Samples", help="images to upload (also the library directory)")
    args = parser.parse_args()

    spec = Spec(args.spec)
    samples_dir = os.path.abspath(args.samples)
    samples = sample_files(samples_dir)
    if not samples:
        sys.exit(f"no GIF/PNG/WebP files in {samples_dir}")
    c = Checker(spec)
    binary = os.path.abspath(args.flipbook)
    for checks, settings in ((main_server_checks, [f"auth.adminToken={ADMIN_TOKEN}"]),
                             (token_server_checks, [f"auth.uploadToken={UPLOAD_TOKEN}", "auth.adminToken="]),
                             (limits_server_checks, ["limits.maxFrames=1"]),
                             (source_server_checks, [f"security.urlKeys={URL_KEY}:{URL_SALT}",
                                                     "sources.allowedNetworks=127.0.0.1/32",
                                                     "sources.timeoutSeconds=1"])):
        server = start_server(binary, samples_dir, settings)
        try:
            checks(c, server.port, samples)
        finally:
            server.stop()

    print(f"openapi conformance: {c.passed} passed, {len(c.failed)} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
