"""The one Store: every query written once, run by a small dialect driver (SQLite or PostgreSQL).

Queries use `?` placeholders; the PostgreSQL driver rewrites them to `$n`. JSON bodies are
stored as text in both stores so behaviour is identical. Ownership is part of every item
query, so another user's id simply is not found (the service answers 404, never 403).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from bathtub_api.bulk import Row
from bathtub_api.ids import new_id, now
from bathtub_api.store.accounts import Accounts
from bathtub_api.store.common import Conn, KeyTaken, KeyUse, claim_key, dumps, loads
from bathtub_api.store.links import LinkQueries
from bathtub_api.store.migrations import MIGRATIONS, statements
from bathtub_api.store.tracking import TrackingQueries

CHUNK_ROWS = 100  # dataset rows per stored chunk: a 100-row page decodes at most 200 rows.
# Fixed: chunks are addressed as row // CHUNK_ROWS, so changing it needs a data migration.
MAX_CHUNK = 2**31 - 1  # the INTEGER column's largest value


class Driver(Conn, Protocol):
    for_update: str  # " FOR UPDATE" where the dialect locks rows, "" where writes are serialised anyway

    async def fetch_small(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        """`fetch` for a read an index bounds to a few rows: the hot path's (a page, a token)."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[Conn]: ...
    async def close(self) -> None: ...


Outcome = Literal["ok", "stale", "missing", "key_taken"]


def ingest_scope(dataset_id: str) -> str:
    """The idempotency-key scope of ingests into one dataset."""
    return f"ingest:{dataset_id}"


@dataclass(frozen=True)
class DatasetSnapshot:
    """What a dataset change is planned on (see Store.dataset_snapshot)."""

    id: str
    name: str
    version: int
    body: dict[str, Any]
    models: list[dict[str, Any]]  # {id, name, version, body} of the models fitted on it
    model_versions: dict[str, int]


@dataclass(frozen=True)
class DatasetChange:
    """A planned change: `rows` appended, or (with `rewrite_from`, a row index) the rows from
    there on replaced by `rows`; the new dataset `body`; new bodies of refitted `models`; the
    request's idempotency `key` and the `answer` it replays."""

    body: dict[str, Any]
    answer: dict[str, Any]
    rows: Sequence[Sequence[Any]] = field(default_factory=list)
    rewrite_from: int | None = None
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    key: KeyUse | None = None


def like_escape(text: str) -> str:
    """`text` matched literally inside LIKE (escape character `!`)."""
    return text.replace("!", "!!").replace("%", "!%").replace("_", "!_")


