"""Dataset rows, stored in chunks of CHUNK_ROWS, and changes to a dataset planned on a snapshot
and committed with its refitted models in one transaction (or refused as stale)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from bathtub_api.bulk import Row
from bathtub_api.ids import now
from bathtub_api.store.common import Conn, Driver, KeyTaken, KeyUse, claim_key, dumps, loads

CHUNK_ROWS = 100  # dataset rows per stored chunk: a 100-row page decodes at most 200 rows.
# Fixed: chunks are addressed as row // CHUNK_ROWS, so changing it needs a data migration.
MAX_CHUNK = 2**31 - 1  # the INTEGER column's largest value

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


class DatasetQueries:
    db: Driver

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

    async def _moved_since(self, tx: Conn, owner: str, snap: DatasetSnapshot, *, with_models: bool) -> Outcome | None:
        """Lock the dataset's row and say whether it is gone ("missing") or changed since `snap`
        ("stale"; with `with_models`, also when a model fitted on it changed); None: as it was."""
        item = await tx.fetchrow(
            "SELECT version FROM items WHERE id = ? AND owner = ? AND kind = 'dataset'" + self.db.for_update,
            snap.id, owner,
        )
        if item is None:
            return "missing"
        if item["version"] != snap.version:
            return "stale"
        if with_models and await _model_versions(tx, owner, snap.id) != snap.model_versions:
            return "stale"
        return None

    async def commit_dataset(self, owner: str, snap: DatasetSnapshot, change: DatasetChange) -> Outcome:
        """Apply a change planned on `snap` in one transaction — rows appended or the rows from
        `change.rewrite_from` on replaced, the new body, the refitted models and the request's
        idempotency key — if the dataset and its models are still as `snap` saw them."""
        try:
            async with self.db.transaction() as tx:
                if (moved := await self._moved_since(tx, owner, snap, with_models=True)) is not None:
                    return moved
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
            if (moved := await self._moved_since(tx, owner, snap, with_models=False)) is not None:
                return moved
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
