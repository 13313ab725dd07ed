"""Regression models through the service (SQLite only): POST /api/v1/fit with covariates, a
formula and cox_options; the model record; reliability for a unit's covariates; refusals that
name the field and save nothing. References: lifelines (Cox, Weibull AFT) fitted here."""

from __future__ import annotations

import math
from urllib.parse import urlsplit

import numpy as np
import pytest
from lifelines import CoxPHFitter, CoxTimeVaryingFitter, WeibullAFTFitter
from lifelines.datasets import load_rossi, load_stanford_heart_transplants

from tests.conftest import Api
from tests.service.test_errors import assert_refusal

# Numerics and mapping of the fit routes: the store only saves the record (see tests/conftest.py).
pytestmark = pytest.mark.one_store

ROSSI = load_rossi()
COLS = ["fin", "age", "race", "wexp", "mar", "paro", "prio"]


async def _dataset(api: Api, frame, name: str = "rossi") -> str:
    data = {k: frame[k].tolist() for k in frame.columns}
    status, created = await api.post("/api/v1/datasets", {"name": name, "data": data})
    assert status == 200, created
    return created["id"]


def _rossi_frame():
    f = ROSSI.copy()
    f["state"] = np.where(f["arrest"] == 1, "F", "S")
    f["group"] = np.where(f["race"] == 1, "black", "other")
    return f


async def _models(api: Api) -> list:
    return (await api.get("/api/v1/models"))[1]["models"]


async def test_cox_record_matches_lifelines(api: Api) -> None:
    ds = await _dataset(api, _rossi_frame())
    body = {"name": "rossi cox", "dataset_id": ds, "distribution": "cox", "mapping": {"x": "week", "c": "state"},
            "covariates": COLS, "unit": "weeks"}
    status, fitted = await api.post("/api/v1/fit", body)
    assert status == 200, fitted
    assert fitted["kind"] == "regression" and fitted["n"] == 432
    status, record = await api.get(f"/api/v1/models/{fitted['id']}")
    assert status == 200
    ref = CoxPHFitter().fit(ROSSI, "week", "arrest")
    coefs = {c["name"]: c for c in record["coefficients"]}
    assert list(coefs) == COLS
    for name in COLS:
        c = coefs[name]
        assert math.isclose(c["value"], ref.params_[name], abs_tol=1e-6)
        assert math.isclose(c["se"], ref.standard_errors_[name], rel_tol=1e-6)
        assert math.isclose(c["exp_coef"], math.exp(c["value"]), rel_tol=1e-12) and c["exp_coef_kind"] == "hazard ratio"
        assert c["robust_se"] > 0 and c["ci"][0] < c["value"] < c["ci"][1]
    gof = {g["id"]: g for g in record["gof"]}
    assert math.isclose(gof["log_likelihood"]["value"], ref.log_likelihood_, rel_tol=1e-9)
    assert math.isclose(gof["aic"]["value"], ref.AIC_partial_, rel_tol=1e-9)
    lr = ref.log_likelihood_ratio_test()
    assert math.isclose(gof["lr_test"]["value"], lr.test_statistic, rel_tol=1e-7)
    assert {"wald_test", "score_test", "bic"} <= set(gof)
    v = record["validation"]
    assert v["available"] and math.isclose(v["concordance"]["value"], ref.concordance_index_, rel_tol=1e-9)
    assert v["n_units"] == 432 and v["sampled"] is False and v["brier"]["model"] < v["brier"]["baseline"]
    assert len(v["auc"]) == 3 and all(0.5 < a["value"] < 1 for a in v["auc"])
    ph = record["diagnostics"]["ph_test"]
    assert ph["available"] and ph["verdict"] == "violated" and "age" in ph["reading"]
    assert {r["covariate"] for r in ph["rows"]} == set(COLS) and ph["global"]["df"] == 7
    assert record["diagnostics"]["ties"]["method"] == "efron" and record["diagnostics"]["robust"]["available"]
    # Reliability for one unit: S(t|x) = exp(-H0(t)·e^{(x−x̄)β}), lifelines' prediction of the same unit
    unit = {"fin": 1, "age": 30, "race": 0, "wexp": 1, "mar": 0, "paro": 1, "prio": 2}
    status, at = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 20, "covariates": unit})
    assert status == 200, at
    expected = float(ref.predict_survival_function(ROSSI.iloc[:1].assign(**unit)[COLS], times=[20]).iloc[0, 0])
    assert math.isclose(at["at"]["reliability"], expected, rel_tol=1e-9) and at["at"]["hazard"] is None
    status, curves = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"covariates": unit})
    assert status == 200 and curves["curves"]["step"] == "post" and curves["curves"]["sf"][0] == 1.0
    assert_refusal(*await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 5}), 422, "covariates")
    assert_refusal(*await api.post(f"/api/v1/models/{fitted['id']}/reliability",
                                   {"t": 5, "covariates": {**unit, "height": 3}}), 422, "covariates.height")


