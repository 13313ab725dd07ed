"""The store's writes, watched: a driver wrapped so that a write the database refuses for lack
of room or because it is read-only raises WriteRefused (a 507 naming the cause) whichever
driver ran it, and the process's WriteHealth learns of each refusal and of each write that
succeeds afterwards. Reads pass straight through: they cannot fill a store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from bathtub_api.store.common import Conn
from bathtub_api.write_faults import WriteHealth, write_fault

if TYPE_CHECKING:
    from bathtub_api.store.common import Driver


def _refused(health: WriteHealth, exc: BaseException) -> None:
    """Raise a recognised refusal as WriteRefused (from the driver's own error), noted in the
    health; return for any other error, which the caller re-raises as it is."""
    fault = write_fault(exc)
    if fault is not None:
        health.failed(fault)
        if fault is not exc:
            raise fault from exc


class _TxConn:
    """A transaction's connection: its writes are judged when the transaction commits."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn
        self.wrote = False

    async def fetch(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        return await self.conn.fetch(sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> dict[str, Any] | None:
        return await self.conn.fetchrow(sql, *args)

    async def execute(self, sql: str, *args: Any) -> int:
        n = await self.conn.execute(sql, *args)
        self.wrote = True
        return n

    async def executemany(self, sql: str, args: list[tuple[Any, ...]]) -> None:
        await self.conn.executemany(sql, args)
        self.wrote = True


class GuardedDriver:
    """`inner` (the SQLite or PostgreSQL driver) with its write faults recognised."""

    def __init__(self, inner: Driver, health: WriteHealth) -> None:
        self.inner = inner
        self.health = health
        self.for_update = inner.for_update

    async def fetch(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        return await self.inner.fetch(sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> dict[str, Any] | None:
        return await self.inner.fetchrow(sql, *args)

    async def fetch_small(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        return await self.inner.fetch_small(sql, *args)

    async def execute(self, sql: str, *args: Any) -> int:
        try:
            n = await self.inner.execute(sql, *args)
        except Exception as e:
            _refused(self.health, e)
            raise
        self.health.succeeded("store")
        return n

    async def executemany(self, sql: str, args: list[tuple[Any, ...]]) -> None:
        try:
            await self.inner.executemany(sql, args)
        except Exception as e:
            _refused(self.health, e)
            raise
        self.health.succeeded("store")

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Conn]:
        # The driver rolls back on any exception (ours raised inside, or its COMMIT failing), so
        # a refused write leaves nothing behind; a transaction that only read proves nothing.
        tx: _TxConn | None = None
        try:
            async with self.inner.transaction() as conn:
                tx = _TxConn(conn)
                yield tx
        except Exception as e:
            _refused(self.health, e)
            raise
        if tx is not None and tx.wrote:
            self.health.succeeded("store")

    async def close(self) -> None:
        await self.inner.close()
