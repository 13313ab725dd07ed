"""Storage: one Store over two drivers, chosen by URL (sqlite:///path or postgresql://...)."""

from __future__ import annotations

from bathtub_api.store.base import Driver, Store
from bathtub_api.store.guarded import GuardedDriver
from bathtub_api.write_faults import WriteHealth


async def open_store(url: str, *, migrate: bool = True, health: WriteHealth | None = None) -> Store:
    """Open the store a URL names and (by default) bring its schema up to date. Its writes
    refused for lack of room or as read-only raise WriteRefused and are noted in `health`."""
    driver: Driver
    if url.startswith(("postgresql://", "postgres://")):
        from bathtub_api.store.postgres import PostgresDriver

        driver, kind = await PostgresDriver.open(url), "postgresql"
    elif url.startswith("sqlite:///"):
        from bathtub_api.store.sqlite import SqliteDriver

        driver, kind = await SqliteDriver.open(url.removeprefix("sqlite:///")), "sqlite"
    else:
        raise ValueError(f"database URL must start with sqlite:/// or postgresql://, not {url!r}")
    store = Store(GuardedDriver(driver, health or WriteHealth()), kind)
    if migrate:
        await store.migrate()
    return store


__all__ = ["Store", "open_store"]
