"""SQLite driver: the embedded default. One writer connection behind a lock (SQLite has a
single writer anyway), a few reader connections in WAL mode off the event loop, and one
reader on it for the small indexed reads of the hot path (`fetch_small`).

Why a reader on the loop: a page of a dataset or a token lookup is tens of microseconds in
SQLite, while handing it to a connection's thread and back costs more than that in wake-ups
and GIL hand-offs, and under load it queues behind the GIL's switch interval. In WAL mode a
reader never waits for the writer, so such a read cannot stall the loop on a lock; the loop's
reader never waits at all (busy timeout 0), and on the rare SQLITE_BUSY (a checkpoint or a
WAL-index rebuild by another process) the read is retried on a threaded reader, which waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sqlite3
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite

from bathtub_api.private import private_dir

READERS = 2
FILE_MODE = 0o600  # the database holds everyone's data and token hashes: owner only
BUSY_TIMEOUT_MS = 10_000  # how long a write waits for another connection's (or process's) write


def _private_files(path: str) -> None:
    """Create the database file owner-only before SQLite opens it (SQLite gives its -wal and
    -shm files the database file's mode), and its missing folders 0700; tighten files an older
    version left readable. A path that cannot be written fails here, as an OSError with its
    errno and filename (the file in the way, when a folder on the path is one)."""
    if path == ":memory:" or path.startswith("file:"):
        return
    private_dir(os.path.dirname(os.path.abspath(path)), tighten=False)  # its mode is the operator's if it exists
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

    def __init__(self, writer: aiosqlite.Connection, readers: list[aiosqlite.Connection],
                 inline: sqlite3.Connection) -> None:
        self._writer = _Conn(writer)
        self._readers = [_Conn(r) for r in readers]
        self._next_reader = itertools.cycle(self._readers)
        self._lock = asyncio.Lock()
        self._inline = inline

    @classmethod
    async def open(cls, path: str, lock_wait_s: float = BUSY_TIMEOUT_MS / 1000) -> SqliteDriver:
        """Open `path` (creating it and its directories owner-only), refusing within `lock_wait_s`
        a database another process keeps locked. On any failure, cancellation included, every
        connection opened so far is closed: an aiosqlite connection runs on a non-daemon thread,
        and one left open keeps the process alive after its error (Ctrl-C cannot end it)."""
        opened: list[aiosqlite.Connection] = []
        inline: sqlite3.Connection | None = None

        async def connect() -> aiosqlite.Connection:
            # timeout: SQLite's busy timeout, for the pragmas and the probe below. A connect that
            # fails (or is cancelled) stops its own thread; one that succeeds is ours to stop.
            conn = await aiosqlite.connect(path, isolation_level=None, timeout=lock_wait_s)
            opened.append(conn)
            conn.row_factory = aiosqlite.Row
            for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON"):
                await conn.execute(f"PRAGMA {pragma}")
            return conn

        try:
            await asyncio.to_thread(_private_files, path)
            writer = await connect()
            readers = [await connect() for _ in range(READERS)]
            # The loop's own reader: read-only (a write through it would hold the file's lock on
            # the loop), and never waiting on a lock (busy: the threaded readers take the read).
            inline = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=lock_wait_s)
            inline.row_factory = sqlite3.Row
            for pragma in ("query_only=ON", "foreign_keys=ON", "busy_timeout=0"):
                inline.execute(f"PRAGMA {pragma}")
            # Can it write now? A process keeping the lock (an open EXCLUSIVE transaction) is
            # refused here, within lock_wait_s, not at the first write BUSY_TIMEOUT_MS later.
            await writer.execute("BEGIN IMMEDIATE")
            await writer.execute("ROLLBACK")
            for conn in opened:
                await conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        except BaseException:
            if inline is not None:
                inline.close()
            # stop() queues each thread's close-and-exit at once, so another cancellation while
            # waiting for them cannot leave one running; the open's own error is the one raised.
            stopping = [f for f in (conn.stop() for conn in opened) if f is not None]
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*stopping, return_exceptions=True)
            raise
        return cls(writer, readers, inline)

    async def fetch(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        return await next(self._next_reader).fetch(sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> dict[str, Any] | None:
        return await next(self._next_reader).fetchrow(sql, *args)

    async def fetch_small(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        """A read bounded by an index to a few rows, on the event loop (see the module's note);
        on SQLITE_BUSY (or SQLITE_LOCKED), on a threaded reader that waits for the lock."""
        try:
            return [dict(r) for r in self._inline.execute(sql, args).fetchall()]
        except sqlite3.OperationalError as e:
            # the primary code is the low byte of an extended one (SQLITE_BUSY_SNAPSHOT, ...)
            if getattr(e, "sqlite_errorcode", 0) & 0xFF not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise
        return await self.fetch(sql, *args)

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
                await self._writer.execute("COMMIT")
            except BaseException:
                # Also when COMMIT itself failed (SQLITE_FULL, SQLITE_IOERR): the transaction may
                # still be open, and the next BEGIN on this connection would fail. SQLite may have
                # rolled it back already on such an error, and a ROLLBACK then would fail and hide
                # the error that matters.
                if self._writer.conn.in_transaction:
                    await self._writer.execute("ROLLBACK")
                raise

    async def close(self) -> None:
        self._inline.close()
        for c in [self._writer, *self._readers]:
            await c.conn.close()
