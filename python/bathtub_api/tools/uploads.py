"""uploads: single-use upload links, the send route, inspection, and imports into datasets.

Lifecycle of a link (spec): `uploads create` → unused; the first send that gets through makes it
used (a second send 409); 15 minutes after creation a send answers 410; a wrong token or unknown
id 404; after `upload_max_attempts` wrong tokens the link answers 429. A send refused here (too
large, cut off, a full disk) leaves the link unused; so does one cut off by the service's own
death, once its lease runs out (upload_leases.py). The link's secret (`t`, 192 random bits) is stored only as
its SHA-256 and is the send's only credential. Bytes stream to disk in chunks, never whole into
memory, and are deleted once imported or after `upload_retention_s` by a purge that reads the
store, so it survives restarts.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import os
import secrets
import shlex
from pathlib import Path
from typing import Annotated, Any, Literal

from aiohttp import web
from pydantic import Field

from bathtub.errors import InputError
from bathtub.imports import detect_format, diagrams, read_sheets
from bathtub.rbd import outages
from bathtub_api import bulk, tables
from bathtub_api.auth import hash_token
from bathtub_api.errors import ApiError
from bathtub_api.ids import iso, new_id, now
from bathtub_api.private import files_subdir, open_private
from bathtub_api.redact import UPLOAD_TOKEN
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import ListRequest, Open, Strict, load_item, page
from bathtub_api.tools.datasets import DatasetCreated, dataset_url
from bathtub_api.tools.rbd import RbdEdit, edit, store_diagrams
from bathtub_api.upload_leases import ReceivingLease, reset_interrupted

log = logging.getLogger("bathtub_api.uploads")
CHUNK = 256 * 1024
WORKBOOKS = ("xlsx", "xls", "ods")
Purpose = Literal["dataset_import", "excel_import", "rbd_import", "outage_log"]
FileName = Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[^/\\\x00]+$")]
UploadId = Annotated[str, Field(min_length=1, max_length=64)]
Name = Annotated[str, Field(min_length=1, max_length=200)]


class UploadCreate(Strict):
    purpose: Purpose = Field(description="what the file is for: dataset_import (a CSV or one sheet), excel_import "
                                         "(several sheets), rbd_import (a diagram file), outage_log")
    filename: FileName = Field(description="the file's name as the user knows it (shown back; the format is read "
                                           "from the content)")


class UploadCreated(Open):
    upload_id: str
    url: str
    url_fallback: str
    curl_fallback: str
    expires_at: str
    max_bytes: int


class UploadGet(Strict):
    id: UploadId


class UploadSent(Open):
    upload_id: str
    size: int
    sha256: str
    detected_format: str


class DatasetFromUpload(Strict):
    """A CSV upload, or one sheet of a workbook upload, into a new dataset."""

    upload_id: UploadId
    name: Name
    notes: Annotated[str, Field(max_length=2000)] = ""
    sheet: Annotated[str, Field(min_length=1, max_length=200)] | None = Field(
        None, description="workbook sheet; default the first sheet with a table")
    columns: dict[Annotated[str, Field(min_length=1, max_length=200)], Annotated[str, Field(min_length=1)]] | None = \
        Field(None, description="new column name -> column of the sheet; default every column under its own name")


class SheetImport(Strict):
    sheet: Annotated[str, Field(min_length=1, max_length=200)]
    name: Name
    notes: Annotated[str, Field(max_length=2000)] = ""
    columns: dict[Annotated[str, Field(min_length=1, max_length=200)], Annotated[str, Field(min_length=1)]] | None = \
        None


class ExcelImport(Strict):
    """Several sheets of one workbook into several datasets, all or none."""

    upload_id: UploadId
    sheets: Annotated[list[SheetImport], Field(min_length=1, max_length=50)]


class ExcelImported(Open):
    upload_id: str
    datasets: list[DatasetCreated]


ColumnName = Annotated[str, Field(min_length=1, max_length=200)]
LifeId = Literal["best", "exponential", "weibull", "lognormal", "gamma", "loglogistic"]


class OutageColumns(Strict):
    """Which column holds what (spec OutageColumns)."""

    asset: ColumnName = Field(description="the block, by node id or label")
    start: ColumnName
    end: ColumnName | None = Field(None, description="blank cell: still down")
    duration: ColumnName | None = Field(None, description="instead of end, in `unit`")
    reason: ColumnName | None = None
    planned: ColumnName | None = Field(None, description="yes/no or 1/0; planned outages are left out of the fits")


class RbdImport(Strict):
    """A diagram file into diagrams: this service's JSON, a block-list sheet, or an AvailSim4 system workbook."""

    upload_id: UploadId
    name: Name | None = Field(None, description="name of the diagram (default the file's name); JSON diagrams keep "
                                                "their own names")
    unit: Annotated[str, Field(min_length=1, max_length=40)] | None = Field(
        None, description="time unit of the laws (block lists and AvailSim4 have none; default hours)")
    sheet: Annotated[str, Field(min_length=1, max_length=200)] | None = Field(
        None, description="the block-list sheet of a workbook (default the first with an `id` column)")