async def test_strata_cluster_formula_and_categorical(api: Api) -> None:
    ds = await _dataset(api, _rossi_frame())
    body = {"name": "strat", "dataset_id": ds, "distribution": "cox", "mapping": {"x": "week", "c": "state"},
            "formula": "fin + age + C(group) + prio", "cox_options": {"strata_column": "wexp",
                                                                       "cluster_column": "paro",
                                                                       "tie_method": "breslow"}}
    status, fitted = await api.post("/api/v1/fit", body)
    assert status == 200, fitted
    record = (await api.get(f"/api/v1/models/{fitted['id']}"))[1]
    names = [c["name"] for c in record["coefficients"]]
    assert names == ["fin", "age", "C(group)[T.other]", "prio"]
    diag = record["diagnostics"]
    assert diag["strata"]["column"] == "wexp" and [lv["level"] for lv in diag["strata"]["levels"]] == ["0", "1"]
    assert diag["robust"]["n_clusters"] == 2 and diag["ties"]["method"] == "breslow"
    # same fit in lifelines' terms (categorical 'other' vs reference 'black' = 1 − race)
    frame = ROSSI.assign(other=1 - ROSSI["race"])[["week", "arrest", "fin", "age", "other", "prio", "wexp"]]
    ref = CoxPHFitter(baseline_estimation_method="breslow").fit(frame, "week", "arrest", strata=["wexp"])
    # lifelines' Cox uses Efron ties; compare against the Efron fit of the same design
    body2 = {**body, "name": "strat efron", "cox_options": {"strata_column": "wexp"}}
    status, fitted2 = await api.post("/api/v1/fit", body2)
    record2 = (await api.get(f"/api/v1/models/{fitted2['id']}"))[1]
    ours = [c["value"] for c in record2["coefficients"]]
    assert np.allclose(ours, ref.params_[["fin", "age", "other", "prio"]].to_numpy(), atol=1e-6)
    unit = {"fin": 0, "age": 25, "group": "other", "prio": 1, "wexp": 1}
    status, at = await api.post(f"/api/v1/models/{fitted2['id']}/reliability", {"t": 30, "covariates": unit})
    assert status == 200, at
    pred = ref.predict_survival_function(frame.iloc[:1].assign(fin=0, age=25, other=1, prio=1, wexp=1), times=[30])
    assert math.isclose(at["at"]["reliability"], float(pred.iloc[0, 0]), rel_tol=1e-9)
    assert_refusal(*await api.post(f"/api/v1/models/{fitted2['id']}/reliability",
                                   {"t": 30, "covariates": {**unit, "wexp": 7}}), 422, "covariates.wexp")


