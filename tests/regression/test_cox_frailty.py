"""Cox with a shared gamma frailty against R's `coxph(... + frailty(g, distribution = "gamma"))`:
coefficients, se, se2, θ, the integrated and partial log-likelihoods and the frailty term's
degrees of freedom, for Efron and Breslow ties, sparse (> 5 groups) and full information,
right-censored and start/stop rows; θ's correction term against R's own `frailty.gammacon`;
the time-scale invariance."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from bathtub.errors import InputError
from bathtub.regression.cox_frailty import fit_cox_frailty, gamma_correction
from tests.regression.rref import run_r

# R iterates θ until I(θ) changes by 1e-10, so its θ is the maximiser we compute
R_FIT = ("f <- coxph(Surv(time, status) ~ x1 + x2 + frailty(g, distribution='gamma', eps=1e-12), data=d, "
         "ties='{ties}', control=coxph.control(outer.max=200, iter.max=100, eps=1e-12)); "
         "out('coef', coef(f)); out('se', sqrt(diag(f$var))); out('se2', sqrt(diag(f$var2))); "
         "h <- f$history[[1]]; out('theta', h$theta); out('clog', h$c.loglik); out('loglik', f$loglik); "
         "out('df', f$df); g0 <- coxph(Surv(time, status) ~ x1 + x2, data=d, ties='{ties}'); out('cox', g0$loglik)")


def frailty_data(q: int, m: int, theta: float, seed: int, round_to: float = 1.0) -> pd.DataFrame:
    """q groups of m units, gamma frailty of variance theta, Weibull baseline, ties by rounding."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(1, q + 1), m)
    z = rng.gamma(1 / theta, theta, q)[g - 1]
    x1 = rng.normal(size=q * m)
    x2 = rng.integers(0, 2, q * m).astype(float)
    h = z * np.exp(0.6 * x1 - 0.8 * x2)
    t = (-np.log(rng.uniform(size=q * m)) / (0.01 * h)) ** (1 / 1.3)
    c = rng.uniform(5, 60, q * m)
    time = np.maximum(np.ceil(np.minimum(t, c) / round_to) * round_to, round_to)
    return pd.DataFrame({"time": time, "status": (t <= c).astype(int), "x1": x1, "x2": x2, "g": g})


def _ours(d: pd.DataFrame, ties: str = "efron", start: np.ndarray | None = None, scale: float = 1.0):
    return fit_cox_frailty(d[["x1", "x2"]].to_numpy(float), ["x1", "x2"], d["time"].to_numpy(float) * scale,
                           d["status"].to_numpy(bool), d["g"].to_numpy(), ties=ties,
                           start=None if start is None else start * scale)


@pytest.mark.parametrize(("q", "m", "ties"), [(30, 6, "efron"), (30, 6, "breslow"), (4, 40, "efron")])
def test_equals_r_coxph_frailty(q: int, m: int, ties: str) -> None:
    d = frailty_data(q, m, 0.7, seed=q + m)
    r = run_r(d, R_FIT.format(ties=ties))
    fit = _ours(d, ties)
    assert math.isclose(fit.theta, r["theta"][0], rel_tol=2e-5)
    # with 5 groups or fewer R lists the frailties after x1, x2 as ordinary penalised coefficients
    assert np.allclose(fit.beta, r["coef"][:2], rtol=1e-5, atol=1e-8)
    assert np.allclose(np.sqrt(np.diag(fit.var)), r["se"][:2], rtol=1e-5)
    assert np.allclose(np.sqrt(np.diag(fit.var2)), r["se2"][:2], rtol=1e-5)
    assert math.isclose(fit.ilik, r["clog"][0], rel_tol=1e-9)
    assert math.isclose(fit.loglik, r["loglik"][1], rel_tol=1e-7)
    assert math.isclose(fit.loglik_cox, r["cox"][1], rel_tol=1e-10)  # θ = 0: the plain Cox fit
    assert math.isclose(fit.frailty_df, r["df"][-1], rel_tol=1e-4)
    # θ maximises I: the profile interval holds it, its SE is finite, the LR test against Cox is positive
    lo, hi = fit.theta_ci
    assert lo < fit.theta < hi and fit.theta_se is not None and fit.theta_se > 0 and fit.lr_theta > 0


