"""Draws of a saved parametric regression (weibull_ph, AFT families): multivariate normal on the
fit's own scale (μ, log σ, γ) with the covariance the record stores, checked against lifelines'
WeibullAFTFitter on the Rossi data; a drawn record feeds a diagram block at covariates through
its usual path, and a two-level run's interval of R(t) agrees with the delta method."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from lifelines import WeibullAFTFitter
from lifelines.datasets import load_rossi
from scipy import stats

from bathtub import models
from bathtub.errors import InputError
from bathtub.rbd import uncertainty as unc
from bathtub.regression.records import fit_regression


@pytest.fixture(scope="module")
def rossi() -> Any:
    return load_rossi()


def _fit(rossi: Any, dist: str) -> dict[str, Any]:
    cols = {k: rossi[k].astype(float).tolist() for k in ("week", "age", "prio")}
    cols["c"] = (1 - rossi["arrest"]).astype(int).tolist()
    rec = fit_regression(cols, {"x": "week", "c": "c"}, dist, covariates=["age", "prio"])
    rec["unit"] = "weeks"
    return rec


def test_the_stored_covariance_is_lifelines_weibull_aft_variance_matrix(rossi: Any) -> None:
    rec = _fit(rossi, "weibull_ph")
    ref = WeibullAFTFitter().fit(rossi[["week", "arrest", "age", "prio"]], "week", "arrest")
    v = ref.variance_matrix_
    # lifelines: lambda_ = log scale (μ + xγ), rho_ = log shape = −log σ (so its covariances change sign)
    keys = [("lambda_", "Intercept"), ("rho_", "Intercept"), ("lambda_", "age"), ("lambda_", "prio")]
    sign = np.array([1.0, -1.0, 1.0, 1.0])
    expect = np.array([[v.loc[a, b] for b in keys] for a in keys]) * np.outer(sign, sign)
    got = np.array(rec["covariance"]["matrix"])
    assert rec["covariance"]["names"] == ["mu", "log_sigma", "age", "prio"]
    np.testing.assert_allclose(got, expect, rtol=2e-3, atol=1e-7)


@pytest.mark.parametrize("dist", ["weibull_ph", "lognormal_aft", "loglogistic_aft"])
def test_draw_moments_match_the_stored_covariance(rossi: Any, dist: str) -> None:
    rec = _fit(rossi, dist)
    n = 4000
    drawn = models.parameter_draws(rec, n, seed=11)
    u = np.array([[d["mu"], np.log(d["sigma"]), *d["gamma"]] for d in drawn])
    mean = np.array([rec["mu"], np.log(rec["sigma"]), *rec["gamma"]])
    cov = np.array(rec["covariance"]["matrix"])
    se = np.sqrt(np.diag(cov))
    # the mean within 4 standard errors of a mean of n draws; the variances within 4 se of a sample variance
    assert np.all(np.abs(u.mean(axis=0) - mean) < 4 * se / np.sqrt(n))
    np.testing.assert_allclose(np.var(u, axis=0, ddof=1), se**2, rtol=4 * np.sqrt(2 / (n - 1)))
    corr = np.corrcoef(u.T)
    np.testing.assert_allclose(corr, cov / np.outer(se, se), atol=4 / np.sqrt(n))
    d0 = drawn[0]
    if dist == "weibull_ph":  # the coefficients a unit's life reads: b = −γ/σ, α = e^μ, β = 1/σ
        assert [c["value"] for c in d0["coefficients"]] == pytest.approx([-g / d0["sigma"] for g in d0["gamma"]])
        assert {p["name"]: p["value"] for p in d0["params"]} == pytest.approx(
            {"alpha": np.exp(d0["mu"]), "beta": 1 / d0["sigma"]})
    else:
        assert [c["value"] for c in d0["coefficients"]] == pytest.approx(d0["gamma"])
    assert all(p["se"] is None and p["ci"] is None for p in d0["params"])
    # the same draw for (seed, i) however the draws are split
    assert models.parameter_draws(rec, 2, seed=11, first=5) == drawn[5:7]


def test_a_record_saved_without_covariance_is_refused_saying_refit(rossi: Any) -> None:
    rec = _fit(rossi, "weibull_ph")
    old = {k: v for k, v in rec.items() if k != "covariance"}
    with pytest.raises(InputError) as e:
        models.parameter_draws(models.upgrade(old), 2, 1)
    assert e.value.field == "id" and "refit" in e.value.rule
    cox = _fit(rossi, "cox")
    old_cox = {k: v for k, v in cox.items() if k not in ("covariance", "breslow_terms")}
    with pytest.raises(InputError) as e:
        models.parameter_draws(models.upgrade(old_cox), 2, 1, field="nodes.b.model.saved_model_id")
    assert e.value.field == "nodes.b.model.saved_model_id" and "refit" in e.value.rule
    cols = {k: rossi[k].astype(float).tolist() for k in ("week", "age", "prio")}
    aalen = fit_regression(cols, {"x": "week"}, "additive_hazards", covariates=["age", "prio"])
    with pytest.raises(InputError) as e:
        models.parameter_draws(aalen, 2, 1)
    assert "cannot be drawn" in e.value.rule


def _block(covariates: dict[str, Any]) -> dict[str, Any]:
    nodes = [{"id": "in", "type": "input"},
             {"id": "b", "type": "component", "model": {"saved_model_id": "w", "covariates": covariates}},
             {"id": "out", "type": "output"}]
    return {"name": "ph", "unit": "weeks", "repairable": False, "nodes": nodes,
            "edges": [{"source": "in", "target": "b"}, {"source": "b", "target": "out"}]}


@pytest.mark.slow  # ~6 s: 2,000 parameter draws of 10 runs each
def test_two_level_run_of_a_weibull_ph_block_at_covariates_agrees_with_the_delta_method(rossi: Any) -> None:
    rec = _fit(rossi, "weibull_ph")
    x = np.array([25.0, 3.0])
    t = 52.0
    out = unc.analyze(_block({"age": 25.0, "prio": 3.0}), models={"w": rec}, mission_time=t, seed=5,
                      uncertainty="parameters", draws=2000, replications_per_draw=10)
    fig = out["uncertainty"]["figures"]["reliability"]
    # the point figure is the fit's own R(t | x) = exp(−exp((ln t − μ − xγ)/σ))
    mu, sigma, gamma = rec["mu"], rec["sigma"], np.array(rec["gamma"])
    g = (np.log(t) - mu - x @ gamma) / sigma
    assert out["results"]["reliability"] == pytest.approx(np.exp(-np.exp(g)), rel=1e-9)
    # delta method on g over (μ, log σ, γ): the 90% interval of R from g ± z·se (R is monotone in g)
    grad = np.array([-1 / sigma, -g, *(-x / sigma)])
    se = float(np.sqrt(grad @ np.array(rec["covariance"]["matrix"]) @ grad))
    z = stats.norm.ppf(0.95)
    lo, hi = np.exp(-np.exp(g + z * se)), np.exp(-np.exp(g - z * se))
    # g is linear in (μ, γ) and nearly so in log σ at n = 432: the percentile interval is the delta one
    # within the Monte Carlo error of a 5% quantile of 2000 draws (~0.004 here)
    assert fig["interval"] == pytest.approx([lo, hi], abs=0.006)
    assert [s["model_id"] for s in out["uncertainty"]["sources"]] == ["w"]


def test_fleet_forecast_of_weibull_ph_items_under_parameter_uncertainty(rossi: Any) -> None:
    """Each item's life from its covariates under every draw: the first period's mean count over the
    draws against an independent sample of the same normal law on (μ, log σ, γ) through the
    Weibull PH item formula S_i(t) = exp(−(t/η_i)^{1/σ}), η_i = e^{μ + x_iγ}, written here."""
    from bathtub.fleet.plan import fleet_forecast

    rec = _fit(rossi, "weibull_ph")
    rng = np.random.default_rng(2)
    n = 30
    cov = [{"age": float(a), "prio": float(p)} for a, p in zip(rng.uniform(18, 40, n), rng.integers(0, 8, n))]
    ages, rates = rng.uniform(0, 20, n), rng.uniform(2, 6, n)
    items = [{"name": f"u{i}", "current_use": float(ages[i]), "rate": float(rates[i]), "covariates": cov[i]}
             for i in range(n)]
    body = {"model_id": "mdl_w", "items": items, "rate_source": "manual", "periods": 3, "replace_failed": False,
            "confidence": 0.9, "period_label": "weeks", "uncertainty": "parameters", "draws": 600, "seed": 5}
    life = models.from_record(rec).fleet_life("mdl_w")
    pu = fleet_forecast(life, body, rec)[0]["parameter_uncertainty"]
    x = np.array([[c["age"], c["prio"]] for c in cov])
    mean = np.array([rec["mu"], np.log(rec["sigma"]), *rec["gamma"]])
    u = np.random.default_rng(99).multivariate_normal(mean, np.array(rec["covariance"]["matrix"]), 20_000)

    def count(th: np.ndarray) -> float:
        eta, shape = np.exp(th[0] + x @ th[2:]), np.exp(-th[1])
        s0, s1 = np.exp(-(ages / eta) ** shape), np.exp(-((ages + rates) / eta) ** shape)
        return float(np.sum((s0 - s1) / s0))

    ref = np.array([count(th) for th in u])
    assert pu["draws"] == 600
    assert pu["expected_failures"][0] == pytest.approx(ref.mean(), abs=4 * ref.std() / np.sqrt(600))
