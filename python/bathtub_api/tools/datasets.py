"""Datasets: create (original route and tool), read a page (get/dataset), list, and the
atomic, idempotent ingest of more rows."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from aiohttp import web
from pydantic import Field

from bathtub.errors import InputError, RowError
from bathtub_api import bulk, idempotency, tables
from bathtub_api.errors import ApiError, not_found
from bathtub_api.fields import CSV_PATTERN, CSV_TEXT, Columns, Id, Rows, Text, integer, text
from bathtub_api.ids import iso, new_id
from bathtub_api.registry import Ctx, Registry, read_json
from bathtub_api.store.common import KeyUse
from bathtub_api.store.datasets import CHUNK_ROWS, DatasetChange, DatasetSnapshot, ingest_scope
from bathtub_api.tools.common import ListRequest, Strict, page

Name = text(min_length=1, max_length=200)
Notes = text(max_length=2000)
# What JSON Schema cannot say of a table: the width of CSV rows against their header, a header's
# cells, the lengths of column arrays (tables.py refuses them in these words).
TABLE_RULES = ("csv.header[]: column names must be non-empty strings", "csv.header[]: column names are at most",
               "csv.header.*: column name appears twice", "csv.line *: the header has",
               "csv.line *: a cell is longer than", "data: columns must have equal lengths",
               "data.*: column name appears twice", "rows[]: a column name appears twice")
log = logging.getLogger("bathtub_api.datasets")


class Column(Strict):
    name: Text
    type: Literal["integer", "number", "string", "boolean"]


class DatasetCreate(Strict):
    """Give `csv` (text with a header row) or `data` (column name -> array of values)."""

    exactly_one = ("csv", "data")
    cross_field = TABLE_RULES
    name: Name
    notes: Notes = ""
    csv: text(description=CSV_TEXT, json_schema_extra={"pattern": CSV_PATTERN}) | None = None
    data: Columns | None = None


class DatasetCreated(Strict):
    id: str
    name: str
    row_count: int = Field(description="rows in the dataset now (the name get/dataset uses too)")
    n_rows: int = Field(description="the same as row_count: the older name, kept for compatibility")
    columns: list[Column]
    url: str


class DatasetGet(Strict):
    id: Id
    offset: integer(ge=0) = 0
    limit: integer(ge=1, le=500) = 100


class DatasetPage(Strict):
    id: str
    name: str
    notes: str
    columns: list[Column]
    row_count: int
    offset: int
    limit: int
    rows: list[dict[str, Any]]
    next_offset: int | None
    created_at: str | None
    updated_at: str | None


class DatasetSummary(Strict):
    id: str
    name: str
    row_count: int
    columns: list[Column]
    created_at: str | None
    url: str


class DatasetList(Strict):
    items: list[DatasetSummary]
    next_offset: int | None


class LivesIngest(Strict):
    """JSON body of the lives ingest: `rows` (objects), `data` (column arrays) or `csv` text.
    Raw CSV is also accepted with Content-Type text/csv."""

    exactly_one = ("rows", "data", "csv")
    cross_field = TABLE_RULES
    rows: Rows | None = None
    data: Columns | None = None
    csv: text(description=CSV_TEXT, json_schema_extra={"pattern": CSV_PATTERN}) | None = None


class RefitModel(Strict):
    id: str
    name: str


class LivesIngested(Strict):
    appended: int
    row_count: int = Field(description="rows in the dataset now (the name get/dataset uses too)")
    n_rows: int = Field(description="the same as row_count: the older name, kept for compatibility")
    refit: list[RefitModel]
    replayed: bool = False


class RowsDelete(Strict):
    """Delete rows by their 0-based index (as `get/dataset` numbers them); later rows move up."""

    id: str
    rows: Annotated[list[integer(ge=0)], Field(min_length=1, max_length=100_000)]


class RowsDeleted(Strict):
    deleted: int
    row_count: int = Field(description="rows in the dataset now (the name get/dataset uses too)")
    n_rows: int = Field(description="the same as row_count: the older name, kept for compatibility")
    refit: list[RefitModel]


class DatasetDelete(Strict):
    id: str


class DatasetDeleted(Strict):
    id: str
    deleted: bool


@dataclass(frozen=True)
class ModelHooks:
    """What the models fitted on a dataset need from a change to it (the life tools register
    them; datasets cannot import the tools that import datasets)."""

    # (model body, the new rows by column): raise RowError for a row the model cannot read
    check_rows: Callable[[dict[str, Any], dict[str, list[Any]]], None]
    # (ctx, model body, every row by column): the model's new body, fitted off the event loop
    refit: Callable[[Ctx, dict[str, Any], dict[str, list[Any]]], Awaitable[dict[str, Any]]]


MODEL_HOOKS: dict[str, ModelHooks] = {}  # "life" -> hooks
CREATE_SCOPE = "datasets.create"
MAX_ATTEMPTS = 8  # plans redone when another process changed the dataset before the commit
_LOCKS: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()


def dataset_lock(dataset_id: str) -> asyncio.Lock:
    """One writer at a time per dataset in this process, so concurrent ingests, deletes and
    fits take turns instead of redoing each other's refits; across processes the version check
    in the commit keeps them correct."""
    lock = _LOCKS.get(dataset_id)
    if lock is None:
        lock = _LOCKS[dataset_id] = asyncio.Lock()
    return lock


def dataset_url(ctx: Ctx, dataset_id: str) -> str:
    return ctx.url(f"/api/v1/datasets/{dataset_id}")


async def snapshot(ctx: Ctx, dataset_id: str) -> DatasetSnapshot:
    snap = await ctx.store.dataset_snapshot(ctx.user.id, dataset_id)
    if snap is None:
        raise not_found("dataset", dataset_id)
    return snap


def _parse_create(req: DatasetCreate) -> tuple[list[bulk.Row], list[dict[str, str]]]:
    if req.csv is not None:
        names, rows = tables.parse_csv(req.csv)
    else:
        names, rows = tables.parse_columns(req.data or {})
    return rows, tables.infer_columns(names, rows)


async def create_dataset(ctx: Ctx, req: DatasetCreate) -> dict[str, Any]:
    """Parse and store a new dataset (parsing off the event loop); with an Idempotency-Key
    header a retry answers the first result and creates nothing."""
    key = None
    if ctx.idempotency_key is not None:  # the request's canonical text and its hash: 20 MB is not hashed on the loop
        key = await asyncio.to_thread(
            lambda: idempotency.key_use(ctx, CREATE_SCOPE, idempotency.canonical(req.model_dump())))
    if key is not None and (first := await idempotency.replay(ctx, key)) is not None:
        return first
    rows, columns = await asyncio.to_thread(_parse_create, req)
    try:
        dataset_id = new_id("dataset")
        body = {"name": req.name, "notes": req.notes, "columns": columns, "row_count": len(rows)}
        answer = {"id": dataset_id, "name": req.name, "row_count": len(rows), "n_rows": len(rows),
                  "columns": columns, "url": dataset_url(ctx, dataset_id)}
        if await ctx.store.create_dataset(ctx.user.id, dataset_id, req.name, body, rows, key, answer) == "key_taken":
            assert key is not None
            return await _replay_taken(ctx, key)
        return answer
    finally:
        await bulk.release(rows)


async def _replay_taken(ctx: Ctx, key: KeyUse) -> dict[str, Any]:
    """A concurrent request with the same key committed first: answer what it answered."""
    first = await idempotency.replay(ctx, key)
    if first is None:  # claimed and already expired: only with a retention of about zero
        raise ApiError(409, f"{idempotency.HEADER}: {key.key!r} is in use by a concurrent request; retry")
    return first


async def get_dataset(ctx: Ctx, req: DatasetGet) -> dict[str, Any]:
    found = await ctx.store.dataset_page(ctx.user.id, req.id, req.offset, req.limit)
    if found is None:
        raise not_found("dataset", req.id)
    item, rows = found
    body = item["body"]
    as_object = tables.row_objects(tuple(c["name"] for c in body["columns"]))
    end = req.offset + len(rows)
    return {
        "id": req.id,
        "name": item["name"],
        "notes": body.get("notes", ""),
        "columns": body["columns"],
        "row_count": body["row_count"],
        "offset": req.offset,
        "limit": req.limit,
        "rows": list(map(as_object, rows)),
        "next_offset": end if end < body["row_count"] else None,
        "created_at": iso(item["created_at"]),
        "updated_at": iso(item["updated_at"]),
    }


async def list_datasets(ctx: Ctx, req: ListRequest) -> dict[str, Any]:
    items, next_offset = await page(ctx, "dataset", req)
    return {
        "items": [
            {"id": i["id"], "name": i["name"], "row_count": i["body"]["row_count"], "columns": i["body"]["columns"],
             "created_at": iso(i["created_at"]), "url": dataset_url(ctx, i["id"])}
            for i in items
        ],
        "next_offset": next_offset,
    }


async def _ingest_source(request: web.Request) -> tuple[list[str] | None, list[Any], str, bytes]:
    """(names or None for row objects, rows, field, the request as hashed for its key) from a
    JSON or text/csv body; CSV is parsed off the event loop."""
    if request.content_type in ("text/csv", "text/plain", "application/csv"):
        raw = await request.read()

        def parse_text() -> tuple[list[str], list[Any], str, bytes]:
            try:
                text = raw.decode("utf-8-sig", errors="strict")
            except UnicodeDecodeError:
                raise ApiError(422, "body: CSV must be UTF-8 text") from None
            return *tables.parse_csv(text, "body"), "body", b"csv\n" + raw  # a 20 MB copy: here, not on the loop

        return await asyncio.to_thread(parse_text)
    req = LivesIngest.model_validate(await read_json(request))

    def parse_json() -> tuple[list[str] | None, list[Any], str, bytes]:
        request_bytes = b"json\n" + idempotency.canonical(req.model_dump(exclude_none=True))
        if req.csv is not None:
            return *tables.parse_csv(req.csv), "csv", request_bytes
        if req.data is not None:
            return *tables.parse_columns(req.data), "data", request_bytes
        return None, req.rows or [], "rows", request_bytes

    return await asyncio.to_thread(parse_json)


def _bool_query(request: web.Request, name: str, default: bool) -> bool:
    raw = request.query.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ApiError(422, f"{name}: must be true or false")


def _row_error(field: str, e: RowError) -> InputError:
    """A model's row rule broken by row `e.row` of column `e.field`, named as the request sent it."""
    return InputError(f"{field}[{e.row}].{e.field}", e.row_rule)


