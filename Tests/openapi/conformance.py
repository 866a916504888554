#!/usr/bin/env python3
"""Checks a running Flipbook server against openapi.yaml on the cases a generator cannot reach.

Schemathesis (run by check.sh) sends generated requests; it cannot make a valid image, a token
mismatch on a server with an upload token, or a malformed request line. This script sends those
requests itself, over plain sockets, and checks every answer against the spec: the status is
documented for the operation, the Content-Type is one the spec lists, a JSON body validates
against the schema, and every required header is present and matches its schema. It also checks
what the spec says in words (201 then 200, 304 on the ETag, paging, Location, Content-Location;
for renditions: the size rule, the 400s naming their parameter, negotiation and `Vary`, an ETag
per rendition, presets).

  conformance.py --spec openapi.yaml --flipbook PATH [--samples DIR]

It starts its own servers (a fresh data directory each, on free ports) and stops them.
"""

import argparse
import base64
import hashlib
import hmac
import json
import math
import os
import re
import socket
import sys
from fractions import Fraction
import threading
import urllib.parse

import jsonschema
import yaml

# The one way the tests start and stop a server (shared with the browser tests).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "browser"))
from flipbook_server import FlipbookServer  # noqa: E402

ADMIN_TOKEN = "admin-secret"
UPLOAD_TOKEN = "upload-secret"
# Two presets, for the servers that check `r` (a list setting: comma-separated).
PRESETS = "renditions.presets=thumb:width=48&format=webp&quality=75,small:width=24"


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


class NoAnswer(Exception):
    """A request that got no answer in time: ends its server's group of checks as one failure."""


def request(port, method, target, body=None, headers=None):
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    payload = b""
    if body is not None:
        payload = body
        lines.append(f"Content-Length: {len(payload)}")
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload
    try:
        return raw_exchange(port, data, head=(method == "HEAD"))
    except TimeoutError as error:
        raise NoAnswer(f"{method} {target[:120]}: no answer within 10 s") from error


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
                    elif media == "image/webp" and not (response.body[:4] == b"RIFF" and response.body[8:12] == b"WEBP"):
                        problems.append("body is not a WebP")
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


# ----------------------------------------------------------------------------- renditions

