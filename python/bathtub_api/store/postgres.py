"""PostgreSQL driver (asyncpg pool). Queries arrive with `?` placeholders, rewritten to `$n`."""

from __future__ import annotations

import functools
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

CONNECT_TIMEOUT_S = 60.0  # asyncpg's own default


@functools.lru_cache(maxsize=512)
def _pg(sql: str) -> str:
    counter = iter(range(1, 10_000))
    return re.sub(r"\?", lambda _: f"${next(counter)}", sql)


def _count(status: str) -> int:
    last = status.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else 0


async def _keep_session(conn: asyncpg.Connection) -> None:
    return None


class _Conn:
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    async def fetch(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        return [dict(r) for r in await self.conn.fetch(_pg(sql), *args)]

    async def fetchrow(self, sql: str, *args: Any) -> dict[str, Any] | None:
        row = await self.conn.fetchrow(_pg(sql), *args)
        return None if row is None else dict(row)

    async def execute(self, sql: str, *args: Any) -> int:
        return _count(await self.conn.execute(_pg(sql), *args))

    async def executemany(self, sql: str, args: list[tuple[Any, ...]]) -> None:
        await self.conn.executemany(_pg(sql), args)


class PostgresDriver(_Conn):
    """A pool of connections; every read is one round trip on a pooled connection."""
    for_update = " FOR UPDATE"

    def __init__(self, pool: asyncpg.Pool) -> None:
        super().__init__(pool)
        self.pool = pool

    @classmethod
    async def open(cls, url: str, min_size: int = 2, max_size: int = 20,
                   connect_timeout_s: float = CONNECT_TIMEOUT_S) -> PostgresDriver:
        """A pool of `min_size` connections, each made within `connect_timeout_s` (a server
        that does not answer fails then). asyncpg closes the connections it made if one fails."""
        # asyncpg resets a connection (a round trip: RESET ALL, UNLISTEN, ...) each time it
        # returns to the pool. We keep no session state (no SET, LISTEN or advisory locks),
        # so skipping it halves the round trips of a read.
        return cls(await asyncpg.create_pool(url, min_size=min_size, max_size=max_size, reset=_keep_session,
                                             timeout=connect_timeout_s))

    async def fetch_small(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        """A small indexed read (the SQLite driver runs these on the loop): here, any read."""
        return await self.fetch(sql, *args)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[_Conn]:
        async with self.pool.acquire() as conn, conn.transaction():
            yield _Conn(conn)

    async def close(self) -> None:
        await self.pool.close()