def _check_new_rows(snap: DatasetSnapshot, names: list[str] | None, raw: list[Any],
                    field: str) -> tuple[list[bulk.Row], list[dict[str, str]]]:
    """Rows conformed to the dataset's columns and checked against every role its models map:
    all of it before anything is written (runs off the event loop)."""
    col_names = [c["name"] for c in snap.body["columns"]]
    if names is None:
        rows = tables.parse_row_objects(raw, col_names, field)
        rows, columns = tables.conform(snap.body["columns"], col_names, rows, field)
    else:
        rows, columns = tables.conform(snap.body["columns"], names, raw, field)
    if not rows:
        raise InputError(field, "no rows to append")
    hooks = MODEL_HOOKS.get("life")
    if hooks is not None and snap.models:
        new = tables.by_column(col_names, rows)
        for model in snap.models:
            try:
                hooks.check_rows(model["body"], new)
            except RowError as e:
                raise _row_error(field, e) from None
    return rows, columns


async def _refit_releasing(ctx: Ctx, snap: DatasetSnapshot, columns: dict[str, list[Any]], *,
                           unused: list[list[Any]], spent: list[list[Any]]) -> dict[str, dict[str, Any]]:
    """`_refit`, freeing big row lists off the loop (`bulk.release`): `spent` in any case, and
    `unused` (the rows the change would have written) when the refit refuses the change."""
    try:
        return await _refit(ctx, snap, columns)
    except BaseException:
        await bulk.release(*unused)
        raise
    finally:
        await bulk.release(*spent)