class OutageLogImport(Strict):
    """Fit each block's time between failures and time to repair from an outage log upload."""

    id: Annotated[str, Field(min_length=1, max_length=64, description="the diagram (rbd id)")]
    upload_id: UploadId
    columns: OutageColumns
    sheet: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    unit: Annotated[str, Field(min_length=1, max_length=40)] | None = Field(
        None, description="unit of numeric times and durations; default the diagram's")
    as_of: float | Annotated[str, Field(max_length=40)] | None = Field(
        None, description="end of the log (a number in the unit, or an ISO 8601 date-time; default the log's last "
                          "time): ongoing outages and the last up periods are censored here")
    observed_from: float | Annotated[str, Field(max_length=40)] | None = Field(
        None, description="start of observation, as as_of (default the first time in the log)")
    tbf_distribution: LifeId = "best"
    ttr_distribution: LifeId = "best"
    apply: bool = Field(False, description="true: set the fitted models on the blocks (one atomic diagram edit); "
                                           "false: only propose them")


def _link(base: str, upload_id: str, token: str) -> str:
    return f"{base}/api/uploads/{upload_id}?{UPLOAD_TOKEN}={token}"  # the log redaction knows the name


def register(reg: Registry) -> None:
    @reg.action("uploads", "create", request=UploadCreate, response=UploadCreated, scope="write",
                summary="A single-use link to send one file (at most 30 MiB, 15 minutes)",
                description="Answers `url` (on the upload host), `url_fallback` (the same link on the main host), "
                            "a ready `curl_fallback` command, `upload_id` and `expires_at`. PUT the bytes to the "
                            "url (or POST them), then import by upload_id: `datasets upload`, `uploads "
                            "import_excel`. The link works once; its token is the only credential of the send.")
    async def create(ctx: Ctx, req: UploadCreate) -> dict[str, Any]:
        config = ctx.config
        upload_id = new_id("upload")
        token = secrets.token_urlsafe(24)  # 192 random bits
        created = now()
        body = {"purpose": req.purpose, "filename": req.filename, "token_hash": hash_token(token), "state": "unused",
                "expires_at": created + config.upload_link_seconds, "attempts": 0, "stored": False}
        await ctx.store.insert_item(ctx.user.id, "upload", upload_id, req.filename, body)
        url = _link(config.upload_base_url or ctx.base_url, upload_id, token)
        fallback = _link(ctx.base_url, upload_id, token)
        return {"upload_id": upload_id, "url": url, "url_fallback": fallback,
                "curl_fallback": f"curl -sS -T {shlex.quote(req.filename)} {shlex.quote(fallback)}",
                "expires_at": iso(body["expires_at"]), "max_bytes": config.upload_max_bytes}

    async def send(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        return await _receive(ctx, request, request.match_info["upload_id"], request.query.get(UPLOAD_TOKEN, ""))

    for method in ("PUT", "POST"):
        reg.route(method, "/api/uploads/{upload_id}", public=True, scope="write",
                  content_types=("application/octet-stream",),
                  query=((UPLOAD_TOKEN, True, "the link's token: its only credential, single use"),),
                  response=UploadSent,
                  summary="Send the file's bytes to a single-use upload link (no Authorization header)",
                  description="409 if the link was used, 410 after 15 minutes, 404 for a wrong token or unknown id, "
                              "413 past 30 MiB (31,457,280 bytes; the rest is not read and the link stays unused), "
                              "429 after too many wrong tokens, 507 if the disk or store is full. A send that does "
                              "not get through (refused, cut off, or the service stopped mid-send) leaves the link "
                              "unused: send again.")(send)

    @reg.action("get", "upload", request=UploadGet, selector="kind",
                summary="What an uploaded file holds, before import (owner only)",
                description="Workbooks and CSV: sheets with header row, columns, row count, sample rows and "
                            "`looks_like` guesses (life_data, interval_data, outage_log, fleet_items, "
                            "diagram_block_list, recurrent_events) with the column mapping each implies.")
    async def get_upload(ctx: Ctx, req: UploadGet) -> dict[str, Any]:
        item = await load_item(ctx, "upload", req.id)
        out = _summary(item)
        if item["body"].get("stored"):
            out["inspection"] = await ctx.jobs.run_cpu(_inspect, str(_path(ctx, req.id)),
                                                       item["body"]["detected_format"])
        return out

    @reg.action("list", "upload", request=ListRequest, selector="kind", summary="The caller's uploads")
    async def list_uploads(ctx: Ctx, req: ListRequest) -> dict[str, Any]:
        items, next_offset = await page(ctx, "upload", req)
        return {"items": [_summary(i) for i in items], "next_offset": next_offset}

    @reg.action("datasets", "upload", request=DatasetFromUpload, response=DatasetCreated, scope="write",
                summary="A CSV upload, or one sheet of a workbook upload, into a new dataset",
                description="`columns` maps new names to the sheet's columns (default: all, as named). The upload's "
                            "bytes are deleted once imported.")
    async def dataset_from_upload(ctx: Ctx, req: DatasetFromUpload) -> dict[str, Any]:
        item, fmt = await _stored(ctx, req.upload_id)
        found = await ctx.jobs.run_cpu(_tables, str(_path(ctx, req.upload_id)), fmt,
                                       None if req.sheet is None else [req.sheet], [(None, req.columns, "")])
        created = await _create_datasets(ctx, [(req.name, req.notes, *found[0])])
        await _imported(ctx, item, [d["id"] for d in created])
        return created[0]

    @reg.action("uploads", "import_excel", request=ExcelImport, response=ExcelImported, scope="write",
                summary="Several sheets of a workbook upload into several datasets, in one atomic step",
                description="Every sheet is read and checked before anything is stored; if any is refused (an "
                            "unknown sheet or column, a bad cell) nothing is created.")
    async def import_excel(ctx: Ctx, req: ExcelImport) -> dict[str, Any]:
        item, fmt = await _stored(ctx, req.upload_id)
        if fmt not in WORKBOOKS:
            raise InputError("upload_id", f"holds a {fmt} file, not a workbook")
        wanted = [s.sheet for s in req.sheets]
        found = await ctx.jobs.run_cpu(_tables, str(_path(ctx, req.upload_id)), fmt, wanted,
                                       [(s.sheet, s.columns, f"sheets[{i}]") for i, s in enumerate(req.sheets)])
        created = await _create_datasets(ctx, [(s.name, s.notes, *f) for s, f in zip(req.sheets, found, strict=True)])
        await _imported(ctx, item, [d["id"] for d in created])
        return {"upload_id": req.upload_id, "datasets": created}

    reg.action("uploads", "import_rbd", request=RbdImport, scope="write",
               summary="A diagram file into diagrams: this service's JSON, a block-list sheet, or an AvailSim4 "
                       "system workbook",
               description="The format is read from the content. AvailSim4 ARCHITECTURE/FAILURE_MODES sheets map "
                           "AND to chains, XooY/XRC/XTF to k-of-n gates, exp/normal/weibull laws to ours; what has "
                           "no counterpart is listed in `unmapped` with what was done instead. Every diagram is "
                           "checked as analyze would before any is stored.")(import_rbd)
    reg.action("rbd", "upload_outage_log", request=OutageLogImport, scope="write",
               summary="Fit blocks' time between failures and time to repair from an outage log upload; propose "
                       "or apply them",
               description="Rows name a block by node id or label (an unknown one is refused naming the row). "
                           "Unplanned outages give repair times (ongoing ones censored) and end up periods as "
                           "failures; planned ones are left out and end up periods as censored. Each block gets "
                           "model records with intervals and a proposed `model`/`repair`; with apply true they are "
                           "set on the diagram in one atomic edit and the upload's bytes are deleted.")(outage_log)


async def import_rbd(ctx: Ctx, req: RbdImport) -> dict[str, Any]:
    item = await load_item(ctx, "upload", req.upload_id)
    _has_bytes(item)
    fmt = item["body"]["detected_format"]
    name = req.name or Path(item["body"]["filename"]).stem or "imported diagram"
    found = await ctx.jobs.run_cpu(_diagrams, str(_path(ctx, req.upload_id)), fmt, name, req.unit or "hours",
                                   req.sheet)
    made = await store_diagrams(ctx, found["diagrams"])
    await _imported(ctx, item, [d["id"] for d in made])
    return {"upload_id": req.upload_id, "format": found["format"], "rbds": made, "unmapped": found["unmapped"]}


def _diagrams(path: str, fmt: str, name: str, unit: str, sheet: str | None) -> dict[str, Any]:
    if fmt == "json":
        return {"format": "bathtub_json", "diagrams": diagrams.from_json(path), "unmapped": []}
    if fmt not in (*WORKBOOKS, "csv"):
        raise InputError("upload_id", f"holds a {fmt} file, not a diagram file (JSON, a block list or an AvailSim4 "
                                      "workbook)")
    sheets = read_sheets(path, fmt)
    if diagrams.is_availsim4(sheets):
        diagram, unmapped = diagrams.from_availsim4(sheets, name, unit)
        return {"format": "availsim4", "diagrams": [diagram], "unmapped": unmapped}
    candidates = [s for s in sheets if (sheet is None or s.name == sheet)
                  and any(h.strip().lower() == "id" for h in s.header)]
    if not candidates:
        raise InputError("sheet" if sheet else "upload_id", "no block-list sheet (a table with an `id` column)")
    return {"format": "block_list", "diagrams": [diagrams.from_block_list(candidates[0], name, unit)],
            "unmapped": []}


async def outage_log(ctx: Ctx, req: OutageLogImport) -> dict[str, Any]:
    item, fmt = await _stored(ctx, req.upload_id)
    diagram = (await load_item(ctx, "rbd", req.id))["body"]
    unit = req.unit or diagram.get("unit")
    blocks = {n["id"]: n["id"] for n in diagram["nodes"] if n["type"] not in ("input", "output")}
    for n in diagram["nodes"]:
        if n.get("label") and n["type"] not in ("input", "output"):
            blocks.setdefault(str(n["label"]).strip(), n["id"])
    sheets = await ctx.jobs.run_cpu(_read, str(_path(ctx, req.upload_id)), fmt, None if req.sheet is None else
                                    [req.sheet])
    if not sheets:
        raise InputError("upload_id", "the file holds no table with a header row")
    sheet = sheets[0]
    for role, col in req.columns.model_dump(exclude_none=True).items():
        if col not in sheet.header:
            raise InputError(f"columns.{role}", f"no column {col!r}; the sheet has {', '.join(sheet.header)}")
    rows = [dict(zip(sheet.header, r, strict=True)) for r in sheet.rows]
    found = await ctx.jobs.run_cpu(_fit_outages, rows, req.columns.model_dump(exclude_none=True), blocks, unit,
                                   req.as_of, req.observed_from, req.tbf_distribution, req.ttr_distribution)
    ops = [{"op": "update_node", "id": b["node_id"], **b["proposal"]} for b in found if b.get("proposal")]
    out: dict[str, Any] = {"rbd_id": req.id, "unit": unit, "blocks": found, "ops": ops, "applied": False,
                           "note": "Planned outages are left out of both fits and end an up period as censored. The "
                                   "first up period of each block runs from the start of observation, taking the "
                                   "block as good as new then (exact for exponential lives)."}
    if req.apply and ops:
        out["rbd"] = await edit(ctx, RbdEdit(id=req.id, ops=ops))
        out["applied"] = True
        await _imported(ctx, item, [req.id])
    return out


def _fit_outages(rows: list[dict[str, Any]], columns: dict[str, str], blocks: dict[str, str], unit: str | None,
                 as_of: float | str | None, observed_from: float | str | None, tbf: str,
                 ttr: str) -> list[dict[str, Any]]:
    found = outages.read_outages(rows, columns, blocks, unit)
    return outages.block_models(found, as_of=outages.instant(as_of, "as_of", unit),
                                observed_from=outages.instant(observed_from, "observed_from", unit),
                                tbf_distribution=tbf, ttr_distribution=ttr)


async def _receive(ctx: Ctx, request: web.Request, upload_id: str, token: str) -> dict[str, Any]:
    config = ctx.config
    item = await ctx.store.find_item("upload", upload_id)
    gone = ApiError(404, "upload_id: no upload link with this id and token")
    if item is None:
        raise gone
    body = item["body"]
    if body["attempts"] >= config.upload_max_attempts:
        raise ApiError(429, "t: too many wrong tokens for this link; create a new link", {"Retry-After": "900"})
    if not hmac.compare_digest(body["token_hash"], hash_token(token)):
        await _count_attempt(ctx, item)
        raise gone
    if body["state"] != "unused":
        raise ApiError(409, "upload_id: this link was used already; create a new link")
    if now() > body["expires_at"]:
        raise ApiError(410, "upload_id: this link expired (links last 15 minutes); create a new link")
    if request.content_length is not None and request.content_length > config.upload_max_bytes:
        raise ApiError(413, f"body: the file is larger than {config.upload_max_bytes} bytes")
    part = f"{upload_id}.{secrets.token_hex(6)}.part"  # this send's own: a later send never shares it
    claimed = {**body, "state": "receiving", "receiver": ctx.jobs.instance,
               "lease_until": now() + config.job_lease_seconds, "part": part}
    if not await ctx.store.update_item(item["owner"], "upload", upload_id, item["name"], claimed,
                                       if_version=item["version"]):
        raise ApiError(409, "upload_id: this link is in use by another send")
    lease = ReceivingLease(ctx.store, item, claimed, item["version"] + 1, config.job_lease_seconds,
                           config.job_heartbeat_seconds)
    lease.start()
    final = _path(ctx, upload_id)
    tmp = final.with_name(part)
    digest = hashlib.sha256()
    size = 0
    stolen = ApiError(409, "upload_id: this send stalled past its lease and the link was reset; send again")
    try:
        with contextlib.suppress(FileNotFoundError):  # a send cut off by a crash left its part behind
            tmp.unlink()
        with os.fdopen(open_private(tmp), "wb") as fh:
            async for chunk in request.content.iter_chunked(CHUNK):
                size += len(chunk)
                if size > config.upload_max_bytes:
                    raise ApiError(413, f"body: the file is larger than {config.upload_max_bytes} bytes")
                if lease.lost:
                    raise stolen
                digest.update(chunk)
                fh.write(chunk)
        fmt = await asyncio.to_thread(detect_format, tmp)
        await lease.stop()
        if lease.lost:
            raise stolen
        tmp.replace(final)
        done = {**body, "state": "used", "stored": True, "size": size, "sha256": digest.hexdigest(),
                "detected_format": fmt, "received_at": now()}
        if not await lease.write(done):
            raise stolen
    except BaseException:
        # The send did not get through (refused, cut off, disk or store full): its bytes go and the
        # link is unused again (spec: a refused send leaves it unused) — if it is still ours.
        await lease.stop()
        for path in (tmp, final):
            with contextlib.suppress(OSError):
                path.unlink()
        if not lease.lost:
            try:
                await lease.write(body)
            except Exception as e:  # e.g. the store is full too: its lease runs out, then it is reset
                log.warning("upload %s: left receiving until its lease runs out: %s", upload_id, e)
        raise
    return {"upload_id": upload_id, "size": size, "sha256": done["sha256"], "detected_format": fmt}


async def _count_attempt(ctx: Ctx, item: dict[str, Any]) -> None:
    """One more wrong token on this link; retried on a concurrent change so none is lost."""
    for _ in range(5):
        body = {**item["body"], "attempts": item["body"]["attempts"] + 1}
        if await ctx.store.update_item(item["owner"], "upload", item["id"], item["name"], body,
                                       if_version=item["version"]):
            return
        fresh = await ctx.store.find_item("upload", item["id"])
        if fresh is None:
            return
        item = fresh


def _path(ctx: Ctx, upload_id: str) -> Path:
    return _dir(ctx.config) / upload_id


def _dir(config: Any) -> Path:
    return files_subdir(config, "uploads")


def _summary(item: dict[str, Any]) -> dict[str, Any]:
    b = item["body"]
    return {"id": item["id"], "upload_id": item["id"], "filename": b["filename"], "purpose": b["purpose"],
            "state": b["state"], "stored": b.get("stored", False), "size": b.get("size"), "sha256": b.get("sha256"),
            "detected_format": b.get("detected_format"), "imported_into": b.get("imported_into", []),
            "created_at": iso(item["created_at"]), "expires_at": iso(b["expires_at"])}


def _has_bytes(item: dict[str, Any]) -> None:
    body = item["body"]
    if body["state"] != "used":
        raise InputError("upload_id", "no file was sent to this link yet")
    if not body.get("stored"):
        raise InputError("upload_id", "the file's bytes are gone (imported already, or kept only an hour); "
                                      "upload it again")


async def _stored(ctx: Ctx, upload_id: str) -> tuple[dict[str, Any], str]:
    item = await load_item(ctx, "upload", upload_id)
    _has_bytes(item)
    body = item["body"]
    fmt = body["detected_format"]
    if fmt not in (*WORKBOOKS, "csv"):
        raise InputError("upload_id", f"holds a {fmt} file; datasets come from CSV or workbook files")
    return item, fmt


def _read(path: str, fmt: str, sheets: list[str] | None) -> list[Any]:
    return read_sheets(path, fmt, sheets)


def _inspect(path: str, fmt: str) -> dict[str, Any]:
    if fmt == "json":
        try:
            found = diagrams.from_json(path)
        except InputError as e:
            return {"kind": "json", "diagrams": [], "note": str(e)}
        return {"kind": "diagram_file", "format": "bathtub_json",
                "diagrams": [{"name": d.get("name"), "blocks": _blocks(d)} for d in found]}
    if fmt in (*WORKBOOKS, "csv"):
        sheets = read_sheets(path, fmt)
        out: dict[str, Any] = {"kind": "workbook" if fmt in WORKBOOKS else "csv",
                               "sheets": [s.summary() for s in sheets]}
        if diagrams.is_availsim4(sheets):
            try:
                diagram, unmapped = diagrams.from_availsim4(sheets, Path(path).name, "hours")
                out["diagram_file"] = {"format": "availsim4", "diagrams": [{"blocks": _blocks(diagram)}],
                                       "unmapped": unmapped}
            except InputError as e:
                out["diagram_file"] = {"format": "availsim4", "diagrams": [], "note": str(e)}
        return out
    return {"kind": fmt}


def _blocks(diagram: dict[str, Any]) -> int:
    return sum(1 for n in diagram.get("nodes", []) if isinstance(n, dict) and n.get("type") not in
               ("input", "output"))


def _select(sheet: Any, columns: dict[str, str] | None, field: str) -> tuple[list[str], list[list[Any]]]:
    """The sheet's columns to import, renamed as asked, as a dataset's names and rows."""
    if columns is None:
        return list(sheet.header), [list(r) for r in sheet.rows]
    index = []
    for new, source in columns.items():
        if source not in sheet.header:
            raise InputError(f"{field}.{new}", f"no column {source!r} in sheet {sheet.name!r}; it has "
                                               f"{', '.join(sheet.header)}")
        index.append(sheet.header.index(source))
    return list(columns), [[r[j] for j in index] for r in sheet.rows]


Pick = tuple[str | None, dict[str, str] | None, str]  # (sheet, columns, where the request names them)
Table = tuple[list[dict[str, str]], int, list[bytes]]  # (columns with types, row count, rows packed in blocks)


def _tables(path: str, fmt: str, sheets: list[str] | None, picks: list[Pick]) -> list[Table]:
    """Read the file and check every table picked from it (in a worker process): the sheet (None: the first
    with a table), its columns renamed as asked, every cell. Everything is refused here, before anything is
    stored. The rows come back packed in blocks: unpickling half a million rows whole is one call that holds
    the service's GIL for a second (bathtub_api.bulk)."""
    found = read_sheets(path, fmt, sheets)
    by_name = {s.name: s for s in found}
    selected = []
    for sheet_name, columns, where in picks:
        if sheet_name is None:
            if not found:
                raise InputError("upload_id", "the file holds no table with a header row")
            sheet = found[0]
        elif sheet_name not in by_name:
            raise InputError(f"{where}.sheet", f"sheet {sheet_name!r} holds no table with a header row")
        else:
            sheet = by_name[sheet_name]
        selected.append(_select(sheet, columns, f"{where}.columns" if where else "columns"))
    out = []
    for names, rows in selected:
        names, rows = tables.parse_columns({n: [r[j] for r in rows] for j, n in enumerate(names)})
        out.append((tables.infer_columns(names, rows), len(rows), bulk.pack(rows)))
    return out


async def _create_datasets(ctx: Ctx, plans: list[tuple[str, str, list[dict[str, str]], int, list[bytes]]]
                           ) -> list[dict[str, Any]]:
    """Store checked tables (see _tables); if a store step fails, the ones made are removed. Each table's
    rows are unpacked on a thread and freed there once stored."""
    made: list[dict[str, Any]] = []
    try:
        for name, notes, columns, n_rows, blocks in plans:
            dataset_id = new_id("dataset")
            body = {"name": name, "notes": notes, "columns": columns, "row_count": n_rows, "ingest_keys": {}}
            rows = await asyncio.to_thread(bulk.unpack, blocks)
            try:
                await ctx.store.create_dataset(ctx.user.id, dataset_id, name, body, rows)
            finally:
                await bulk.release(rows)
            made.append({"id": dataset_id, "name": name, "row_count": n_rows, "n_rows": n_rows,
                         "columns": columns, "url": dataset_url(ctx, dataset_id)})
    except BaseException:
        for d in made:
            await ctx.store.delete_item(ctx.user.id, "dataset", d["id"])
        raise
    return made


async def _imported(ctx: Ctx, item: dict[str, Any], into: list[str]) -> None:
    """Imported: the bytes go at once (spec), the record stays with what it became."""
    body = {**item["body"], "stored": False, "imported_into": [*item["body"].get("imported_into", []), *into]}
    await ctx.store.update_item(ctx.user.id, "upload", item["id"], item["name"], body)
    with contextlib.suppress(FileNotFoundError):
        _path(ctx, item["id"]).unlink()


async def purge(store: Any, config: Any) -> int:
    """Delete the bytes of uploads older than the retention time. A link being received is left
    to its lease (upload_leases): a send under way keeps its file, a cut-off one is reset."""
    cutoff = now() - config.upload_retention_s
    n = 0
    for item in await store.items_created_before("upload", cutoff):
        body = item["body"]
        path = _dir(config) / item["id"]
        if body["state"] != "receiving" and (body.get("stored") or path.exists()):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            await store.update_item(item["owner"], "upload", item["id"], item["name"], {**body, "stored": False})
            n += 1
    return n


async def reset_interrupted_sends(store: Any, config: Any) -> int:
    """Links a crashed (or stalled) send left receiving, back to unused once their lease ran out."""
    return await reset_interrupted(store, _dir(config))


async def purge_loop(store: Any, config: Any, every_s: float = 60.0) -> None:
    while True:
        await asyncio.sleep(every_s)  # the start-up ran both already (app.py)
        try:
            await reset_interrupted_sends(store, config)
            n = await purge(store, config)
            if n:
                log.info("purged the bytes of %d upload(s) past retention", n)
        except Exception:  # a purge problem must not stop the next purge
            log.exception("upload purge failed")

