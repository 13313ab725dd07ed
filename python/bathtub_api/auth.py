"""Bearer tokens (stored only as SHA-256 hashes), scopes, and the per-token rate limit (the limits
themselves live in bathtub_api/throttle.py)."""

from __future__ import annotations

import hashlib
import math
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web

from bathtub_api import sessions
from bathtub_api.errors import ApiError, Handler
from bathtub_api.keys import BAD_TOKENS, LIMITER, SESSION, STORE, TOKENS, USER
from bathtub_api.throttle import Failures, request_address, too_many

if TYPE_CHECKING:
    from bathtub_api.store import Store

TOKEN_PREFIX = "bt_"
SCOPES = ("read", "write")
PROTECTED_PREFIXES = ("/api/v1/", "/api/ingest/", "/api/import/", "/mcp")
# Signing in is public: its credential is the token in its body (checked like a bearer token).
PUBLIC_PATHS = frozenset({"/api/v1/openapi.json"})
SESSION_PATH = "/api/v1/session"
TOUCH_EVERY_S = 60.0  # how fresh a token's "last used" is
# The browsable API docs (bathtub_api/docs.py): static assets and the guide's text, no user data.
PUBLIC_PREFIXES = ("/api/v1/docs",)


@dataclass(frozen=True)
class User:
    id: str
    name: str
    scopes: frozenset[str]
    token_id: str
    plan: str = "free"


def new_token() -> str:
    """A fresh token: the service prefix and 256 random bits. Shown once, never stored."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    # Tokens carry 256 random bits, so a fast hash is enough: no dictionary to slow down.
    return hashlib.sha256(token.encode()).hexdigest()


class TokenCache:
    """Token lookups remembered for a moment: a hot client sends many requests a second,
    and each would otherwise cost a store round trip. A revocation through this process
    (the API access page) takes effect at once (`forget`); one from elsewhere (the CLI,
    another worker or instance) within `ttl` seconds (`token_cache_seconds`)."""

    def __init__(self, ttl: float = 2.0, size: int = 10_000) -> None:
        self.ttl = ttl
        self.size = size
        self._entries: dict[str, tuple[float, dict[str, Any]]] = {}
        self._touched: dict[str, float] = {}

    async def touch(self, store: Store, token_id: str) -> None:
        """Record that a token was used (the API access page's "last used"), at most once a
        TOUCH_EVERY_S per token and process: a hot client must not turn every read into a write."""
        t = time.time()
        if t - self._touched.get(token_id, -math.inf) < TOUCH_EVERY_S:
            return
        if len(self._touched) >= self.size:
            self._touched.clear()
        self._touched[token_id] = t
        await store.touch_token(token_id, t)

    def forget(self, token_id: str) -> None:
        """Drop a revoked token's entry now (revocations are rare: a scan is fine)."""
        for key in [k for k, (_, owner) in self._entries.items() if owner["token_id"] == token_id]:
            del self._entries[key]

    def cached(self, token_hash: str) -> dict[str, Any] | None:
        """The owner remembered for this hash, if still fresh; never a store lookup."""
        hit = self._entries.get(token_hash)
        return hit[1] if hit and hit[0] > time.monotonic() else None

    async def owner(self, store: Store, token_hash: str) -> dict[str, Any] | None:
        t = time.monotonic()
        hit = self._entries.get(token_hash)
        if hit and hit[0] > t:
            return hit[1]
        owner = await store.token_owner(token_hash)
        if owner is not None:
            if len(self._entries) >= self.size:
                self._entries.clear()
            self._entries[token_hash] = (t + self.ttl, owner)
        else:
            self._entries.pop(token_hash, None)
        return owner


def _protected(path: str) -> bool:
    if path in PUBLIC_PATHS or path == PUBLIC_PREFIXES[0] or path.startswith(f"{PUBLIC_PREFIXES[0]}/"):
        return False
    return path.startswith(PROTECTED_PREFIXES) or path == "/mcp"


@web.middleware
async def auth_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not _protected(request.path) or (request.method == "POST" and request.path == SESSION_PATH):
        # Signing in (POST /api/v1/session) is public: its credential is the token in its body.
        return await handler(request)
    header = request.headers.get("Authorization", "")
    cookie = request.cookies.get(sessions.COOKIE)
    # Failed credentials are counted per client address; a credential is always checked first,
    # so a good one goes through whatever others behind the same address sent (throttle.Failures).
    failures = request.app[BAD_TOKENS]
    address = request_address(request)
    if not header and cookie:  # a browser session: the token it was opened with, plus CSRF rules
        owner, session_id = await sessions.cookie_owner(request.app, cookie, address)
        sessions.check_origin(request)
        request[SESSION] = session_id
    else:
        owner = await _bearer_owner(request, header, failures, address)
    limiter = request.app[LIMITER]
    wait = limiter.check(owner["token_id"])
    if wait > 0:
        raise too_many(limiter, wait, "requests")
    await request.app[TOKENS].touch(request.app[STORE], owner["token_id"])
    request[USER] = User(owner["user_id"], owner["name"], owner["scopes"], owner["token_id"],
                         owner.get("plan") or "free")
    return await handler(request)


async def _bearer_owner(request: web.Request, header: str, failures: Failures, address: str) -> dict[str, Any]:
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise ApiError(401, "missing token: send Authorization: Bearer <token>", {"WWW-Authenticate": "Bearer"})
    owner = await token_owner(request.app, hash_token(token), address)
    if owner is None:
        failures.refuse(address)  # 429 once the address is past its limit
        raise ApiError(401, "bad or revoked token", {"WWW-Authenticate": 'Bearer error="invalid_token"'})
    return owner


async def token_owner(app: web.Application, token_hash: str, address: str) -> dict[str, Any] | None:
    """A token's owner (None: bad or revoked): from the cache when fresh, else from the store
    through the failure gate, which holds a limited address to one lookup at a time."""
    tokens = app[TOKENS]
    owner = tokens.cached(token_hash)
    if owner is not None:
        return owner
    async with app[BAD_TOKENS].lookup(address):
        return await tokens.owner(app[STORE], token_hash)


def require_scope(user: User, scope: str, why: str | None = None) -> None:
    if scope not in user.scopes:
        raise scope_refusal(scope, why)


def scope_refusal(scope: str, why: str | None = None) -> ApiError:
    return ApiError(403, f"this token lacks the {scope!r} scope" + (f" ({why})" if why else ""))
