"""The read path's shortcuts keep every promise: SQLite's reads on the event loop never wait
on a lock there (a busy file sends them to a threaded reader, which waits for it);
page rows as objects are exactly `dict(zip(columns, row))` whatever the column names; a
revocation through the service ends the token at once even with a long token cache."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bathtub_api.auth import TokenCache, hash_token, new_token
from bathtub_api.store import open_store
from bathtub_api.tables import row_objects


def test_row_objects_are_dict_zip_for_any_names() -> None:
    odd = ["time", "a'b", 'q"uote', "back\\slash", "__import__('os').system('false')", "{r}", "r[0]", "", "é ∑ 名",
           "x" * 5000, *(f"c{i}" for i in range(190))]
    row = [1.5, "F", None, True, 3, "s", -2, 0.0, "名", "y", *range(190)]
    made = row_objects(tuple(odd))(row)
    assert made == dict(zip(odd, row, strict=True))
    assert list(made) == odd  # the columns' order, as the answer lists them
    assert row_objects(tuple(odd)) is row_objects(tuple(odd))  # built once per column list
    assert row_objects(())([]) == {}


def busy_error(tmp_path: Path) -> sqlite3.OperationalError:
    """A real SQLITE_BUSY, as a reader gets it from a file another connection holds exclusively."""
    scratch = tmp_path / "scratch.sqlite3"
    holder = sqlite3.connect(scratch, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    reader = sqlite3.connect(scratch, isolation_level=None)
    reader.execute("PRAGMA busy_timeout=0")
    try:
        reader.execute("SELECT * FROM t").fetchall()
    except sqlite3.OperationalError as e:
        assert e.sqlite_errorcode == sqlite3.SQLITE_BUSY
        return e
    finally:
        reader.close()
        holder.close()
    raise AssertionError("the scratch file was not locked")


class Busy:
    """The loop's reader as it is when another process holds the file (a WAL reader meets this
    only in a checkpoint's or recovery's edge cases, which a test cannot time)."""

    def __init__(self, error: sqlite3.OperationalError) -> None:
        self.error, self.calls = error, 0

    def execute(self, sql: str, args: object = ()) -> None:
        self.calls += 1
        raise self.error

    def close(self) -> None:
        pass


async def test_a_busy_file_sends_the_loop_read_to_a_threaded_reader(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'bathtub.sqlite3'}")
    try:
        uid = await store.ensure_user("alice")
        rows = [[float(i), "F" if i % 3 else "S"] for i in range(250)]
        body = {"name": "d", "notes": "", "columns": [{"name": "t", "type": "number"},
                                                       {"name": "state", "type": "string"}], "row_count": 250}
        assert await store.create_dataset(uid, "ds_1", "d", body, rows) == "ok"
        found = await store.dataset_page(uid, "ds_1", 95, 10)
        assert found is not None and found[1] == rows[95:105]  # on the loop

        sqlite = store.db.inner  # type: ignore[attr-defined]  # the SQLite driver under the write guard
        inline, busy = sqlite._inline, Busy(busy_error(tmp_path))
        sqlite._inline = busy
        found = await store.dataset_page(uid, "ds_1", 95, 10)
        assert busy.calls == 1 and found is not None and found[1] == rows[95:105]  # on a thread that waits

        # Any other error is a real one: raised, not hidden behind a second try.
        busy.error = sqlite3.OperationalError("no such table: items")
        with pytest.raises(sqlite3.OperationalError, match="no such table"):
            await store.dataset_page(uid, "ds_1", 95, 10)
        sqlite._inline = inline
    finally:
        await store.close()


async def test_a_revocation_through_the_service_ends_the_cached_token_at_once(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'bathtub.sqlite3'}")
    try:
        uid = await store.ensure_user("alice")
        token = new_token()
        token_id = await store.add_token(uid, hash_token(token), token[:8], ["read"], "t")
        other = new_token()
        await store.add_token(uid, hash_token(other), other[:8], ["read"], "u")
        cache = TokenCache(ttl=3600.0)
        assert (await cache.owner(store, hash_token(token)))["token_id"] == token_id  # type: ignore[index]
        assert await cache.owner(store, hash_token(other)) is not None
        assert await store.revoke_own_token(uid, token_id)
        # Revoked in the store by someone else: the cache trusts its entry until the ttl ...
        assert await cache.owner(store, hash_token(token)) is not None
        cache.forget(token_id)  # ... unless the revocation went through this process
        assert await cache.owner(store, hash_token(token)) is None
        assert await cache.owner(store, hash_token(other)) is not None  # the user's other token lives on
    finally:
        await store.close()
