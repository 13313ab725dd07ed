"""Costs carry their currency: an optional ISO 4217 code on a diagram (a setting, so create and
edit `set` take it) and on the strategy calculators with costs, refused at the door when it is
not a code, carried onto the run record and the saved analysis, and shown beside every cost on
their pages."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from bathtub.currency import PATTERN
from tests.conftest import Api
from tests.service.test_rbd_service import poll, two_of_three


def with_costs(currency: str | None) -> dict[str, Any]:
    d = two_of_three()
    for n in d["nodes"]:
        if n["type"] == "component":
            n["costs"] = {"repair": 150.0}
    if currency is not None:
        d["currency"] = currency
    return d


async def test_diagram_currency_is_checked_stored_and_carried_to_the_run(api: Api) -> None:
    for bad in ("EURO", "eur", "EUR ", "", 978):
        status, out = await api.post("rbd/create", with_costs(bad))
        assert status == 422 and out["detail"].startswith("currency"), out
    status, created = await api.post("rbd/create", with_costs("EUR"))
    assert status == 200 and created["currency"] == "EUR", created
    status, edited = await api.post("rbd/edit", {"id": created["id"], "ops": [{"op": "set", "currency": "USD"}]})
    assert status == 200 and edited["currency"] == "USD"
    status, out = await api.post("rbd/edit", {"id": created["id"], "ops": [{"op": "set", "currency": "usd"}]})
    assert status == 422 and "ops[0]" in out["detail"] and "ISO 4217" in out["detail"], out
    status, queued = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": 100.0,
                                                             "replications": 200, "seed": 1, "grid": 5})
    assert status == 200, queued
    await poll(api, queued["job_id"])
    status, run = await api.post("get/rbd_run", {"id": queued["run_id"]})
    assert status == 200 and run["currency"] == "USD" and run["inputs"]["currency"] == "USD"
    assert run["results"]["costs"]["total"] > 0
    # the share page names the unit of every cost
    status, link = await api.post("sharing/create_link", {"kind": "rbd_run", "id": queued["run_id"]})
    assert status == 200, link
    page = await api.client.get(urlsplit(link["url"]).path)
    text = await page.text()
    assert "USD" in text and "Cost (USD)" in text


async def test_a_diagram_without_currency_keeps_its_run_inputs(api: Api) -> None:
    status, created = await api.post("rbd/create", with_costs(None))
    assert status == 200 and created.get("currency") is None
    status, queued = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": 100.0,
                                                             "replications": 200, "seed": 1, "grid": 5})
    await poll(api, queued["job_id"])
    status, run = await api.post("get/rbd_run", {"id": queued["run_id"]})
    assert "currency" not in run["inputs"] and run["currency"] is None


async def test_strategy_costs_carry_their_currency(api: Api) -> None:
    body = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": 1000.0},
                                                     {"name": "beta", "value": 2.5}],
            "planned_cost": 1.0, "unplanned_cost": 10.0, "unit": "hours"}
    status, out = await api.post("strategy/optimal_replacement", {**body, "currency": "GBP", "save": True})
    assert status == 200 and out["currency"] == "GBP", out
    status, saved = await api.post("get/strategy_analysis", {"id": out["analysis_id"]})
    assert saved["result"]["currency"] == "GBP"
    status, plain = await api.post("strategy/optimal_replacement", body)
    assert status == 200 and "currency" not in plain
    # the same figures with or without a currency: it is a label, never a conversion
    assert plain["optimal_time"] == out["optimal_time"]
    status, bad = await api.post("strategy/optimal_replacement", {**body, "currency": "pounds"})
    assert status == 422 and "currency" in bad["detail"], bad


async def test_schema_states_the_rule(api: Api) -> None:
    status, doc = await api.get("/api/v1/openapi.json")
    assert status == 200
    # the diagram's and the calculators' currency both state ISO 4217's form, which the handlers refuse
    assert "ISO 4217" in str(doc) and str(doc).count(f"'pattern': '{PATTERN}'") >= 2