async def _refit(ctx: Ctx, snap: DatasetSnapshot, columns: dict[str, list[Any]]) -> dict[str, dict[str, Any]]:
    """New bodies of every model fitted on the dataset, from `columns` (all rows after the
    change). A fit the data makes impossible is a 422 naming the model; nothing is applied."""
    hooks = MODEL_HOOKS.get("life")
    out: dict[str, dict[str, Any]] = {}
    if hooks is None:
        return out
    for model in snap.models:
        what = f"refit of model {model['name']!r} ({model['id']})"
        try:
            out[model["id"]] = await hooks.refit(ctx, model["body"], columns)
        except InputError as e:
            raise ApiError(422, f"{what} failed: {e}; nothing was applied") from None
        except (ValueError, ArithmeticError) as e:
            log.warning("%s failed on dataset %s", what, snap.id, exc_info=True)
            raise ApiError(422, f"{what} failed: {type(e).__name__}: {e}; nothing was applied") from None
    return out


Plan = Callable[[DatasetSnapshot], Awaitable[DatasetChange]]


def _lists(*values: Any) -> list[list[Any]]:
    return [v for v in values if isinstance(v, list)]


async def change_dataset(ctx: Ctx, dataset_id: str, plan: Plan, *, key: KeyUse | None = None) -> dict[str, Any]:
    """Plan a change on a snapshot of the dataset (validate, refit: nothing written), then
    commit it in one transaction if the dataset and its models are unchanged, else plan again
    on what is there now. Returns the change's answer."""
    async with dataset_lock(dataset_id):
        for _ in range(MAX_ATTEMPTS):
            snap = await snapshot(ctx, dataset_id)
            change = await plan(snap)
            try:
                outcome = await ctx.store.commit_dataset(ctx.user.id, snap, replace(change, key=key))
            finally:
                await bulk.release(*_lists(change.rows))
            if outcome == "ok":
                return change.answer
            if outcome == "missing":
                raise not_found("dataset", dataset_id)
            if outcome == "key_taken":
                assert key is not None
                return {**await _replay_taken(ctx, key), "replayed": True}
    raise ApiError(409, f"dataset {dataset_id} kept changing while this request was applied; nothing was "
                        "applied, retry")


