"""Reports: several of the caller's items on one page, each under its own note (`reports create`,
`get report`, `list report`, `reports delete`), read as HTML or PDF by the owner
(`GET /api/v1/reports/{id}/html`, `.../pdf`) or by anyone through a share link (kind `report`).
The spec's report item is {kind, id, note <= 3000 plain text, shown above the item's section}; an
`rbd` item shows its diagram and its latest run, an `rbd_run` item one run. The PDF has a cover
(name, date, author), a linked contents list, a running header and page numbers."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aiohttp import web
from pydantic import Field

from bathtub import models
from bathtub_api.errors import ApiError, not_found
from bathtub_api.fields import Id, Name, text
from bathtub_api.ids import iso, new_id
from bathtub_api.pages.build import report_page
from bathtub_api.pages.pdf import print_pdf
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import ListRequest, Open, Strict, load_item, page
from bathtub_api.tools.sharing import html_response, owner_source, pdf_response

KIND = "report"
ITEM_KINDS = ("model", "dataset", "rbd", "rbd_run", "degradation_model", "strategy_analysis", "rcm_study", "fleet",
              "recurrent_model", "tracked_fleet")
NOTE_MAX = 3000
AUTHOR_MAX = 200
ITEMS_MAX = 50
STORED_KIND = {k: k for k in ITEM_KINDS} | {"recurrent_model": "model"}


class ReportItem(Strict):
    kind: Literal[ITEM_KINDS]  # type: ignore[valid-type]
    id: Id = Field(description="one of your items of that kind")
    note: text(max_length=NOTE_MAX) | None = Field(
        None, description="plain text shown above the item's section (escaped: markup shows as typed)")


class ReportCreate(Strict):
    name: Name
    note: text(max_length=NOTE_MAX) | None = Field(None, description="plain text shown under the report's title")
    author: text(max_length=AUTHOR_MAX) | None = Field(
        None, description="who the report is by, shown on its cover (default: the name of the token's user)")
    items: Annotated[list[ReportItem], Field(min_length=1, max_length=ITEMS_MAX)]


class ReportId(Strict):
    id: Id


class Report(Open):
    id: str
    name: str
    note: str | None
    author: str | None
    items: list[dict[str, Any]]
    html_url: str
    pdf_url: str


async def _check_items(ctx: Ctx, items: list[ReportItem]) -> None:
    for i, entry in enumerate(items):
        item = await ctx.store.get_item(ctx.user.id, STORED_KIND[entry.kind], entry.id)
        # models are stored under one kind; the record's kind says which page kind shows it
        shown = models.kind_of(item["body"]).page if item is not None and STORED_KIND[entry.kind] == "model" \
            else entry.kind
        if item is None or (entry.kind == "recurrent_model" and shown != entry.kind):
            raise ApiError(404, f"items[{i}].id: no {entry.kind} with id {entry.id!r}")
        if shown != entry.kind:
            raise ApiError(422, f"items[{i}].kind: {entry.id} is a recurrent-event model; give kind {shown}")


async def _answer(ctx: Ctx, item: dict[str, Any]) -> dict[str, Any]:
    body = item["body"]
    out = []
    for entry in body["items"]:
        found = await ctx.store.get_item(ctx.user.id, STORED_KIND[entry["kind"]], entry["id"])
        out.append({**entry, "name": None if found is None else found["name"], "exists": found is not None})
    return {"id": item["id"], "name": item["name"], "note": body.get("note"), "author": body.get("author"),
            "items": out,
            "created_at": iso(item["created_at"]), "updated_at": iso(item["updated_at"]),
            "html_url": ctx.url(f"/api/v1/reports/{item['id']}/html"),
            "pdf_url": ctx.url(f"/api/v1/reports/{item['id']}/pdf")}


async def create(ctx: Ctx, req: ReportCreate) -> dict[str, Any]:
    await _check_items(ctx, req.items)
    report_id = new_id(KIND)
    body = {"note": req.note, "author": req.author or ctx.user.name or None,
            "items": [e.model_dump(exclude_none=True) for e in req.items]}
    await ctx.store.insert_item(ctx.user.id, KIND, report_id, req.name, body)
    return await _answer(ctx, await load_item(ctx, KIND, report_id))


async def get(ctx: Ctx, req: ReportId) -> dict[str, Any]:
    return await _answer(ctx, await load_item(ctx, KIND, req.id))


async def list_reports(ctx: Ctx, req: ListRequest) -> dict[str, Any]:
    items, next_offset = await page(ctx, KIND, req)
    return {"items": [{"id": i["id"], "name": i["name"], "item_count": len(i["body"]["items"]),
                       "created_at": iso(i["created_at"]), "updated_at": iso(i["updated_at"]),
                       "url": ctx.url(f"/api/v1/reports/{i['id']}/html")} for i in items],
            "next_offset": next_offset}


async def delete(ctx: Ctx, req: ReportId) -> dict[str, Any]:
    if not await ctx.store.delete_item(ctx.user.id, KIND, req.id):
        raise not_found(KIND, req.id)
    return {"id": req.id, "deleted": True}


def register(reg: Registry) -> None:
    reg.action("reports", "create", request=ReportCreate, response=Report, scope="write",
               summary="A report of several of your items, each with a plain-text note above it; read it as HTML "
                       "or PDF, or share it with sharing create_link (kind report)")(create)
    reg.action("reports", "delete", request=ReportId, response=Open, scope="write",
               summary="Delete a report (its items stay; its share links stop working)")(delete)
    reg.action("get", KIND, request=ReportId, response=Report, selector="kind",
               summary="A report: its items (with whether each still exists) and the URLs of its HTML and PDF")(get)
    reg.action("list", KIND, request=ListRequest, response=Open, selector="kind",
               summary="The caller's reports")(list_reports)

    async def html_route(ctx: Ctx, request: web.Request) -> web.Response:
        src = owner_source(ctx, request, ctx.user.id)
        report_id = request.match_info["report_id"]
        return html_response(await report_page(src, report_id, pdf_url=f"/api/v1/reports/{report_id}/pdf"))

    async def pdf_route(ctx: Ctx, request: web.Request) -> web.Response:
        src = owner_source(ctx, request, ctx.user.id)
        report_id = request.match_info["report_id"]
        html = await report_page(src, report_id, standalone=True)
        return pdf_response(await print_pdf(html, ctx.config.chromium_path, ctx.config.pdf_timeout_s), report_id)

    reg.route("GET", "/api/v1/reports/{report_id}/html", produces="text/html",
              summary="A report as an HTML page (the owner's view; share it with sharing create_link)")(html_route)
    reg.route("GET", "/api/v1/reports/{report_id}/pdf", produces="application/pdf",
              summary="A report as PDF, printed by headless Chromium (503 when the service has no browser)")(pdf_route)
