"""Draws of a saved Cox model: the coefficients normal with their covariance (checked against
lifelines' CoxPHFitter on the Rossi data), the Breslow baseline given them (its mean the point
Breslow, its spread the Tsiatis variance); a drawn record is a block's step life at covariates."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from lifelines import CoxPHFitter
from lifelines.datasets import load_rossi

from bathtub import models
from bathtub.rbd import uncertainty as unc
from bathtub.regression.records import fit_regression

COLS = ("fin", "age", "race", "wexp", "mar", "paro", "prio")


@pytest.fixture(scope="module")
def rossi() -> Any:
    return load_rossi()


@pytest.fixture(scope="module")
def cox(rossi: Any) -> dict[str, Any]:
    cols = {k: rossi[k].astype(float).tolist() for k in ("week", *COLS)}
    cols["c"] = (1 - rossi["arrest"]).astype(int).tolist()
    rec = fit_regression(cols, {"x": "week", "c": "c"}, "cox", covariates=list(COLS))
    rec["unit"] = "weeks"
    return rec


@pytest.fixture(scope="module")
def drawn(cox: dict[str, Any]) -> list[dict[str, Any]]:
    return models.parameter_draws(cox, 4000, seed=21)


def test_drawn_coefficients_have_lifelines_variance_matrix(rossi: Any, cox: dict[str, Any],
                                                            drawn: list[dict[str, Any]]) -> None:
    ref = CoxPHFitter(baseline_estimation_method="breslow").fit(rossi, "week", "arrest")
    v = ref.variance_matrix_.loc[list(COLS), list(COLS)].to_numpy()
    np.testing.assert_allclose(np.array(cox["covariance"]["matrix"]), v, rtol=1e-3, atol=1e-9)
    b = np.array([[c["value"] for c in d["coefficients"]] for d in drawn])
    n = len(drawn)
    se = np.sqrt(np.diag(v))
    assert np.all(np.abs(b.mean(axis=0) - ref.params_[list(COLS)].to_numpy()) < 4 * se / np.sqrt(n))
    np.testing.assert_allclose(np.var(b, axis=0, ddof=1), se**2, rtol=4 * np.sqrt(2 / (n - 1)))
    np.testing.assert_allclose(np.corrcoef(b.T), v / np.outer(se, se), atol=4 / np.sqrt(n))


def test_drawn_baseline_centres_on_the_point_breslow_with_the_tsiatis_spread(
        rossi: Any, cox: dict[str, Any], drawn: list[dict[str, Any]]) -> None:
    base = cox["baseline"][0]
    i = int(np.searchsorted(base["time"], 30.0, side="right")) - 1  # H0 at 30 weeks
    h = np.array([d["baseline"][0]["cumhaz"][i] for d in drawn])
    assert all(d["baseline"][0]["time"] == base["time"] for d in drawn[:5])
    # Tsiatis' variance of H0(t) at the means, computed here from the data: Σ d/S0² + q'Vq
    x = rossi[list(COLS)].to_numpy(float)
    xc = x - x.mean(axis=0)
    beta = np.array([c["value"] for c in cox["coefficients"]])
    w = np.exp(xc @ beta)
    t, e = rossi["week"].to_numpy(float), rossi["arrest"].to_numpy()
    times = np.unique(t[e == 1])
    times = times[times <= 30.0]
    var_a, q, h0 = 0.0, np.zeros(len(COLS)), 0.0
    for u in times:
        risk = t >= u
        d = float(np.sum((t == u) & (e == 1)))
        s0 = float(w[risk].sum())
        var_a += d / s0**2
        q += d * (w[risk] @ xc[risk]) / s0**2
        h0 += d / s0
    assert base["cumhaz"][i] == pytest.approx(h0, rel=1e-9)  # the record's Breslow is the textbook one
    var = var_a + q @ np.array(cox["covariance"]["matrix"]) @ q
    n = len(drawn)
    assert abs(h.mean() - h0) < 4 * np.sqrt(var / n)
    assert np.var(h, ddof=1) == pytest.approx(var, rel=4 * np.sqrt(2 / (n - 1)) + 0.02)


def test_two_level_run_of_a_cox_block_at_covariates(cox: dict[str, Any]) -> None:
    covariates = {"fin": 1.0, "age": 25.0, "race": 1.0, "wexp": 0.0, "mar": 0.0, "paro": 1.0, "prio": 3.0}
    nodes = [{"id": "in", "type": "input"},
             {"id": "b", "type": "component", "model": {"saved_model_id": "cx", "covariates": covariates}},
             {"id": "out", "type": "output"}]
    d = {"name": "cx", "unit": "weeks", "repairable": False, "nodes": nodes,
         "edges": [{"source": "in", "target": "b"}, {"source": "b", "target": "out"}]}
    out = unc.analyze(d, models={"cx": cox}, mission_time=30.0, seed=4, replications=20_000,
                      uncertainty="parameters", draws=200, replications_per_draw=200)
    fig = out["uncertainty"]["figures"]["reliability"]
    # the point figure is the Breslow S(30 | x) = exp(−H0(30)·e^{(x − x̄)β})
    base = cox["baseline"][0]
    i = int(np.searchsorted(base["time"], 30.0, side="right")) - 1
    lp = sum((covariates[c["name"]] - m) * c["value"] for c, m in zip(cox["coefficients"], cox["means"], strict=True))
    point = float(np.exp(-base["cumhaz"][i] * np.exp(lp)))
    # a step life is simulated: the point run within 4 binomial standard errors of it
    assert abs(out["results"]["reliability"] - point) < 4 * np.sqrt(point * (1 - point) / 20_000)
    assert out["uncertainty"]["sources"][0]["law"] == "cox"
    assert fig["interval"][0] < point < fig["interval"][1] and fig["interval"][1] - fig["interval"][0] > 0.05
