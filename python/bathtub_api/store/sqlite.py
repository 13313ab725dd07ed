"""SQLite driver: the embedded default. One writer connection behind a lock (SQLite has a
single writer anyway), a few reader connections in WAL mode, all off the event loop."""

from __future__ import annotations

import asyncio
import itertools
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite

READERS = 2
FILE_MODE = 0o600  # the database holds everyone's data and token hashes: owner only


def _private_files(path: str) -> None:
    """Create the database file owner-only before SQLite opens it (SQLite gives its -wal and
    -shm files the database file's mode), and tighten files an older version left readable."""
    if path == ":memory:" or path.startswith("file:"):
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    os.close(fd)
    for p in (path, f"{path}-wal", f"{path}-shm", f"{path}-journal"):
        try:
            if stat.S_IMODE(os.stat(p).st_mode) & 0o077:
                os.chmod(p, FILE_MODE)
        except FileNotFoundError:
            pass


class _Conn:
    def __init__(self, conn: aiosqlite.Connection) -> None:
        self.conn = conn

    async def fetch(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        async with self.conn.execute(sql, args) as cur:
            return [dict(r) for r in await cur.fetchall()]

    async def fetchrow(self, sql: str, *args: Any) -> dict[str, Any] | None:
        async with self.conn.execute(sql, args) as cur:
            row = await cur.fetchone()
        return None if row is None else dict(row)

    async def execute(self, sql: str, *args: Any) -> int:
        async with self.conn.execute(sql, args) as cur:
            return cur.rowcount

    async def executemany(self, sql: str, args: list[tuple[Any, ...]]) -> None:
        await self.conn.executemany(sql, args)


class SqliteDriver:
    for_update = ""  # writes are serialised by BEGIN IMMEDIATE and the writer lock

    def __init__(self, writer: aiosqlite.Connection, readers: list[aiosqlite.Connection]) -> None:
        self._writer = _Conn(writer)
        self._readers = [_Conn(r) for r in readers]
        self._next_reader = itertools.cycle(self._readers)
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: str) -> SqliteDriver:
        async def connect() -> aiosqlite.Connection:
            conn = await aiosqlite.connect(path, isolation_level=None)
            conn.row_factory = aiosqlite.Row
            for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON", "busy_timeout=10000"):
                await conn.execute(f"PRAGMA {pragma}")
            return conn

        await asyncio.to_thread(_private_files, path)
        writer = await connect()
        readers = [await connect() for _ in range(READERS)]
        return cls(writer, readers)

    async def fetch(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        return await next(self._next_reader).fetch(sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> dict[str, Any] | None:
        return await next(self._next_reader).fetchrow(sql, *args)

    async def execute(self, sql: str, *args: Any) -> int:
        async with self._lock:
            return await self._writer.execute(sql, *args)

    async def executemany(self, sql: str, args: list[tuple[Any, ...]]) -> None:
        async with self._lock:
            await self._writer.executemany(sql, args)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[_Conn]:
        async with self._lock:
            await self._writer.execute("BEGIN IMMEDIATE")
            try:
                yield self._writer
            except BaseException:
                await self._writer.execute("ROLLBACK")
                raise
            else:
                await self._writer.execute("COMMIT")

    async def close(self) -> None:
        for c in [self._writer, *self._readers]:
            await c.conn.close()
