"""Datasets: create (original route and tool), read a page (get/dataset), list, and the
atomic, idempotent ingest of more rows."""

from __future__ import annotations

from typing import Any, Literal

from aiohttp import web

from bathtub.errors import InputError
from bathtub_api import tables
from bathtub_api.errors import ApiError, not_found
from bathtub_api.fields import Columns, Id, Rows, Text, integer, text
from bathtub_api.ids import iso, new_id
from bathtub_api.registry import Ctx, Registry, read_json
from bathtub_api.tools.common import ListRequest, Strict, load_item, page

Name = text(min_length=1, max_length=200)
Notes = text(max_length=2000)
CSV_TEXT = ("CSV text (not blank), UTF-8, comma-separated, a header row of column names first; lines end in LF "
            "or CRLF; cells at most 131072 characters; every row as wide as the header")
# Published only (tables.parse_csv checks it, naming the line): not blank, no NUL, no bare CR.
CSV_PATTERN = "^(?:[^\\u0000\\r]|\\r\\n)*[^\\s\\u0000](?:[^\\u0000\\r]|\\r\\n)*$"
MAX_INGEST_KEYS = 200  # idempotency keys remembered per dataset


class Column(Strict):
    name: Text
    type: Literal["integer", "number", "string", "boolean"]


class DatasetCreate(Strict):
    """Give `csv` (text with a header row) or `data` (column name -> array of values)."""

    exactly_one = ("csv", "data")
    name: Name
    notes: Notes = ""
    csv: text(description=CSV_TEXT, json_schema_extra={"pattern": CSV_PATTERN}) | None = None
    data: Columns | None = None


class DatasetCreated(Strict):
    id: str
    name: str
    n_rows: int
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
    rows: Rows | None = None
    data: Columns | None = None
    csv: text(description=CSV_TEXT, json_schema_extra={"pattern": CSV_PATTERN}) | None = None


class RefitModel(Strict):
    id: str
    name: str


class LivesIngested(Strict):
    appended: int
    n_rows: int
    refit: list[RefitModel]
    replayed: bool = False


def dataset_url(ctx: Ctx, dataset_id: str) -> str:
    return ctx.url(f"/api/v1/datasets/{dataset_id}")


async def load_dataset(ctx: Ctx, dataset_id: str) -> dict[str, Any]:
    return await load_item(ctx, "dataset", dataset_id)