def image_size(body):
    """(width, height) of a PNG or WebP body (from IHDR, VP8X, VP8L or VP8 ), or None."""
    if body.startswith(b"\x89PNG\r\n\x1a\n") and len(body) >= 24:
        return int.from_bytes(body[16:20], "big"), int.from_bytes(body[20:24], "big")
    if body[:4] == b"RIFF" and body[8:12] == b"WEBP" and len(body) >= 30:
        chunk = body[12:16]
        if chunk == b"VP8X":
            return int.from_bytes(body[24:27], "little") + 1, int.from_bytes(body[27:30], "little") + 1
        if chunk == b"VP8L" and body[20] == 0x2F:
            bits = int.from_bytes(body[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        if chunk == b"VP8 ":
            return int.from_bytes(body[26:28], "little") & 0x3FFF, int.from_bytes(body[28:30], "little") & 0x3FFF
    return None


def round_half_up(x):
    """`round` of the size rule: to nearest, halves away from zero (x ≥ 0, a Fraction)."""
    return math.floor(x + Fraction(1, 2))


def size_rule(w, h, width=None, height=None, dpr="1", fit="contain", enlarge=False):
    """The served size of a w×h canvas's rendition, by the size rule of openapi.yaml (exactly,
    in fractions); (scaled width, scaled height, crop or None), crop = (left, top, width, height)."""
    ratio = Fraction(dpr)
    tw = round_half_up(width * ratio) if width is not None else None
    th = round_half_up(height * ratio) if height is not None else None
    one = Fraction(1)
    if fit == "contain":
        scales = [Fraction(t, side) for t, side in ((tw, w), (th, h)) if t is not None]
        s = min(scales) if scales else one
        if not enlarge:
            s = min(s, one)
        return max(1, round_half_up(w * s)), max(1, round_half_up(h * s)), None
    if fit == "cover":
        s = max(Fraction(tw, w), Fraction(th, h))
        if not enlarge:
            s = min(s, one)
        sw, sh = max(1, round_half_up(w * s)), max(1, round_half_up(h * s))
        cw, ch = min(tw, sw), min(th, sh)
        crop = None if (cw, ch) == (sw, sh) else ((sw - cw) // 2, (sh - ch) // 2, cw, ch)
        return sw, sh, crop
    sx, sy = Fraction(tw, w), Fraction(th, h)
    if not enlarge:
        sx, sy = min(sx, one), min(sy, one)
    return max(1, round_half_up(w * sx)), max(1, round_half_up(h * sy)), None


def rendition_key(scaled, fmt, quality=None):
    """The ETag's rendition key (a regular expression): `48x48-png-z1`, `48x48-webp-ll`,
    `48x48-webp-q80`, `40x40+0+10-40x20-png-z1`."""
    sw, sh, crop = scaled
    key = f"{sw}x{sh}" + (re.escape(f"+{crop[0]}+{crop[1]}-{crop[2]}x{crop[3]}") if crop else "")
    if fmt == "png":
        return key + "-png-z[0-9]+"
    return key + ("-webp-ll" if quality is None else f"-webp-q{quality}")


def etag_names(response, key):
    """The response's ETag names the rendition `key` (a regular expression)."""
    return re.fullmatch(rf'"f-[0-9a-f]{{32}}-[0-9]+-{key}-r[0-9]+"', response.header("etag") or "") is not None


def vary_lists_accept(response):
    return any("accept" == part.strip().lower()
               for value in response.headers.get("vary", []) for part in value.split(","))


def names_in_detail(response, *words):
    """The 400 problem's detail names every one of `words`."""
    try:
        detail = response.json().get("detail", "")
    except (ValueError, AttributeError):
        return False
    return all(word in detail for word in words)


# Malformed or out-of-range rendition parameters, each → 400 whose detail names the parameter.
BAD_RENDITION_QUERIES = [
    ("width=0", "width"), ("width=-1", "width"), ("width=%2B5", "width"), ("width=abc", "width"),
    ("width=1.5", "width"), ("width=", "width"), ("width=1e2", "width"),
    ("height=0", "height"), ("height=x", "height"),
    ("dpr=0.5", "dpr"), ("dpr=5", "dpr"), ("dpr=4.5", "dpr"), ("dpr=-1", "dpr"), ("dpr=abc", "dpr"),
    ("dpr=1e0", "dpr"), ("dpr=", "dpr"),
    ("fit=crop", "fit"), ("fit=", "fit"),
    ("enlarge=yes", "enlarge"), ("enlarge=1", "enlarge"),
    ("format=gif", "format"), ("format=jpeg", "format"), ("format=", "format"),
    ("quality=0", "quality"), ("quality=101", "quality"), ("quality=abc", "quality"),
    ("format=webp&quality=0", "quality"),
    ("width=10&width=20", "width"), ("format=webp&format=png", "format"),
    ("quality=80", "quality"), ("format=png&quality=80", "quality"),
    ("fit=cover&width=10", "fit"), ("fit=cover&height=10", "fit"), ("fit=fill&width=10", "fit"),
    ("r=nope", "r"), ("r=a&r=b", "r"),
]


def rendition_checks(c, port, ids):
    """Renditions on the main server (samples uploaded, default settings: png, no presets)."""
    for name, (digest, meta) in ids.items():
        w, h = meta["width"], meta["height"]
        base = f"/frames/{digest}/0"
        full = request(port, "GET", base)
        # The size rule on this canvas: (query, parameters of size_rule, format, quality).
        cases = [
            ("width=48", dict(width=48), "png", None),
            ("width=48&format=webp", dict(width=48), "webp", None),
            ("width=48&format=webp&quality=80", dict(width=48), "webp", 80),
            ("width=33&dpr=1.5", dict(width=33, dpr="1.5"), "png", None),
            ("height=33&dpr=1.5&format=webp", dict(height=33, dpr="1.5"), "webp", None),
            ("width=40&height=20", dict(width=40, height=20), "png", None),
            ("width=40&height=20&fit=cover", dict(width=40, height=20, fit="cover"), "png", None),
            ("width=40&height=20&fit=cover&format=webp&quality=60", dict(width=40, height=20, fit="cover"), "webp", 60),
            ("width=40&height=20&fit=fill", dict(width=40, height=20, fit="fill"), "png", None),
            ("width=20&height=40&fit=fill&format=webp", dict(width=20, height=40, fit="fill"), "webp", None),
            (f"width={w + 100}&enlarge=true", dict(width=w + 100, enlarge=True), "png", None),
            (f"width={w + 24}&height={h // 2}&fit=cover&enlarge=true&format=webp",
             dict(width=w + 24, height=h // 2, fit="cover", enlarge=True), "webp", None),
            ("height=1", dict(height=1), "png", None),
            ("width=1&height=1&fit=fill&format=webp", dict(width=1, height=1, fit="fill"), "webp", None),
            ("width=2048&dpr=2", dict(width=2048, dpr="2"), "png", None),
        ]
        avif = request(port, "GET", f"{base}?width=48&format=avif", headers={"Accept": "image/avif"})
        if c.conforms(f"GET frame ?width=48&format=avif ({name}) → 200 image/avif", "GET", "/frames/{id}/{index}", avif, 200):
            c.expect(f"frame format=avif ({name}): a still AVIF, key avif-q44, no Vary",
                     avif.header("content-type") == "image/avif" and avif.body[4:12] == b"ftypavif"
                     and "-avif-q44-" in (avif.header("etag") or "") and not vary_lists_accept(avif),
                     (avif.header("content-type"), avif.header("etag"), avif.body[:12]))
        auto_avif = request(port, "GET", f"{base}?width=48&format=auto", headers={"Accept": "image/avif"})
        c.expect(f"frame format=auto, Accept image/avif ({name}): PNG, never AVIF",
                 auto_avif.status == 200 and auto_avif.header("content-type") == "image/png", auto_avif.header("content-type"))
        etags = []  # of the renditions that are not the full-size frame
        for query, parameters, fmt, quality in cases:
            got = request(port, "GET", f"{base}?{query}")
            label = f"GET frame ?{query} ({name})"
            if not c.conforms(f"{label} → 200 image/{fmt}", "GET", "/frames/{id}/{index}", got, 200):
                continue
            scaled = size_rule(w, h, **parameters)
            crop = scaled[2]
            want = (crop[2], crop[3]) if crop else scaled[:2]
            c.expect(f"{label}: Content-Type image/{fmt}", got.header("content-type") == f"image/{fmt}",
                     got.header("content-type"))
            c.expect(f"{label}: {want[0]}×{want[1]} by the size rule", image_size(got.body) == want,
                     f"{image_size(got.body)} != {want}")
            if scaled[:2] == (w, h) and crop is None and fmt == "png":
                c.expect(f"{label}: not scaled, so the full-size frame, its bytes and ETag",
                         got.body == full.body and got.header("etag") == full.header("etag"), got.header("etag"))
            else:
                c.expect(f"{label}: the ETag names the rendition", etag_names(got, rendition_key(scaled, fmt, quality)),
                         got.header("etag"))
                etags.append(got.header("etag"))
            c.expect(f"{label}: no Vary: Accept (the format was not negotiated)", not vary_lists_accept(got),
                     got.headers.get("vary"))
            c.expect(f"{label}: the frame headers and Cache-Control of the full-size frame",
                     got.header("cache-control") == full.header("cache-control")
                     and got.header("x-frame-index") == "0" and got.header("x-frame-count") == str(meta["frameCount"]),
                     f"{got.header('cache-control')} {got.header('x-frame-index')} {got.header('x-frame-count')}")
        c.expect(f"renditions ({name}): one ETag per rendition, none the full-size frame's",
                 len(set(etags)) == len(etags) and full.header("etag") not in etags, etags)
        c.conforms(f"GET frame ?width=200 ({name}) → 200 (not enlarged: full size)", "GET", "/frames/{id}/{index}",
                   request(port, "GET", f"{base}?width=200"), 200)
        ignored = request(port, "GET", f"{base}?cb=123&x=y")
        c.conforms(f"GET frame ?cb=123&x=y ({name}) → 200 (unknown parameters ignored)", "GET", "/frames/{id}/{index}",
                   ignored, 200)
        c.expect(f"GET frame ?cb=123&x=y ({name}): the full-size frame",
                 ignored.body == full.body and ignored.header("etag") == full.header("etag"))

    # The rest on one image: the first sample, by content id and by name.
    name, (digest, meta) = next(iter(ids.items()))
    base = f"/frames/{digest}/0"
    webp = request(port, "GET", f"{base}?width=48&format=webp")
    c.conforms("GET rendition If-None-Match → 304", "GET", "/frames/{id}/{index}",
               request(port, "GET", f"{base}?width=48&format=webp", headers={"If-None-Match": webp.header("etag") or "-"}), 304)
    c.expect("GET rendition: the full-size ETag does not match it",
             request(port, "GET", f"{base}?width=48&format=webp",
                     headers={"If-None-Match": request(port, "GET", base).header("etag")}).status == 200)
    head = request(port, "HEAD", f"{base}?width=48&format=webp&quality=70")
    c.conforms("HEAD rendition → 200", "HEAD", "/frames/{id}/{index}", head, 200)
    c.expect("HEAD rendition: Content-Type image/webp", head.header("content-type") == "image/webp", head.header("content-type"))
    library = request(port, "GET", f"/frames/{name}/0?width=48&format=webp")
    c.conforms("GET library rendition → 200", "GET", "/frames/{id}/{index}", library, 200)
    c.expect("GET library rendition: no-cache", library.header("cache-control") == "no-cache", library.header("cache-control"))
    c.expect("GET rendition of a content id: immutable",
             webp.header("cache-control") == "public, max-age=31536000, immutable", webp.header("cache-control"))

    # Negotiation: format=auto → WebP when Accept lists image/webp with q > 0, with Vary: Accept.
    for accept, fmt in ((None, "png"), ("*/*", "png"), ("image/*", "png"), ("image/webp", "webp"),
                        ("image/avif,image/webp,*/*;q=0.8", "webp"), ("image/webp;q=0.5", "webp"),
                        ("image/webp;q=0, */*", "png"), ("IMAGE/WEBP", "webp"), ("image/png", "png")):
        got = request(port, "GET", f"{base}?width=48&format=auto", headers={"Accept": accept} if accept else None)
        label = f"format=auto, Accept {accept!r}"
        if c.conforms(f"GET frame ?width=48&format=auto ({label}) → 200 image/{fmt}", "GET", "/frames/{id}/{index}", got, 200):
            c.expect(f"{label}: image/{fmt}", got.header("content-type") == f"image/{fmt}", got.header("content-type"))
            c.expect(f"{label}: Vary: Accept", vary_lists_accept(got), got.headers.get("vary"))
            c.expect(f"{label}: the ETag names the format", etag_names(got, rendition_key((48, 48, None), fmt)),
                     got.header("etag"))
    lossy = request(port, "GET", f"{base}?width=48&format=auto&quality=50", headers={"Accept": "image/webp"})
    c.conforms("format=auto&quality=50, Accept image/webp → 200", "GET", "/frames/{id}/{index}", lossy, 200)
    c.expect("format=auto&quality=50, Accept image/webp: lossy at 50", etag_names(lossy, "48x48-webp-q50"), lossy.header("etag"))
    png = request(port, "GET", f"{base}?width=48&format=auto&quality=50")
    c.conforms("format=auto&quality=50 negotiated to PNG → 200 (quality ignored)", "GET", "/frames/{id}/{index}", png, 200)
    c.expect("format=auto&quality=50 negotiated to PNG: image/png", png.header("content-type") == "image/png",
             png.header("content-type"))
    full_auto = request(port, "GET", f"{base}?format=auto", headers={"Accept": "image/webp"})
    c.conforms("GET frame ?format=auto (full size), Accept image/webp → 200", "GET", "/frames/{id}/{index}", full_auto, 200)
    c.expect("?format=auto full size: a WebP of the canvas's size, Vary: Accept",
             full_auto.header("content-type") == "image/webp" and image_size(full_auto.body) == (meta["width"], meta["height"])
             and vary_lists_accept(full_auto), f"{full_auto.header('content-type')} {image_size(full_auto.body)}")
    for query in ("", "?format=png", "?format=webp", "?width=48&format=png"):
        got = request(port, "GET", f"{base}{query}", headers={"Accept": "image/webp"})
        c.expect(f"GET frame {query or '(no query)'}, Accept image/webp: no Vary: Accept",
                 got.status == 200 and not vary_lists_accept(got), f"{got.status} {got.headers.get('vary')}")
    negotiated = request(port, "GET", f"{base}?width=48&format=auto", headers={"Accept": "image/webp"})
    c.conforms("negotiated rendition If-None-Match → 304", "GET", "/frames/{id}/{index}",
               request(port, "GET", f"{base}?width=48&format=auto", headers={"Accept": "image/webp",
                                                                              "If-None-Match": negotiated.header("etag") or "-"}), 304)

    # The cache of the rendition a player plays, named by the key its frames' ETag carries: the
    # same answer as its own query and Accept get, whatever the Accept of the one asking.
    path = "/images/{id}/cache"
    played = request(port, "GET", f"/images/{digest}/cache?width=48&format=auto&quality=50",
                     headers={"Accept": "image/webp"})
    if c.conforms("GET cache ?width=48&format=auto&quality=50, Accept image/webp → 200", "GET", path, played, 200):
        c.expect("GET cache as the player asks: the rendition 48x48-webp-q50",
                 json.loads(played.body)["rendition"] == "48x48-webp-q50", played.body[:200])
        c.expect("GET cache as the player asks: frame 0, just served in it, is held",
                 0 in json.loads(played.body)["cachedFrames"], played.body[:200])
    named = request(port, "GET", f"/images/{digest}/cache?rendition=48x48-webp-q50")
    if c.conforms("GET cache ?rendition=48x48-webp-q50 → 200", "GET", path, named, 200):
        c.expect("GET cache ?rendition=48x48-webp-q50: that rendition's frames, no Vary: Accept",
                 json.loads(named.body)["rendition"] == "48x48-webp-q50" and not vary_lists_accept(named)
                 and json.loads(named.body)["cachedFrames"] == json.loads(played.body)["cachedFrames"], named.body[:200])
    c.expect("GET cache ?width=48&format=auto&quality=50, Accept */*: another rendition (PNG), not the played one",
             json.loads(request(port, "GET", f"/images/{digest}/cache?width=48&format=auto&quality=50",
                                headers={"Accept": "*/*"}).body)["rendition"] == "48x48-png")
    # A cropped rendition named by the key its frame's ETag carries (`+` sent as %2B).
    cover = request(port, "GET", f"{base}?width=40&height=20&fit=cover&format=webp&quality=60")
    key = re.fullmatch(r'"f-[0-9a-f]{32}-[0-9]+-(.+)-r[0-9]+"', cover.header("etag") or "")
    c.expect("GET frame ?width=40&height=20&fit=cover: its ETag names a cropped key", key and "+" in key.group(1),
             cover.header("etag"))
    if key:
        cropped = request(port, "GET", f"/images/{digest}/cache?rendition={urllib.parse.quote(key.group(1), safe='')}")
        if c.conforms(f"GET cache ?rendition={key.group(1)} → 200", "GET", path, cropped, 200):
            c.expect(f"GET cache ?rendition={key.group(1)}: that rendition, frame 0 held",
                     json.loads(cropped.body)["rendition"] == key.group(1) and 0 in json.loads(cropped.body)["cachedFrames"],
                     cropped.body[:200])
    c.conforms("GET cache ?rendition=full → 200", "GET", path, request(port, "GET", f"/images/{digest}/cache?rendition=full"), 200)
    c.conforms("HEAD cache ?rendition=full → 200", "HEAD", path, request(port, "HEAD", f"/images/{digest}/cache?rendition=full"), 200)
    c.conforms("GET cache ?rendition=full of an unknown image → 404", "GET", path,
               request(port, "GET", "/images/no-such-image/cache?rendition=full"), 404)
    for query in ("rendition=48x48-jpeg", "rendition=048x48-png", "rendition=48x48-png&width=48", "rendition=48x48-webp-q0",
                  "rendition=full&rendition=full", "rendition=40x40+0+10-40x20-png", "rendition="):
        got = request(port, "GET", f"/images/{digest}/cache?{query}")
        c.conforms(f"GET cache ?{query} → 400", "GET", path, got, 400)
        c.expect(f"GET cache ?{query}: the detail names rendition", names_in_detail(got, "rendition"), got.body[:200])

    # 400s, each naming its parameter; on both routes, and on HEAD.
    for query, parameter in BAD_RENDITION_QUERIES:
        got = request(port, "GET", f"{base}?{query}")
        c.conforms(f"GET frame ?{query} → 400", "GET", "/frames/{id}/{index}", got, 400)
        c.expect(f"GET frame ?{query}: the detail names {parameter}", names_in_detail(got, parameter), got.body[:200])
    for query, parameter in (("width=abc", "width"), ("fit=fill&height=4", "fit"), ("quality=5", "quality"), ("r=x", "r")):
        got = request(port, "GET", f"/frames/{digest}?t=0&{query}")
        c.conforms(f"GET /frames/{{id}}?t=0&{query} → 400", "GET", "/frames/{id}", got, 400)
        c.expect(f"GET ?t=0&{query}: the detail names {parameter}", names_in_detail(got, parameter), got.body[:200])
    c.conforms("HEAD frame ?dpr=9 → 400", "HEAD", "/frames/{id}/{index}", request(port, "HEAD", f"{base}?dpr=9"), 400)
    c.conforms("HEAD ?t=0&format=gif → 400", "HEAD", "/frames/{id}", request(port, "HEAD", f"/frames/{digest}?t=0&format=gif"), 400)

    # The dimension limit (default 4096), in device pixels.
    for query in ("width=4097", "height=4097", "width=2049&dpr=2", "width=1366&dpr=3", "width=9999&height=10&fit=cover"):
        got = request(port, "GET", f"{base}?{query}")
        c.conforms(f"GET frame ?{query} → 400 (limits.maxOutputDimension)", "GET", "/frames/{id}/{index}", got, 400)
        c.expect(f"GET frame ?{query}: the detail names limits.maxOutputDimension and 4096",
                 names_in_detail(got, "limits.maxOutputDimension", "4096"), got.body[:200])
    c.conforms("GET frame ?width=4096 → 200 (at the limit)", "GET", "/frames/{id}/{index}",
               request(port, "GET", f"{base}?width=4096"), 200)

    # ?t= with a rendition: the same answer, and Content-Location keeps the query without t.
    last = meta["frameCount"] - 1
    probe = meta["frames"][last]["timestampMs"]
    for query, location in ((f"t={probe}&width=48&format=webp&cb=1", f"/frames/{digest}/{last}?width=48&format=webp&cb=1"),
                            (f"width=48&t={probe}", f"/frames/{digest}/{last}?width=48"),
                            (f"format=webp&quality=80&t={probe}&height=24", f"/frames/{digest}/{last}?format=webp&quality=80&height=24")):
        at = request(port, "GET", f"/frames/{digest}?{query}")
        if not c.conforms(f"GET /frames/{{id}}?{query} → 200", "GET", "/frames/{id}", at, 200):
            continue
        c.expect(f"GET ?{query}: Content-Location {location}", at.header("content-location") == location,
                 at.header("content-location"))
        by_index = request(port, "GET", location)
        c.expect(f"GET ?{query}: the bytes and ETag of {location}",
                 by_index.body == at.body and by_index.header("etag") == at.header("etag"), by_index.header("etag"))
        c.conforms(f"GET ?{query} If-None-Match → 304", "GET", "/frames/{id}",
                   request(port, "GET", f"/frames/{digest}?{query}", headers={"If-None-Match": at.header("etag") or "-"}), 304)
    auto_at = request(port, "GET", f"/frames/{digest}?t=0&format=auto", headers={"Accept": "image/webp"})
    c.conforms("GET ?t=0&format=auto, Accept image/webp → 200", "GET", "/frames/{id}", auto_at, 200)
    c.expect("GET ?t=0&format=auto: image/webp with Vary: Accept",
             auto_at.header("content-type") == "image/webp" and vary_lists_accept(auto_at), auto_at.headers.get("vary"))
    head_at = request(port, "HEAD", f"/frames/{digest}?t=0&width=48&format=webp")
    c.conforms("HEAD ?t=0&width=48&format=webp → 200", "HEAD", "/frames/{id}", head_at, 200)

    # Previews: AVIF asked for, AVIF by Accept (Vary), and the refusals.
    avif = request(port, "GET", f"/images/{digest}/preview?width=48&format=avif")
    if c.conforms("GET /images/{id}/preview?width=48&format=avif → 200", "GET", "/images/{id}/preview", avif, 200):
        brand = b"ftypavis" if meta["frameCount"] > 1 else b"ftypavif"  # a sequence, or a still AVIF
        c.expect("preview format=avif: image/avif, an AVIF sequence (a still AVIF for a still image), no Vary",
                 avif.header("content-type") == "image/avif" and avif.body[4:12] == brand
                 and not vary_lists_accept(avif), (avif.header("content-type"), avif.body[:12]))
    chromium = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
    auto = request(port, "GET", f"/images/{digest}/preview?width=48&format=auto", headers={"Accept": chromium})
    if c.conforms("GET preview?format=auto, Chromium's Accept → 200", "GET", "/images/{id}/preview", auto, 200):
        c.expect("preview format=auto, Chromium's Accept: the AVIF, with Vary: Accept",
                 auto.body == avif.body and vary_lists_accept(auto), auto.headers.get("vary"))
    auto_webp = request(port, "GET", f"/images/{digest}/preview?width=48&format=auto", headers={"Accept": "*/*"})
    if c.conforms("GET preview?format=auto, Accept */* → 200", "GET", "/images/{id}/preview", auto_webp, 200):
        c.expect("preview format=auto, Accept */*: WebP, with Vary: Accept",
                 auto_webp.header("content-type") == "image/webp" and vary_lists_accept(auto_webp), auto_webp.headers)
    c.conforms("GET preview?format=avif, Accept image/avif;q=0 → 406", "GET", "/images/{id}/preview",
               request(port, "GET", f"/images/{digest}/preview?format=avif", headers={"Accept": "image/avif;q=0, */*"}), 406)
    mp4 = request(port, "GET", f"/images/{digest}/preview?width=49&format=mp4")
    if c.conforms("GET /images/{id}/preview?width=49&format=mp4 → 200", "GET", "/images/{id}/preview", mp4, 200):
        c.expect("preview format=mp4: video/mp4, ftyp then moov, no Vary",
                 mp4.header("content-type") == "video/mp4" and mp4.body[4:8] == b"ftyp"
                 and b"moov" in mp4.body[:64] and not vary_lists_accept(mp4), (mp4.header("content-type"), mp4.body[:40]))
    c.conforms("GET preview?format=mp4, Accept image/* → 406", "GET", "/images/{id}/preview",
               request(port, "GET", f"/images/{digest}/preview?format=mp4", headers={"Accept": "image/*"}), 406)
    c.conforms("GET preview?format=gif → 400", "GET", "/images/{id}/preview",
               request(port, "GET", f"/images/{digest}/preview?format=gif"), 400)
    plain = request(port, "GET", f"/images/{digest}/preview?width=48", headers={"Accept": chromium})
    if c.conforms("GET preview (no format), Chromium's Accept → 200", "GET", "/images/{id}/preview", plain, 200):
        c.expect("preview without format, Chromium's Accept: the AVIF, with Vary: Accept",
                 plain.body == avif.body and vary_lists_accept(plain), plain.headers.get("vary"))
    dark = request(port, "GET", f"/images/{digest}/preview?width=48&format=mp4&background=000")
    if c.conforms("GET preview?format=mp4&background=000 → 200", "GET", "/images/{id}/preview", dark, 200):
        c.expect("preview background=000: its own ETag (-bg000000)",
                 "-bg000000" in (dark.header("etag") or ""), dark.header("etag"))
    for query in ["format=mp4&background=black", "format=webp&background=000"]:
        refused = request(port, "GET", f"/images/{digest}/preview?{query}")
        if c.conforms(f"GET preview?{query} → 400", "GET", "/images/{id}/preview", refused, 400):
            c.expect(f"preview?{query}: the 400 names background", b"background" in refused.body, refused.body[:200])

    # Byte ranges on the kept preview: one range → 206, past the end → 416, If-Range another tag → 200.
    whole = avif.body
    part = request(port, "GET", f"/images/{digest}/preview?width=48&format=avif", headers={"Range": "bytes=4-11"})
    if c.conforms("GET preview, Range bytes=4-11 → 206", "GET", "/images/{id}/preview", part, 206):
        c.expect("preview Range bytes=4-11: those 8 bytes, Content-Range bytes 4-11/LENGTH",
                 part.body == whole[4:12] and part.header("content-range") == f"bytes 4-11/{len(whole)}",
                 (part.body, part.header("content-range")))
    past = request(port, "GET", f"/images/{digest}/preview?width=48&format=avif", headers={"Range": f"bytes={len(whole)}-"})
    if c.conforms("GET preview, Range past the end → 416", "GET", "/images/{id}/preview", past, 416):
        c.expect("preview Range past the end: Content-Range bytes */LENGTH",
                 past.header("content-range") == f"bytes */{len(whole)}", past.header("content-range"))
    changed = request(port, "GET", f"/images/{digest}/preview?width=48&format=avif",
                      headers={"Range": "bytes=4-11", "If-Range": '"other"'})
    if c.conforms("GET preview, Range with another If-Range → 200", "GET", "/images/{id}/preview", changed, 200):
        c.expect("preview If-Range another tag: the whole file", changed.body == whole, len(changed.body))

    # /stats: the renditions and the rows' `rendition` (a rendition was just played).
    stats = request(port, "GET", "/stats")
    if c.conforms("GET /stats after renditions → 200", "GET", "/stats", stats, 200):
        document = stats.json()
        rows = [row.get("rendition") for row in document.get("images", [])]
        c.expect("/stats: rows of full-size frames say rendition full", "full" in rows, rows[:10])
        c.expect("/stats: rows of renditions name their key",
                 any(re.fullmatch(r"[0-9]+x[0-9]+.*-(png-z[0-9]+|webp-ll|webp-q[0-9]+)", r or "") for r in rows), rows[:10])
        c.expect("/stats: renditions.entries counts them", document.get("renditions", {}).get("entries", 0) >= 2,
                 document.get("renditions"))


def rendition_server_checks(c, port, samples):
    """Renditions on a server of their own (default settings), every sample uploaded."""
    ids = {}
    for name, data in samples.items():
        uploaded = request(port, "POST", "/images", data)
        if uploaded.status in (200, 201):
            ids[name] = (uploaded.json()["id"], uploaded.json())
    rendition_checks(c, port, ids)


def presets_server_checks(c, port, samples):
    """renditions.presets: thumb (lossy WebP, 48 px) and small (PNG, 24 px)."""
    data = next(iter(samples.values()))
    digest = request(port, "POST", "/images", data).json()["id"]
    base = f"/frames/{digest}/0"
    for query, size, key in (("r=thumb", (48, 48), "48x48-webp-q75"), ("r=small", (24, 24), "24x24-png-z[0-9]+"),
                             ("r=thumb&width=24", (24, 24), "24x24-webp-q75"), ("width=24&r=thumb", (24, 24), "24x24-webp-q75"),
                             ("r=thumb&quality=50", (48, 48), "48x48-webp-q50"), ("r=thumb&format=png&quality=", None, None),
                             ("r=small&format=webp", (24, 24), "24x24-webp-ll")):
        got = request(port, "GET", f"{base}?{query}")
        if size is None:
            c.conforms(f"presets: ?{query} → 400", "GET", "/frames/{id}/{index}", got, 400)
            continue
        if c.conforms(f"presets: ?{query} → 200", "GET", "/frames/{id}/{index}", got, 200):
            c.expect(f"presets: ?{query} is {size[0]}×{size[1]}, ETag names {key}",
                     image_size(got.body) == size and etag_names(got, key), f"{image_size(got.body)} {got.header('etag')}")
    for query in ("r=thumb&format=png", "r=nope", "r="):
        got = request(port, "GET", f"{base}?{query}")
        parameter = "quality" if "format=png" in query else "r"
        c.conforms(f"presets: ?{query} → 400", "GET", "/frames/{id}/{index}", got, 400)
        c.expect(f"presets: ?{query}: the detail names {parameter}", names_in_detail(got, parameter), got.body[:200])
    at = request(port, "GET", f"/frames/{digest}?t=0&r=thumb")
    c.conforms("presets: ?t=0&r=thumb → 200", "GET", "/frames/{id}", at, 200)
    c.expect("presets: ?t=0&r=thumb: Content-Location keeps r", at.header("content-location") == f"/frames/{digest}/0?r=thumb",
             at.header("content-location"))


def presets_only_server_checks(c, port, samples):
    """renditions.allowArbitrary=false: presets only."""
    data = next(iter(samples.values()))
    digest = request(port, "POST", "/images", data).json()["id"]
    base = f"/frames/{digest}/0"
    got = request(port, "GET", f"{base}?r=thumb")
    c.conforms("presets only: ?r=thumb → 200", "GET", "/frames/{id}/{index}", got, 200)
    c.expect("presets only: ?r=thumb is the preset", image_size(got.body) == (48, 48) and got.header("content-type") == "image/webp",
             f"{image_size(got.body)} {got.header('content-type')}")
    c.conforms("presets only: no parameters → 200 (the full-size frame)", "GET", "/frames/{id}/{index}",
               request(port, "GET", base), 200)
    c.conforms("presets only: ?cb=1 → 200 (unknown parameters ignored)", "GET", "/frames/{id}/{index}",
               request(port, "GET", f"{base}?cb=1"), 200)
    for query in ("width=48", "format=webp", "r=thumb&width=24", "dpr=2&r=thumb", "quality=80"):
        c.conforms(f"presets only: ?{query} → 400", "GET", "/frames/{id}/{index}", request(port, "GET", f"{base}?{query}"), 400)
    c.conforms("presets only: ?t=0&width=48 → 400", "GET", "/frames/{id}", request(port, "GET", f"/frames/{digest}?t=0&width=48"), 400)


def auto_default_server_checks(c, port, samples):
    """renditions.defaultFormat=auto: frames without `format` are negotiated."""
    data = next(iter(samples.values()))
    digest = request(port, "POST", "/images", data).json()["id"]
    base = f"/frames/{digest}/0"
    for query, accept, fmt in (("", "image/webp", "webp"), ("", None, "png"), ("", "*/*", "png"),
                               ("?width=48&quality=80", "image/webp", "webp"), ("?width=48&quality=80", None, "png")):
        got = request(port, "GET", f"{base}{query}", headers={"Accept": accept} if accept else None)
        label = f"defaultFormat=auto: {query or '(no query)'}, Accept {accept!r}"
        if c.conforms(f"{label} → 200", "GET", "/frames/{id}/{index}", got, 200):
            c.expect(f"{label}: image/{fmt} with Vary: Accept",
                     got.header("content-type") == f"image/{fmt}" and vary_lists_accept(got),
                     f"{got.header('content-type')} {got.headers.get('vary')}")
    for query in ("?format=png", "?format=webp"):
        got = request(port, "GET", f"{base}{query}", headers={"Accept": "image/webp"})
        c.expect(f"defaultFormat=auto: {query}: no Vary: Accept", got.status == 200 and not vary_lists_accept(got),
                 f"{got.status} {got.headers.get('vary')}")
    c.conforms("defaultFormat=auto: ?format=png&quality=80 → 400", "GET", "/frames/{id}/{index}",
               request(port, "GET", f"{base}?format=png&quality=80"), 400)


def webp_default_server_checks(c, port, samples):
    """renditions.defaultFormat=webp: frames without `format` are WebP, not negotiated."""
    data = next(iter(samples.values()))
    digest = request(port, "POST", "/images", data).json()["id"]
    base = f"/frames/{digest}/0"
    got = request(port, "GET", base)
    if c.conforms("defaultFormat=webp: no parameters → 200", "GET", "/frames/{id}/{index}", got, 200):
        c.expect("defaultFormat=webp: image/webp, lossless, no Vary: Accept",
                 got.header("content-type") == "image/webp" and not vary_lists_accept(got)
                 and etag_names(got, r"[0-9]+x[0-9]+-webp-ll"), f"{got.header('content-type')} {got.header('etag')}")
    lossy = request(port, "GET", f"{base}?width=48&quality=80")
    c.conforms("defaultFormat=webp: ?width=48&quality=80 → 200", "GET", "/frames/{id}/{index}", lossy, 200)
    c.expect("defaultFormat=webp: ?width=48&quality=80 is lossy WebP", etag_names(lossy, "48x48-webp-q80"), lossy.header("etag"))
    c.conforms("defaultFormat=webp: ?format=png → 200 (PNG)", "GET", "/frames/{id}/{index}",
               request(port, "GET", f"{base}?format=png"), 200)


def output_limit_server_checks(c, port, samples):
    """limits.maxOutputDimension=64."""
    data = next(iter(samples.values()))
    digest = request(port, "POST", "/images", data).json()["id"]
    base = f"/frames/{digest}/0"
    for query in ("width=64", "width=32&dpr=2", "height=64&format=webp"):
        got = request(port, "GET", f"{base}?{query}")
        c.conforms(f"limits.maxOutputDimension=64: ?{query} → 200", "GET", "/frames/{id}/{index}", got, 200)
    for query in ("width=65", "width=33&dpr=2", "height=22&dpr=3", "width=10&height=65&fit=fill"):
        got = request(port, "GET", f"{base}?{query}")
        c.conforms(f"limits.maxOutputDimension=64: ?{query} → 400", "GET", "/frames/{id}/{index}", got, 400)
        c.expect(f"limits.maxOutputDimension=64: ?{query}: the detail names the limit and 64",
                 names_in_detail(got, "limits.maxOutputDimension", "64"), got.body[:200])
    got = request(port, "GET", f"/frames/{digest}?t=0&width=100")
    c.conforms("limits.maxOutputDimension=64: ?t=0&width=100 → 400", "GET", "/frames/{id}", got, 400)


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
    """The documented signature (docs/sources-and-signing.md, "Signed URLs"): sig over path ? query."""
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


def read_response(sock, head=False):
    """One response from an open socket (Content-Length framing), for upload_session_checks."""
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buffer += chunk
    head_bytes, _, body = buffer.partition(b"\r\n\r\n")
    lines = head_bytes.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    want = int(headers.get("content-length", ["0"])[0])
    while len(body) < want:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return Response(int(lines[0].split()[1]), headers, body[:want])


def upload_session_server_checks(c, port, samples):
    from upload_session_checks import upload_session_server_checks as checks
    checks(c, port, samples, request, read_response)


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
                             (rendition_server_checks, []),
                             (upload_session_server_checks, []),
                             (presets_server_checks, [PRESETS]),
                             (presets_only_server_checks, [PRESETS, "renditions.allowArbitrary=false"]),
                             (auto_default_server_checks, ["renditions.defaultFormat=auto"]),
                             (webp_default_server_checks, ["renditions.defaultFormat=webp"]),
                             (output_limit_server_checks, ["limits.maxOutputDimension=64"]),
                             (source_server_checks, [f"security.urlKeys={URL_KEY}:{URL_SALT}",
                                                     "sources.allowedNetworks=127.0.0.1/32",
                                                     "sources.timeoutSeconds=1"])):
        server = start_server(binary, samples_dir, settings)
        try:
            checks(c, server.port, samples)
        except NoAnswer as error:
            c.record(f"{checks.__name__}: stopped at a request the server never answered", [str(error)])
        finally:
            server.stop()

    print(f"openapi conformance: {c.passed} passed, {len(c.failed)} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
