"""Migration stairway on both stores: for every step, up, down, up again."""

from __future__ import annotations

from bathtub_api.store import open_store
from bathtub_api.store.migrations import MIGRATIONS


async def test_stairway(database_url: str) -> None:
    store = await open_store(database_url, migrate=False)
    try:
        assert await store.migrate(0) == 0
        previous = 0
        for version, _, _ in MIGRATIONS:  # numbers may skip (steps written on parallel branches)
            assert await store.migrate(version) == version
            assert await store.migrate(previous) == previous
            assert await store.migrate(version) == version
            previous = version
        uid = await store.ensure_user("alice")
        assert await store.ensure_user("alice") == uid
    finally:
        await store.close()