async def ingest_lives(ctx: Ctx, request: web.Request) -> dict[str, Any]:
    """Append rows all-or-nothing: checked against the columns and the models' roles, appended
    and refitted in one commit; with an Idempotency-Key header a retry changes nothing."""
    dataset_id = request.match_info["dataset_id"]
    refit = _bool_query(request, "refit", True)
    names, raw_rows, field, request_bytes = await _ingest_source(request)
    try:
        # copying and hashing 20 MB is tens of milliseconds: on a thread (the key is checked there too)
        key = await asyncio.to_thread(
            lambda: idempotency.key_use(ctx, ingest_scope(dataset_id), f"refit={refit}\n".encode() + request_bytes))
        if key is not None and (first := await idempotency.replay(ctx, key)) is not None:
            return {**first, "replayed": True}
        return await change_dataset(ctx, dataset_id, _ingest_plan(ctx, names, raw_rows, field, refit), key=key)
    finally:
        await bulk.release(raw_rows)


def _ingest_plan(ctx: Ctx, names: list[str] | None, raw_rows: list[Any], field: str, refit: bool) -> Plan:
    async def plan(snap: DatasetSnapshot) -> DatasetChange:
        rows, columns = await asyncio.to_thread(_check_new_rows, snap, names, raw_rows, field)
        models: dict[str, dict[str, Any]] = {}
        if refit and snap.models:
            old = await ctx.store.dataset_rows(snap.id)
            names_now = [c["name"] for c in columns]
            by_name = await asyncio.to_thread(tables.by_column, names_now, old, rows)
            models = await _refit_releasing(ctx, snap, by_name, unused=[rows], spent=[old, *by_name.values()])
        n_rows = snap.body["row_count"] + len(rows)
        body = {k: v for k, v in snap.body.items() if k != "ingest_keys"}  # keys live in their own table now
        answer = {"appended": len(rows), "row_count": n_rows, "n_rows": n_rows,
                  "refit": [{"id": m["id"], "name": m["name"]} for m in snap.models if m["id"] in models],
                  "replayed": False}
        return DatasetChange(body={**body, "columns": columns, "row_count": n_rows}, answer=answer, rows=rows,
                             models=models)

    return plan


