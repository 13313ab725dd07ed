"""Competing risks through the service (SQLite only): POST /api/v1/fit with a mode column saves
the cumulative incidence (with a group column, Gray's test); `fine_gray` with covariates saves a
Fine–Gray model whose reliability route answers a unit's cumulative incidence; the power-law MCF
and the per-row MCF variance through `fit recurrent`. Bad input is refused naming the field and
saves nothing. The numbers are checked against cmprsk, lifelines and reliability in
tests/life/test_cumulative_incidence.py, tests/regression/test_fine_gray.py and
tests/recurrent/test_mcf_parametric.py; here only that the service carries them unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from bathtub.life.cumulative_incidence import incidence_block
from bathtub.regression.fine_gray_records import fit_record
from bathtub.regression.kinds import evaluate_at
from tests.conftest import Api
from tests.service.test_errors import assert_refusal
from tests.service.test_recurrent_routes import mcf1_fleet

pytestmark = pytest.mark.one_store


def _pumps(n: int = 120, seed: int = 5) -> dict:
    rng = np.random.default_rng(seed)
    temp = np.round(rng.uniform(40, 90, n), 1)
    t_seal = rng.exponential(3000 * np.exp(-0.02 * (temp - 60)))
    t_bear = rng.exponential(4000, n)
    cens = rng.uniform(500, 6000, n)
    t = np.round(np.minimum.reduce([t_seal, t_bear, cens])) + 1  # whole hours, ties, none at 0
    failed = cens > np.minimum(t_seal, t_bear)
    mode = [("seal" if a < b else "bearing") if f else None for a, b, f in zip(t_seal, t_bear, failed, strict=True)]
    return {"hours": t.tolist(), "state": np.where(failed, "F", "S").tolist(), "mode": mode,
            "temp": temp.tolist(), "plant": rng.choice(["east", "west"], n).tolist()}


async def _dataset(api: Api, data: dict) -> str:
    status, created = await api.post("/api/v1/datasets", {"name": "pumps", "data": data})
    assert status == 200, created
    return created["id"]


async def _models(api: Api) -> list:
    return (await api.get("/api/v1/models"))[1]["models"]


MAPPING = {"x": "hours", "c": "state", "mode": "mode"}


async def test_mode_column_saves_the_cumulative_incidence_and_gray_test(api: Api) -> None:
    data = _pumps()
    ds = await _dataset(api, data)
    status, fitted = await api.post("fit/life", {"name": "pump modes", "dataset_id": ds, "distribution": "weibull",
                                                 "mapping": {**MAPPING, "group": "plant"},
                                                 "options": {"confidence": 0.9}})
    assert status == 200, fitted
    record = (await api.post("get/model", {"id": fitted["id"]}))[1]
    cif = record["cumulative_incidence"]
    want = incidence_block(data["hours"], np.array(data["state"]) == "F", data["mode"], 0.9, data["plant"])
    assert cif["modes"] == want["modes"] and cif["gray_test"] == want["gray_test"]
    assert cif["confidence"] == 0.9 and {m["mode"] for m in cif["modes"]} == {"seal", "bearing"}


async def test_fine_gray_fit_and_a_units_incidence(api: Api) -> None:
    data = _pumps()
    ds = await _dataset(api, data)
    body = {"name": "seal vs temperature", "dataset_id": ds, "distribution": "fine_gray", "mapping": MAPPING,
            "covariates": ["temp"], "options": {"failure_mode": "seal"}, "unit": "h"}
    status, fitted = await api.post("/api/v1/fit", body)
    assert status == 200, fitted
    assert fitted["kind"] == "regression" and fitted["distribution"] == "fine_gray"
    record = (await api.get(f"/api/v1/models/{fitted['id']}"))[1]
    want = fit_record(data, MAPPING, ["temp"], None, None, {"failure_mode": "seal"})
    assert record["coefficients"] == want["coefficients"]
    assert record["coefficients"][0]["exp_coef_kind"] == "subdistribution hazard ratio"
    status, at = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 2000, "covariates": {"temp": 80}})
    assert status == 200, at
    assert at["at"]["cumulative_incidence"] == pytest.approx(
        evaluate_at(want, 2000.0, {"temp": 80})["cumulative_incidence"], rel=1e-12)
    status, curves = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"covariates": {"temp": 50}})
    assert status == 200 and curves["curves"]["step"] == "post"
    assert_refusal(*await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 5.0}), 422, "covariates")


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"options": {"failure_mode": "gasket"}}, "options.failure_mode", "not a failure mode"),
    ({"options": {}}, "options.failure_mode", "required"),
    ({"covariates": None}, "covariates", "fine_gray"),
    ({"mapping": {"x": "hours", "c": "state"}}, "mapping.mode", "required"),
    ({"data": "mode_on_censored"}, "mapping.mode", "a censored row has no failure mode"),
    ({"data": "failure_without_mode"}, "mapping.mode", "a failure needs its mode"),
])
async def test_fine_gray_refusals_save_nothing(api: Api, change: dict, field: str, words: str) -> None:
    data = _pumps()
    if change.get("data") == "mode_on_censored":
        data["mode"][data["state"].index("S")] = "seal"
    elif change.get("data") == "failure_without_mode":
        data["mode"][data["state"].index("F")] = None
    ds = await _dataset(api, data)
    body = {"name": "bad", "dataset_id": ds, "distribution": "fine_gray", "mapping": MAPPING,
            "covariates": ["temp"], "options": {"failure_mode": "seal"}}
    body |= {k: v for k, v in change.items() if k != "data"}
    body = {k: v for k, v in body.items() if v is not None}
    assert_refusal(*await api.post("/api/v1/fit", body), 422, f"{field}:", words)
    assert_refusal(*await api.post("fit/life", body), 422, f"{field}:", words)
    assert await _models(api) == []


async def test_competing_refusals_save_nothing(api: Api) -> None:
    data = _pumps()
    data["mode"][data["state"].index("S")] = "bearing"
    ds = await _dataset(api, data)
    body = {"name": "bad", "dataset_id": ds, "distribution": "weibull", "mapping": MAPPING}
    assert_refusal(*await api.post("/api/v1/fit", body), 422, "mapping.mode:", "a censored row has no failure mode")
    ds = await _dataset(api, _pumps())
    body = {"name": "bad", "dataset_id": ds, "distribution": "weibull", "mapping": MAPPING,
            "options": {"cif_variance": "greenwood"}}
    assert_refusal(*await api.post("/api/v1/fit", body), 422, "options.cif_variance:")
    body = {"name": "bad", "dataset_id": ds, "distribution": "weibull", "mapping": {"x": "hours", "group": "plant"}}
    assert_refusal(*await api.post("/api/v1/fit", body), 422, "mapping.group:")
    assert await _models(api) == []


async def test_power_law_mcf_and_per_row_variance_through_fit_recurrent(api: Api) -> None:
    ds = await _dataset(api, mcf1_fleet())
    mapping = {"t": "t", "system": "unit", "end": "end"}
    status, fitted = await api.post("fit/recurrent", {"name": "mcf", "dataset_id": ds, "model": "mcf_power_law",
                                                      "mapping": mapping, "options": {"variance": "per_row"}})
    assert status == 200, fitted
    record = (await api.post("get/model", {"id": fitted["id"]}))[1]
    p = {q["name"]: q["value"] for q in record["params"]}
    assert p["alpha"] == pytest.approx(11.98059, rel=1e-4) and p["beta"] == pytest.approx(1.673622, rel=1e-4)
    assert record["variance"] == "per_row" and "lower_per_row" in record["curve"]
    assert_refusal(*await api.post("fit/recurrent", {"name": "x", "dataset_id": ds, "model": "crow_amsaa",
                                                     "mapping": mapping, "options": {"variance": "per_row"}}),
                   422, "options.variance:")
    assert_refusal(*await api.post("fit/recurrent", {"name": "x", "dataset_id": ds, "model": "mcf",
                                                     "mapping": mapping, "options": {"variance": "greenwood"}}),
                   422, "variance")
    assert [m["id"] for m in await _models(api)] == [fitted["id"]]
