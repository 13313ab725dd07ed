"""Parametric regression (Weibull PH, lognormal and loglogistic AFT) against R's survreg on the
Rossi data, and the PH reading of the Weibull fit against its AFT form."""

from __future__ import annotations

import math

import numpy as np
import pytest
from lifelines.datasets import load_rossi

from bathtub.regression.parametric import fit_parametric, ph_coefficients
from tests.regression.rref import run_r

COLS = ["fin", "age", "race", "wexp", "mar", "paro", "prio"]
ROSSI = load_rossi()
X = ROSSI[COLS].to_numpy(float)
T = ROSSI["week"].to_numpy(float)
E = ROSSI["arrest"].to_numpy(bool)


@pytest.mark.parametrize(("ours", "theirs"), [("weibull_ph", "weibull"), ("lognormal_aft", "lognormal"),
                                              ("loglogistic_aft", "loglogistic")])
def test_equals_r_survreg(ours: str, theirs: str) -> None:
    r = run_r(ROSSI, f"f <- survreg(Surv(week, arrest) ~ fin + age + race + wexp + mar + paro + prio, data=d, "
                     f"dist='{theirs}'); out('coef', coef(f)); out('scale', f$scale); out('ll', f$loglik); "
                     "out('se', sqrt(diag(vcov(f))))")
    fit = fit_parametric(ours, X, T, E)
    assert math.isclose(fit.mu, r["coef"][0], rel_tol=1e-7)
    assert np.allclose(fit.gamma, r["coef"][1:], rtol=1e-6, atol=1e-8)
    assert math.isclose(fit.sigma, r["scale"][0], rel_tol=1e-7)
    assert math.isclose(fit.loglik0, r["ll"][0], rel_tol=1e-9) and math.isclose(fit.loglik, r["ll"][1], rel_tol=1e-9)
    # R's vcov is over (intercept, coefficients, log(scale))
    se = np.sqrt(np.diag(fit.cov))
    assert np.allclose(se[2:], r["se"][1:-1], rtol=1e-4)
    assert math.isclose(se[1], r["se"][-1], rel_tol=1e-4)
    if ours == "weibull_ph":
        b, cov = ph_coefficients(fit)
        assert np.allclose(b, -np.asarray(r["coef"][1:]) / r["scale"][0], rtol=1e-6)
        assert np.all(np.sqrt(np.diag(cov)) > 0)


@pytest.mark.parametrize("scale", [1e-3, 1e6])
def test_time_scale_moves_only_the_intercept(scale: float) -> None:
    base = fit_parametric("weibull_ph", X, T, E)
    fit = fit_parametric("weibull_ph", X, T * scale, E)
    assert math.isclose(fit.mu, base.mu + math.log(scale), rel_tol=1e-8)
    assert np.allclose(fit.gamma, base.gamma, rtol=1e-6, atol=1e-9)
    assert math.isclose(fit.sigma, base.sigma, rel_tol=1e-7)
    assert math.isclose(fit.loglik, base.loglik - E.sum() * math.log(scale), rel_tol=1e-9)
