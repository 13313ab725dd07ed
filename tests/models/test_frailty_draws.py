"""Draws of a Weibull shared-frailty model: normal on the fit's own scale (c, log ρ, b, log θ) with the
covariance its fit stores (the fit's covariance, whose standard errors tests/regression/test_frailty.py
pins to an independent quadrature likelihood); a drawn record answers for a unit of a new group,
marginal over the gamma frailty, and at the boundary θ̂ = 0 every draw keeps θ = 0."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bathtub import models
from bathtub.regression.frailty import fit_weibull_frailty
from tests.regression.test_frailty import simulate


def _record(x: np.ndarray, t: np.ndarray, e: np.ndarray, g: np.ndarray) -> dict:
    cols = {"t": t.tolist(), "c": (~e).astype(int).tolist(), "x1": x[:, 0].tolist(), "x2": x[:, 1].tolist(),
            "g": g.tolist()}
    return models.fit("weibull_frailty", cols, {"x": "t", "c": "c", "group": "g"}, covariates=["x1", "x2"])


def test_draws_follow_the_fits_covariance_and_answer_marginally() -> None:
    x, t, e, g = simulate(24, 4, 0.6, seed=1)
    rec = _record(x, t, e, g)
    fit = fit_weibull_frailty(x, t, e, g)
    assert rec["covariance"]["names"] == ["c", "log_rho", "x1", "x2", "log_theta"]
    np.testing.assert_allclose(np.array(rec["covariance"]["matrix"]), fit.cov, rtol=1e-6)
    k = 4000
    draws = models.parameter_draws(rec, k, seed=2)
    u = np.array([[d["c"], math.log(d["rho"]), *d["b"], math.log(d["theta"])] for d in draws])
    mean = [fit.c, math.log(fit.rho), *fit.b, math.log(fit.theta)]
    np.testing.assert_allclose(u.mean(axis=0), mean, atol=4 * float(np.sqrt(np.diag(fit.cov).max() / k)))
    # each sample covariance within 4.5 of its own standard error, sqrt((s_ii·s_jj + s_ij²)/(k − 1)) (normal draws)
    d2 = np.diag(fit.cov)
    se = np.sqrt((np.outer(d2, d2) + fit.cov**2) / (k - 1))
    assert np.all(np.abs(np.cov(u.T) - fit.cov) < 4.5 * se)
    # a drawn record's reliability: (1 + θ·e^{c + x·b}·t^ρ)^(−1/θ), the gamma-frailty average
    d = draws[0]
    h = math.exp(d["c"] + 0.3 * d["b"][0] + 1.0 * d["b"][1]) * 2.0 ** d["rho"]
    got = models.from_record(d).at(2.0, covariates={"x1": 0.3, "x2": 1.0})["reliability"]
    assert got == pytest.approx((1 + d["theta"] * h) ** (-1 / d["theta"]), rel=1e-10)
    assert d["params"][0]["value"] == pytest.approx(math.exp(-d["c"] / d["rho"]), rel=1e-12)


def test_at_the_boundary_the_draws_keep_theta_zero() -> None:
    x, t, e, _ = simulate(20, 5, 0.5, seed=2)
    # replicate groups of one sample share nothing: theta-hat = 0 (as tests/regression/test_frailty.py shows)
    xs, ts, es = np.tile(x[:30], (4, 1)), np.tile(t[:30], 4), np.tile(e[:30], 4)
    rec = _record(xs, ts, es, np.repeat(np.arange(4), 30))
    assert rec["theta"] == 0.0 and rec["covariance"]["names"][-1] == "x2"
    draws = models.parameter_draws(rec, 50, seed=1)
    assert all(d["theta"] == 0.0 for d in draws) and len({d["c"] for d in draws}) == 50
