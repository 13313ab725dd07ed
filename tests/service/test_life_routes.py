"""Life-data routes end to end: fit, models, reliability, import, demand data, refit on ingest.

Reference values come from lifelines (fitted on the same data in the test) and scipy closed
forms; the library's own deeper checks are in tests/life.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from lifelines import KaplanMeierFitter, WeibullFitter
from scipy import stats

from tests.conftest import Api
from tests.service.test_errors import assert_refusal

# Numerics and mapping of the life routes: the store only saves the record (see tests/conftest.py).
pytestmark = pytest.mark.one_store

RNG = np.random.default_rng(7)
TIMES = np.round(stats.weibull_min(1.8, scale=900.0).rvs(60, random_state=RNG), 3)
CENSOR = (RNG.random(60) < 0.25).astype(int)  # 1 = right-censored suspension
CSV = "time,state\n" + "\n".join(f"{t},{'S' if c else 'F'}" for t, c in zip(TIMES, CENSOR))


async def _dataset(api: Api) -> str:
    status, created = await api.post("/api/v1/datasets", {"name": "pumps", "csv": CSV})
    assert status == 200, created
    return created["id"]


async def _fit(api: Api, dataset_id: str, distribution: str = "weibull", **mapping: str) -> dict:
    body = {"name": f"pumps {distribution}", "dataset_id": dataset_id, "distribution": distribution,
            "mapping": mapping or {"x": "time", "c": "state"}, "unit": "h"}
    status, fitted = await api.post("/api/v1/fit", body)
    assert status == 200, fitted
    return fitted


async def test_weibull_fit_matches_lifelines(api: Api) -> None:
    fitted = await _fit(api, await _dataset(api))
    assert set(fitted) == {"id", "name", "kind", "distribution", "n", "unit", "created_at", "url"}
    assert fitted["id"].startswith("mdl_") and fitted["n"] == 60 and fitted["kind"] == "distribution"
    status, record = await api.get(f"/api/v1/models/{fitted['id']}")
    assert status == 200
    ref = WeibullFitter().fit(TIMES, event_observed=1 - CENSOR)
    params = {p["name"]: p for p in record["params"]}
    assert math.isclose(params["alpha"]["value"], ref.lambda_, rel_tol=1e-4)
    assert math.isclose(params["beta"]["value"], ref.rho_, rel_tol=1e-4)
    assert math.isclose(params["beta"]["se"], ref.summary.loc["rho_", "se(coef)"], rel_tol=2e-3)
    ll = next(g for g in record["gof"] if g["id"] == "log_likelihood")
    assert math.isclose(ll["value"], ref.log_likelihood_, rel_tol=1e-6)
    assert {g["id"] for g in record["gof"]} >= {"aic", "aicc", "bic"}
    life = {x["id"]: x for x in record["life"]}
    assert list(life) == ["b1", "b5", "b10", "b20", "b50", "mttf"]
    b10 = ref.lambda_ * (-math.log(0.9)) ** (1 / ref.rho_)  # Weibull quantile of lifelines' fit
    assert math.isclose(life["b10"]["value"], b10, rel_tol=1e-4) and life["b10"]["lower"] < b10
    assert life["mttf"]["confidence"] == 0.9
    assert record["coefficients"] == [] and record["metrics"] is None
    assert (await api.post("get/model", {"id": fitted["id"]}))[1] == record
    # Reliability at t and whole curves, against the closed form of the fitted parameters.
    status, at = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 500.0})
    dist = stats.weibull_min(params["beta"]["value"], scale=params["alpha"]["value"])
    assert status == 200 and at["unit"] == "h"
    assert math.isclose(at["at"]["reliability"], dist.sf(500.0), rel_tol=1e-10)
    assert math.isclose(at["at"]["density"], dist.pdf(500.0), rel_tol=1e-10)
    status, curves = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {})
    assert status == 200 and set(curves["curves"]) >= {"x", "sf", "ff", "hf", "Hf", "df"}
    x = np.array(curves["curves"]["x"])
    assert np.allclose(curves["curves"]["sf"], dist.sf(x), rtol=1e-9, atol=1e-300)
    status, listing = await api.get("/api/v1/models")
    assert [m["id"] for m in listing["models"]] == [fitted["id"]]


async def test_kaplan_meier_and_competing_risks(api: Api) -> None:
    dataset_id = await _dataset(api)
    km = await _fit(api, dataset_id, "kaplan_meier")
    assert km["kind"] == "nonparametric"
    ref = KaplanMeierFitter().fit(TIMES, event_observed=1 - CENSOR)
    status, at = await api.post(f"/api/v1/models/{km['id']}/reliability", {"t": 700.0})
    assert math.isclose(at["at"]["reliability"], float(ref.survival_function_at_times(700.0).iloc[0]), rel_tol=1e-12)
    assert at["at"]["hazard"] is None and at["at"]["density"] is None
    status, record = await api.post("get/model", {"id": km["id"]})
    assert set(record["metrics"]) == {"median", "mttf", "b10"}
    assert math.isclose(record["metrics"]["median"], ref.median_survival_time_, rel_tol=1e-12)
    # Competing risks: a mode column splits the failures.
    modes = [None if CENSOR[i] else "bearing" if i % 2 else "seal" for i in range(60)]  # censored: no mode
    status, created = await api.post("datasets/create", {"name": "modes", "data": {
        "time": TIMES.tolist(), "state": CENSOR.tolist(), "mode": modes}})
    fitted = await _fit(api, created["id"], "weibull", x="time", c="state", mode="mode")
    status, record = await api.post("get/model", {"id": fitted["id"]})
    assert record["kind"] == "competing_risks" and {m["mode"] for m in record["modes"]} == {"bearing", "seal"}
    assert math.isclose(sum(m["share"] for m in record["modes"]), 1.0)
    status, at = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 400.0})
    parts = [stats.weibull_min({p["name"]: p["value"] for p in m["model"]["params"]}["beta"],
                               scale={p["name"]: p["value"] for p in m["model"]["params"]}["alpha"]).sf(400.0)
             for m in record["modes"]]
    assert math.isclose(at["at"]["reliability"], parts[0] * parts[1], rel_tol=1e-9)  # modes act in series


async def test_import_params_only_and_from_data(api: Api) -> None:
    status, imported = await api.post("/api/import/models", {
        "name": "supplier", "distribution": "lognormal", "unit": "h",
        "params": [{"name": "mu", "value": 6.0}, {"name": "sigma", "value": 0.5}]})
    assert status == 200 and imported["params_only"] is True and imported["distribution"] == "lognormal"
    status, at = await api.post(f"/api/v1/models/{imported['id']}/reliability", {"t": 400.0})
    assert math.isclose(at["at"]["reliability"], stats.lognorm(0.5, scale=math.exp(6.0)).sf(400.0), rel_tol=1e-10)
    status, refitted = await api.post("/api/import/models", {
        "name": "from data", "distribution": "exponential", "data": {"x": [10.0, 20.0, 30.0, 40.0]}})
    assert status == 200 and refitted["params_only"] is False
    status, record = await api.post("get/model", {"id": refitted["id"]})
    assert math.isclose(record["params"][0]["value"], 4 / 100.0, rel_tol=1e-8)  # λ = r / T


async def test_import_extras_are_a_published_shape(api: Api) -> None:
    """extras is an object of gamma, p and f0 (each with its range), going with params only;
    options go with data only: refused at the door, naming the field."""
    weibull = [{"name": "alpha", "value": 100.0}, {"name": "beta", "value": 2.0}]
    status, imported = await api.post("/api/import/models", {"name": "shifted", "distribution": "weibull",
                                                             "params": weibull, "extras": {"gamma": 50.0}})
    assert status == 200, imported
    status, at = await api.post(f"/api/v1/models/{imported['id']}/reliability", {"t": 150.0})
    assert math.isclose(at["at"]["reliability"], stats.weibull_min(2.0, loc=50.0, scale=100.0).sf(150.0), rel_tol=1e-10)
    for extras, field in (({"zeta": 1.0}, "extras.zeta"), ({"p": 0.0}, "extras.p"), ({"f0": 1.0}, "extras.f0"),
                          ({"gamma": -1.0}, "extras.gamma"), ({"p": 0.5, "f0": 0.1}, "extras")):
        assert_refusal(*await api.post("/api/import/models", {"name": "x", "distribution": "weibull",
                                                              "params": weibull, "extras": extras}), 422, field)
    assert_refusal(*await api.post("/api/import/models", {"name": "x", "distribution": "weibull", "params": weibull,
                                                          "options": {"method": "mle"}}), 422, "options")
    assert_refusal(*await api.post("/api/import/models", {"name": "x", "distribution": "weibull",
                                                          "data": {"x": [1.0, 2.0, 3.0]}, "extras": {"gamma": 1.0}}),
                   422, "extras")
    status, doc = await api.get("/api/v1/openapi.json")
    extras = doc["components"]["schemas"]["ImportExtras"]
    assert set(extras["properties"]) == {"gamma", "p", "f0"} and extras["additionalProperties"] is False


async def test_ingest_refits_models_in_place(api: Api) -> None:
    dataset_id = await _dataset(api)
    fitted = await _fit(api, dataset_id)
    extra = [1500.0, 1700.0, 2100.0]
    status, out = await api.post(f"/api/ingest/datasets/{dataset_id}/lives",
                                 {"rows": [{"time": t, "state": "F"} for t in extra]})
    assert status == 200 and out["refit"] == [{"id": fitted["id"], "name": fitted["name"]}]
    status, record = await api.post("get/model", {"id": fitted["id"]})
    ref = WeibullFitter().fit(np.concatenate([TIMES, extra]), event_observed=np.concatenate([1 - CENSOR, [1, 1, 1]]))
    assert record["n"] == 63
    assert math.isclose({p["name"]: p["value"] for p in record["params"]}["beta"], ref.rho_, rel_tol=1e-4)
    status, out = await api.post(f"/api/ingest/datasets/{dataset_id}/lives?refit=false",
                                 {"rows": [{"time": 10.0, "state": "F"}]})
    assert out["refit"] == [] and (await api.post("get/model", {"id": fitted["id"]}))[1]["n"] == 63


async def test_demand_data(api: Api) -> None:
    status, out = await api.post("fit/demand", {"name": "valve", "batches": [
        {"demands": 120, "failures": 2, "label": "2024"}, {"demands": 150, "failures": 5}]})
    assert status == 200, out
    lo, hi = stats.binomtest(7, 270).proportion_ci(0.95, method="exact")
    assert math.isclose(out["pooled"]["exact"][0], lo, rel_tol=1e-6)
    assert math.isclose(out["pooled"]["exact"][1], hi, rel_tol=1e-6)
    assert (await api.post("get/model", {"id": out["id"]}))[1]["kind"] == "demand"


async def test_life_refusals(api: Api, other_api: Api) -> None:
    dataset_id = await _dataset(api)
    base = {"name": "m", "dataset_id": dataset_id, "distribution": "weibull", "mapping": {"x": "time", "c": "state"}}
    cases = [
        ({**base, "mapping": {"x": "when"}}, "mapping.x"),
        ({**base, "mapping": {"x": "time", "colour": "state"}}, "mapping.colour"),
        ({**base, "distribution": "weibul"}, "weibul"),
        ({**base, "mapping": {"x": "state"}}, "state"),
    ]
    for body, words in cases:
        assert_refusal(*await api.post("/api/v1/fit", body), 422, words)
    status, created = await api.post("datasets/create", {"name": "neg", "data": {"t": [5.0, -1.0, 3.0]}})
    assert_refusal(*await api.post("/api/v1/fit", {**base, "dataset_id": created["id"], "mapping": {"x": "t"}}), 422,
                   "t")
    status, created = await api.post("datasets/create", {"name": "one", "data": {"t": [5.0]}})
    assert_refusal(*await api.post("/api/v1/fit", {**base, "dataset_id": created["id"], "mapping": {"x": "t"}}), 422)
    assert (await other_api.post("/api/v1/fit", base))[0] == 404
    assert (await api.get("/api/v1/models"))[1]["models"] == []
    fitted = await _fit(api, dataset_id)
    assert_refusal(*await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": -1.0}), 422, "t")
    assert_refusal(*await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"covariates": {"temp": 1.0}}),
                   422, "covariates")
    assert (await other_api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 1.0}))[0] == 404
    assert_refusal(*await api.post("/api/import/models", {"name": "x", "distribution": "mixture", "params": [
        {"name": "alpha1", "value": 1.0}, {"name": "beta1", "value": 2.0}, {"name": "weight1", "value": 0.3},
        {"name": "alpha2", "value": 5.0}, {"name": "beta2", "value": 2.0}, {"name": "weight2", "value": 0.3}]}),
        422, "weight")
