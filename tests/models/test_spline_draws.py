"""Draws of a Royston–Parmar model (`royston_parmar`, `proportional_odds`): normal on (spline γ, β)
with the covariance its fit stores, restricted to increasing splines. With no interior knots the
odds-scale model is the log-logistic AFT read as odds (γ0 = −μ/σ, γ1 = 1/σ, β = −γ_AFT/σ), so its
covariance is the AFT fit's (pinned to R's survreg in tests/regression) carried by the delta method;
additive hazards, Fine–Gray and Cox frailty keep their refusal, each with its reason."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bathtub import models
from bathtub.errors import InputError
from bathtub.regression import flexible
from tests.models.reference import LIFE


def _fit(dist: str) -> dict:
    return models.fit(dist, LIFE, {"x": "x", "c": "c"}, covariates=["z"])


def test_proportional_odds_covariance_is_the_log_logistic_afts_by_the_delta_method() -> None:
    po, aft = _fit("proportional_odds"), _fit("loglogistic_aft")
    assert len(po["spline"]["gamma"]) == 2  # no interior knots by default
    mu, sigma, g = aft["mu"], aft["sigma"], aft["gamma"][0]
    c = np.array(aft["covariance"]["matrix"])  # of (mu, log sigma, gamma)
    jac = np.array([[-1 / sigma, mu / sigma, 0.0], [0.0, -1 / sigma, 0.0], [0.0, g / sigma, -1 / sigma]])
    want = jac @ c @ jac.T
    np.testing.assert_allclose(np.array(po["covariance"]["matrix"]), want, rtol=2e-3, atol=1e-6 * np.abs(want).max())
    np.testing.assert_allclose([*po["spline"]["gamma"], *po["beta"]], [-mu / sigma, 1 / sigma, -g / sigma], rtol=1e-5)
    k = 4000
    x = np.array([[*d["spline"]["gamma"], *d["beta"]] for d in models.parameter_draws(po, k, seed=3)])
    np.testing.assert_allclose(x.mean(axis=0), [-mu / sigma, 1 / sigma, -g / sigma],
                               atol=4 * float(np.sqrt(np.diag(want).max() / k)))
    np.testing.assert_allclose(np.cov(x.T), want, rtol=8 * math.sqrt(2 / k), atol=1e-3 * np.abs(want).max())
    # a drawn record is evaluated as any: its reliability at z is the drawn log-logistic's
    d = models.parameter_draws(po, 1, seed=3)[0]
    g0, g1 = d["spline"]["gamma"]
    odds = math.exp(g0 + g1 * math.log(900.0) + d["beta"][0] * 0.4)
    assert models.from_record(d).at(900.0, covariates={"z": 0.4})["reliability"] == pytest.approx(1 / (1 + odds),
                                                                                                  rel=1e-10)


def test_royston_parmar_draws_keep_the_spline_increasing_and_centre_on_the_fit() -> None:
    rp = _fit("royston_parmar")
    m = len(rp["spline"]["gamma"])
    assert m >= 3 and rp["covariance"]["names"][-1] == "z"
    knots = np.array(rp["spline"]["knots"]["log_time"])
    draws = models.parameter_draws(rp, 1500, seed=8)
    x = np.array([[*d["spline"]["gamma"], *d["beta"]] for d in draws])
    assert all(flexible.spline_slope_ok(np.array(d["spline"]["gamma"]), knots) for d in draws)
    cov = np.array(rp["covariance"]["matrix"])
    # the truncation to increasing splines moves the mean by little where the fit is well determined
    np.testing.assert_allclose(x.mean(axis=0), [*rp["spline"]["gamma"], *rp["beta"]],
                               atol=5 * float(np.sqrt(np.diag(cov).max() / 1500)))
    assert models.parameter_draws(rp, 2, seed=8, first=1)[0]["beta"] == draws[1]["beta"]  # draw i from (seed, i)


def test_other_regressions_are_refused_with_their_reason_and_old_splines_say_refit() -> None:
    old = {k: v for k, v in _fit("royston_parmar").items() if k != "covariance"}
    with pytest.raises(InputError) as e:
        models.parameter_draws(old, 2, 1)
    assert "refit" in e.value.rule
    with pytest.raises(InputError) as e:  # a weibull_frailty record saved before its covariance was stored
        models.parameter_draws({"kind": "regression", "distribution": "weibull_frailty", "b": [0.1]}, 2, 1)
    assert "refit" in e.value.rule
    additive = models.fit("additive_hazards", LIFE, {"x": "x", "c": "c"}, covariates=["z"])
    for rec, word in ((additive, "no unit's life"), ({"kind": "regression", "distribution": "fine_gray"}, "mode"),
                      ({"kind": "regression", "distribution": "cox_frailty"}, "integrated likelihood")):
        with pytest.raises(InputError) as e:
            models.parameter_draws(rec, 2, 1, field="uncertainty")
        assert e.value.field == "uncertainty" and "cannot be drawn" in e.value.rule and word in e.value.rule
