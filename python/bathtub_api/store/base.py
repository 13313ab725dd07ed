"""The one Store: every query written once, run by a small dialect driver (SQLite or PostgreSQL).

Queries use `?` placeholders; the PostgreSQL driver rewrites them to `$n`. JSON bodies are
stored as text in both stores so behaviour is identical. Ownership is part of every item
query, so another user's id simply is not found (the service answers 404, never 403).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import orjson

from bathtub_api.ids import new_id, now
from bathtub_api.store.migrations import MIGRATIONS, statements

CHUNK_ROWS = 100  # dataset rows per stored chunk: a 100-row page decodes at most 200 rows.
# Fixed: chunks are addressed as row // CHUNK_ROWS, so changing it needs a data migration.
MAX_CHUNK = 2**31 - 1  # the INTEGER column's largest value


class Conn(Protocol):
    """What a query needs: the driver's connection or transaction."""

    async def fetch(self, sql: str, *args: Any) -> list[dict[str, Any]]: ...
    async def fetchrow(self, sql: str, *args: Any) -> dict[str, Any] | None: ...
    async def execute(self, sql: str, *args: Any) -> int: ...


class Driver(Conn, Protocol):
    for_update: str  # " FOR UPDATE" where the dialect locks rows, "" where writes are serialised anyway

    def transaction(self) -> AbstractAsyncContextManager[Conn]: ...
    async def close(self) -> None: ...


def dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY).decode()


