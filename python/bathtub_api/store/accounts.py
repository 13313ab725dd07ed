"""The store's account side beyond creating users and tokens: plans and their quotas, token
names and last use (the API access page), browser sessions and the server's signing secret."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bathtub_api.ids import new_id, now
from bathtub_api.plans import PLANS, PlanLimits, concurrent_jobs_refusal, stored_items_refusal

if TYPE_CHECKING:
    from bathtub_api.store.common import Conn, Driver

# Kinds that are not "stored items" of a plan: an upload waits for its import (then the dataset
# it became counts) and is deleted within the hour either way.
UNCOUNTED_KINDS = ("upload",)
ACTIVE_JOB_STATES = ("queued", "running")


class Accounts:
    db: Driver
    # Set by the app from its configuration; None (the CLI, a bare store) enforces no plan.
    plans: Mapping[str, PlanLimits] | None = None

    # -- plans -------------------------------------------------------------------------------
    async def set_plan(self, user_name: str, plan: str) -> bool:
        """Put a user on a plan; False if there is no such user."""
        if plan not in PLANS:
            raise ValueError(f"plan must be one of {', '.join(PLANS)}")
        return await self.db.execute("UPDATE users SET plan = ? WHERE name = ?", plan, user_name) > 0

    async def user_plan(self, user_name: str) -> str | None:
        row = await self.db.fetchrow("SELECT plan FROM users WHERE name = ?", user_name)
        return None if row is None else str(row["plan"])

    async def _plan_locked(self, tx: Conn, owner: str) -> PlanLimits | None:
        """The owner's plan limits, the user's row locked (PostgreSQL) so quota checks of one
        user run one at a time; SQLite serialises every write transaction anyway."""
        if self.plans is None:
            return None
        row = await tx.fetchrow("SELECT plan FROM users WHERE id = ?" + self.db.for_update, owner)
        plan = str(row["plan"]) if row else "free"
        return self.plans.get(plan) or self.plans["free"]

    async def room_for_item(self, tx: Conn, owner: str, kind: str = "") -> None:
        """Refuse (402) one more stored item past the owner's plan. Call inside the transaction
        that inserts it, so the count and the insert cannot be split by a concurrent request."""
        if kind in UNCOUNTED_KINDS:
            return
        plan = await self._plan_locked(tx, owner)
        if plan is None:
            return
        marks = ", ".join("?" for _ in UNCOUNTED_KINDS)
        row = await tx.fetchrow(f"SELECT COUNT(*) AS n FROM items WHERE owner = ? AND kind NOT IN ({marks})",
                                owner, *UNCOUNTED_KINDS)
        if int(row["n"] if row else 0) >= plan.stored_items:
            raise stored_items_refusal(plan)

    async def check_room_for_item(self, owner: str) -> None:
        """The same refusal before work whose item is stored later (a queued run)."""
        async with self.db.transaction() as tx:
            await self.room_for_item(tx, owner)

    async def room_for_job(self, tx: Conn, owner: str) -> None:
        """Refuse (402) one more queued or running job past the owner's plan (same transaction
        as the job's insert)."""
        plan = await self._plan_locked(tx, owner)
        if plan is None:
            return
        row = await tx.fetchrow("SELECT COUNT(*) AS n FROM jobs WHERE owner = ? AND status IN (?, ?)",
                                owner, *ACTIVE_JOB_STATES)
        if int(row["n"] if row else 0) >= plan.concurrent_jobs:
            raise concurrent_jobs_refusal(plan)

    # -- tokens as their owner sees them ---------------------------------------------------------
    async def user_tokens(self, user_id: str) -> list[dict[str, Any]]:
        """The user's live tokens, oldest first: never the secret, only its first characters."""
        return await self.db.fetch(
            "SELECT id, name, prefix, scopes, created_at, last_used_at FROM tokens "
            "WHERE user_id = ? AND revoked_at IS NULL ORDER BY created_at, id", user_id,
        )

    async def revoke_own_token(self, user_id: str, token_id: str) -> bool:
        """Revoke one of the user's tokens (its sessions end with it); False if not theirs or gone."""
        n = await self.db.execute("UPDATE tokens SET revoked_at = ? WHERE id = ? AND user_id = ? "
                                  "AND revoked_at IS NULL", now(), token_id, user_id)
        return n > 0

    async def touch_token(self, token_id: str, at: float) -> None:
        await self.db.execute("UPDATE tokens SET last_used_at = ? WHERE id = ?", at, token_id)

    # -- sessions --------------------------------------------------------------------------------
    async def server_secret(self, name: str) -> str:
        """A random secret kept in the store, made once: every instance on the store reads the same."""
        await self.db.execute(
            "INSERT INTO server_secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
            name, secrets.token_urlsafe(48), now(),
        )
        row = await self.db.fetchrow("SELECT value FROM server_secrets WHERE name = ?", name)
        assert row is not None
        return str(row["value"])

    async def create_session(self, token_id: str, expires_at: float) -> str:
        sid = new_id("session")
        await self.db.execute("INSERT INTO sessions (id, token_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                              sid, token_id, now(), expires_at)
        return sid

    async def session_owner(self, session_id: str, at: float) -> dict[str, Any] | None:
        """The live session's token and user (as token_owner answers), or None: signed out,
        expired, or its token revoked."""
        row = await self.db.fetchrow(
            "SELECT t.id AS token_id, t.scopes, u.id AS user_id, u.name, u.plan, s.expires_at FROM sessions s "
            "JOIN tokens t ON t.id = s.token_id JOIN users u ON u.id = t.user_id "
            "WHERE s.id = ? AND s.ended_at IS NULL AND s.expires_at > ? AND t.revoked_at IS NULL",
            session_id, at,
        )
        if row is None:
            return None
        return {**row, "scopes": frozenset(s for s in row["scopes"].split(",") if s)}

    async def end_session(self, session_id: str) -> bool:
        return await self.db.execute("UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL",
                                     now(), session_id) > 0

    async def purge_sessions(self, older_than: float) -> int:
        """Forget sessions that expired or ended before `older_than`."""
        return await self.db.execute("DELETE FROM sessions WHERE expires_at < ? OR ended_at < ?",
                                     older_than, older_than)
