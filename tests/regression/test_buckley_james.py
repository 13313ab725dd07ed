"""Buckley–James against an independent textbook implementation written here (explicit Kaplan–Meier
loop over distinct residuals, conditional means by direct sums), against R's `rms::bj` (skipped
without it), and the closed form without censoring (ordinary least squares on log t)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from lifelines.datasets import load_rossi

from bathtub.regression.buckley_james import fit_buckley_james
from tests.regression.rref import need_r, run_r

ROSSI = load_rossi()


def textbook(x: np.ndarray, t: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, int]:
    """Buckley & James (1979) as Miller & Halpern (1982) state it; returns (α, β) and the cycle length."""
    y = np.log(t)
    xx = np.column_stack([np.ones(len(y)), x])
    beta = np.linalg.solve(xx.T @ xx, xx.T @ y)
    seen = [beta]
    for _ in range(1000):
        e = y - xx @ beta
        dd = d.copy()
        dd[e == e.max()] = True  # the largest residual is a failure: the distribution has mass 1
        values = np.unique(e)
        surv, mass = 1.0, {}
        for u in values:
            n_risk = int(np.sum(e >= u))
            deaths = int(np.sum((e == u) & dd))
            if deaths:
                mass[u] = surv * deaths / n_risk
                surv *= 1 - deaths / n_risk
        ystar = y.copy()
        for i in np.flatnonzero(~dd):
            above = [(u, w) for u, w in mass.items() if u > e[i]]
            ystar[i] = xx[i] @ beta + sum(u * w for u, w in above) / sum(w for _, w in above)
        beta = np.linalg.solve(xx.T @ xx, xx.T @ ystar)
        for k, old in enumerate(seen):
            if np.max(np.abs(old - beta)) <= 1e-8 * (1 + np.max(np.abs(beta))):
                cyc = seen[k:]
                return (beta, 0) if len(cyc) == 1 else (np.mean(cyc, axis=0), len(cyc))
        seen.append(beta)
    raise AssertionError("no convergence")


def test_equals_textbook_on_rossi() -> None:
    cols = ["fin", "age", "prio"]
    x, t, d = ROSSI[cols].to_numpy(float), ROSSI["week"].to_numpy(float), ROSSI["arrest"].to_numpy(bool)
    fit = fit_buckley_james(x, t, d)
    ref, cycle = textbook(x, t, d)
    assert fit.cycle == cycle
    assert math.isclose(fit.intercept, ref[0], rel_tol=1e-7) and np.allclose(fit.beta, ref[1:], rtol=1e-6)
    # Buckley–James variance: σ² (X_uᵀ X_u)⁻¹ over the failures, σ² from their residuals on d − p − 1 df
    xu = np.column_stack([np.ones(d.sum()), x[d]])
    eu = np.log(t[d]) - xu @ np.array([fit.intercept, *fit.beta])
    s2 = float(np.sum((eu - eu.mean()) ** 2)) / (d.sum() - 4)
    assert np.allclose(fit.var, s2 * np.linalg.inv(xu.T @ xu), rtol=1e-10)


def test_cycle_is_averaged_like_the_textbook() -> None:
    rng = np.random.default_rng(3)  # these data fall into a cycle of 23 iterates
    n = 120
    x = np.column_stack([rng.integers(0, 2, n), rng.normal(size=n)]).astype(float)
    t = np.exp(1 + 0.4 * x[:, 0] - 0.3 * x[:, 1] + 0.6 * rng.normal(size=n))
    c = rng.exponential(2.0, n)
    d = t <= c
    fit = fit_buckley_james(x, np.minimum(t, c), d)
    ref, cycle = textbook(x, np.minimum(t, c), d)
    assert fit.cycle == cycle == 23
    assert np.allclose([fit.intercept, *fit.beta], ref, rtol=1e-6, atol=1e-9)


def test_no_censoring_is_least_squares() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(80, 2))
    t = np.exp(2 + x @ np.array([0.3, -0.5]) + 0.4 * rng.normal(size=80))
    fit = fit_buckley_james(x, t, np.ones(80, dtype=bool))
    xx = np.column_stack([np.ones(80), x])
    coef, res, *_ = np.linalg.lstsq(xx, np.log(t), rcond=None)
    assert np.allclose([fit.intercept, *fit.beta], coef, rtol=1e-12) and fit.iterations == 1
    assert np.allclose(fit.var, res[0] / (80 - 3) * np.linalg.inv(xx.T @ xx), rtol=1e-10)


def test_equals_rms_bj() -> None:
    need_r()
    rng = np.random.default_rng(21)
    n = 150
    x1, x2 = rng.normal(size=n), rng.integers(0, 2, n).astype(float)
    t = np.exp(1 + 0.5 * x1 - 0.4 * x2 + 0.5 * rng.normal(size=n))
    c = rng.uniform(0, np.quantile(t, 0.8), n)  # censoring among the shorter times only
    frame = pd.DataFrame({"time": np.minimum(t, c), "status": (t <= c).astype(int), "x1": x1, "x2": x2})
    # rms stops when the residual sum of squares repeats to eps; it prints when it averaged a cycle instead
    r = run_r(frame, "if (!requireNamespace('rms', quietly=TRUE)) out('missing', 1) else {"
                     "log <- capture.output(f <- rms::bj(Surv(time, status) ~ x1 + x2, data=d, "
                     "control=list(iter.max=2000, eps=1e-14))); out('cycled', length(grep('ycle', log))); "
                     "out('coef', coef(f)); out('se', sqrt(diag(f$var)))}")
    if "missing" in r:
        pytest.skip("R's rms not installed (apt-get install -y r-cran-rms)")
    fit = fit_buckley_james(frame[["x1", "x2"]].to_numpy(), frame["time"].to_numpy(), frame["status"].to_numpy(bool))
    # these data fall into a 2-cycle: both average it
    assert fit.cycle == 2 and r["cycled"][0] > 0
    assert np.allclose([fit.intercept, *fit.beta], r["coef"], rtol=1e-7)
    assert np.allclose(np.sqrt(np.diag(fit.var)), r["se"], rtol=1e-7)


def test_bootstrap_is_fixed_seed_and_near_the_approximation() -> None:
    cols = ["fin", "prio"]
    x, t, d = ROSSI[cols].to_numpy(float), ROSSI["week"].to_numpy(float), ROSSI["arrest"].to_numpy(bool)
    a = fit_buckley_james(x, t, d, boot=40)
    b = fit_buckley_james(x, t, d, boot=40)
    assert a.boot_var is not None and b.boot_var is not None and np.array_equal(a.boot_var, b.boot_var)
    ratio = np.sqrt(np.diag(a.boot_var)) / np.sqrt(np.diag(a.var))
    assert np.all((ratio > 0.5) & (ratio < 2.0)) and a.boot_used >= 36


@pytest.mark.parametrize("scale", [1e-3, 1e6])
def test_time_scale(scale: float) -> None:
    cols = ["fin", "age", "prio"]
    x, t, d = ROSSI[cols].to_numpy(float), ROSSI["week"].to_numpy(float), ROSSI["arrest"].to_numpy(bool)
    base = fit_buckley_james(x, t, d, boot=0)
    fit = fit_buckley_james(x, t * scale, d, boot=0)
    assert math.isclose(fit.intercept, base.intercept + math.log(scale), rel_tol=1e-9)
    assert np.allclose(fit.beta, base.beta, rtol=1e-7, atol=1e-10) and fit.cycle == base.cycle
    assert np.allclose(fit.var, base.var, rtol=1e-7)