def test_r_default_search_lands_near_our_maximum() -> None:
    # R's default eps = 1e-5 stops its θ search early: its I(θ) is at most ours, θ within our profile interval
    d = frailty_data(30, 6, 0.7, seed=36)
    r = run_r(d, "f <- coxph(Surv(time, status) ~ x1 + x2 + frailty(g, distribution='gamma'), data=d); "
                 "h <- f$history[[1]]; out('theta', h$theta); out('clog', h$c.loglik)")
    fit = _ours(d)
    assert r["clog"][0] <= fit.ilik + 1e-9 * abs(fit.ilik)
    assert fit.theta_ci[0] < r["theta"][0] < fit.theta_ci[1]
    assert math.isclose(fit.theta, r["theta"][0], rel_tol=0.05)


def test_counting_process_rows_equal_r() -> None:
    d = frailty_data(25, 6, 0.9, seed=5)
    # split every unit at half its time: the same data as (start, stop] rows
    first = d.assign(start=0.0, stop=d["time"] / 2, status=0)
    second = d.assign(start=d["time"] / 2, stop=d["time"])
    rows = pd.concat([first, second], ignore_index=True)
    r = run_r(rows, "f <- coxph(Surv(start, stop, status) ~ x1 + x2 + frailty(g, distribution='gamma', eps=1e-12),"
                    " data=d, control=coxph.control(outer.max=200, iter.max=100, eps=1e-12)); out('coef', coef(f)); "
                    "out('se', sqrt(diag(f$var))); out('theta', f$history[[1]]$theta)")
    fit = fit_cox_frailty(rows[["x1", "x2"]].to_numpy(float), ["x1", "x2"], rows["stop"].to_numpy(float),
                          rows["status"].to_numpy(bool), rows["g"].to_numpy(), start=rows["start"].to_numpy(float))
    assert math.isclose(fit.theta, r["theta"][0], rel_tol=2e-5)
    assert np.allclose(fit.beta, r["coef"], rtol=1e-5)
    assert np.allclose(np.sqrt(np.diag(fit.var)), r["se"], rtol=1e-5)
    plain = _ours(d)  # and the split rows are the same fit as the unsplit ones
    assert np.allclose(fit.beta, plain.beta, rtol=1e-7) and math.isclose(fit.theta, plain.theta, rel_tol=1e-6)


def test_gamma_correction_equals_r() -> None:
    d = np.array([0, 1, 1, 2, 3, 5, 8, 0, 1])
    body = "".join(f"out('c{i}', survival:::frailty.gammacon(c(0,1,1,2,3,5,8,0,1), {1 / th!r}));"
                   for i, th in enumerate((0.01, 0.5, 2.0, 40.0)))
    r = run_r(pd.DataFrame({"a": [1]}), body)
    for i, th in enumerate((0.01, 0.5, 2.0, 40.0)):
        assert math.isclose(gamma_correction(d, th), r[f"c{i}"][0], rel_tol=1e-10)


def test_no_shared_frailty_is_the_cox_fit() -> None:
    # every group a replicate of the same units: nothing is shared beyond x, θ̂ = 0 and the fit is Cox's
    one = frailty_data(1, 40, 0.5, seed=11).drop(columns="g")
    d = pd.concat([one.assign(g=k) for k in range(5)], ignore_index=True)
    fit = _ours(d)
    r = run_r(d, "f <- coxph(Surv(time, status) ~ x1 + x2, data=d); out('coef', coef(f)); out('ll', f$loglik)")
    assert fit.theta == 0.0 and fit.lr_theta == 0.0
    assert np.allclose(fit.beta, r["coef"], rtol=1e-7) and math.isclose(fit.ilik, r["ll"][1], rel_tol=1e-10)


@pytest.mark.parametrize("scale", [1e-3, 1e6])
def test_time_scale(scale: float) -> None:
    d = frailty_data(20, 6, 0.7, seed=3)
    base = _ours(d)
    fit = _ours(d, scale=scale)
    assert np.allclose(fit.beta, base.beta, rtol=1e-8) and math.isclose(fit.theta, base.theta, rel_tol=1e-7)
    assert np.allclose(np.sqrt(np.diag(fit.var)), np.sqrt(np.diag(base.var)), rtol=1e-7)
    assert np.allclose(fit.baseline_time, base.baseline_time * scale, rtol=1e-12)
    assert np.allclose(fit.baseline_cumhaz, base.baseline_cumhaz, rtol=1e-7)


def test_too_many_groups_times_failure_times_is_refused() -> None:
    d = frailty_data(2000, 3, 0.5, seed=9, round_to=1e-6)  # ~3,000 distinct failure times × 2,000 groups
    with pytest.raises(InputError) as err:
        _ours(d)
    assert err.value.field == "mapping.group" and "weibull_frailty" in err.value.rule
