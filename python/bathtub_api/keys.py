"""Typed keys for what the app and a request carry (aiohttp's AppKey/RequestKey)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    pass

CONFIG = web.AppKey("config", "Config")
STORE = web.AppKey("store", "Store")
JOBS = web.AppKey("jobs", "JobRunner")
REGISTRY = web.AppKey("registry", "Registry")
LIMITER = web.AppKey("limiter", "RateLimiter")
BAD_TOKENS = web.AppKey("bad_tokens", "Failures")  # failed authentications, per client address
TOKENS = web.AppKey("tokens", "TokenCache")
PHOTOS = web.AppKey("photos", "PhotoDecoder")  # bounds concurrent photo decodes (photo_decoder.py)
WRITES = web.AppKey("writes", "WriteHealth")  # this process's refused writes, for /healthz
SESSION_KEY = web.AppKey("session_key", str)  # the HMAC key session cookies are signed with
USER = web.RequestKey("user", "User")
SESSION = web.RequestKey("session", str)  # the session id, when a request is signed in by its cookie
