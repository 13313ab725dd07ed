"""Storage: one Store over two drivers, chosen by URL (sqlite:///path or postgresql://...)."""

from __future__ import annotations

from bathtub_api.store.base import Store


async def open_store(url: str, *, migrate: bool = True) -> Store:
    """Open the store a URL names and (by default) bring its schema up to date."""
    if url.startswith(("postgresql://", "postgres://")):
        from bathtub_api.store.postgres import PostgresDriver

        store = Store(await PostgresDriver.open(url), "postgresql")
    elif url.startswith("sqlite:///"):
        from bathtub_api.store.sqlite import SqliteDriver

        store = Store(await SqliteDriver.open(url.removeprefix("sqlite:///")), "sqlite")
    else:
        raise ValueError(f"database URL must start with sqlite:/// or postgresql://, not {url!r}")
    if migrate:
        await store.migrate()
    return store


__all__ = ["Store", "open_store"]
