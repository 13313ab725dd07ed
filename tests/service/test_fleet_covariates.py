"""Fleets on a saved Weibull PH regression model over HTTP (SQLite only): each item's covariates give it its
own curve. Reference computed here from the model record's published figures: α, β at every covariate 0 and
the hazard-ratio coefficients b, so item i has η_i = α·exp(−x_i·b/β) and S_i(t) = exp(−(t/η_i)^β); the
expected failures per period are the sum of the items' conditional probabilities."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from tests.conftest import Api
from tests.service.test_errors import assert_refusal

# Forecast numerics on a saved model: the fleet's storage is tested on both stores in test_fleets.
pytestmark = pytest.mark.one_store


async def ph_model(api: Api, distribution: str = "weibull_ph") -> dict[str, Any]:
    rng = np.random.default_rng(8)
    n = 150
    temp, load = rng.uniform(20, 90, n), rng.uniform(0, 3, n)
    eta = 1000.0 * np.exp(-0.015 * temp + 0.25 * load)
    life = eta * (-np.log(rng.uniform(size=n))) ** (1 / 1.7)
    cut = 1500.0
    data = {"time": np.minimum(life, cut).tolist(), "state": ["F" if v < cut else "S" for v in life],
            "temp": temp.tolist(), "load": load.tolist()}
    status, ds = await api.post("datasets/create", {"name": "bearings", "data": data})
    assert status == 200, ds
    status, fit = await api.post("/api/v1/fit", {"name": "bearing PH", "dataset_id": ds["id"],
                                                 "distribution": distribution, "unit": "hours",
                                                 "mapping": {"x": "time", "c": "state"},
                                                 "covariates": ["temp", "load"]})
    assert status == 200, fit
    status, rec = await api.post("get/model", {"id": fit["id"]})
    assert status == 200, rec
    return rec


ITEMS = [{"name": "B1", "current_use": 100.0, "rate": 40.0, "covariates": {"temp": 30.0, "load": 0.5}},
         {"name": "B2", "current_use": 600.0, "rate": 25.0, "covariates": {"temp": 80.0, "load": 2.5}},
         {"name": "B3", "current_use": 0.0, "rate": 60.0, "covariates": {"temp": 55.0}}]


def reference(rec: dict[str, Any], items: list[dict[str, Any]], default: dict[str, float], periods: int) -> list[float]:
    p = {x["name"]: x["value"] for x in rec["params"]}
    b = {c["name"]: c["value"] for c in rec["coefficients"]}
    out = np.zeros(periods)
    for i in items:
        x = {**default, **i["covariates"]}
        eta = p["alpha"] * math.exp(-sum(b[k] * x[k] for k in b) / p["beta"])
        s = [math.exp(-(((i["current_use"] + j * i["rate"]) / eta) ** p["beta"])) for j in range(periods + 1)]
        out += [(s[j] - s[j + 1]) / s[0] for j in range(periods)]
    return out.tolist()


async def test_weibull_ph_fleet_forecasts_each_items_own_curve(api: Api) -> None:
    rec = await ph_model(api)
    body = {"name": "bearings", "model_id": rec["id"], "period_label": "months", "periods": 9, "items": ITEMS,
            "default_covariates": {"load": 1.5}}
    status, fleet = await api.post("fleets/create", body)
    assert status == 200, fleet
    assert fleet["default_covariates"] == {"load": 1.5} and fleet["items"][0]["covariates"] == ITEMS[0]["covariates"]
    status, out = await api.get(f"/api/v1/fleets/{fleet['id']}/forecast")
    assert status == 200, out
    fc = out["forecast"]
    assert fc["expected_failures"] == pytest.approx(reference(rec, ITEMS, {"load": 1.5}, 9), rel=1e-9)
    assert "covariates" in fc["life"] and fc["status"] == "ok"
    # a new default moves only the item that relies on it
    status, upd = await api.post("fleets/update", {"id": fleet["id"], "default_covariates": {"load": 0.0}})
    assert status == 200, upd
    status, out = await api.get(f"/api/v1/fleets/{fleet['id']}/forecast")
    assert out["forecast"]["expected_failures"] == pytest.approx(reference(rec, ITEMS, {"load": 0.0}, 9), rel=1e-9)
    # usage ingest recomputes the same per-item forecast at the new meter readings
    readings = [{"name": "B1", "current_use": 300.0}, {"id": "B3", "current_use": 90.0}]
    status, ing = await api.post(f"/api/ingest/fleets/{fleet['id']}/usage", {"readings": readings})
    assert status == 200, ing
    moved = [{**ITEMS[0], "current_use": 300.0}, ITEMS[1], {**ITEMS[2], "current_use": 90.0}]
    assert ing["forecast"]["expected_failures"] == pytest.approx(reference(rec, moved, {"load": 0.0}, 9), rel=1e-9)


async def test_cox_fleet_matches_the_models_own_reliability_route(api: Api) -> None:
    # the reference: each item's S(t) from POST /api/v1/models/{id}/reliability (the model's own evaluation)
    rec = await ph_model(api, "cox")
    items = [{**i, "covariates": {"load": 1.0, **i["covariates"]}} for i in ITEMS]
    status, fleet = await api.post("fleets/create", {"name": "cox", "model_id": rec["id"], "periods": 6,
                                                     "items": items})
    assert status == 200, fleet
    status, out = await api.get(f"/api/v1/fleets/{fleet['id']}/forecast")
    assert status == 200, out
    expected = np.zeros(6)
    for i in items:
        s = []
        for j in range(7):
            status, at = await api.post(f"/api/v1/models/{rec['id']}/reliability",
                                        {"t": i["current_use"] + j * i["rate"], "covariates": i["covariates"]})
            assert status == 200, at
            s.append(at["at"]["reliability"])
        expected += [(s[j] - s[j + 1]) / s[0] for j in range(6)]
    assert out["forecast"]["expected_failures"] == pytest.approx(expected.tolist(), rel=1e-9, abs=1e-12)


async def test_covariates_are_checked_at_the_door(api: Api) -> None:
    rec = await ph_model(api)
    base = {"name": "bearings", "model_id": rec["id"], "items": ITEMS}
    assert_refusal(*await api.post("fleets/create", base), 422, "items[2].covariates.load:", "'B3'", "required")
    bad = [*ITEMS[:2], {**ITEMS[2], "covariates": {"temp": 1.0, "load": 1.0, "speed": 3.0}}]
    assert_refusal(*await api.post("fleets/create", {**base, "items": bad}), 422, "items[2].covariates.speed:",
                   "'B3'", "not a covariate")
    status, imported = await api.post("/api/import/models", {"name": "plain", "distribution": "weibull",
                                                             "params": [{"name": "alpha", "value": 900.0},
                                                                        {"name": "beta", "value": 1.5}]})
    assert status == 200
    assert_refusal(*await api.post("fleets/create", {**base, "model_id": imported["id"]}), 422,
                   "items[0].covariates:", "no covariates")
    plain = [{"name": "P1", "current_use": 1.0, "rate": 1.0}]
    status, fleet = await api.post("fleets/create", {"name": "plain", "model_id": imported["id"], "items": plain})
    assert status == 200, fleet
    # rebinding to the regression model needs every item's covariates: refused, the fleet unchanged
    assert_refusal(*await api.post("fleets/update", {"id": fleet["id"], "model_id": rec["id"]}), 422,
                   "items[0].covariates:", "'P1'", "temp, load")
    status, got = await api.post("get/fleet", {"id": fleet["id"]})
    assert got["model_id"] == imported["id"]
    additive = await ph_model(api, "additive_hazards")
    assert_refusal(*await api.post("fleets/create", {**base, "model_id": additive["id"]}), 422, "model_id:",
                   "additive_hazards")
    cox = await ph_model(api, "cox")
    many = [{"name": f"C{k}", "current_use": 1.0, "rate": 1.0, "covariates": {"temp": float(k), "load": 1.0}}
            for k in range(201)]
    assert_refusal(*await api.post("fleets/create", {"name": "c", "model_id": cox["id"], "items": many,
                                                     "replace_failed": True}), 422, "replace_failed:", "201")
    status, listed = await api.post("list/fleet", {})
    assert [f["name"] for f in listed["items"]] == ["plain"]