async def test_counting_process_and_weibull_and_best(api: Api) -> None:
    heart = load_stanford_heart_transplants()
    heart = heart.assign(state=np.where(heart["event"] == 1, 0, 1))
    ds = await _dataset(api, heart, "heart")
    cols = ["age", "year", "surgery", "transplant"]
    body = {"name": "heart", "dataset_id": ds, "distribution": "cox",
            "mapping": {"i": "id", "xl": "start", "xr": "stop", "c": "state"}, "covariates": cols}
    status, fitted = await api.post("/api/v1/fit", body)
    assert status == 200, fitted
    record = (await api.get(f"/api/v1/models/{fitted['id']}"))[1]
    ref = CoxTimeVaryingFitter().fit(heart.drop(columns="state"), id_col="id", event_col="event",
                                     start_col="start", stop_col="stop")
    assert np.allclose([c["value"] for c in record["coefficients"]], ref.params_[cols].to_numpy(), atol=1e-6)
    v = record["validation"]
    assert v["available"] and v["brier"] is None and v["n_units"] == 103 and "start/stop" in v["note"]
    assert record["diagnostics"]["robust"]["clustered_by"] == "item column"
    # Weibull PH: lifelines' Weibull AFT read as PH (b = −γ·ρ)
    rossi = _rossi_frame()
    ds2 = await _dataset(api, rossi)
    body = {"name": "wph", "dataset_id": ds2, "distribution": "weibull_ph", "mapping": {"x": "week", "c": "state"},
            "covariates": COLS}
    status, fitted = await api.post("/api/v1/fit", body)
    assert status == 200, fitted
    record = (await api.get(f"/api/v1/models/{fitted['id']}"))[1]
    aft = WeibullAFTFitter().fit(ROSSI, "week", "arrest")
    rho = math.exp(aft.params_[("rho_", "Intercept")])
    # lifelines stops its optimiser early (its log-likelihood is 1e-11 below ours): 1e-4 here; R's survreg
    # pins the same fit to 1e-7 in tests/regression/test_parametric.py
    for c in record["coefficients"]:
        assert math.isclose(c["value"], -aft.params_[("lambda_", c["name"])] * rho, rel_tol=1e-4, abs_tol=1e-7)
    params = {p["name"]: p["value"] for p in record["params"]}
    assert math.isclose(params["beta"], rho, rel_tol=1e-5)
    gof = {g["id"]: g["value"] for g in record["gof"]}
    assert math.isclose(gof["log_likelihood"], aft.log_likelihood_, rel_tol=1e-8)
    unit = {"fin": 1, "age": 30, "race": 0, "wexp": 1, "mar": 0, "paro": 1, "prio": 2}
    status, at = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 40, "covariates": unit})
    expected = float(aft.predict_survival_function(ROSSI.iloc[:1].assign(**unit), times=[40]).iloc[0, 0])
    assert status == 200 and math.isclose(at["at"]["reliability"], expected, rel_tol=1e-4)
    assert at["at"]["hazard"] > 0 and math.isclose(at["at"]["density"], at["at"]["hazard"] * expected, rel_tol=1e-5)
    status, fitted = await api.post("/api/v1/fit", {**body, "name": "best", "distribution": "best"})
    record = (await api.get(f"/api/v1/models/{fitted['id']}"))[1]
    aics = [r["aic"] for r in record["ranking"]]
    assert aics == sorted(aics) and record["distribution"] == record["ranking"][0]["distribution"]


async def test_refusals_save_nothing(api: Api) -> None:
    frame = _rossi_frame().assign(const=1.0, flag=0)
    frame.loc[frame["arrest"] == 1, "flag"] = 1  # every failure flagged: perfect separation
    ds = await _dataset(api, frame)
    base = {"name": "bad", "dataset_id": ds, "distribution": "cox", "mapping": {"x": "week", "c": "state"}}
    before = await _models(api)
    cases = [
        ({"covariates": ["fin", "height"]}, "covariates[1]"),
        ({"formula": "fin + log(height)"}, "formula"),
        ({"covariates": ["fin", "const"]}, "constant"),
        ({"covariates": ["fin", "flag"]}, "separates"),
        ({"covariates": ["fin"], "cox_options": {"strata_column": "nope"}}, "cox_options.strata_column"),
        ({"covariates": ["fin"], "cox_options": {"tie_method": "average"}}, "tie_method"),
        ({"covariates": ["fin"], "cox_options": {"tie_method": "exact", "cluster_column": "paro"}},
         "cox_options.cluster_column"),
        ({"covariates": ["fin"], "distribution": "royston"}, "distribution"),
        ({"covariates": ["fin"], "mapping": {"x": "week", "c": "state", "group": "paro"}}, "mapping.group"),
        ({"covariates": ["fin"], "mapping": {"i": "age", "xl": "week", "xr": "week", "c": "state"}}, "mapping.xl"),
    ]
    for extra, word in cases:
        status, body = await api.post("/api/v1/fit", {**base, **extra})
        assert_refusal(status, body, 422, word)
    # no stratum with an event (four wexp/paro cells): nothing to fit. One stratum without events is
    # fitted (test_a_stratum_without_events_is_fitted_and_named)
    frame2 = _rossi_frame().assign(state="S")
    frame2["cell"] = frame2["wexp"].astype(str) + "/" + frame2["paro"].astype(str)
    ds2 = await _dataset(api, frame2, "no events")
    status, body = await api.post("/api/v1/fit", {**base, "dataset_id": ds2, "covariates": ["fin"],
                                                  "cox_options": {"strata_column": "cell"}})
    assert_refusal(status, body, 422, "mapping.c", "no failures", "none of the 4 strata")
    assert await _models(api) == before