def loads(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


class Store:
    """Users, tokens, items (datasets, models, diagrams, ...), dataset rows and jobs."""

    def __init__(self, driver: Driver, kind: str) -> None:
        self.db = driver
        self.kind = kind  # "sqlite" or "postgresql", for logs and the health route

    async def close(self) -> None:
        await self.db.close()

    # -- schema -----------------------------------------------------------------------
    async def migrate(self, target: int | None = None) -> int:
        """Apply (or with a lower `target`, undo) migrations; returns the version reached."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION)"
            )
        current = await self.schema_version()
        goal = MIGRATIONS[-1][0] if target is None else target
        if goal >= current:
            steps = [(v, up, True) for v, up, _ in MIGRATIONS if current < v <= goal]
        else:
            steps = [(v, down, False) for v, _, down in reversed(MIGRATIONS) if goal < v <= current]
        for version, sql, going_up in steps:
            async with self.db.transaction() as tx:
                for stmt in statements(sql):
                    await tx.execute(stmt)
                if going_up:
                    await tx.execute("INSERT INTO schema_migrations VALUES (?, ?)", version, now())
                else:
                    await tx.execute("DELETE FROM schema_migrations WHERE version = ?", version)
        return await self.schema_version()

    async def schema_version(self) -> int:
        row = await self.db.fetchrow("SELECT MAX(version) AS v FROM schema_migrations")
        return int(row["v"]) if row and row["v"] is not None else 0

    # -- users and tokens --------------------------------------------------------------
    async def ensure_user(self, name: str) -> str:
        row = await self.db.fetchrow("SELECT id FROM users WHERE name = ?", name)
        if row:
            return str(row["id"])
        uid = new_id("user")
        await self.db.execute(
            "INSERT INTO users (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING", uid, name, now()
        )
        row = await self.db.fetchrow("SELECT id FROM users WHERE name = ?", name)
        assert row is not None
        return str(row["id"])

    async def add_token(self, user_id: str, token_hash: str, prefix: str, scopes: Sequence[str]) -> str:
        tid = new_id("token")
        await self.db.execute(
            "INSERT INTO tokens (id, user_id, hash, prefix, scopes, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            tid, user_id, token_hash, prefix, ",".join(scopes), now(),
        )
        return tid

    async def token_owner(self, token_hash: str) -> dict[str, Any] | None:
        """The live token's user and scopes, or None for an unknown or revoked token."""
        row = await self.db.fetchrow(
            "SELECT t.id AS token_id, t.scopes, u.id AS user_id, u.name FROM tokens t JOIN users u ON u.id = t.user_id "
            "WHERE t.hash = ? AND t.revoked_at IS NULL",
            token_hash,
        )
        if row is None:
            return None
        return {**row, "scopes": frozenset(s for s in row["scopes"].split(",") if s)}

    async def list_tokens(self, user_name: str | None = None) -> list[dict[str, Any]]:
        sql = (
            "SELECT t.id, u.name AS user_name, t.prefix, t.scopes, t.created_at, t.revoked_at "
            "FROM tokens t JOIN users u ON u.id = t.user_id"
        )
        if user_name is None:
            return await self.db.fetch(sql + " ORDER BY t.created_at")
        return await self.db.fetch(sql + " WHERE u.name = ? ORDER BY t.created_at", user_name)

    async def revoke_token(self, token_id: str) -> bool:
        n = await self.db.execute(
            "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", now(), token_id
        )
        return n > 0

    # -- items ---------------------------------------------------------------------------
    async def insert_item(self, owner: str, kind: str, item_id: str, name: str, body: dict[str, Any]) -> None:
        t = now()
        await self.db.execute(
            "INSERT INTO items (id, owner, kind, name, created_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?)",
            item_id, owner, kind, name, t, t, dumps(body),
        )

    async def get_item(self, owner: str, kind: str, item_id: str) -> dict[str, Any] | None:
        row = await self.db.fetchrow(
            "SELECT id, name, created_at, updated_at, version, body FROM items WHERE id = ? AND owner = ? AND kind = ?",
            item_id, owner, kind,
        )
        return None if row is None else {**row, "body": loads(row["body"])}

    async def list_items(self, owner: str, kind: str, limit: int = 100, offset: int = 0) -> list[dict[str, Any]]:
        rows = await self.db.fetch(
            "SELECT id, name, created_at, updated_at, body FROM items WHERE owner = ? AND kind = ? "
            "ORDER BY created_at, id LIMIT ? OFFSET ?",
            owner, kind, limit, offset,
        )
        return [{**r, "body": loads(r["body"])} for r in rows]

    async def update_item(
        self, owner: str, kind: str, item_id: str, name: str, body: dict[str, Any], *, if_version: int | None = None
    ) -> bool:
        """Replace an item's name and body. With `if_version` (from get_item) only if nobody
        updated it since: False then, and the caller re-reads and retries or refuses."""
        sql = (
            "UPDATE items SET name = ?, body = ?, updated_at = ?, version = version + 1 "
            "WHERE id = ? AND owner = ? AND kind = ?"
        )
        args: list[Any] = [name, dumps(body), now(), item_id, owner, kind]
        if if_version is not None:
            sql += " AND version = ?"
            args.append(if_version)
        return await self.db.execute(sql, *args) > 0

    # -- dataset rows ----------------------------------------------------------------------
    async def create_dataset(
        self, owner: str, item_id: str, name: str, body: dict[str, Any], rows: list[list[Any]]
    ) -> None:
        """The dataset item and all its rows, in one transaction."""
        t = now()
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO items (id, owner, kind, name, created_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?)",
                item_id, owner, "dataset", name, t, t, dumps(body),
            )
            await _write_chunks(tx, item_id, 0, 0, [], rows)

    async def dataset_page(
        self, owner: str, dataset_id: str, offset: int, limit: int
    ) -> tuple[dict[str, Any], list[list[Any]]] | None:
        """The dataset item and rows [offset, offset + limit) in one round trip; None if not found."""
        # Chunk numbers are 32-bit in the schema: past that no chunk exists, so clamp rather than overflow.
        first, last = (min(x // CHUNK_ROWS, MAX_CHUNK) for x in (offset, offset + limit - 1))
        found = await self.db.fetch(
            "SELECT i.name, i.created_at, i.updated_at, i.body, c.rows FROM items i "
            "LEFT JOIN dataset_chunks c ON c.dataset_id = i.id AND c.chunk BETWEEN ? AND ? "
            "WHERE i.id = ? AND i.owner = ? AND i.kind = 'dataset' ORDER BY c.chunk",
            first, last, dataset_id, owner,
        )
        if not found:
            return None
        head = found[0]
        item = {"id": dataset_id, "name": head["name"], "created_at": head["created_at"],
                "updated_at": head["updated_at"], "body": loads(head["body"])}
        rows: list[list[Any]] = []
        for c in found:
            if c["rows"] is not None:
                rows.extend(loads(c["rows"]))
        start = offset - first * CHUNK_ROWS
        return item, rows[start : start + limit]

    async def dataset_all_rows(self, dataset_id: str) -> list[list[Any]]:
        chunks = await self.db.fetch(
            "SELECT rows FROM dataset_chunks WHERE dataset_id = ? ORDER BY chunk", dataset_id
        )
        rows: list[list[Any]] = []
        for c in chunks:
            rows.extend(loads(c["rows"]))
        return rows

    async def append_dataset_rows(
        self, owner: str, dataset_id: str, prepare: Callable[[dict[str, Any]], tuple[list[list[Any]], dict[str, Any]]]
    ) -> dict[str, Any] | None:
        """Append atomically: lock the dataset, let `prepare(body)` validate and return
        (rows, new body) — raising rolls everything back — then write. None if not found."""
        async with self.db.transaction() as tx:
            item = await tx.fetchrow(
                "SELECT body FROM items WHERE id = ? AND owner = ? AND kind = 'dataset'" + self.db.for_update,
                dataset_id, owner,
            )
            if item is None:
                return None
            body = loads(item["body"])
            rows, new_body = prepare(body)
            last = await tx.fetchrow(
                "SELECT chunk, n, rows FROM dataset_chunks WHERE dataset_id = ? ORDER BY chunk DESC LIMIT 1",
                dataset_id,
            )
            if last is None:
                await _write_chunks(tx, dataset_id, 0, 0, [], rows)
            else:
                await _write_chunks(tx, dataset_id, last["chunk"], last["n"], loads(last["rows"]), rows)
            await tx.execute(
                "UPDATE items SET body = ?, updated_at = ?, version = version + 1 WHERE id = ?",
                dumps(new_body), now(), dataset_id,
            )
            return new_body

    # -- jobs ----------------------------------------------------------------------------
    async def create_job(self, owner: str, action: str, args: dict[str, Any]) -> str:
        jid = new_id("job")
        await self.db.execute(
            "INSERT INTO jobs (id, owner, action, status, args, created_at) VALUES (?, ?, ?, 'queued', ?, ?)",
            jid, owner, action, dumps(args), now(),
        )
        return jid

    async def get_job(self, owner: str | None, job_id: str) -> dict[str, Any] | None:
        sql = "SELECT id, owner, action, status, args, result, message, created_at, started_at, finished_at FROM jobs"
        if owner is None:
            row = await self.db.fetchrow(sql + " WHERE id = ?", job_id)
        else:
            row = await self.db.fetchrow(sql + " WHERE id = ? AND owner = ?", job_id, owner)
        if row is None:
            return None
        return {**row, "args": loads(row["args"]), "result": loads(row["result"])}

    async def queue_position(self, job_id: str, created_at: float) -> int:
        """1 for the next queued job to start, 2 for the one after, ..."""
        row = await self.db.fetchrow(
            "SELECT COUNT(*) AS n FROM jobs "
            "WHERE status = 'queued' AND (created_at < ? OR (created_at = ? AND id < ?))",
            created_at, created_at, job_id,
        )
        return int(row["n"]) + 1 if row else 1

    async def mark_job_running(self, job_id: str) -> bool:
        n = await self.db.execute(
            "UPDATE jobs SET status = 'running', started_at = ? WHERE id = ? AND status = 'queued'", now(), job_id
        )
        return n > 0

    async def finish_job(self, job_id: str, result: Any) -> None:
        await self.db.execute(
            "UPDATE jobs SET status = 'done', result = ?, finished_at = ? WHERE id = ?", dumps(result), now(), job_id
        )

    async def fail_job(self, job_id: str, message: str) -> None:
        await self.db.execute(
            "UPDATE jobs SET status = 'failed', message = ?, finished_at = ? WHERE id = ?", message, now(), job_id
        )

    async def fail_running_jobs(self, message: str) -> int:
        """Jobs a dead process left running can never finish: fail them, saying why."""
        return await self.db.execute(
            "UPDATE jobs SET status = 'failed', message = ?, finished_at = ? WHERE status = 'running'", message, now()
        )

    async def queued_jobs(self) -> list[dict[str, Any]]:
        rows = await self.db.fetch(
            "SELECT id, owner, action, args FROM jobs WHERE status = 'queued' ORDER BY created_at, id"
        )
        return [{**r, "args": loads(r["args"])} for r in rows]

    async def purge_jobs(self, older_than: float) -> int:
        return await self.db.execute("DELETE FROM jobs WHERE created_at < ?", older_than)


async def _write_chunks(
    tx: Conn, dataset_id: str, chunk: int, filled: int, existing: list[list[Any]], rows: list[list[Any]]
) -> None:
    """Top up the last chunk, then add new ones of CHUNK_ROWS rows each."""
    pending = list(rows)
    if filled and filled < CHUNK_ROWS and pending:
        take = pending[: CHUNK_ROWS - filled]
        pending = pending[len(take) :]
        merged = existing + take
        await tx.execute(
            "UPDATE dataset_chunks SET n = ?, rows = ? WHERE dataset_id = ? AND chunk = ?",
            len(merged), dumps(merged), dataset_id, chunk,
        )
    next_chunk = chunk + 1 if filled else chunk
    for i in range(0, len(pending), CHUNK_ROWS):
        part = pending[i : i + CHUNK_ROWS]
        await tx.execute(
            "INSERT INTO dataset_chunks (dataset_id, chunk, n, rows) VALUES (?, ?, ?, ?)",
            dataset_id, next_chunk, len(part), dumps(part),
        )
        next_chunk += 1

