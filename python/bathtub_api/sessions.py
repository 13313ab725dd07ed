"""Browser sessions: signing in with a token gives a signed, HttpOnly, SameSite=Strict cookie
(Secure when the service is reached over https) that is accepted wherever the token is, with
the token's scopes.

The cookie names a session row and its expiry, signed with HMAC-SHA256 under the server's key
(Config.session_key, else a random key kept in the store so every instance signs alike). A
forged or expired cookie is 401 before any lookup of the row; a row signed out, or whose token
was revoked, is 401 too. A state-changing request carried by a cookie must come with an Origin
that is this service's (CSRF): a page elsewhere can make the browser send the cookie, never
set the Origin.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from typing import Any

from aiohttp import web

from bathtub_api.errors import ApiError
from bathtub_api.ids import iso
from bathtub_api.keys import BAD_TOKENS, CONFIG, SESSION_KEY, STORE

COOKIE = "bathtub_session"
VERSION = "v1"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _sign(key: str, payload: str) -> str:
    mac = hmac.new(key.encode(), payload.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode().rstrip("=")


def encode(key: str, session_id: str, expires_at: float) -> str:
    payload = f"{VERSION}.{session_id}.{int(expires_at)}"
    return f"{payload}.{_sign(key, payload)}"


def decode(key: str, value: str, at: float) -> str:
    """The session id a cookie names, if its signature holds and it has not expired; else 401."""
    parts = value.split(".")
    if len(parts) != 4 or parts[0] != VERSION:
        raise ApiError(401, "bad session cookie: sign in again (POST /api/v1/session)")
    payload = ".".join(parts[:3])
    if not hmac.compare_digest(_sign(key, payload), parts[3]):
        raise ApiError(401, "bad session cookie: sign in again (POST /api/v1/session)")
    try:
        expires = int(parts[2])
    except ValueError:  # signed, so ours: cannot happen short of a changed format
        raise ApiError(401, "bad session cookie: sign in again (POST /api/v1/session)") from None
    if expires <= at:
        raise ApiError(401, "session expired: sign in again (POST /api/v1/session)")
    return parts[1]


def own_origins(request: web.Request) -> set[str]:
    """This service's origins: the public base URL's, and the one the request was sent to (the
    browser sets Host to the site it talks to, whatever page made it send the request)."""
    base = request.app[CONFIG].public_base_url
    return {base.rstrip("/"), f"{request.scheme}://{request.host}"}


def check_origin(request: web.Request) -> None:
    """CSRF: a state-changing request carried by a session cookie needs this service's Origin."""
    if request.method in SAFE_METHODS:
        return
    origin = request.headers.get("Origin")
    if origin is None or origin.rstrip("/") not in own_origins(request):
        raise ApiError(403, "Origin: a request signed in by a session cookie that changes anything must come "
                            "from this service's own pages (cross-site request refused)")


async def cookie_owner(app: web.Application, value: str, address: str) -> tuple[dict[str, Any], str]:
    """The owner (as Store.token_owner answers: the token signed in with, its scopes, the user and
    plan) and session id a cookie names; 401 for a forged, expired or ended one. Failed attempts
    count against the client address as bad tokens do (429 past its limit); a good cookie is
    never refused for them. The signature is checked before any lookup, so only a cookie this
    service signed reaches the store (through the failure gate, see throttle.Failures)."""
    t = time.time()
    failures = app[BAD_TOKENS]
    try:
        session_id = decode(app[SESSION_KEY], value, t)
        async with failures.lookup(address):
            owner = await app[STORE].session_owner(session_id, t)
        if owner is None:
            raise ApiError(401, "session ended (signed out, or its token was revoked): sign in again")
    except ApiError:
        failures.refuse(address)
        raise
    return owner, session_id


def set_cookie(request: web.Request, response: web.StreamResponse, value: str, max_age: float) -> None:
    config = request.app[CONFIG]
    secure = request.secure or config.public_base_url.startswith("https://")
    response.set_cookie(COOKIE, value, max_age=int(max_age), path="/", httponly=True, samesite="Strict",
                        secure=secure)


def clear_cookie(response: web.StreamResponse) -> None:
    response.del_cookie(COOKIE, path="/")


async def open_session(app: web.Application, owner: dict[str, Any]) -> tuple[dict[str, Any], str, float]:
    """A session for a live token's owner: (what the caller sees, the cookie's value, its
    lifetime in seconds)."""
    lifetime = app[CONFIG].session_hours * 3600.0
    expires = float(int(time.time() + lifetime))  # the cookie carries whole seconds
    store = app[STORE]
    await store.purge_sessions(time.time() - 86400.0)  # a day after they ended, sessions are forgotten
    session_id = await store.create_session(owner["token_id"], expires)
    shown = {"user": owner["name"], "plan": owner.get("plan") or "free", "scopes": sorted(owner["scopes"]),
             "token_id": owner["token_id"], "expires_at": iso(expires)}
    return shown, encode(app[SESSION_KEY], session_id, expires), lifetime
