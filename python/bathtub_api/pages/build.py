"""A page of one item or of a report, from the owner's records (`views.Source`)."""

from __future__ import annotations

from typing import Any

from bathtub_api.errors import ApiError
from bathtub_api.pages import render_page
from bathtub_api.pages.views import Section, Source, section


async def item_page(src: Source, kind: str, item_id: str, *, pdf_url: str | None = None,
                    standalone: bool = False) -> str:
    if kind == "report":
        return await report_page(src, item_id, pdf_url=pdf_url, standalone=standalone)
    sec = await section(src, kind, item_id)
    return render_page(sec.name, sec.kind, [sec], created_at=sec.record.get("created_at"), pdf_url=pdf_url,
                       standalone=standalone)


async def report_page(src: Source, report_id: str, *, pdf_url: str | None = None, standalone: bool = False) -> str:
    report = await src.get("report", id=report_id)
    sections = [await _report_section(src, entry) for entry in report["items"]]
    return render_page(report["name"], "report", sections, created_at=report.get("created_at"), pdf_url=pdf_url,
                       note=report.get("note"), standalone=standalone, author=report.get("author"))


async def _report_section(src: Source, entry: dict[str, Any]) -> Section:
    try:
        sec = await section(src, entry["kind"], entry["id"])
    except ApiError as e:
        if e.status != 404:
            raise
        # Deleted since the report was made: the report still opens, saying so in its place.
        sec = Section("missing", entry["id"], entry["id"], {"kind": entry["kind"]})
    sec.note = entry.get("note")
    if sec.kind == "rbd":
        # A diagram in a report is read with what it gives: its latest run below it.
        run_id = await _latest_run(src, sec.id)
        if run_id is not None:
            sec.extra["latest_run"] = await section(src, "rbd_run", run_id)
    return sec


RUN_PAGE = 500  # runs read per store page while looking for a diagram's latest


async def _latest_run(src: Source, rbd_id: str) -> str | None:
    """The id of the diagram's most recent stored run (the store lists in creation order), or None."""
    store, owner = src.ctx.store, src.ctx.user.id
    latest, offset = None, 0
    while True:
        runs = await store.list_items(owner, "rbd_run", RUN_PAGE, offset)
        latest = next((r["id"] for r in reversed(runs) if r["body"].get("rbd_id") == rbd_id), latest)
        if len(runs) < RUN_PAGE:
            return latest
        offset += RUN_PAGE
