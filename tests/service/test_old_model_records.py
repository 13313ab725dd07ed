"""Models saved before the one record shape keep loading and evaluating: an ALT record, a
degradation record and a competing-risks record exactly as the previous releases wrote them
(data/old_model_records.json, written by those releases' libraries on tests/models/reference.py's
data: ALT rows {name, value, se, lower, upper} and a bare covariance matrix, a degradation record
without params or gof, a by-mode fit whose all-modes fit is `pooled`, a Cox record whose coefficient
rows say `coef`), put in the store directly, then read and evaluated
through the service."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from bathtub_api.auth import hash_token
from bathtub_api.keys import STORE
from tests.conftest import Api

OLD = json.loads((Path(__file__).parent / "data" / "old_model_records.json").read_text())


async def _store_old(api: Api, client: Any, kind: str, item_id: str, body: dict[str, Any]) -> None:
    store = client.app[STORE]
    owner = (await store.token_owner(hash_token(api.token)))["user_id"]
    await store.insert_item(owner, kind, item_id, f"old {item_id}", body)


@pytest.mark.one_store  # reading a stored body: no store-specific behaviour
async def test_an_old_alt_record_answers_ci_rows_and_evaluates(api: Api, client: Any) -> None:
    old = OLD["alt"]
    assert all({"lower", "upper"} <= set(p) for p in old["params"])  # the old shape, as stored
    source = {"dataset_id": "ds_gone", "mapping": {"x": "x", "c": "c", "stress": "temp"},
              "distribution": "weibull_arrhenius", "options": {}}
    await _store_old(api, client, "model", "model_old_alt", {**old, "unit": "h", "source": source})
    status, record = await api.get("/api/v1/models/model_old_alt")
    assert status == 200, record
    for row, was in zip(record["params"], old["params"], strict=True):
        assert set(row) == {"name", "value", "se", "ci"}
        assert (row["name"], row["value"], row["se"], row["ci"]) == (was["name"], was["value"], was["se"],
                                                                     [was["lower"], was["upper"]])
    # the natural coefficients get their Wald rows from the stored covariance, which answers named
    for row, was, se in zip(record["coefficients"], old["coefficients"], np.sqrt(np.diag(old["covariance"])),
                            strict=True):
        assert (row["name"], row["value"], row["se"]) == (was["name"], was["value"], se)
        z95 = 1.959963984540054  # the standard normal's 97.5th percentile
        assert row["ci"] == pytest.approx([was["value"] - z95 * se, was["value"] + z95 * se], rel=1e-15)
    assert record["covariance"] == {"names": ["a", "b1", "ln_sigma"], "matrix": old["covariance"]}
    assert record["levels"][0]["life"]["ci"] == [old["levels"][0]["life"]["lower"], old["levels"][0]["life"]["upper"]]
    assert record["gof"] == [] and record["life"] is None
    assert record["life_distribution"] == old["life"] == "weibull"  # moved out of `life`, which is life figures
    assert (await api.post("get/model", {"id": "model_old_alt"}))[1] == record

    p = {q["name"]: q["value"] for q in old["params"]}
    dist = stats.weibull_min(p["beta"], scale=p["A"] * math.exp(p["B"] / 30.0))  # Weibull–Arrhenius at 30
    status, at = await api.post("/api/v1/models/model_old_alt/reliability", {"t": 5000.0, "stress": 30})
    assert status == 200, at
    assert math.isclose(at["at"]["reliability"], dist.sf(5000.0), rel_tol=1e-10)
    status, refused = await api.post("/api/v1/models/model_old_alt/reliability", {"t": 5000.0})
    assert status == 422 and refused["detail"].startswith("stress:"), refused


@pytest.mark.one_store
async def test_an_old_degradation_record_answers_params_and_gof(api: Api, client: Any) -> None:
    old = OLD["degradation"]
    assert "params" not in old and "gof" not in old
    await _store_old(api, client, "degradation_model", "dgm_old", {**old, "unit": "hours"})
    status, record = await api.get("/api/v1/degradation_models/dgm_old")
    assert status == 200, record
    assert record["params"] == old["life"]["params"] and record["gof"] == old["life"]["gof"]
    assert record["covariance"] == old["life"]["covariance"] and record["threshold"] == old["threshold"]


@pytest.mark.one_store
async def test_an_old_competing_record_answers_pooled_fit(api: Api, client: Any) -> None:
    old = OLD["competing_risks"]
    assert "pooled" in old and "pooled_fit" not in old  # as the release before the rename stored it
    source = {"dataset_id": "ds_gone", "mapping": {"x": "x", "c": "c", "mode": "mode"}, "distribution": "weibull",
              "options": {}}
    await _store_old(api, client, "model", "model_old_cr", {**old, "unit": "h", "source": source})
    status, record = await api.get("/api/v1/models/model_old_cr")
    assert status == 200, record
    assert "pooled" not in record and record["pooled_fit"] == old["pooled"]  # `pooled` is a demand record's
    # the modes act in series: S(t) = product of each mode's Weibull survival
    t = 900.0
    want = math.prod(math.exp(-(t / p["alpha"]) ** p["beta"]) for p in (
        {q["name"]: q["value"] for q in m["model"]["params"]} for m in old["modes"]))
    status, at = await api.post("/api/v1/models/model_old_cr/reliability", {"t": t})
    assert status == 200, at
    assert math.isclose(at["at"]["reliability"], want, rel_tol=1e-10)
    status, curves = await api.post("/api/v1/models/model_old_cr/reliability", {"points": 20})
    assert status == 200 and len(curves["curves"]["x"]) == 20, curves


@pytest.mark.one_store
async def test_an_old_cox_record_answers_value_rows_and_evaluates(api: Api, client: Any) -> None:
    """A Cox record from before the one row shape (rows keyed `coef`) answers `value` rows, keeps its
    hazard ratios, and evaluates at covariates as its own coefficients and Breslow baseline say."""
    old = OLD["cox"]
    source = {"dataset_id": "ds_gone", "mapping": {"x": "x", "c": "c"}, "distribution": "cox", "options": {},
              "covariates": ["z"]}
    await _store_old(api, client, "model", "model_old_cox", {**old, "unit": "h", "source": source})
    status, record = await api.get("/api/v1/models/model_old_cox")
    assert status == 200, record
    for row, was in zip(record["coefficients"], old["coefficients"], strict=True):
        assert "coef" not in row and row["value"] == was["coef"]
        assert (row["exp_coef"], row["exp_ci"], row["ci"]) == (was["exp_coef"], was["exp_ci"], was["ci"])
    assert record["covariance"] == old["covariance"]
    # S(t | z) = exp(-H0(t) e^{b (z - mean)}), H0 the stored Breslow step at t
    b = old["coefficients"][0]["coef"]
    base = old["baseline"][0]  # one stratum
    h0 = max((h for t, h in zip(base["time"], base["cumhaz"], strict=True) if t <= 700.0), default=0.0)
    want = math.exp(-h0 * math.exp(b * (0.5 - old["means"][0])))
    status, at = await api.post("/api/v1/models/model_old_cox/reliability", {"t": 700.0, "covariates": {"z": 0.5}})
    assert status == 200, at
    assert math.isclose(at["at"]["reliability"], want, rel_tol=1e-12)
