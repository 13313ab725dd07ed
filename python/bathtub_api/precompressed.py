"""A fixed JSON document served as its clients ask: gzip when Accept-Encoding takes it, and a
strong ETag so a client that has it already gets 304 with no body.

The OpenAPI document is built once per app and never changes while it runs, so it is encoded
and compressed once (about 380 KB plain, a tenth of that gzipped); Swagger UI and the
generated clients fetch it on every page load. Brotli would save a little more but needs a
package the service does not otherwise use; gzip is in the standard library.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import re

from aiohttp import web

_CODING = re.compile(r"^\s*([\w*-]+)\s*(?:;\s*q\s*=\s*([0-9.]+))?\s*$", re.IGNORECASE)


def accepts_gzip(header: str) -> bool:
    """Whether an Accept-Encoding header takes gzip (RFC 9110: `gzip` or `*` with q above 0,
    an explicit gzip entry winning over `*`)."""
    wanted: dict[str, float] = {}
    for part in header.split(","):
        m = _CODING.match(part)
        if not m:
            continue
        try:
            q = float(m.group(2)) if m.group(2) is not None else 1.0
        except ValueError:
            continue
        wanted[m.group(1).lower()] = q
    q = wanted.get("gzip", wanted.get("x-gzip", wanted.get("*", 0.0)))
    return q > 0


def _matches(if_none_match: str, tags: tuple[str, ...]) -> bool:
    """If-None-Match: `*`, or a list of entity tags compared weakly (RFC 9110 13.1.2)."""
    if if_none_match.strip() == "*":
        return True
    given = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
    return any(t in given for t in tags)


class Precompressed:
    """`body` (JSON bytes) and its gzip form, each with its own strong ETag (RFC 9110: two
    encodings are two representations)."""

    def __init__(self, body: bytes, content_type: str = "application/json") -> None:
        digest = hashlib.sha256(body).hexdigest()[:32]
        self.body = body
        self.etag = f'"{digest}"'
        self.gzip_etag = f'"{digest}-gzip"'
        self.content_type = content_type

    @functools.cached_property
    def gzipped(self) -> bytes:
        """Compressed once, at the first client that asks (not at every app's start: tests and
        workers build many apps); mtime 0, so the same bytes every time."""
        return gzip.compress(self.body, compresslevel=9, mtime=0)

    def response(self, request: web.Request) -> web.Response:
        gz = accepts_gzip(request.headers.get("Accept-Encoding", ""))
        etag = self.gzip_etag if gz else self.etag
        # Vary: a cache must not hand the gzip form to a client that did not ask for it.
        headers = {"ETag": etag, "Vary": "Accept-Encoding", "Cache-Control": "no-cache"}
        inm = request.headers.get("If-None-Match")
        if inm is not None and _matches(inm, (self.etag, self.gzip_etag)):
            return web.Response(status=304, headers=headers)
        if gz:
            headers["Content-Encoding"] = "gzip"
        return web.Response(body=self.gzipped if gz else self.body, headers=headers, content_type=self.content_type)
