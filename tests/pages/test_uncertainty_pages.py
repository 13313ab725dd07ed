"""The fleet and strategy pages show both intervals, plainly named, with units, when the forecast or
the analysis carries parameter uncertainty: the point model's and the one with parameter
uncertainty, each figure the record holds as the page prints it, and no repr, None or NaN."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest

from bathtub_api.pages import number
from tests.conftest import Api
from tests.pages.test_model_pages import BAD, page_text

pytestmark = pytest.mark.one_store  # rendering: no store-specific behaviour

TIMES = (np.random.default_rng(21).weibull(2.2, 30) * 800.0).round(3)


async def ok(api: Api, path: str, body: dict[str, Any]) -> dict[str, Any]:
    status, out = await api.post(path, body)
    assert status == 200, out
    return out


async def shared(api: Api, kind: str, item_id: str) -> str:
    link = await ok(api, "sharing/create_link", {"kind": kind, "id": item_id})
    async with api.client.get(urlsplit(link["url"]).path) as resp:
        assert resp.status == 200
        return " ".join(page_text(await resp.text()).split())  # one space between a cell and the next


@pytest.mark.slow  # ~5.5 s: a fleet forecast and a strategy, each over parameter draws
async def test_fleet_and_strategy_pages_show_both_intervals(api: Api) -> None:
    ds = await ok(api, "/api/v1/datasets/create", {"name": "pump lives", "data": {"h": TIMES.tolist()}})
    model = await ok(api, "/api/v1/fit", {"name": "pump life", "dataset_id": ds["id"], "distribution": "weibull",
                                          "mapping": {"x": "h"}, "unit": "hours"})
    fleet = await ok(api, "fleets/create", {
        "name": "pumps", "model_id": model["id"], "periods": 3, "uncertainty": "parameters", "draws": 20,
        "items": [{"name": f"P{i}", "current_use": 40.0 * i, "rate": 60.0} for i in range(1, 16)]})
    text = await shared(api, "fleet", fleet["id"])
    fc = (await ok(api, "get/fleet", {"id": fleet["id"]}))["forecast"]
    pu = fc["parameter_uncertainty"]
    assert "90% interval, point model" in text and "90% interval with parameter uncertainty" in text
    assert "Expected failures over the horizon, with parameter uncertainty" in text
    assert f"{number(pu['total_expected'])}" in text and f"{number(pu['total_expected_range']['upper'])}" in text
    for j in range(3):
        assert f"{number(pu['interval']['lower'][j])} – {number(pu['interval']['upper'][j])}" in text
        assert f"{number(fc['interval']['lower'][j])} – {number(fc['interval']['upper'][j])}" in text
    assert not BAD.findall(text)

    sa = await ok(api, "strategy/optimal_replacement", {
        "saved_model_id": model["id"], "planned_cost": 100.0, "unplanned_cost": 900.0, "uncertainty": "parameters",
        "draws": 10, "save": True, "name": "pump replacement"})
    text = await shared(api, "strategy_analysis", sa["analysis_id"])
    pr = sa["parameter_uncertainty"]
    assert "With parameter uncertainty" in text and "Point estimate" in text
    assert f"{number(pr['optimal_time']['lower'])} hours" in text
    assert f"{number(pr['optimal_time']['upper'])} hours" in text
    assert f"Expected cost of acting on the point estimate (mean regret) {number(pr['expected_regret'])} per hour" \
        in text
    assert not BAD.findall(text)

    ff = await ok(api, "strategy/failure_finding", {
        "saved_model_id": model["id"], "target_availability": 0.98, "uncertainty": "parameters", "draws": 10,
        "save": True, "name": "pump proof test"})
    text = await shared(api, "strategy_analysis", ff["analysis_id"])
    pf = ff["parameter_uncertainty"]
    assert f"Test interval meeting the target {number(ff['interval'])} hours {number(pf['interval']['lower'])} hours" \
        in text
    assert "Chance the point estimate's interval misses the target" in text
    assert f"Interval meeting the target in 95% of draws {number(pf['interval']['lower'])} hours" in text
    assert not BAD.findall(text)


async def test_a_strategy_page_on_a_regression_names_the_units_covariates(api: Api) -> None:
    rng = np.random.default_rng(5)
    load = rng.uniform(0, 2, 120)
    t = 100 * rng.weibull(1.5, 120) * np.exp(-0.7 * load / 1.5)
    ds = await ok(api, "/api/v1/datasets/create", {"name": "loads", "data": {"t": t.tolist(), "load": load.tolist()}})
    model = await ok(api, "/api/v1/fit", {"name": "wph", "dataset_id": ds["id"], "distribution": "weibull_ph",
                                          "mapping": {"x": "t"}, "covariates": ["load"], "unit": "hours"})
    sa = await ok(api, "strategy/optimal_replacement", {
        "saved_model_id": model["id"], "covariates": {"load": 1.25}, "planned_cost": 100.0, "unplanned_cost": 900.0,
        "policy": "minimal_repair", "uncertainty": "parameters", "draws": 10, "save": True, "name": "at load"})
    text = await shared(api, "strategy_analysis", sa["analysis_id"])
    # the model by its own name, never its id
    assert f"Saved model “wph”, read at the unit's covariates load = {number(1.25)}" in text
    assert model["id"] not in text
    assert f"{number(sa['parameter_uncertainty']['optimal_time']['upper'])} hours" in text
    assert not BAD.findall(text)
