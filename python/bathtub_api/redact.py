"""Secrets that travel in URLs, kept out of every log line.

Two credentials are part of a URL: a share link's secret is its path (`/s/<secret>`, and its PDF
`/s/<secret>/pdf`), and an upload link's token is its `t` query parameter. Only their hashes are
stored, so a log that kept them would be the one place a reader could take a live link from.
`redact` is the one rule: every log line that carries a request path or line goes through it,
ours explicitly (the request log, the error middleware) and aiohttp's own loggers (the request
line logger a test server or an embedding runner turns on, its server errors) through the
`RedactSecrets` filter that `install` attaches. The route modules build their URLs from the
constants here, so a changed prefix or parameter cannot slip past the rule.
"""

from __future__ import annotations

import logging
import re

SHARE_PREFIX = "/s/"  # a share page: /s/<secret>
UPLOAD_TOKEN = "t"  # an upload link's token: /api/uploads/<id>?t=<token>
REDACTED = "<redacted>"

# The secret segment after /s/ (in a path, a request line, a full URL or a Referer), and the
# value of a `t` query parameter (after ? or &), whatever the text around them.
_SECRETS = re.compile(rf"({re.escape(SHARE_PREFIX)})[^/?#\s\"'<>]+"
                      rf"|([?&;]{re.escape(UPLOAD_TOKEN)}=)[^&;#\s\"'<>]+")
# Loggers whose lines we do not format ourselves but may carry a request path or line:
# aiohttp's (its access logger quotes the request line with the query), and ours whose
# exception text could quote one.
LOGGERS = ("aiohttp.access", "aiohttp.server", "aiohttp.web", "bathtub_api", "bathtub_api.server")
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


def _keep(match: re.Match[str]) -> str:
    return (match[1] or match[2]) + REDACTED


def redact(text: str) -> str:
    """`text` with every share-link secret and upload token replaced by <redacted>:
    `/s/<redacted>/pdf`, `/api/uploads/upl_1?t=<redacted>`."""
    if SHARE_PREFIX not in text and f"{UPLOAD_TOKEN}=" not in text:  # the common case, on the hot path
        return text
    return _SECRETS.sub(_keep, text)


class RedactSecrets(logging.Filter):
    """Redacts a record's message, its exception text and its extra string attributes (the
    structured fields aiohttp's access logger adds, such as `first_request_line`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
            text = logging.Formatter().formatException(record.exc_info)
            if redact(text) != text:
                # Formatters print exc_text as it is when set, and with exc_info gone none can
                # format the exception (whose message holds the secret) again.
                record.exc_text, record.exc_info = redact(text), None
        for key, value in record.__dict__.items():
            if key in _STANDARD:
                continue
            if isinstance(value, str):
                record.__dict__[key] = redact(value)
            elif isinstance(value, dict):
                record.__dict__[key] = {k: redact(v) if isinstance(v, str) else v for k, v in value.items()}
        return True


def install() -> None:
    """Attach the filter to LOGGERS, once per process (create_app calls it for every app)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSecrets) for f in logger.filters):
            logger.addFilter(RedactSecrets())