async def test_a_stratum_without_events_is_fitted_and_named(api: Api) -> None:
    """Issue 26 item 10: stratum '1/0' of wexp/paro has every arrest turned into a censoring. Reference:
    lifelines' CoxPHFitter(strata=['cell']) on the same rows (Efron fit, Breslow baseline, whose column
    for '1/0' is 0); R's numbers for these data are in tests/regression/test_cox_strata_without_events.py."""
    frame = _rossi_frame()
    frame["cell"] = frame["wexp"].astype(str) + "/" + frame["paro"].astype(str)
    frame.loc[frame["cell"] == "1/0", ["arrest", "state"]] = [0, "S"]
    ds = await _dataset(api, frame, "one empty stratum")
    status, fitted = await api.post("/api/v1/fit", {"name": "empty stratum", "dataset_id": ds, "distribution": "cox",
                                                    "mapping": {"x": "week", "c": "state"},
                                                    "covariates": ["fin", "age", "prio"],
                                                    "cox_options": {"strata_column": "cell"}})
    assert status == 200, fitted
    record = (await api.get(f"/api/v1/models/{fitted['id']}"))[1]
    strata = record["diagnostics"]["strata"]
    assert strata["column"] == "cell" and strata["without_events"] == ["1/0"] and "'1/0'" in strata["reading"]
    assert [(lv["level"], lv["n"], lv["events"]) for lv in strata["levels"]] == [
        ("0/0", 76, 27), ("0/1", 109, 35), ("1/0", 89, 0), ("1/1", 158, 33)]
    ref = CoxPHFitter(baseline_estimation_method="breslow").fit(
        frame[["week", "arrest", "fin", "age", "prio", "cell"]], "week", "arrest", strata=["cell"],
        fit_options={"precision": 1e-12})
    assert np.allclose([c["value"] for c in record["coefficients"]], ref.params_.to_numpy(), atol=1e-8)
    assert np.allclose([c["se"] for c in record["coefficients"]], ref.standard_errors_.to_numpy(), rtol=1e-7)
    assert math.isclose({g["id"]: g for g in record["gof"]}["log_likelihood"]["value"], ref.log_likelihood_,
                        rel_tol=1e-10)
    assert record["validation"]["available"] and record["diagnostics"]["ph_test"]["available"]
    reliability = {}
    for cell in ("1/0", "1/1"):
        unit = {"fin": 1, "age": 30, "prio": 2, "cell": cell}
        status, at = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 40, "covariates": unit})
        assert status == 200, at
        row = frame.iloc[:1].assign(**unit)[["fin", "age", "prio", "cell"]]
        expected = float(ref.predict_survival_function(row, times=[40]).iloc[0, 0])
        assert math.isclose(at["at"]["reliability"], expected, rel_tol=1e-9), cell
        reliability[cell] = at["at"]["reliability"]
    assert reliability["1/0"] == 1.0 and reliability["1/1"] < 1
    status, curves = await api.post(f"/api/v1/models/{fitted['id']}/reliability",
                                    {"covariates": {"fin": 1, "age": 30, "prio": 2, "cell": "1/0"}})
    assert status == 200 and curves["curves"]["sf"] == [1.0]
    status, link = await api.post("sharing/create_link", {"kind": "model", "id": fitted["id"]})
    assert status == 200, link
    async with api.client.get(urlsplit(link["url"]).path) as resp:
        assert resp.status == 200 and "empty stratum" in await resp.text()


async def test_additive_hazards(api: Api) -> None:
    from bathtub.regression.additive import baseline_at, fit_additive

    ds = await _dataset(api, _rossi_frame())
    body = {"name": "add", "dataset_id": ds, "distribution": "additive_hazards",
            "mapping": {"x": "week", "c": "state"}, "covariates": ["fin", "age", "prio"]}
    status, fitted = await api.post("/api/v1/fit", body)
    assert status == 200, fitted
    record = (await api.get(f"/api/v1/models/{fitted['id']}"))[1]
    ref = fit_additive(ROSSI[["fin", "age", "prio"]].to_numpy(float), ROSSI["week"].to_numpy(float),
                       ROSSI["arrest"].to_numpy(bool))  # itself pinned to the textbook sums in tests/regression
    assert np.allclose([c["value"] for c in record["coefficients"]], ref.beta, rtol=1e-12)
    assert all(c["exp_coef"] is None and c["exp_coef_kind"] == "excess hazard rate" for c in record["coefficients"])
    assert record["diagnostics"]["ph_test"]["available"] is False and record["validation"]["available"]
    unit = {"fin": 1, "age": 30, "prio": 2}
    status, at = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 20, "covariates": unit})
    h = float(baseline_at(ref.grid, ref.drift, ref.times, ref.jumps, np.array([20.0]))[0]) + 20 * float(
        np.array([1, 30, 2]) @ ref.beta)
    assert status == 200 and math.isclose(at["at"]["reliability"], math.exp(-h), rel_tol=1e-12)
    status, best = await api.post("/api/v1/fit", {**body, "distribution": "best", "name": "best"})
    record = (await api.get(f"/api/v1/models/{best['id']}"))[1]
    assert "additive_hazards" not in [r["distribution"] for r in record["ranking"]]
