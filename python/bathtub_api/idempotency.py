"""Idempotency keys: a retry of a keyed write replays the first answer and changes nothing;
the same key with a different request is refused (409), never silently ignored.

Keys are stored per user and scope with the request's hash and first answer, claimed in the
same transaction as the write they guard, and kept for `Config.idempotency_key_hours`.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from bathtub_api.errors import ApiError
from bathtub_api.registry import Ctx
from bathtub_api.store.common import KeyUse

HEADER = "Idempotency-Key"
MAX_LENGTH = 200


def canonical(value: Any) -> bytes:
    """A request's JSON as bytes that do not depend on key order or spacing."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY)


def key_use(ctx: Ctx, scope: str, request: bytes) -> KeyUse | None:
    """The request's key in `scope` (None without the header); `request` is what must match
    on a retry (a canonical body plus anything else that changes the write)."""
    key = ctx.idempotency_key
    if key is None:
        return None
    if not 1 <= len(key) <= MAX_LENGTH or not key.isprintable():
        raise ApiError(422, f"{HEADER}: must be 1 to {MAX_LENGTH} printable characters")
    return KeyUse(scope, key, hashlib.sha256(request).hexdigest(), ctx.idempotency_key_hours * 3600.0)


async def replay(ctx: Ctx, key: KeyUse) -> dict[str, Any] | None:
    """The first answer given under this key, or None if the key is new (or expired)."""
    found = await ctx.store.find_key(ctx.user.id, key)
    if found is None:
        return None
    if found["request_hash"] != key.request_hash:
        raise ApiError(409, f"{HEADER}: {key.key!r} was already used with a different request; "
                            "a new request needs a new key")
    return dict(found["answer"])


async def settled(ctx: Ctx, outcome: str, key: KeyUse | None, answer: dict[str, Any]) -> dict[str, Any] | None:
    """The answer of a conditional write under an optional key: ours when it went in ("ok"), the
    first request's when that request took our key meanwhile ("key_taken"), None to try again
    (the item changed under us)."""
    if outcome == "ok":
        return {**answer, "replayed": False}
    if outcome == "key_taken" and key is not None:
        first = await replay(ctx, key)
        if first is not None:
            return {**first, "replayed": True}
    return None
