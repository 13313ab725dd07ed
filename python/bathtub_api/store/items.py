"""Stored items (datasets, models, diagrams, reports, ...: one table, a kind and a JSON body) and
the mail outbox written with them in one transaction."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from bathtub_api.ids import now
from bathtub_api.store.common import Driver, KeyTaken, KeyUse, claim_key, dumps, list_filters, loads


class ItemQueries:
    db: Driver

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
        where, args = list_filters("name", name_contains, created_after)
        rows = await self.db.fetch(
            "SELECT id, name, created_at, updated_at, body FROM items WHERE owner = ? AND kind = ?" + where
            + " ORDER BY created_at, id LIMIT ? OFFSET ?", owner, kind, *args, limit, offset)
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
