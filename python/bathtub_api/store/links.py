"""Link queries, mixed into the Store. Share links: a link names one item of its owner; only the
SHA-256 of its secret is stored, so the store cannot give a link's URL back. Upload links are
items (kind `upload`); here only the finding of those a send is receiving into."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bathtub_api.ids import now
from bathtub_api.store.common import loads

if TYPE_CHECKING:
    from bathtub_api.store.common import Driver

_COLUMNS = "id, owner, kind, item_id, created_at, expires_at, revoked_at"


class LinkQueries:
    db: Driver

    async def add_share_link(self, owner: str, link_id: str, kind: str, item_id: str, secret_hash: str,
                             expires_at: float | None) -> None:
        await self.db.execute(
            "INSERT INTO share_links (id, owner, kind, item_id, hash, created_at, expires_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            link_id, owner, kind, item_id, secret_hash, now(), expires_at,
        )

    async def receiving_uploads(self) -> list[dict[str, Any]]:
        """Upload links whose state is `receiving`, any owner (with `owner` and `version`): the
        sends under way, or cut off by a crash. Bodies are compact JSON, so the text test is exact."""
        rows = await self.db.fetch(
            "SELECT id, owner, name, version, body FROM items WHERE kind = 'upload' AND body LIKE ?",
            '%"state":"receiving"%',
        )
        return [{**r, "body": loads(r["body"])} for r in rows]

    async def live_share_link(self, secret_hash: str, at: float) -> dict[str, Any] | None:
        """The live link whose secret hashes to `secret_hash` (with `hash`): None when unknown,
        revoked or expired at `at` — the page answers the same 404 for all three."""
        row = await self.db.fetchrow(
            f"SELECT {_COLUMNS}, hash FROM share_links WHERE hash = ? AND revoked_at IS NULL "
            "AND (expires_at IS NULL OR expires_at > ?)",
            secret_hash, at,
        )
        return None if row is None else dict(row)

    async def list_share_links(self, owner: str, limit: int, offset: int, *, kind: str | None = None,
                               item_id: str | None = None) -> list[dict[str, Any]]:
        sql = f"SELECT {_COLUMNS} FROM share_links WHERE owner = ?"
        args: list[Any] = [owner]
        if kind is not None:
            sql += " AND kind = ?"
            args.append(kind)
        if item_id is not None:
            sql += " AND item_id = ?"
            args.append(item_id)
        rows = await self.db.fetch(sql + " ORDER BY created_at, id LIMIT ? OFFSET ?", *args, limit, offset)
        return [dict(r) for r in rows]

    async def get_share_link(self, owner: str, link_id: str) -> dict[str, Any] | None:
        row = await self.db.fetchrow(f"SELECT {_COLUMNS} FROM share_links WHERE id = ? AND owner = ?",
                                     link_id, owner)
        return None if row is None else dict(row)

    async def revoke_share_link(self, owner: str, link_id: str) -> bool:
        """Revoke a live link; False if it is not the owner's or was already revoked."""
        n = await self.db.execute(
            "UPDATE share_links SET revoked_at = ? WHERE id = ? AND owner = ? AND revoked_at IS NULL",
            now(), link_id, owner,
        )
        return n > 0
