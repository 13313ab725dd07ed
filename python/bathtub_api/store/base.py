"""The one Store: every query written once, run by a small dialect driver (SQLite or PostgreSQL).

Queries use `?` placeholders; the PostgreSQL driver rewrites them to `$n`. JSON bodies are
stored as text in both stores so behaviour is identical. Ownership is part of every item
query, so another user's id simply is not found (the service answers 404, never 403).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bathtub_api.ids import new_id, now
from bathtub_api.store.accounts import Accounts
from bathtub_api.store.common import Driver, KeyUse, loads
from bathtub_api.store.datasets import DatasetQueries
from bathtub_api.store.items import ItemQueries
from bathtub_api.store.job_queries import JobQueries
from bathtub_api.store.links import LinkQueries
from bathtub_api.store.migrations import MIGRATIONS, statements
from bathtub_api.store.tracking import TrackingQueries


class Store(ItemQueries, DatasetQueries, JobQueries, TrackingQueries, Accounts, LinkQueries):
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

    # -- idempotency keys ------------------------------------------------------------------
    async def find_key(self, owner: str, key: KeyUse) -> dict[str, Any] | None:
        """The live (unexpired) record of a key: its request hash and first answer."""
        row = await self.db.fetchrow(
            "SELECT request_hash, answer FROM idempotency_keys WHERE owner = ? AND scope = ? AND key = ? "
            "AND created_at >= ?",
            owner, key.scope, key.key, now() - key.ttl_s,
        )
        return None if row is None else {"request_hash": row["request_hash"], "answer": loads(row["answer"])}
