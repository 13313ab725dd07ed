"""Royston–Parmar and proportional-odds models through POST /api/v1/fit (SQLite only): the record
equals the library's fit (itself pinned to independent references in tests/regression/test_flexible.py),
reliability for a unit's covariates, `best` ranking them beside the parametric models, and refusals
that name the field and save nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from lifelines import WeibullAFTFitter
from lifelines.datasets import load_rossi

from bathtub.regression import flexible
from tests.conftest import Api
from tests.service.test_errors import assert_refusal

# Numerics and mapping of the fit routes: the store only saves the record (see tests/conftest.py).
pytestmark = pytest.mark.one_store

ROSSI = load_rossi()
COLS = ["fin", "age", "race", "wexp", "mar", "paro", "prio"]
X = ROSSI[COLS].to_numpy(float)
T = ROSSI["week"].to_numpy(float)
E = ROSSI["arrest"].to_numpy(bool)
UNIT = {"fin": 1, "age": 30, "race": 0, "wexp": 1, "mar": 0, "paro": 1, "prio": 2}


async def _dataset(api: Api, frame, name: str = "rossi") -> str:
    data = {k: frame[k].tolist() for k in frame.columns}
    status, created = await api.post("/api/v1/datasets", {"name": name, "data": data})
    assert status == 200, created
    return created["id"]


def _frame():
    return ROSSI.assign(state=np.where(ROSSI["arrest"] == 1, "F", "S"))


async def _models(api: Api) -> list:
    return (await api.get("/api/v1/models"))[1]["models"]


async def test_royston_parmar_and_proportional_odds(api: Api) -> None:
    ds = await _dataset(api, _frame())
    base = {"dataset_id": ds, "mapping": {"x": "week", "c": "state"}, "covariates": COLS, "unit": "weeks"}
    status, fitted = await api.post("/api/v1/fit", {**base, "name": "rp", "distribution": "royston_parmar"})
    assert status == 200, fitted
    assert fitted["kind"] == "regression" and fitted["distribution"] == "royston_parmar" and fitted["n"] == 432
    record = (await api.get(f"/api/v1/models/{fitted['id']}"))[1]
    ref = flexible.fit_spline("royston_parmar", X, T, E)
    assert [c["name"] for c in record["coefficients"]] == COLS
    assert np.allclose([c["value"] for c in record["coefficients"]], ref.beta, rtol=1e-12)
    assert all(c["exp_coef_kind"] == "hazard ratio" for c in record["coefficients"])
    spline = record["spline"]
    assert np.allclose(spline["knots"]["log_time"], ref.knots, rtol=1e-14)
    assert spline["knots"]["interior"] == ref.knots.size - 2 and "AIC" in spline["chosen_by"]
    assert [e["interior_knots"] for e in spline["selection"]] == [1, 2, 3, 4]
    gof = {g["id"]: g["value"] for g in record["gof"]}
    assert math.isclose(gof["log_likelihood"], ref.loglik, rel_tol=1e-12)
    assert record["diagnostics"]["ph_test"]["available"] and record["validation"]["available"]
    # reliability for one unit: exp(−exp(s(log t) + xβ)) from the library's spline
    status, at = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 30, "covariates": UNIT})
    assert status == 200, at
    b, _ = flexible.basis(np.array([math.log(30.0)]), ref.knots)
    xb = float(np.array([UNIT[c] for c in COLS]) @ ref.beta)
    assert math.isclose(at["at"]["reliability"], math.exp(-math.exp(float((b @ ref.gamma)[0]) + xb)), rel_tol=1e-10)
    assert at["at"]["hazard"] > 0 and at["covariates"] == UNIT
    status, curves = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"covariates": UNIT,
                                                                                    "points": 50})
    assert status == 200 and len(curves["curves"]["x"]) == 50 and curves["curves"]["sf"][0] == 1.0
    assert_refusal(*await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 5}), 422, "covariates")

    # proportional odds with knots given as times: odds ratios, no PH test
    status, fitted = await api.post("/api/v1/fit", {**base, "name": "po", "distribution": "proportional_odds",
                                                    "options": {"knots": [10, 30]}})
    assert status == 200, fitted
    record = (await api.get(f"/api/v1/models/{fitted['id']}"))[1]
    ref = flexible.fit_spline("proportional_odds", X, T, E, knots=[10.0, 30.0])
    assert np.allclose([c["value"] for c in record["coefficients"]], ref.beta, rtol=1e-12)
    assert all(c["exp_coef_kind"] == "odds ratio" and "odds" in c["reading"] for c in record["coefficients"])
    assert np.allclose(record["spline"]["knots"]["time"][1:-1], [10, 30], rtol=1e-12)
    assert record["diagnostics"]["ph_test"]["available"] is False
    status, at = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 30, "covariates": UNIT})
    b, _ = flexible.basis(np.array([math.log(30.0)]), ref.knots)
    odds = math.exp(float((b @ ref.gamma)[0]) + float(np.array([UNIT[c] for c in COLS]) @ ref.beta))
    assert status == 200 and math.isclose(at["at"]["reliability"], 1 / (1 + odds), rel_tol=1e-10)


async def test_royston_parmar_without_knots_matches_lifelines_weibull(api: Api) -> None:
    ds = await _dataset(api, _frame())
    body = {"name": "rp0", "dataset_id": ds, "distribution": "royston_parmar", "mapping": {"x": "week", "c": "state"},
            "covariates": COLS, "options": {"knots": 0}}
    status, fitted = await api.post("/api/v1/fit", body)
    assert status == 200, fitted
    record = (await api.get(f"/api/v1/models/{fitted['id']}"))[1]
    aft = WeibullAFTFitter().fit(ROSSI, "week", "arrest")
    rho = math.exp(aft.params_[("rho_", "Intercept")])
    # lifelines stops its optimiser early (1e-11 below the maximum): 1e-4
    for c in record["coefficients"]:
        assert math.isclose(c["value"], -aft.params_[("lambda_", c["name"])] * rho, rel_tol=1e-4, abs_tol=1e-7)
    params = {p["name"]: p["value"] for p in record["params"]}
    assert math.isclose(params["beta"], rho, rel_tol=1e-5)
    gof = {g["id"]: g["value"] for g in record["gof"]}
    assert math.isclose(gof["log_likelihood"], aft.log_likelihood_, rel_tol=1e-8)
    status, at = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 40, "covariates": UNIT})
    expected = float(aft.predict_survival_function(ROSSI.iloc[:1].assign(**UNIT), times=[40]).iloc[0, 0])
    assert status == 200 and math.isclose(at["at"]["reliability"], expected, rel_tol=1e-4)


async def test_best_ranks_the_spline_models_and_not_cox(api: Api) -> None:
    ds = await _dataset(api, _frame())
    body = {"name": "best", "dataset_id": ds, "distribution": "best", "mapping": {"x": "week", "c": "state"},
            "covariates": COLS}
    status, fitted = await api.post("/api/v1/fit", body)
    assert status == 200, fitted
    record = (await api.get(f"/api/v1/models/{fitted['id']}"))[1]
    ranked = {r["distribution"]: r for r in record["ranking"]}
    assert set(ranked) == {"weibull_ph", "lognormal_aft", "loglogistic_aft", "royston_parmar", "proportional_odds"}
    aics = [r["aic"] for r in record["ranking"]]
    assert aics == sorted(aics) and record["distribution"] == record["ranking"][0]["distribution"]
    for r in record["ranking"]:
        assert math.isclose(r["aic"], -2 * r["log_likelihood"] + 2 * r["parameters"], rel_tol=1e-12)
    rp = flexible.fit_spline("royston_parmar", X, T, E)
    assert math.isclose(ranked["royston_parmar"]["log_likelihood"], rp.loglik, rel_tol=1e-12)
    assert ranked["royston_parmar"]["parameters"] == rp.gamma.size + len(COLS)
    assert ranked["proportional_odds"]["parameters"] == 2 + len(COLS)
    assert "cox" in record["ranking_note"] and "not ranked" in record["ranking_note"]


async def test_refusals_save_nothing(api: Api) -> None:
    frame = _frame().assign(flag=np.where(ROSSI["arrest"] == 1, 1, 0), zero=np.where(ROSSI.index == 0, 0,
                                                                                       ROSSI["week"]))
    ds = await _dataset(api, frame)
    base = {"name": "bad", "dataset_id": ds, "distribution": "royston_parmar", "mapping": {"x": "week", "c": "state"},
            "covariates": COLS}
    before = await _models(api)
    cases = [
        ({"options": {"knots": 20}}, "options.knots", "0..10"),
        ({"options": {"knots": "many"}}, "options.knots", "count"),
        ({"options": {"knots": [40, 10]}}, "options.knots", "increase"),
        ({"options": {"knots": [100]}}, "options.knots", "between"),
        ({"options": {"knots": [10, -1]}}, "options.knots[1]", "> 0"),
        ({"distribution": "cox", "options": {"knots": 2}}, "options.knots", "royston_parmar"),
        ({"distribution": "best", "options": {"knots": 2}}, "options.knots", "royston_parmar"),
        ({"covariates": ["fin", "flag"]}, "covariates", "separates"),
        ({"distribution": "proportional_odds", "covariates": ["fin", "flag"]}, "covariates", "flag"),
        ({"mapping": {"x": "zero", "c": "state"}}, "mapping.x", "> 0"),
        ({"covariates": ["fin", "height"]}, "covariates[1]", "height"),
        ({"distribution": "proportional_odds", "cox_options": {"tie_method": "breslow"}}, "cox_options", "cox"),
    ]
    for extra, *words in cases:
        status, body = await api.post("/api/v1/fit", {**base, **extra})
        assert_refusal(status, body, 422, *words)
    assert await _models(api) == before


async def test_guide_regression_topic_lists_exactly_the_models_here(api: Api) -> None:
    from bathtub.regression import records
    from bathtub_api.tools.guide import REGRESSION_MODELS

    status, page = await api.post("guide", {"topic": "regression"})
    assert status == 200 and all(a["available"] for a in page["actions"])
    text = page["text"]
    assert "planned" not in text.lower() and "not yet available" not in text.lower()
    assert set(records.MODELS) <= set(REGRESSION_MODELS)  # every model fitted here has its line
    for model in REGRESSION_MODELS:
        assert (f"`{model}`" in text) == (model in records.MODELS), model
    for word in ("options.knots", "exp_coef_kind", "odds ratio", "concordance", "cox.zph", "ranking", "strata_column",
                 "cluster_column", "tie_method", "formula", "`xl`/`xr`"):
        assert word in text, word
    status, life = await api.post("guide", {"topic": "life_data"})
    assert status == 200 and "`regression` topic" in life["text"]