class Store(TrackingQueries, Accounts, LinkQueries):
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

    async def add_token(self, user_id: str, token_hash: str, prefix: str, scopes: Sequence[str],
                        name: str = "") -> str:
        tid = new_id("token")
        await self.db.execute(
            "INSERT INTO tokens (id, user_id, hash, prefix, scopes, created_at, name) VALUES (?, ?, ?, ?, ?, ?, ?)",
            tid, user_id, token_hash, prefix, ",".join(scopes), now(), name,
        )
        return tid

    async def token_owner(self, token_hash: str) -> dict[str, Any] | None:
        """The live token's user and scopes, or None for an unknown or revoked token."""
        found = await self.db.fetch_small(
            "SELECT t.id AS token_id, t.scopes, u.id AS user_id, u.name, u.plan FROM tokens t "
            "JOIN users u ON u.id = t.user_id WHERE t.hash = ? AND t.revoked_at IS NULL",
            token_hash,
        )
        if not found:
            return None
        row = found[0]
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
    async def insert_item(self, owner: str, kind: str, item_id: str, name: str, body: dict[str, Any], *,
                          counted: bool = True) -> None:
        """Store a new item, refused (402) past the owner's plan unless `counted` is False: a
        queued run whose room was checked when it was submitted (check_room_for_item)."""
        t = now()
        async with self.db.transaction() as tx:
            if counted:
                await self.room_for_item(tx, owner, kind)
            await tx.execute(
                "INSERT INTO items (id, owner, kind, name, created_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?)",
                item_id, owner, kind, name, t, t, dumps(body),
            )

    async def get_item(self, owner: str, kind: str, item_id: str) -> dict[str, Any] | None:
        row = await self.db.fetchrow(
            "SELECT id, name, created_at, updated_at, version, body FROM items WHERE id = ? AND owner = ? AND kind = ?",
            item_id, owner, kind,
        )
        return None if row is None else {**row, "body": loads(row["body"])}

    async def find_item(self, kind: str, item_id: str) -> dict[str, Any] | None:
        """An item by id whoever owns it (with `owner`): only for routes whose credential is not a
        user's token (an upload link's own secret). Everything else goes through get_item."""
        row = await self.db.fetchrow(
            "SELECT id, owner, name, created_at, updated_at, version, body FROM items WHERE id = ? AND kind = ?",
            item_id, kind,
        )
        return None if row is None else {**row, "body": loads(row["body"])}

    async def owned_item(self, owner: str, item_id: str) -> dict[str, Any] | None:
        """One of the owner's items of any kind (with `kind`), or None."""
        row = await self.db.fetchrow(
            "SELECT id, kind, name, created_at, updated_at, version, body FROM items WHERE id = ? AND owner = ?",
            item_id, owner,
        )
        return None if row is None else {**row, "body": loads(row["body"])}

    async def items_created_before(self, kind: str, before: float, limit: int = 1000) -> list[dict[str, Any]]:
        """Items of a kind, any owner, created before a time, oldest first (retention purges)."""
        rows = await self.db.fetch(
            "SELECT id, owner, name, created_at, updated_at, version, body FROM items WHERE kind = ? "
            "AND created_at < ? ORDER BY created_at, id LIMIT ?",
            kind, before, limit,
        )
        return [{**r, "body": loads(r["body"])} for r in rows]

    async def list_items(self, owner: str, kind: str, limit: int = 100, offset: int = 0, *,
                         name_contains: str | None = None, created_after: float | None = None
                         ) -> list[dict[str, Any]]:
        """A page of the owner's items of a kind in creation order; the filters are those of every
        `list/<kind>` (name contains, ignoring case; created after an instant)."""
        sql = "SELECT id, name, created_at, updated_at, body FROM items WHERE owner = ? AND kind = ?"
        args: list[Any] = [owner, kind]
        if name_contains:
            sql += " AND LOWER(name) LIKE ? ESCAPE '!'"
            args.append("%" + like_escape(name_contains.lower()) + "%")
        if created_after is not None:
            sql += " AND created_at > ?"
            args.append(created_after)
        rows = await self.db.fetch(sql + " ORDER BY created_at, id LIMIT ? OFFSET ?", *args, limit, offset)
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

    async def delete_item(self, owner: str, kind: str, item_id: str) -> bool:
        """Remove an item (its dataset rows go with it: ON DELETE CASCADE)."""
        n = await self.db.execute("DELETE FROM items WHERE id = ? AND owner = ? AND kind = ?", item_id, owner, kind)
        return n > 0

    async def update_item_with_outbox(self, owner: str, kind: str, item_id: str, name: str, body: dict[str, Any],
                                      if_version: int, mails: Sequence[Mapping[str, str]],
                                      key: KeyUse | None = None, answer: dict[str, Any] | None = None) -> str:
        """Replace an item if nobody updated it since `if_version`, queue `mails` ({recipient, subject,
        body}) and record the request's idempotency `key` with its `answer`, in one transaction: "ok",
        "changed" (the item moved on: nothing written) or "key_taken" (a concurrent retry won)."""
        t = now()
        try:
            async with self.db.transaction() as tx:
                n = await tx.execute(
                    "UPDATE items SET name = ?, body = ?, updated_at = ?, version = version + 1 "
                    "WHERE id = ? AND owner = ? AND kind = ? AND version = ?",
                    name, dumps(body), t, item_id, owner, kind, if_version,
                )
                if n == 0:
                    return "changed"
                for m in mails:
                    await tx.execute(
                        "INSERT INTO mail_outbox (id, owner, recipient, subject, body, created_at, next_try) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)",
                        "mail_" + secrets.token_hex(10), owner, m["recipient"], m["subject"], m["body"], t, t,
                    )
                if key is not None:
                    await claim_key(tx, owner, key, answer or {})
        except KeyTaken:
            return "key_taken"
        return "ok"

    async def pending_mails(self, at: float, limit: int = 100) -> list[dict[str, Any]]:
        return await self.db.fetch(
            "SELECT id, owner, recipient, subject, body, attempts FROM mail_outbox WHERE sent_at IS NULL "
            "AND next_try <= ? ORDER BY next_try, id LIMIT ?", at, limit,
        )

    async def mail_done(self, mail_id: str, *, sent_at: float | None, error: str | None = None,
                        next_try: float | None = None) -> None:
        """A delivery attempt's outcome: sent, or failed with the error and when to try again."""
        if sent_at is not None:
            await self.db.execute("UPDATE mail_outbox SET sent_at = ?, attempts = attempts + 1, last_error = NULL "
                                  "WHERE id = ?", sent_at, mail_id)
        else:
            await self.db.execute("UPDATE mail_outbox SET attempts = attempts + 1, last_error = ?, next_try = ? "
                                  "WHERE id = ?", (error or "")[:2000], next_try, mail_id)

    async def outbox(self, owner: str) -> list[dict[str, Any]]:
        return await self.db.fetch(
            "SELECT id, recipient, subject, created_at, attempts, sent_at, last_error FROM mail_outbox "
            "WHERE owner = ? ORDER BY created_at, id", owner,
        )

    # -- dataset rows ----------------------------------------------------------------------
    async def create_dataset(
        self, owner: str, item_id: str, name: str, body: dict[str, Any], rows: Sequence[Sequence[Any]],
        key: KeyUse | None = None, answer: dict[str, Any] | None = None,
    ) -> Outcome:
        """The dataset item, all its rows and the request's idempotency key (with its `answer`),
        in one transaction: "ok", or "key_taken" (nothing written) if the key was claimed first."""
        t = now()
        try:
            async with self.db.transaction() as tx:
                await self.room_for_item(tx, owner, "dataset")
                if key is not None:
                    await claim_key(tx, owner, key, answer or {})
                await tx.execute(
                    "INSERT INTO items (id, owner, kind, name, created_at, updated_at, body) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    item_id, owner, "dataset", name, t, t, dumps(body),
                )
                await _write_chunks(tx, item_id, 0, 0, [], rows)
        except KeyTaken:
            return "key_taken"
        return "ok"

    async def dataset_page(
        self, owner: str, dataset_id: str, offset: int, limit: int
    ) -> tuple[dict[str, Any], list[list[Any]]] | None:
        """The dataset item and rows [offset, offset + limit) in one round trip; None if not found."""
        # Chunk numbers are 32-bit in the schema: past that no chunk exists, so clamp rather than overflow.
        first, last = (min(x // CHUNK_ROWS, MAX_CHUNK) for x in (offset, offset + limit - 1))
        found = await self.db.fetch_small(
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

    async def dataset_snapshot(self, owner: str, dataset_id: str) -> DatasetSnapshot | None:
        """The dataset and the models fitted on it; None if not found. Read without a lock (and
        its rows, if needed, after it): `commit_dataset` applies a change planned on it only if
        neither the dataset nor its models changed since."""
        item = await self.db.fetchrow(
            "SELECT name, version, body FROM items WHERE id = ? AND owner = ? AND kind = 'dataset'", dataset_id, owner
        )
        if item is None:
            return None
        candidates = await _models_on(self.db, owner, dataset_id)
        models = [m for m in candidates if (m["body"].get("source") or {}).get("dataset_id") == dataset_id]
        return DatasetSnapshot(dataset_id, item["name"], item["version"], loads(item["body"]), models,
                               {m["id"]: m["version"] for m in candidates})

    async def dataset_rows(self, dataset_id: str) -> list[Row]:
        """All rows of a dataset, decoded off the event loop."""
        chunks = await self.db.fetch("SELECT rows FROM dataset_chunks WHERE dataset_id = ? ORDER BY chunk", dataset_id)
        return await asyncio.to_thread(_decode_chunks, [c["rows"] for c in chunks])

    async def commit_dataset(self, owner: str, snap: DatasetSnapshot, change: DatasetChange) -> Outcome:
        """Apply a change planned on `snap` in one transaction — rows appended or the rows from
        `change.rewrite_from` on replaced, the new body, the refitted models and the request's
        idempotency key — if the dataset and its models are still as `snap` saw them."""
        try:
            async with self.db.transaction() as tx:
                item = await tx.fetchrow(
                    "SELECT version FROM items WHERE id = ? AND owner = ? AND kind = 'dataset'" + self.db.for_update,
                    snap.id, owner,
                )
                if item is None:
                    return "missing"
                if item["version"] != snap.version or await _model_versions(tx, owner, snap.id) != snap.model_versions:
                    return "stale"
                if change.key is not None:
                    await claim_key(tx, owner, change.key, change.answer)
                if change.rewrite_from is not None:
                    first = change.rewrite_from // CHUNK_ROWS
                    await tx.execute("DELETE FROM dataset_chunks WHERE dataset_id = ? AND chunk >= ?", snap.id, first)
                    await _write_chunks(tx, snap.id, first, 0, [], change.rows)
                elif change.rows:
                    last = await tx.fetchrow(
                        "SELECT chunk, n, rows FROM dataset_chunks WHERE dataset_id = ? ORDER BY chunk DESC LIMIT 1",
                        snap.id,
                    )
                    if last is None:
                        await _write_chunks(tx, snap.id, 0, 0, [], change.rows)
                    else:
                        await _write_chunks(tx, snap.id, last["chunk"], last["n"], loads(last["rows"]), change.rows)
                t = now()
                await tx.execute("UPDATE items SET body = ?, updated_at = ?, version = version + 1 WHERE id = ?",
                                 dumps(change.body), t, snap.id)
                for model_id, body in change.models.items():
                    await tx.execute("UPDATE items SET body = ?, updated_at = ?, version = version + 1 WHERE id = ?",
                                     dumps(body), t, model_id)
                return "ok"
        except KeyTaken:
            return "key_taken"

    async def insert_item_on_dataset(
        self, owner: str, kind: str, item_id: str, name: str, body: dict[str, Any], snap: DatasetSnapshot
    ) -> Outcome:
        """Insert an item computed from `snap`'s rows (a fitted model) if the dataset has not
        changed since: a model is never saved fitted on rows that are no longer the dataset's."""
        async with self.db.transaction() as tx:
            item = await tx.fetchrow(
                "SELECT version FROM items WHERE id = ? AND owner = ? AND kind = 'dataset'" + self.db.for_update,
                snap.id, owner,
            )
            if item is None:
                return "missing"
            if item["version"] != snap.version:
                return "stale"
            await self.room_for_item(tx, owner, kind)
            t = now()
            await tx.execute(
                "INSERT INTO items (id, owner, kind, name, created_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?)",
                item_id, owner, kind, name, t, t, dumps(body),
            )
            return "ok"

    async def delete_dataset(self, owner: str, dataset_id: str) -> bool:
        """The dataset, its rows and its ingest keys; the models fitted on it stay."""
        async with self.db.transaction() as tx:
            n = await tx.execute("DELETE FROM items WHERE id = ? AND owner = ? AND kind = 'dataset'", dataset_id, owner)
            if n:  # its rows go with it (ON DELETE CASCADE)
                await tx.execute("DELETE FROM idempotency_keys WHERE owner = ? AND scope = ?", owner,
                                 ingest_scope(dataset_id))
            return n > 0

    # -- idempotency keys ------------------------------------------------------------------
    async def find_key(self, owner: str, key: KeyUse) -> dict[str, Any] | None:
        """The live (unexpired) record of a key: its request hash and first answer."""
        row = await self.db.fetchrow(
            "SELECT request_hash, answer FROM idempotency_keys WHERE owner = ? AND scope = ? AND key = ? "
            "AND created_at >= ?",
            owner, key.scope, key.key, now() - key.ttl_s,
        )
        return None if row is None else {"request_hash": row["request_hash"], "answer": loads(row["answer"])}

    # -- jobs ----------------------------------------------------------------------------
    # A running job belongs to the instance named in lease_owner until lease_expires_at; every
    # write of a running job's outcome is guarded by that lease, so an instance that lost its
    # job (cancelled by the owner, or recovered after its lease ran out) never overwrites it.
    async def create_job(self, owner: str, action: str, args: dict[str, Any]) -> str:
        """A queued job, refused (402) past the owner's plan's concurrent jobs."""
        jid = new_id("job")
        async with self.db.transaction() as tx:
            await self.room_for_job(tx, owner)
            await tx.execute(
                "INSERT INTO jobs (id, owner, action, status, args, created_at) VALUES (?, ?, ?, 'queued', ?, ?)",
                jid, owner, action, dumps(args), now(),
            )
        return jid

    async def list_jobs(self, owner: str, limit: int, offset: int, *, name_contains: str | None = None,
                        created_after: float | None = None) -> list[dict[str, Any]]:
        """A page of the owner's jobs in creation order; a job's name is its kind (`rbd.simulate`)."""
        sql = "SELECT id, action, status, message, created_at, started_at, finished_at FROM jobs WHERE owner = ?"
        args: list[Any] = [owner]
        if name_contains:
            sql += " AND LOWER(action) LIKE ? ESCAPE '!'"
            args.append("%" + like_escape(name_contains.lower()) + "%")
        if created_after is not None:
            sql += " AND created_at > ?"
            args.append(created_after)
        return [dict(r) for r in await self.db.fetch(sql + " ORDER BY created_at, id LIMIT ? OFFSET ?", *args,
                                                     limit, offset)]

    async def get_job(self, owner: str | None, job_id: str) -> dict[str, Any] | None:
        sql = (
            "SELECT id, owner, action, status, args, result, message, created_at, started_at, finished_at, "
            "lease_owner, lease_expires_at, attempts, progress, eta_s FROM jobs"
        )
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

    async def claim_job(self, job_id: str, instance: str, lease_until: float) -> bool:
        """Take a queued job for `instance` (one instance wins); False if it is not queued."""
        n = await self.db.execute(
            "UPDATE jobs SET status = 'running', started_at = ?, lease_owner = ?, lease_expires_at = ?, "
            "attempts = attempts + 1, progress = 0, eta_s = NULL WHERE id = ? AND status = 'queued'",
            now(), instance, lease_until, job_id,
        )
        return n > 0

    async def renew_lease(
        self, job_id: str, instance: str, lease_until: float, progress: float | None, eta_s: float | None
    ) -> bool:
        """The heartbeat: extend the lease and publish progress. False if the job is no
        longer this instance's to run (cancelled, or recovered by another instance)."""
        n = await self.db.execute(
            "UPDATE jobs SET lease_expires_at = ?, progress = ?, eta_s = ? "
            "WHERE id = ? AND status = 'running' AND lease_owner = ?",
            lease_until, progress, eta_s, job_id, instance,
        )
        return n > 0

    async def finish_job(self, job_id: str, instance: str, result: Any) -> bool:
        return await self._settle(job_id, instance, "status = 'done', result = ?, progress = 1", dumps(result))

    async def fail_job(self, job_id: str, instance: str, message: str) -> bool:
        return await self._settle(job_id, instance, "status = 'failed', message = ?", message)

    async def _settle(self, job_id: str, instance: str, assignments: str, value: Any) -> bool:
        n = await self.db.execute(
            f"UPDATE jobs SET {assignments}, finished_at = ?, lease_owner = NULL, lease_expires_at = NULL, "
            "eta_s = NULL WHERE id = ? AND status = 'running' AND lease_owner = ?",
            value, now(), job_id, instance,
        )
        return n > 0

    async def requeue_job(self, job_id: str, instance: str) -> bool:
        """Give a running job back to the queue because this instance is stopping (not the
        job's fault, so the attempt is not counted); it starts afresh at the next claim."""
        n = await self.db.execute(
            "UPDATE jobs SET status = 'queued', started_at = NULL, lease_owner = NULL, lease_expires_at = NULL, "
            "progress = NULL, eta_s = NULL, attempts = attempts - 1 "
            "WHERE id = ? AND status = 'running' AND lease_owner = ?",
            job_id, instance,
        )
        return n > 0

    async def cancel_job(self, owner: str, job_id: str, message: str) -> bool:
        """Cancel a queued or running job of `owner`; False if it was in neither state."""
        n = await self.db.execute(
            "UPDATE jobs SET status = 'cancelled', message = ?, finished_at = ?, lease_owner = NULL, "
            "lease_expires_at = NULL, eta_s = NULL WHERE id = ? AND owner = ? AND status IN ('queued', 'running')",
            message, now(), job_id, owner,
        )
        return n > 0

    async def recover_expired_jobs(self, at: float, max_attempts: int, message: str) -> tuple[int, int]:
        """Running jobs whose lease ran out (their instance died): requeue them, or fail
        them with `message` once they used `max_attempts`. Returns (requeued, failed). A job
        left running before leases existed has no lease, so it counts as expired."""
        async with self.db.transaction() as tx:
            failed = await tx.execute(
                "UPDATE jobs SET status = 'failed', message = ?, finished_at = ?, lease_owner = NULL, "
                "lease_expires_at = NULL, eta_s = NULL "
                "WHERE status = 'running' AND COALESCE(lease_expires_at, 0) < ? AND attempts >= ?",
                message, at, at, max_attempts,
            )
            requeued = await tx.execute(
                "UPDATE jobs SET status = 'queued', started_at = NULL, lease_owner = NULL, lease_expires_at = NULL, "
                "progress = NULL, eta_s = NULL WHERE status = 'running' AND COALESCE(lease_expires_at, 0) < ?",
                at,
            )
        return requeued, failed

    async def queued_jobs(self) -> list[dict[str, Any]]:
        rows = await self.db.fetch(
            "SELECT id, owner, action, args FROM jobs WHERE status = 'queued' ORDER BY created_at, id"
        )
        return [{**r, "args": loads(r["args"])} for r in rows]

    async def purge_jobs(self, older_than: float) -> int:
        return await self.db.execute("DELETE FROM jobs WHERE created_at < ? AND status <> 'running'", older_than)


async def _write_chunks(
    tx: Conn, dataset_id: str, chunk: int, filled: int, existing: list[Any], rows: Sequence[Sequence[Any]]
) -> None:
    """Top up the last chunk, then add new ones of CHUNK_ROWS rows each (encoded off the event
    loop when there are many, and sent in one batch)."""
    pending = rows
    if filled and filled < CHUNK_ROWS and pending:
        take = pending[: CHUNK_ROWS - filled]
        pending = pending[len(take) :]
        merged = [*existing, *take]
        await tx.execute(
            "UPDATE dataset_chunks SET n = ?, rows = ? WHERE dataset_id = ? AND chunk = ?",
            len(merged), dumps(merged), dataset_id, chunk,
        )
    first = chunk + 1 if filled else chunk

    def encode() -> list[tuple[Any, ...]]:
        return [(dataset_id, first + k, len(part), dumps(part))
                for k, part in enumerate(pending[i : i + CHUNK_ROWS] for i in range(0, len(pending), CHUNK_ROWS))]

    if not pending:
        return
    batch = encode() if len(pending) <= 10 * CHUNK_ROWS else await asyncio.to_thread(encode)
    await tx.executemany("INSERT INTO dataset_chunks (dataset_id, chunk, n, rows) VALUES (?, ?, ?, ?)", batch)


async def _models_on(conn: Conn, owner: str, dataset_id: str) -> list[dict[str, Any]]:
    """The owner's models whose body names the dataset (a superset of those fitted on it:
    the caller checks `source.dataset_id`). Bodies are compact JSON, so the text test is exact
    up to LIKE's `_` wildcard."""
    rows = await conn.fetch(
        "SELECT id, name, version, body FROM items WHERE owner = ? AND kind = 'model' AND body LIKE ? ORDER BY id",
        owner, f'%"dataset_id":"{dataset_id}"%',
    )
    return [{**r, "body": loads(r["body"])} for r in rows]


async def _model_versions(conn: Conn, owner: str, dataset_id: str) -> dict[str, int]:
    rows = await conn.fetch(
        "SELECT id, version FROM items WHERE owner = ? AND kind = 'model' AND body LIKE ?",
        owner, f'%"dataset_id":"{dataset_id}"%',
    )
    return {r["id"]: r["version"] for r in rows}


def _decode_chunks(texts: list[str]) -> list[Row]:
    """Rows as tuples: a decoded chunk's row lists go at once, and the tuples stop being
    tracked by the garbage collector (see bathtub_api.bulk), so a full collection does not walk
    every row of a big dataset while the loop waits for the GIL."""
    rows: list[Row] = []
    for text in texts:
        rows.extend(map(tuple, loads(text)))
    return rows