async def delete_rows(ctx: Ctx, req: RowsDelete) -> dict[str, Any]:
    """Delete rows by index and refit the dataset's models on the rest, all or nothing."""

    async def plan(snap: DatasetSnapshot) -> DatasetChange:
        rows = await ctx.store.dataset_rows(snap.id)
        count = len(rows)
        seen: set[int] = set()
        for i, r in enumerate(req.rows):
            if r >= count:
                raise InputError(f"rows[{i}]", f"row {r} does not exist: the dataset has {count} rows")
            if r in seen:
                raise InputError(f"rows[{i}]", f"row {r} is listed twice")
            seen.add(r)
        first = min(seen)
        start = first // CHUNK_ROWS * CHUNK_ROWS  # the rows before this chunk stay as stored

        def remove() -> tuple[list[bulk.Row], list[bulk.Row], dict[str, list[Any]]]:
            kept = [row for i, row in enumerate(rows) if i not in seen]
            return kept, kept[start:], tables.by_column([c["name"] for c in snap.body["columns"]], kept)

        kept, rewritten, columns = await asyncio.to_thread(remove)
        n_kept = len(kept)
        models = await _refit_releasing(ctx, snap, columns, unused=[rewritten], spent=[rows, kept, *columns.values()])
        answer = {"deleted": len(seen), "row_count": n_kept, "n_rows": n_kept,
                  "refit": [{"id": m["id"], "name": m["name"]} for m in snap.models if m["id"] in models]}
        body = {k: v for k, v in snap.body.items() if k != "ingest_keys"}
        return DatasetChange(body={**body, "row_count": n_kept}, answer=answer, rows=rewritten,
                             rewrite_from=first, models=models)

    return await change_dataset(ctx, req.id, plan)


async def delete_dataset(ctx: Ctx, req: DatasetDelete) -> dict[str, Any]:
    """Delete a dataset with its rows; models fitted on it stay (they name it as their source)."""
    async with dataset_lock(req.id):
        if not await ctx.store.delete_dataset(ctx.user.id, req.id):
            raise not_found("dataset", req.id)
    return {"id": req.id, "deleted": True}


KEY_NOTE = ("Send an Idempotency-Key header (1 to 200 printable characters) to make retries safe: a "
            "repeat within the service's key time (24 h by default, Config.idempotency_key_hours) answers "
            "the first result and changes nothing; the same key with a different request is a 409.")
REPAIR_NOTE = ("Only the owner's datasets can be changed (anyone else's id is 404); the change and the "
               "refit of every model fitted on the dataset are applied together or not at all: a refit "
               "the remaining rows make impossible is a 422 naming the model.")


