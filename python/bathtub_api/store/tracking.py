"""Tracked fleets' measurements: one row per (fleet, item, time), read per item and appended in
the same transaction as the fleet's new body (its predictions) and the request's idempotency key."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bathtub_api.ids import now
from bathtub_api.store.common import KeyTaken, KeyUse, claim_key, dumps

if TYPE_CHECKING:
    from bathtub_api.store.common import Driver

IN_CHUNK = 500  # item names per IN (...) list


class TrackingQueries:
    db: Driver

    async def tracking_measurements(self, owner: str, fleet_id: str, items: Sequence[str] | None = None
                                    ) -> dict[str, tuple[list[float], list[float]]]:
        """{item: (times, values)} in time order, of the owner's tracked fleet (all items, or those named)."""
        sql = ("SELECT m.item, m.t, m.value FROM tracking_measurements m JOIN items i ON i.id = m.fleet_id "
               "WHERE m.fleet_id = ? AND i.owner = ?")
        rows: list[dict[str, Any]] = []
        if items is None:
            rows = await self.db.fetch(sql + " ORDER BY m.item, m.t", fleet_id, owner)
        else:
            names = list(dict.fromkeys(items))
            for k in range(0, len(names), IN_CHUNK):
                part = names[k:k + IN_CHUNK]
                marks = ", ".join("?" * len(part))
                rows += await self.db.fetch(sql + f" AND m.item IN ({marks}) ORDER BY m.item, m.t", fleet_id, owner,
                                            *part)
        out: dict[str, tuple[list[float], list[float]]] = {}
        for r in rows:
            ts, vs = out.setdefault(r["item"], ([], []))
            ts.append(float(r["t"]))
            vs.append(float(r["value"]))
        return out

    async def commit_tracking(self, owner: str, fleet_id: str, name: str, body: dict[str, Any], if_version: int, *,
                              add: Sequence[tuple[str, float, float]] = (), remove_items: Sequence[str] = (),
                              key: KeyUse | None = None, answer: dict[str, Any] | None = None) -> str:
        """In one transaction, if nobody changed the fleet since `if_version`: its new body, the
        measurements `add`ed ((item, time, value) rows), those of `remove_items` deleted, and the
        request's idempotency `key` with its `answer`. "ok", "changed" (nothing written) or "key_taken"."""
        try:
            async with self.db.transaction() as tx:
                n = await tx.execute(
                    "UPDATE items SET name = ?, body = ?, updated_at = ?, version = version + 1 "
                    "WHERE id = ? AND owner = ? AND kind = 'tracked_fleet' AND version = ?",
                    name, dumps(body), now(), fleet_id, owner, if_version,
                )
                if n == 0:
                    return "changed"
                for item in remove_items:
                    await tx.execute("DELETE FROM tracking_measurements WHERE fleet_id = ? AND item = ?", fleet_id,
                                     item)
                if add:
                    await tx.executemany("INSERT INTO tracking_measurements (fleet_id, item, t, value) "
                                         "VALUES (?, ?, ?, ?)", [(fleet_id, i, t, v) for i, t, v in add])
                if key is not None:
                    await claim_key(tx, owner, key, answer or {})
        except KeyTaken:
            return "key_taken"
        return "ok"