async def dataset_columns(ctx: Ctx, dataset_id: str) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The dataset item and all its values by column: what fitting reads."""
    item = await load_dataset(ctx, dataset_id)
    rows = await ctx.store.dataset_all_rows(dataset_id)
    names = [c["name"] for c in item["body"]["columns"]]
    return item, {n: [r[j] for r in rows] for j, n in enumerate(names)}


async def create_dataset(ctx: Ctx, req: DatasetCreate) -> dict[str, Any]:
    if req.csv is not None:
        names, rows = tables.parse_csv(req.csv)
    else:
        names, rows = tables.parse_columns(req.data or {})
    columns = tables.infer_columns(names, rows)
    dataset_id = new_id("dataset")
    body = {"name": req.name, "notes": req.notes, "columns": columns, "row_count": len(rows), "ingest_keys": {}}
    await ctx.store.create_dataset(ctx.user.id, dataset_id, req.name, body, rows)
    return {"id": dataset_id, "name": req.name, "n_rows": len(rows), "columns": columns,
            "url": dataset_url(ctx, dataset_id)}


async def get_dataset(ctx: Ctx, req: DatasetGet) -> dict[str, Any]:
    found = await ctx.store.dataset_page(ctx.user.id, req.id, req.offset, req.limit)
    if found is None:
        raise not_found("dataset", req.id)
    item, rows = found
    body = item["body"]
    names = [c["name"] for c in body["columns"]]
    end = req.offset + len(rows)
    return {
        "id": req.id,
        "name": item["name"],
        "notes": body.get("notes", ""),
        "columns": body["columns"],
        "row_count": body["row_count"],
        "offset": req.offset,
        "limit": req.limit,
        "rows": [dict(zip(names, r)) for r in rows],
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


async def _ingest_source(request: web.Request) -> tuple[list[str] | None, list[Any], str]:
    """(names or None for row objects, rows, field) from a JSON or text/csv body."""
    if request.content_type in ("text/csv", "text/plain", "application/csv"):
        text = (await request.read()).decode("utf-8-sig", errors="strict")
        names, rows = tables.parse_csv(text, "body")
        return names, rows, "body"
    req = LivesIngest.model_validate(await read_json(request))
    if req.csv is not None:
        names, rows = tables.parse_csv(req.csv)
        return names, rows, "csv"
    if req.data is not None:
        names, rows = tables.parse_columns(req.data)
        return names, rows, "data"
    return None, req.rows or [], "rows"


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


async def ingest_lives(ctx: Ctx, request: web.Request) -> dict[str, Any]:
    """Append rows atomically; with an Idempotency-Key header a repeat changes nothing."""
    dataset_id = request.match_info["dataset_id"]
    refit = _bool_query(request, "refit", True)
    key = request.headers.get("Idempotency-Key")
    if key is not None and not 1 <= len(key) <= 200:
        raise ApiError(422, "Idempotency-Key: must be 1 to 200 characters")
    try:
        names, raw_rows, field = await _ingest_source(request)
    except UnicodeDecodeError:
        raise ApiError(422, "body: CSV must be UTF-8 text") from None
    replay: dict[str, Any] = {}
    appended = 0

    def prepare(body: dict[str, Any]) -> tuple[list[list[Any]], dict[str, Any]]:
        nonlocal appended
        keys = body.get("ingest_keys", {})
        if key is not None and key in keys:
            replay.update(keys[key])
            return [], body
        col_names = [c["name"] for c in body["columns"]]
        if names is None:
            rows = tables.parse_row_objects(raw_rows, col_names, field)
            rows, columns = tables.conform(body["columns"], col_names, rows, field)
        else:
            rows, columns = tables.conform(body["columns"], names, raw_rows, field)
        if not rows:
            raise InputError(field, "no rows to append")
        appended = len(rows)
        new_body = {**body, "columns": columns, "row_count": body["row_count"] + len(rows)}
        if key is not None:
            kept = dict(list(keys.items())[-(MAX_INGEST_KEYS - 1):])
            kept[key] = {"appended": len(rows), "n_rows": new_body["row_count"]}
            new_body["ingest_keys"] = kept
        return rows, new_body

    new_body = await ctx.store.append_dataset_rows(ctx.user.id, dataset_id, prepare)
    if new_body is None:
        raise not_found("dataset", dataset_id)
    if replay:
        return {**replay, "refit": [], "replayed": True}
    refitted = await refit_dataset_models(ctx, dataset_id) if refit else []
    return {"appended": appended, "n_rows": new_body["row_count"], "refit": refitted, "replayed": False}


async def refit_dataset_models(ctx: Ctx, dataset_id: str) -> list[dict[str, str]]:
    """Refit, in place, every saved model fitted on this dataset (the life-data tools register
    the refitter; with none registered no model can have been fitted, so nothing to refit)."""
    refitter = REFITTERS.get("life")
    return await refitter(ctx, dataset_id) if refitter else []


REFITTERS: dict[str, Any] = {}


def register(reg: Registry) -> None:
    reg.action("datasets", "create", request=DatasetCreate, response=DatasetCreated, scope="write",
               summary="Create a dataset from CSV text or column arrays")(create_dataset)
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

    reg.body_route("POST", "/api/v1/datasets", create_dataset, request=DatasetCreate, response=DatasetCreated,
                   summary="Create a dataset (original route)", scope="write")
    reg.route("GET", "/api/v1/datasets", summary="List datasets (original route)", response=DatasetList)(list_route)
    reg.route("GET", "/api/v1/datasets/{dataset_id}", summary="First page of a dataset; query offset, limit",
              response=DatasetPage)(get_route)
    reg.route("POST", "/api/ingest/datasets/{dataset_id}/lives", scope="write", request=LivesIngest,
              response=LivesIngested, content_types=("application/json", "text/csv"),
              summary="Append rows atomically (JSON rows/data/csv, or raw text/csv); query refit",
              description="One bad row rejects the request with 422 and no change. Send an Idempotency-Key "
                          "header to make retries safe: a repeated key answers the first result and appends "
                          "nothing.")(ingest_lives)