def register(reg: Registry) -> None:
    reg.action("datasets", "create", request=DatasetCreate, response=DatasetCreated, scope="write",
               summary="Create a dataset from CSV text or column arrays", description=KEY_NOTE)(create_dataset)
    reg.action("datasets", "delete_rows", request=RowsDelete, response=RowsDeleted, scope="write",
               summary="Delete rows by 0-based index (later rows move up) and refit the dataset's models",
               description=REPAIR_NOTE)(delete_rows)
    reg.action("datasets", "delete", request=DatasetDelete, response=DatasetDeleted, scope="write",
               summary="Delete a dataset and its rows; models fitted on it stay",
               description="Only the owner can delete a dataset (anyone else's id is 404). Models fitted on "
                           "it keep their parameters and name it as their source.")(delete_dataset)
    reg.action("get", "dataset", request=DatasetGet, response=DatasetPage, selector="kind",
               summary="A dataset's columns with types, row count and a page of rows")(get_dataset)
    reg.action("list", "dataset", request=ListRequest, response=DatasetList, selector="kind",
               summary="The caller's datasets, oldest first")(list_datasets)

    async def get_route(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        q = request.query
        try:
            offset, limit = int(q.get("offset", 0)), int(q.get("limit", 100))
        except ValueError:
            raise ApiError(422, "offset, limit: must be integers") from None
        return await get_dataset(ctx, DatasetGet(id=request.match_info["dataset_id"], offset=offset, limit=limit))

    async def list_route(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        return await list_datasets(ctx, ListRequest())

    async def delete_route(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        return await delete_dataset(ctx, DatasetDelete(id=request.match_info["dataset_id"]))

    reg.body_route("POST", "/api/v1/datasets", create_dataset, request=DatasetCreate, response=DatasetCreated,
                   summary="Create a dataset (original route)", scope="write", description=KEY_NOTE)
    reg.route("GET", "/api/v1/datasets", summary="List datasets (original route)", response=DatasetList)(list_route)
    reg.route("GET", "/api/v1/datasets/{dataset_id}", summary="First page of a dataset; query offset, limit",
              response=DatasetPage)(get_route)
    reg.route("DELETE", "/api/v1/datasets/{dataset_id}", scope="write", response=DatasetDeleted,
              summary="Delete a dataset and its rows (same as datasets delete)")(delete_route)
    reg.route("POST", "/api/ingest/datasets/{dataset_id}/lives", scope="write", request=LivesIngest,
              response=LivesIngested, content_types=("application/json", "text/csv"),
              summary="Append rows atomically (JSON rows/data/csv, or raw text/csv); query refit",
              description="Every row is checked against the dataset's columns and against the roles its "
                          "models read (times present, finite and >= 0, known censoring codes, whole counts "
                          ">= 0): a bad row is a 422 naming it (`rows[i].column`) and nothing is appended. "
                          "The rows are appended and every model fitted on the dataset refitted together: a "
                          "refit the new rows make impossible is a 422 naming the model, with nothing "
                          "applied; refit=false appends without refitting. " + KEY_NOTE)(ingest_lives)


async def insert_fitted(ctx: Ctx, dataset_id: str, kind: str, item_id: str, name: str,
                        fit: Callable[[dict[str, list[Any]], DatasetSnapshot], Awaitable[dict[str, Any]]]) -> None:
    """Fit an item (a model) on a snapshot of the dataset's rows and store it only if the dataset is
    still that snapshot; otherwise fit again: nothing is ever saved fitted on rows that changed."""
    async with dataset_lock(dataset_id):
        for _ in range(MAX_ATTEMPTS):
            snap = await snapshot(ctx, dataset_id)
            names = [c["name"] for c in snap.body["columns"]]
            rows = await ctx.store.dataset_rows(snap.id)
            columns = await asyncio.to_thread(tables.by_column, names, rows)
            try:
                body = await fit(columns, snap)
            finally:
                await bulk.release(rows, *columns.values())
            outcome = await ctx.store.insert_item_on_dataset(ctx.user.id, kind, item_id, name, body, snap)
            if outcome == "missing":
                raise not_found("dataset", dataset_id)
            if outcome == "ok":
                return
    raise ApiError(409, f"dataset_id: dataset {dataset_id} kept changing while it was fitted; retry")
