"""A report of a fit, a diagram with a run, and a run: the diagram shows its latest run, a run is
an item of its own, and the PDF printed by headless Chromium (a CI package) reads as a report:
a cover (name, date, author), a linked contents list, a running header and "Page n of N" on
every page after the cover. The PDF is read back with pypdf."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from tests.conftest import Api
from tests.pages.seed import CENSORED, LIVES, two_of_three
from tests.service.test_rbd_service import poll

pytestmark = pytest.mark.one_store  # rendering and printing depend on no store

NAME = "Pump station review"
AUTHOR = "R. Engineer"


async def _ok(api: Api, path: str, body: Any) -> dict[str, Any]:
    status, out = await api.post(path, body)
    assert status == 200, (path, out)
    return out


async def _run(api: Api, rbd_id: str, seed: int) -> str:
    queued = await _ok(api, "rbd_analysis/analyze", {"id": rbd_id, "horizon": 200.0, "replications": 2000,
                                                      "seed": seed, "grid": 11})
    job = await poll(api, queued["job_id"])
    assert job["status"] == "done", job
    return str(queued["run_id"])


async def _report(api: Api) -> tuple[dict[str, Any], dict[str, str]]:
    ds = await _ok(api, "datasets/create", {"name": "bearing lives", "data": {"hours": LIVES, "censored": CENSORED}})
    fit = await _ok(api, "/api/v1/fit", {"name": "bearing life", "dataset_id": ds["id"], "distribution": "weibull",
                                         "mapping": {"x": "hours", "c": "censored"}, "unit": "hours"})
    # The three pumps on one calendar replacement: the run warns that the PM stops the system.
    diagram = two_of_three()
    for node in diagram["nodes"]:
        if node["type"] == "component":
            node["preventive"] = {"policy": "block", "interval": 50.0, "duration": 2.0}
    rbd = await _ok(api, "rbd/create", diagram)
    first = await _run(api, rbd["id"], 1)
    latest = await _run(api, rbd["id"], 2)
    report = await _ok(api, "reports/create", {"name": NAME, "author": AUTHOR, "note": "For the plant manager.",
                                               "items": [{"kind": "model", "id": fit["id"]},
                                                         {"kind": "rbd", "id": rbd["id"]},
                                                         {"kind": "rbd_run", "id": first, "note": "The first run."}]})
    return report, {"model": fit["id"], "rbd": rbd["id"], "first": first, "latest": latest}


async def test_a_diagram_shows_its_latest_run_and_a_run_is_an_item(api: Api) -> None:
    report, ids = await _report(api)
    assert report["author"] == AUTHOR and [i["kind"] for i in report["items"]] == ["model", "rbd", "rbd_run"]
    status, html = await api.get(f"/api/v1/reports/{report['id']}/html")
    assert status == 200
    # The diagram's section carries its latest run (seed 2), not the first; the run item is seed 1.
    rbd_part = html.split(f'id="{ids["rbd"]}"')[1].split('<section class="item')[0]
    assert "Latest run: " in rbd_part and "(seed 2)" in rbd_part and "(seed 1)" not in rbd_part
    run_part = html.split(f'id="{ids["first"]}"')[1]
    assert "(seed 1)" in run_part and "The first run." in run_part
    # Each run's block table has the shares' intervals, and its warning about the common PM.
    for part in (rbd_part, run_part):
        assert "95% interval" in part and "Planned replacements coincide on redundant blocks p1, p2, p3" in part
    # The contents list links every section.
    for key in ("model", "rbd", "first"):
        assert f'<a href="#{ids[key]}">' in html
    assert AUTHOR in html


async def test_the_pdf_has_a_cover_contents_header_and_page_numbers(api: Api) -> None:
    report, ids = await _report(api)
    async with api.client.get(f"/api/v1/reports/{report['id']}/pdf", headers=api.headers) as resp:
        assert resp.status == 200 and resp.content_type == "application/pdf"
        pdf = await resp.read()
    out = os.environ.get("BATHTUB_REPORT_PDF_OUT")  # keep the printed PDF to look at
    if out:
        Path(out).write_bytes(pdf)
    pages = PdfReader(io.BytesIO(pdf)).pages
    texts = [p.extract_text() for p in pages]
    n = len(pages)
    assert n >= 4  # the cover, then the three items each from a new page
    cover = texts[0]
    assert NAME in cover and AUTHOR in cover and re.search(r"\d{2} \w{3} \d{4}", cover)
    assert "Page " not in cover  # the cover has neither running header nor number
    contents = cover.split("Contents", 1)[1]
    for name in ("bearing life", "2oo3 pumps", "2oo3 pumps (simulation)"):
        assert name in contents
    # The contents entries are links to the sections (internal link annotations).
    links = [a.get_object() for a in pages[0].get("/Annots") or []]
    assert len([a for a in links if a.get("/Subtype") == "/Link"]) == 3
    for k in range(1, n):
        assert f"Page {k + 1} of {n}" in texts[k], (k, texts[k][-200:])
        assert NAME in texts[k]  # the running header
    assert "Latest run" in "".join(texts[2:])
