"""Storage: one Store over two drivers, chosen by URL (sqlite:///path or postgresql://...)."""

from __future__ import annotations

from bathtub_api.store.base import Store
from bathtub_api.store.common import Driver
from bathtub_api.store.guarded import GuardedDriver
from bathtub_api.write_faults import WriteHealth


async def open_store(url: str, *, migrate: bool = True, health: WriteHealth | None = None,
                     lock_wait_s: float | None = None, connect_timeout_s: float | None = None) -> Store:
    """Open the store a URL names and (by default) bring its schema up to date. Its writes
    refused for lack of room or as read-only raise WriteRefused and are noted in `health`.

    `lock_wait_s`: how long a SQLite open waits for a lock another process holds;
    `connect_timeout_s`: how long a PostgreSQL connection may take; None: the driver's default.
    A failure closes whatever was opened, so no connection (thread) outlives it."""
    driver: Driver
    if url.startswith(("postgresql://", "postgres://")):
        from bathtub_api.store.postgres import PostgresDriver

        pg = {} if connect_timeout_s is None else {"connect_timeout_s": connect_timeout_s}
        driver, kind = await PostgresDriver.open(url, **pg), "postgresql"
    elif url.startswith("sqlite:///"):
        from bathtub_api.store.sqlite import SqliteDriver

        lite = {} if lock_wait_s is None else {"lock_wait_s": lock_wait_s}
        driver, kind = await SqliteDriver.open(url.removeprefix("sqlite:///"), **lite), "sqlite"
    else:
        # the scheme only: the rest of a URL may hold a password
        raise ValueError(f"database URL must start with sqlite:/// or postgresql://, not {url.partition(':')[0]}:")
    store = Store(GuardedDriver(driver, health or WriteHealth()), kind)
    if migrate:
        try:
            await store.migrate()
        except BaseException:
            await store.close()
            raise
    return store


__all__ = ["Store", "open_store"]
