"""What every store query module shares: the connection and driver protocols, JSON text bodies,
LIKE escaping, and claiming an idempotency key inside the caller's transaction."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from bathtub_api.ids import now


class Conn(Protocol):
    """What a query needs: the driver's connection or transaction."""

    async def fetch(self, sql: str, *args: Any) -> list[dict[str, Any]]: ...
    async def fetchrow(self, sql: str, *args: Any) -> dict[str, Any] | None: ...
    async def execute(self, sql: str, *args: Any) -> int: ...
    async def executemany(self, sql: str, args: list[tuple[Any, ...]]) -> None: ...


class Driver(Conn, Protocol):
    for_update: str  # " FOR UPDATE" where the dialect locks rows, "" where writes are serialised anyway

    async def fetch_small(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        """`fetch` for a read an index bounds to a few rows: the hot path's (a page, a token)."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[Conn]: ...
    async def close(self) -> None: ...


def like_escape(text: str) -> str:
    """`text` matched literally inside LIKE (escape character `!`)."""
    return text.replace("!", "!!").replace("%", "!%").replace("_", "!_")



def list_filters(name_column: str, name_contains: str | None, created_after: float | None) -> tuple[str, list[Any]]:
    """The SQL and arguments every `list/<kind>` filter adds: the name contains a text (ignoring
    case, matched literally), created after an instant."""
    sql, args = "", []
    if name_contains:
        sql += f" AND LOWER({name_column}) LIKE ? ESCAPE '!'"
        args.append("%" + like_escape(name_contains.lower()) + "%")
    if created_after is not None:
        sql += " AND created_at > ?"
        args.append(created_after)
    return sql, args


@dataclass(frozen=True)
class KeyUse:
    """An Idempotency-Key as a request uses it: where it applies, the request's hash, and how
    long (seconds) a key is kept."""

    scope: str
    key: str
    request_hash: str
    ttl_s: float


def dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY).decode()


def loads(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


class KeyTaken(Exception):
    """Raised inside a transaction to roll it back: the idempotency key was claimed first."""


async def claim_key(tx: Conn, owner: str, key: KeyUse, answer: dict[str, Any]) -> None:
    """Record the key with its request hash and answer in the caller's transaction (expired
    keys purged on the way), or raise KeyTaken if a live one exists."""
    t = now()
    await tx.execute("DELETE FROM idempotency_keys WHERE created_at < ?", t - key.ttl_s)
    n = await tx.execute(
        "INSERT INTO idempotency_keys (owner, scope, key, request_hash, answer, created_at) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (owner, scope, key) DO NOTHING",
        owner, key.scope, key.key, key.request_hash, dumps(answer), t,
    )
    if n == 0:
        raise KeyTaken
