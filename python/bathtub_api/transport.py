"""Around the handlers: the request log, the headers every answer carries, and JSON answers to
HTTP that never reaches a handler (a malformed request line, an oversized or folded header).

The request log (logger `bathtub_api.access`) has method, path (never the query string; a share
link's secret redacted, bathtub_api/redact.py), status, user id and duration: never a header,
so never a token. aiohttp's own answer to a
request it cannot parse is text that quotes the offending bytes, and its log line carries
them too: a folded `Authorization` header would put the token in both. Those answers are
replaced by `{"detail"}` naming the rule broken, and logged without the bytes.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import orjson
from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, BadStatusLine, LineTooLong
from aiohttp.web_protocol import RequestHandler

from bathtub_api.errors import Handler
from bathtub_api.keys import USER
from bathtub_api.redact import redact

access_log = logging.getLogger("bathtub_api.access")
server_log = logging.getLogger("bathtub_api.server")

# Every answer: never sniffed as another type, never cached (answers are per-user data) unless
# its handler says how it may be (a public document: the OpenAPI one revalidates by its ETag).
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}


def log_request(method: str, path: str, status: int, user: str, started: float) -> None:
    """One line per request; the fields also as record attributes (method, path, status,
    user_id, duration_ms) for structured formatters. A secret in the path (a share link's) is
    redacted in both."""
    if access_log.isEnabledFor(logging.INFO):
        path = redact(path)
        ms = (time.perf_counter() - started) * 1000.0
        # makeRecord + handle: the same record `info` would make, without its stack walk
        # for the caller's file and line (a third of the cost on the hot path).
        record = access_log.makeRecord(
            access_log.name, logging.INFO, __file__, 0, "%s %s %d user=%s %.1fms", (method, path, status, user, ms),
            None, extra={"method": method, "path": path, "status": status, "user_id": user, "duration_ms": ms})
        access_log.handle(record)


@web.middleware
async def access_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Outermost: every answer gets the security headers and one request-log line."""
    started = time.perf_counter()
    response = await handler(request)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers.setdefault("Cache-Control", SECURITY_HEADERS["Cache-Control"])
    user = request.get(USER)
    log_request(request.method, request.path, response.status, user.id if user else "-", started)
    return response


def _protocol_detail(status: int, exc: BaseException | None) -> tuple[int, str]:
    """The answer to a request aiohttp could not take, from the error's kind only (its
    message quotes the request's bytes, which may hold a token)."""
    if isinstance(exc, LineTooLong):  # the parser does not say which line: one answer for both
        return 431, "the request line or a header line is longer than 8190 bytes"
    if isinstance(exc, (BadHttpMethod, BadStatusLine)):
        return 400, "malformed HTTP request line"
    if status == 400:
        return 400, "malformed HTTP request (for example a header folded over two lines, or a control character)"
    if status == 504:
        return 504, "the request took too long"
    return status, "internal error; the request was not applied"


def _handle_error(self: RequestHandler, request: Any, status: int = 500, exc: BaseException | None = None,
                  message: str | None = None) -> web.StreamResponse:
    status, detail = _protocol_detail(status, exc)
    if status == 500 and exc is not None:  # a bug escaped the middlewares: its traceback is ours
        server_log.error("unhandled error below the middlewares", exc_info=exc)
    else:  # the exception's text quotes the request's bytes: its kind only
        server_log.warning("refused a malformed request from %s: %d %s (%s)", request.remote, status, detail,
                           type(exc).__name__ if exc is not None else "no exception")
    log_request("-", "-", status, "-", time.perf_counter())
    if request.writer.output_size > 0:
        raise ConnectionError("response already started; cannot send the error")
    resp = web.Response(status=status, body=orjson.dumps({"detail": detail}), content_type="application/json",
                        headers=SECURITY_HEADERS)
    resp.force_close()
    return resp


def install_protocol_errors() -> None:
    """aiohttp builds its protocol handler itself (no hook to pass a subclass through the
    app runner or the test server), so its error answer is replaced on the class, once."""
    if RequestHandler.handle_error is not _handle_error:
        RequestHandler.handle_error = _handle_error  # type: ignore[method-assign]
