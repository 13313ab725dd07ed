"""Share links and reports over HTTP on both stores: a link's page opens with no token and shows
its own item only; its secret is 256 random bits kept only as a SHA-256; a revoked, expired,
mistyped or deleted-item link answers the same 404 page; refusals name the field and store
nothing; report notes are escaped; a report prints to PDF through headless Chromium (a CI package:
the PDF test needs it; one store is enough for the printing)."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlsplit

import pytest

from bathtub_api.keys import STORE
from tests.conftest import Api
from tests.service.test_errors import assert_refusal


async def _model(api: Api, name: str, rate: float = 1e-3) -> str:
    status, out = await api.post("/api/import/models", {"name": name, "distribution": "weibull", "unit": "hours",
                                                        "params": [{"name": "alpha", "value": 1 / rate},
                                                                   {"name": "beta", "value": 1.5}]})
    assert status == 200, out
    return out["id"]


async def _page(api: Api, url: str) -> tuple[int, str, Any]:
    """GET a page with no Authorization header: a link is its own credential."""
    async with api.client.get(urlsplit(url).path) as resp:
        return resp.status, await resp.text(), resp.headers


async def test_link_opens_without_a_token_and_shows_only_its_item(api: Api, client: Any) -> None:
    shown = await _model(api, "pump bearing life")
    hidden = await _model(api, "secret compressor life", 2e-3)
    status, link = await api.post("sharing/create_link", {"kind": "model", "id": shown})
    assert status == 200, link
    assert link["id"].startswith("shr_") and link["kind"] == "model" and link["item_id"] == shown
    assert link["expires_at"] is None
    secret = urlsplit(link["url"]).path.removeprefix("/s/")
    assert len(secret) == 43  # token_urlsafe(32): 256 random bits
    status, html, headers = await _page(api, link["url"])
    assert status == 200 and "pump bearing life" in html and "Made with Bathtub" in html
    assert "secret compressor life" not in html and hidden not in html
    assert headers["Content-Type"].startswith("text/html")
    assert "script-src" not in headers["Content-Security-Policy"]  # default-src 'none': no script at all
    assert headers["Referrer-Policy"] == "no-referrer" and "no-store" in headers["Cache-Control"]
    # Only the SHA-256 of the secret is stored; the secret itself is nowhere in the store.
    store = client.server.app[STORE]
    rows = await store.db.fetch("SELECT * FROM share_links")
    assert [r["hash"] for r in rows] == [hashlib.sha256(secret.encode()).hexdigest()]
    assert secret not in repr(rows)
    async with api.client.get("/pages/assets/page.css") as resp:
        assert resp.status == 200 and resp.content_type == "text/css"


async def test_revoked_expired_unknown_and_deleted_links_answer_the_same_404(api: Api, client: Any) -> None:
    model = await _model(api, "pump")
    _, live = await api.post("sharing/create_link", {"kind": "model", "id": model})
    _, revoked = await api.post("sharing/create_link", {"kind": "model", "id": model})
    _, expiring = await api.post("sharing/create_link", {"kind": "model", "id": model, "expires_in": 60})
    assert expiring["expires_at"] is not None
    status, out = await api.post("sharing/revoke_link", {"id": revoked["id"]})
    assert status == 200 and out["state"] == "revoked" and out["revoked_at"]
    store = client.server.app[STORE]
    await store.db.execute("UPDATE share_links SET expires_at = created_at - 1 WHERE id = ?", expiring["id"])
    base = live["url"].rsplit("/", 1)[0]
    unknown = f"{base}/{'A' * 43}"
    answers = [await _page(api, u) for u in (revoked["url"], expiring["url"], unknown, f"{base}/short")]
    assert {a[0] for a in answers} == {404}
    assert len({a[1] for a in answers}) == 1  # the same page whatever the reason: nothing leaks
    assert "pump" not in answers[0][1] and model not in answers[0][1]
    assert (await _page(api, live["url"]))[0] == 200
    status, listed = await api.post("sharing/list_links", {})
    assert status == 200
    assert {i["id"]: i["state"] for i in listed["items"]} == {live["id"]: "live", revoked["id"]: "revoked",
                                                              expiring["id"]: "expired"}
    assert all("url" not in i for i in listed["items"])
    # The item deleted: its link's page is the same 404.
    status, ds = await api.post("datasets/create", {"name": "lives", "data": {"t": [1.0, 2.0, 3.0]}})
    _, ds_link = await api.post("sharing/create_link", {"kind": "dataset", "id": ds["id"]})
    assert (await _page(api, ds_link["url"]))[0] == 200
    assert (await api.post("datasets/delete", {"id": ds["id"]}))[0] == 200
    gone = await _page(api, ds_link["url"])
    assert gone[0] == 404 and gone[1] == answers[0][1]


async def test_a_link_is_held_to_the_request_rate(aiohttp_client: Any, config: Any, registry: Any) -> None:
    import dataclasses

    from bathtub_api.app import create_app
    from bathtub_api.cli import token_create

    cfg = dataclasses.replace(config, rate_limit_per_minute=3)
    client = await aiohttp_client(create_app(cfg, registry))
    api = Api(client, await token_create(cfg, "alice", ["read", "write"]))
    _, ds = await api.post("datasets/create", {"name": "lives", "data": {"t": [1.0, 2.0, 3.0]}})
    _, link = await api.post("sharing/create_link", {"kind": "dataset", "id": ds["id"]})
    statuses = [(await _page(api, link["url"]))[0] for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


async def test_unknown_links_are_limited_per_address_and_never_lock_out_a_live_one(
        aiohttp_client: Any, config: Any, registry: Any) -> None:
    import dataclasses

    from bathtub_api.app import create_app
    from bathtub_api.cli import token_create

    cfg = dataclasses.replace(config, bad_token_limit_per_minute=2)
    client = await aiohttp_client(create_app(cfg, registry))
    api = Api(client, await token_create(cfg, "alice", ["read", "write"]))
    _, link = await api.post("sharing/create_link", {"kind": "model", "id": await _model(api, "pump")})
    unknown = link["url"].rsplit("/", 1)[0] + "/" + "A" * 43
    assert [(await _page(api, unknown))[0] for _ in range(3)] == [404, 404, 429]
    assert (await _page(api, link["url"]))[0] == 200  # the live link still opens from that address
    assert (await _page(api, unknown))[0] == 429


async def test_links_refuse_at_the_door_and_belong_to_their_owner(api: Api, other_api: Api, client: Any,
                                                                  config: Any) -> None:
    from bathtub_api.cli import token_create

    model = await _model(api, "pump")
    assert_refusal(*await other_api.post("sharing/create_link", {"kind": "model", "id": model}), 404, model)
    assert_refusal(*await api.post("sharing/create_link", {"kind": "recurrent_model", "id": model}), 404)
    assert_refusal(*await api.post("sharing/create_link", {"kind": "dataset", "id": model}), 404)
    assert_refusal(*await api.post("sharing/create_link", {"kind": "job", "id": model}), 422, "kind")
    assert_refusal(*await api.post("sharing/create_link", {"kind": "model", "id": model, "expires_in": 59}), 422,
                   "expires_in")
    assert_refusal(*await api.post("sharing/create_link", {"kind": "model", "id": model,
                                                           "expires_in": 366 * 86400 + 1}), 422, "expires_in")
    reader = Api(client, await token_create(config, "alice", ["read"]))
    assert_refusal(*await reader.post("sharing/create_link", {"kind": "model", "id": model}), 403, "write")
    store = client.server.app[STORE]
    assert await store.db.fetch("SELECT id FROM share_links") == []  # nothing refused was stored
    _, link = await api.post("sharing/create_link", {"kind": "model", "id": model})
    assert_refusal(*await other_api.post("sharing/revoke_link", {"id": link["id"]}), 404)
    assert (await other_api.post("sharing/list_links", {}))[1]["items"] == []
    assert (await reader.post("sharing/list_links", {}))[1]["items"][0]["id"] == link["id"]
    assert (await _page(api, link["url"]))[0] == 200  # the other user's revoke changed nothing


async def test_reports_escape_notes_and_refuse_whole(api: Api, other_api: Api) -> None:
    model = await _model(api, "pump bearing life")
    other = await _model(other_api, "not yours")
    note = "<script>alert('x')</script> & <b>bold</b>"
    assert_refusal(*await api.post("reports/create", {"name": "r", "items": [
        {"kind": "model", "id": model, "note": "x" * 3001}]}), 422, "items.0.note")
    assert_refusal(*await api.post("reports/create", {"name": "r", "items": [
        {"kind": "model", "id": model}, {"kind": "model", "id": other}]}), 404, "items[1].id")
    assert_refusal(*await api.post("reports/create", {"name": "r", "items": []}), 422, "items")
    assert_refusal(*await api.post("reports/create", {"name": "r", "items": [{"kind": "report", "id": model}]}),
                   422, "kind")
    assert_refusal(*await api.post("reports/create", {"name": "r", "items": [{"kind": "rbd_run", "id": model}]}),
                   404, "items[0].id")
    assert (await api.post("list/report", {}))[1]["items"] == []  # nothing refused was stored
    status, report = await api.post("reports/create", {"name": "Review", "note": "For <the> board",
                                                       "items": [{"kind": "model", "id": model, "note": "x" * 3000},
                                                                 {"kind": "model", "id": model, "note": note}]})
    assert status == 200, report
    assert [i["name"] for i in report["items"]] == ["pump bearing life"] * 2
    status, got = await api.post("get/report", {"id": report["id"]})
    assert status == 200 and got == report
    assert (await other_api.post("get/report", {"id": report["id"]}))[0] == 404
    status, html = await api.get(f"/api/v1/reports/{report['id']}/html")
    assert status == 200
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &lt;b&gt;" in html
    assert "For &lt;the&gt; board" in html and html.count('<section class="item') == 2
    status, listed = await api.post("list/report", {})
    assert [i["id"] for i in listed["items"]] == [report["id"]] and listed["items"][0]["item_count"] == 2
    _, link = await api.post("sharing/create_link", {"kind": "report", "id": report["id"]})
    assert (await _page(api, link["url"]))[0] == 200
    assert (await api.post("reports/delete", {"id": report["id"]}))[0] == 200
    assert (await _page(api, link["url"]))[0] == 404
    assert (await api.post("get/report", {"id": report["id"]}))[0] == 404


@pytest.mark.slow  # ~4 s: Chromium prints the report (test_report_pdf keeps a PDF in the fast lane)
@pytest.mark.one_store  # printing is Chromium's work on the report's HTML, the same from either store; the
# report, its link and the link's revocation are store work, checked on both by the tests above
async def test_report_prints_to_pdf(api: Api) -> None:
    model = await _model(api, "pump bearing life")
    _, report = await api.post("reports/create", {"name": "Review", "items": [{"kind": "model", "id": model,
                                                                               "note": "first"}]})
    async with api.client.get(f"/api/v1/reports/{report['id']}/pdf", headers=api.headers) as resp:
        assert resp.status == 200 and resp.content_type == "application/pdf"
        pdf = await resp.read()
    assert pdf.startswith(b"%PDF-") and len(pdf) > 10_000  # the plots are in it, not an empty page
    _, link = await api.post("sharing/create_link", {"kind": "report", "id": report["id"]})
    async with api.client.get(urlsplit(link["url"]).path + "/pdf") as resp:  # no token: the link's own PDF
        assert resp.status == 200 and resp.content_type == "application/pdf"
        assert (await resp.read()).startswith(b"%PDF-")
    await api.post("sharing/revoke_link", {"id": link["id"]})
    async with api.client.get(urlsplit(link["url"]).path + "/pdf") as resp:
        assert resp.status == 404 and resp.content_type == "text/html"


async def test_every_kind_of_model_has_a_page(api: Api) -> None:
    """Non-parametric, competing-risks, regression, ALT, demand and every recurrent model: a page,
    never a 500, with the figures the record supports."""
    _, ds = await api.post("datasets/create", {"name": "d", "data": {
        "t": [5.0, 8, 12, 15, 20, 22, 30, 31, 40, 45, 50, 60], "c": [0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0],
        "x1": [1.0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0], "mode": ["a", "b", None] * 3 + ["a", "b", "a"],
        "s": [100.0] * 4 + [150.0] * 4 + [200.0] * 4}})
    life = [("kaplan_meier", {"x": "t", "c": "c"}, {}, "step"), ("turnbull", {"x": "t", "c": "c"}, {}, "step"),
            ("weibull", {"x": "t", "c": "c", "mode": "mode"}, {}, "Cumulative incidence by failure mode"),
            ("fine_gray", {"x": "t", "c": "c", "mode": "mode"},
             {"covariates": ["x1"], "options": {"failure_mode": "a"}}, "subdistribution hazard ratio"),
            ("cox", {"x": "t", "c": "c"}, {"covariates": ["x1"]}, "hazard ratio"),
            ("weibull_ph", {"x": "t", "c": "c"}, {"covariates": ["x1"]}, "hazard ratio"),
            ("weibull_arrhenius", {"x": "t", "c": "c", "stress": "s"}, {}, None),
            ("gumbel", {"x": "t", "c": "c"}, {}, "Gumbel (smallest extreme value) probability plot")]
    for dist, mapping, extra, shows in life:
        status, m = await api.post("/api/v1/fit", {"name": f"fit {dist}", "dataset_id": ds["id"],
                                                    "distribution": dist, "mapping": mapping, **extra})
        assert status == 200, (dist, m)
        _, link = await api.post("sharing/create_link", {"kind": "model", "id": m["id"]})
        status, html, _ = await _page(api, link["url"])
        assert status == 200 and f"fit {dist}" in html, dist
        if shows == "step":
            assert html.count("<svg") == 1, dist
        elif shows:
            assert shows in html, dist
    status, m = await api.post("fit/demand", {"name": "valves", "batches": [{"demands": 100, "failures": 2},
                                                                           {"demands": 50, "failures": 1}]})
    _, link = await api.post("sharing/create_link", {"kind": "model", "id": m["id"]})
    status, html, _ = await _page(api, link["url"])
    assert status == 200 and "Probability of failure on demand" in html and "0.02" in html
    _, ev = await api.post("datasets/create", {"name": "ev", "data": {
        "t": [10.0, 40, 70, 20, 60, 90, 30], "sys": ["A", "A", "A", "B", "B", "B", "C"],
        "end": [100.0, 100, 100, 120, 120, 120, 80]}})
    for model in ("mcf", "mcf_power_law", "kijima1", "loglinear", "hpp", "duane", "power_law"):
        status, m = await api.post("fit/recurrent", {"name": f"rec {model}", "dataset_id": ev["id"], "model": model,
                                                     "mapping": {"t": "t", "system": "sys", "end": "end"}})
        assert status == 200, (model, m)
        _, link = await api.post("sharing/create_link", {"kind": "recurrent_model", "id": m["id"]})
        status, html, _ = await _page(api, link["url"])
        assert status == 200 and f"rec {model}" in html and html.count("<svg") == 1, model
