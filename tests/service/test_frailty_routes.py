"""weibull_frailty, cox_frailty and buckley_james through POST /api/v1/fit (SQLite only): the record
(its numbers equal the library fits pinned to quadrature, R's coxph and rms::bj in
tests/regression), reliability for a unit's covariates against closed forms computed here
(marginal gamma-frailty survival; the residuals' Kaplan–Meier from lifelines), and refusals that
name the field and save nothing."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from lifelines import KaplanMeierFitter
from lifelines.datasets import load_rossi

from bathtub.regression.buckley_james import fit_buckley_james
from bathtub.regression.cox_frailty import fit_cox_frailty
from bathtub.regression.frailty import fit_weibull_frailty
from tests.conftest import Api
from tests.regression.test_cox_frailty import frailty_data
from tests.service.test_errors import assert_refusal

# Numerics and mapping of the fit routes: the store only saves the record (see tests/conftest.py).
pytestmark = pytest.mark.one_store


def _frame() -> pd.DataFrame:
    d = frailty_data(24, 5, 0.8, seed=17)
    return d.assign(state=np.where(d["status"] == 1, "F", "S"), plant=[f"p{g}" for g in d["g"]],
                    kind=np.where(d["x2"] == 1, "b", "a"))


async def _dataset(api: Api, frame: pd.DataFrame, name: str = "grouped") -> str:
    status, created = await api.post("/api/v1/datasets", {"name": name,
                                                          "data": {k: frame[k].tolist() for k in frame.columns}})
    assert status == 200, created
    return created["id"]


async def _fit(api: Api, body: dict) -> dict:
    status, fitted = await api.post("/api/v1/fit", body)
    assert status == 200, fitted
    assert fitted["kind"] == "regression" and fitted["distribution"] == body["distribution"]
    status, record = await api.get(f"/api/v1/models/{fitted['id']}")
    assert status == 200
    return record


async def _at(api: Api, model_id: str, t: float, unit: dict) -> dict:
    status, body = await api.post(f"/api/v1/models/{model_id}/reliability", {"t": t, "covariates": unit})
    assert status == 200, body
    return body["at"]


async def test_weibull_frailty(api: Api) -> None:
    frame = _frame()
    ds = await _dataset(api, frame)
    record = await _fit(api, {"name": "wf", "dataset_id": ds, "distribution": "weibull_frailty",
                              "mapping": {"x": "time", "c": "state", "group": "plant"}, "covariates": ["x1", "kind"]})
    ref = fit_weibull_frailty(frame[["x1", "x2"]].to_numpy(float), frame["time"].to_numpy(float),
                              frame["status"].to_numpy(bool), frame["plant"].to_numpy())
    assert [c["name"] for c in record["coefficients"]] == ["x1", "kind[T.b]"]
    assert np.allclose([c["value"] for c in record["coefficients"]], ref.b, rtol=1e-6)
    assert all(c["exp_coef_kind"] == "hazard ratio" for c in record["coefficients"])
    params = {p["name"]: p for p in record["params"]}
    assert math.isclose(params["theta"]["value"], ref.theta, rel_tol=1e-6) and params["theta"]["se"] > 0
    assert math.isclose(params["beta"]["value"], ref.rho, rel_tol=1e-6)
    gof = {g["id"]: g for g in record["gof"]}
    assert math.isclose(gof["log_likelihood"]["value"], ref.loglik, rel_tol=1e-9)
    assert gof["frailty_lr_test"]["value"] > 0 and 0 <= gof["frailty_lr_test"]["p"] <= 0.5
    assert record["frailty"]["group_column"] == "plant" and record["frailty"]["n_groups"] == 24
    assert record["validation"]["available"] and record["diagnostics"]["ph_test"]["available"] is False
    # marginal survival of a unit: (1 + θ (t/α)^β e^{xb})^(−1/θ) from the record's own figures
    unit = {"x1": 0.5, "kind": "b"}
    at = await _at(api, record["id"], 20.0, unit)
    b = {c["name"]: c["value"] for c in record["coefficients"]}
    h = (20.0 / params["alpha"]["value"]) ** params["beta"]["value"] * math.exp(0.5 * b["x1"] + b["kind[T.b]"])
    theta = params["theta"]["value"]
    assert math.isclose(at["reliability"], (1 + theta * h) ** (-1 / theta), rel_tol=1e-9)
    assert math.isclose(at["conditional"]["reliability"], math.exp(-h), rel_tol=1e-9)
    assert "marginal" in at["frailty"]
    assert math.isclose(at["hazard"], params["beta"]["value"] / 20.0 * h / (1 + theta * h), rel_tol=1e-9)
    status, curves = await api.post(f"/api/v1/models/{record['id']}/reliability", {"covariates": unit, "points": 50})
    assert status == 200 and curves["curves"]["sf"][0] == 1.0 and len(curves["curves"]["x"]) == 50


async def test_cox_frailty(api: Api) -> None:
    frame = _frame()
    ds = await _dataset(api, frame)
    record = await _fit(api, {"name": "cf", "dataset_id": ds, "distribution": "cox_frailty",
                              "mapping": {"x": "time", "c": "state", "group": "plant"}, "covariates": ["x1", "x2"],
                              "cox_options": {"tie_method": "breslow"}})
    ref = fit_cox_frailty(frame[["x1", "x2"]].to_numpy(float), ["x1", "x2"], frame["time"].to_numpy(float),
                          frame["status"].to_numpy(bool), frame["plant"].to_numpy(), ties="breslow")
    # θ maximises a likelihood flat at its top: it is pinned to ~1e-8, the rest follows it
    assert np.allclose([c["value"] for c in record["coefficients"]], ref.beta, rtol=1e-6)
    assert np.allclose([c["se2"] for c in record["coefficients"]], np.sqrt(np.diag(ref.var2)), rtol=1e-6)
    assert record["diagnostics"]["ties"]["method"] == "breslow"
    theta = record["params"][0]["value"]
    assert math.isclose(theta, ref.theta, rel_tol=1e-6) and record["frailty"]["df"] > 0
    assert len(record["frailty"]["estimates"]) == 24
    # marginal: (1 + θ H0(t) e^{(x − x̄)β})^(−1/θ) with the record's Breslow baseline (frailty 1)
    unit = {"x1": -0.3, "x2": 1}
    at = await _at(api, record["id"], 25.0, unit)
    base = record["baseline"]
    k = int(np.searchsorted(base["time"], 25.0, side="right")) - 1
    beta = np.array([c["value"] for c in record["coefficients"]])
    h = base["cumhaz"][k] * math.exp(float((np.array([-0.3, 1.0]) - np.array(record["means"])) @ beta))
    assert math.isclose(at["reliability"], (1 + theta * h) ** (-1 / theta), rel_tol=1e-9)
    assert at["hazard"] is None and math.isclose(at["conditional"]["reliability"], math.exp(-h), rel_tol=1e-9)
    status, curves = await api.post(f"/api/v1/models/{record['id']}/reliability", {"covariates": unit})
    assert status == 200 and curves["curves"]["step"] == "post"
    assert all(a >= b for a, b in zip(curves["curves"]["sf"], curves["curves"]["sf"][1:]))


async def test_buckley_james(api: Api) -> None:
    rossi = load_rossi()
    frame = rossi.assign(state=np.where(rossi["arrest"] == 1, "F", "S"))
    ds = await _dataset(api, frame, "rossi")
    cols = ["fin", "age", "prio"]
    record = await _fit(api, {"name": "bj", "dataset_id": ds, "distribution": "buckley_james",
                              "mapping": {"x": "week", "c": "state"}, "covariates": cols,
                              "options": {"bootstrap": 30}})
    x, t, d = rossi[cols].to_numpy(float), rossi["week"].to_numpy(float), rossi["arrest"].to_numpy(bool)
    ref = fit_buckley_james(x, t, d, boot=30)
    coefs = record["coefficients"]
    assert np.allclose([c["value"] for c in coefs], ref.beta, rtol=1e-12)
    assert np.allclose([c["robust_se"] for c in coefs], np.sqrt(np.diag(ref.boot_var))[1:], rtol=1e-12)
    assert all(c["exp_coef_kind"] == "time ratio" for c in coefs)
    assert record["diagnostics"]["robust"]["available"] and "bootstrap" in record["diagnostics"]["robust"]["method"]
    assert [g["id"] for g in record["gof"]] == ["wald_test"]
    # S(t|x) = Kaplan–Meier of the residuals log t − α − xβ (largest one a failure) at log t − α − xβ
    alpha = record["params"][0]["value"]
    e = np.log(t) - alpha - x @ ref.beta
    d2 = d.copy()
    d2[e == e.max()] = True
    km = KaplanMeierFitter().fit(e, d2)
    unit = {"fin": 1, "age": 30, "prio": 2}
    at = await _at(api, record["id"], 30.0, unit)
    r = math.log(30.0) - alpha - float(np.array([1, 30, 2]) @ ref.beta)
    assert math.isclose(at["reliability"], float(km.survival_function_at_times(r).iloc[0]), rel_tol=1e-9)


async def test_refusals_save_nothing(api: Api) -> None:
    frame = _frame()
    ds = await _dataset(api, frame)
    one = await _dataset(api, frame.assign(plant="p1"), "one group")
    none = await _dataset(api, frame.assign(state="S"), "no events")
    before = (await api.get("/api/v1/models"))[1]["models"]
    base = {"name": "bad", "dataset_id": ds, "covariates": ["x1"], "mapping": {"x": "time", "c": "state",
                                                                               "group": "plant"}}
    cases = [
        ({"distribution": "weibull_frailty", "mapping": {"x": "time", "c": "state", "group": "nope"}},
         "mapping.group", "not in the dataset"),
        ({"distribution": "cox_frailty", "mapping": {"x": "time", "c": "state", "group": "nope"}},
         "mapping.group", "not in the dataset"),
        ({"distribution": "weibull_frailty", "dataset_id": one}, "mapping.group", "2 groups"),
        ({"distribution": "cox_frailty", "dataset_id": one}, "mapping.group", "2 groups"),
        ({"distribution": "weibull_frailty", "dataset_id": none}, "mapping.c", "failures"),
        ({"distribution": "cox_frailty", "dataset_id": none}, "mapping.c", "no failures"),
        ({"distribution": "buckley_james", "dataset_id": none, "mapping": {"x": "time", "c": "state"}},
         "mapping.c", "failures"),
        ({"distribution": "cox"}, "mapping.group", "shared-frailty"),
        ({"distribution": "buckley_james"}, "mapping.group", "no frailty"),
        ({"distribution": "weibull_frailty", "mapping": {"x": "time", "c": "state"}}, "mapping.group", "required"),
        ({"distribution": "weibull_frailty", "mapping": {"i": "g", "xl": "x1", "xr": "time", "c": "state",
                                                         "group": "plant"}}, "mapping.i", "one row per unit"),
        ({"distribution": "cox_frailty", "cox_options": {"strata_column": "kind"}}, "cox_options.strata_column"),
        ({"distribution": "cox_frailty", "cox_options": {"tie_method": "exact"}}, "cox_options.tie_method"),
        ({"distribution": "weibull_frailty", "cox_options": {"tie_method": "efron"}}, "cox_options"),
        ({"distribution": "cox", "mapping": {"x": "time", "c": "state"}, "options": {"bootstrap": 50}},
         "options.bootstrap"),
        ({"distribution": "buckley_james", "mapping": {"x": "time", "c": "state"}, "options": {"bootstrap": 5}},
         "options.bootstrap", "from 20 to 2000"),
    ]
    for extra, *words in cases:
        status, body = await api.post("/api/v1/fit", {**base, **extra})
        assert_refusal(status, body, 422, *words)
    assert (await api.get("/api/v1/models"))[1]["models"] == before


async def test_time_scale_through_the_service(api: Api) -> None:
    # the same data in hours and in kilo-hours: coefficients and θ equal, time parameters scale exactly
    frame = _frame()
    scaled = frame.assign(time=frame["time"] * 1e-3)
    ids = [await _dataset(api, f, n) for f, n in ((frame, "hours"), (scaled, "khours"))]
    for dist in ("weibull_frailty", "cox_frailty", "buckley_james"):
        mapping = {"x": "time", "c": "state", **({"group": "plant"} if dist != "buckley_james" else {})}
        a, b = [await _fit(api, {"name": dist, "dataset_id": i, "distribution": dist, "mapping": mapping,
                                 "covariates": ["x1", "x2"]}) for i in ids]
        assert np.allclose([c["value"] for c in a["coefficients"]], [c["value"] for c in b["coefficients"]],
                           rtol=1e-6, atol=1e-9)
        unit = {"x1": 0.2, "x2": 0}
        ra, rb = await _at(api, a["id"], 12.0, unit), await _at(api, b["id"], 12.0e-3, unit)
        assert math.isclose(ra["reliability"], rb["reliability"], rel_tol=1e-6)
