"""Draws of the recurrent processes beside the plain power law: an HPP's rate by its chi-squared
pivot (exact for a failure-terminated test; Jeffreys' Gamma(n + ½) for a time-terminated count,
inside the classical limits), the log-linear NHPP, Kijima GRP and the power law with covariates by
a normal with the fit's covariance (each covariance checked against the observed information of
the process's log-likelihood written out here anew), and the refusals."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import stats

from bathtub import models
from bathtub.errors import InputError
from bathtub.recurrent import grp


def _process(n: int, beta: float, seed: int) -> list[float]:
    """n events of a power-law process Λ(t) = (t/100)^beta."""
    gam = np.cumsum(np.random.default_rng(seed).exponential(1.0, n))
    return (100.0 * gam ** (1 / beta)).tolist()


def _information(ll: Callable[[np.ndarray], float], x: np.ndarray) -> np.ndarray:
    """−(central-difference Hessian) of ll at x, steps 1e-4 relative (the test's own differences)."""
    k = x.size
    h = 1e-4 * np.maximum(np.abs(x), 1e-3)
    out = np.empty((k, k))
    for i in range(k):
        for j in range(k):
            e_i, e_j = np.eye(k)[i] * h[i], np.eye(k)[j] * h[j]
            out[i, j] = (ll(x + e_i + e_j) - ll(x + e_i - e_j) - ll(x - e_i + e_j) + ll(x - e_i - e_j)) / (
                4 * h[i] * h[j])
    return -out


def _values(draws: list[dict[str, Any]], names: tuple[str, ...]) -> np.ndarray:
    return np.array([[next(p["value"] for p in d["params"] if p["name"] == n) for n in names] for d in draws])


def test_hpp_failure_terminated_draws_are_the_exact_chi_squared_pivot() -> None:
    t = _process(12, 1.0, 3)
    rec = models.fit("hpp", {"t": t}, {"t": "t"})
    assert rec["termination"] == "failure"
    lam = np.array([d["params"][0]["value"] for d in models.parameter_draws(rec, 20_000, seed=5)])
    total = t[-1]  # one system, stopped at its 12th failure: the exposure is the last event's time
    # 2·lambda·T ~ chi2(2n) given the stopping rule: Kolmogorov-Smirnov at 1%
    assert stats.kstest(2 * lam * total, stats.chi2(24).cdf).pvalue > 0.01
    # so the 5% and 95% points are the classical 90% limits chi2(2n)/(2T) (Crow, MIL-HDBK-189)
    np.testing.assert_allclose(np.quantile(lam, [0.05, 0.95]), stats.chi2.ppf([0.05, 0.95], 24) / (2 * total),
                               rtol=0.03)


def test_hpp_time_terminated_draws_jeffreys_gamma_inside_the_classical_limits() -> None:
    t = _process(9, 1.0, 8)
    end = 1.4 * t[-1]
    rec = models.fit("hpp", {"t": t, "e": [end] * 9}, {"t": "t", "end": "e"}, options={"termination": "time"})
    lam = np.array([d["params"][0]["value"] for d in models.parameter_draws(rec, 20_000, seed=6)])
    assert stats.kstest(lam, stats.gamma(9.5, scale=1 / end).cdf).pvalue > 0.01
    lo, hi = np.quantile(lam, [0.05, 0.95])
    # the classical time-terminated 90% limits: chi2(2n; 5%)/(2T) and chi2(2n + 2; 95%)/(2T)
    assert stats.chi2.ppf(0.05, 18) / (2 * end) < lo and hi < stats.chi2.ppf(0.95, 20) / (2 * end)
    # and the shrinkage is 1/sqrt(n): the relative spread of Gamma(n + ½) is 1/sqrt(n + ½)
    assert np.std(lam) / np.mean(lam) == pytest.approx(1 / math.sqrt(9.5), rel=0.03)


def test_loglinear_covariance_is_the_inverse_information_and_the_draws_follow_it() -> None:
    t1, t2 = _process(14, 1.6, 1), _process(10, 1.6, 2)
    e1, e2 = 1.1 * t1[-1], 1.2 * t2[-1]
    rec = models.fit("loglinear", {"t": [*t1, *t2], "s": ["a"] * 14 + ["b"] * 10, "e": [e1] * 14 + [e2] * 10},
                     {"t": "t", "system": "s", "end": "e"})
    g = np.array([p["value"] for p in rec["params"]])
    cov = np.array(rec["covariance"]["matrix"])
    st, ends = sum(t1) + sum(t2), np.array([e1, e2])

    def ll(p: np.ndarray) -> float:  # Cox-Lewis: sum (g0 + g1 t) − ∫ exp(g0 + g1 u) du over each system
        return 24 * p[0] + p[1] * st - math.exp(p[0]) * float(np.sum(np.expm1(p[1] * ends))) / p[1]

    np.testing.assert_allclose(cov, np.linalg.inv(_information(ll, g)), rtol=2e-3)
    k = 8000
    x = _values(models.parameter_draws(rec, k, seed=3), ("g0", "g1"))
    np.testing.assert_allclose(x.mean(axis=0), g, atol=4 * float(np.sqrt(np.diag(cov).max() / k)))
    np.testing.assert_allclose(np.cov(x.T), cov, rtol=8 * math.sqrt(2 / k), atol=1e-12)


def _grp_data() -> tuple[dict[str, list[Any]], list[np.ndarray], list[float]]:
    rng = np.random.default_rng(22)
    ends = [900.0, 1100.0, 1000.0, 950.0, 1200.0, 1050.0]
    sims = grp.simulate(150.0, 2.2, 0.6, "kijima2", np.array(ends), rng)
    cols: dict[str, list[Any]] = {"t": [], "s": [], "e": []}
    for k, (ts, e) in enumerate(zip(sims, ends, strict=True)):
        cols["t"] += ts.tolist()
        cols["s"] += [f"S{k}"] * ts.size
        cols["e"] += [e] * ts.size
    return cols, sims, ends


def test_grp_covariance_is_the_inverse_information_and_q_is_drawn_clipped() -> None:
    cols, sims, ends = _grp_data()
    rec = models.fit("kijima2", cols, {"t": "t", "system": "s", "end": "e"})
    theta = np.array([p["value"] for p in rec["params"]])
    assert 0.05 < theta[2] < 0.95  # an interior q: its information is a plain second derivative

    def ll(p: np.ndarray) -> float:  # Kijima II: each spell a Weibull residual life from its virtual age
        a, b, q = p
        total = 0.0
        for ts, end in zip(sims, ends, strict=True):
            v = 0.0
            gaps = np.diff(np.concatenate([[0.0], ts, [end]]))  # each failure's running time, then the censored run
            for j, x in enumerate(gaps):
                d = 1 if j < ts.size else 0
                total += d * (math.log(b / a) + (b - 1) * math.log((v + x) / a)) - ((v + x) / a) ** b + (v / a) ** b
                v = q * (v + x)
        return total

    np.testing.assert_allclose(np.array(rec["covariance"]["matrix"]), np.linalg.inv(_information(ll, theta)),
                               rtol=0.02)
    k = 8000
    x = _values(models.parameter_draws(rec, k, seed=4), ("alpha", "beta", "q"))
    cov = np.array(rec["covariance"]["matrix"])
    cov_u = cov / np.outer([theta[0], theta[1], 1.0], [theta[0], theta[1], 1.0])  # onto (ln alpha, ln beta, q)
    u = np.column_stack([np.log(x[:, :2]), x[:, 2]])
    inside = (u[:, 2] > 0) & (u[:, 2] < 1)
    np.testing.assert_allclose(np.cov(u[:, :2].T), cov_u[:2, :2], rtol=8 * math.sqrt(2 / k))
    # q: the normal of the record's Wald interval, clipped to [0, 1]: the mass at each end is its tail
    sd = math.sqrt(cov[2, 2])
    for share, p in (((u[:, 2] == 0).mean(), stats.norm.cdf(-theta[2] / sd)),
                     ((u[:, 2] == 1).mean(), stats.norm.sf((1 - theta[2]) / sd))):
        assert share == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / k) + 1e-9)
    assert np.median(u[inside, 2]) == pytest.approx(theta[2], abs=4 * sd * 1.25 / math.sqrt(inside.sum()))


def test_power_law_with_covariates_draws_its_gamma_with_the_stored_covariance() -> None:
    t = [[9.0, 14.0, 18.0], [7.0, 12.0, 16.0, 19.0], [5.0, 9.0, 13.0, 16.0, 18.0], [6.0, 10.0, 13.0, 15.0, 17.0, 19.0]]
    z = [0.0, 0.0, 1.0, 1.0]
    cols = {"t": [v for ts in t for v in ts], "s": [k for k, ts in enumerate(t) for _ in ts],
            "e": [20.0] * 18, "z": [z[k] for k, ts in enumerate(t) for _ in ts]}
    rec = models.fit("crow_amsaa", cols, {"t": "t", "system": "s", "end": "e"}, options={"covariates": ["z"]})
    eff = rec["covariate_effects"]
    theta = np.array([eff["beta"], eff["lambda"], eff["coefficients"][0]["value"]])
    slog = sum(math.log(v) for ts in t for v in ts)

    def ll(p: np.ndarray) -> float:  # Lawless: sum log(lambda e^{z gamma} beta t^(beta-1)) − lambda e^{z gamma} T^beta
        b, lam, g = p
        return float(18 * math.log(lam * b) + g * sum(z[k] * len(ts) for k, ts in enumerate(t)) + (b - 1) * slog
                     - lam * sum(math.exp(g * zk) * 20.0**b for zk in z))

    cov = np.array(eff["covariance"]["matrix"])
    assert eff["covariance"]["names"] == ["beta", "lambda", "z"]
    # (beta, gamma) are orthogonal with a common end: that entry is 0 up to both differences' noise
    np.testing.assert_allclose(cov, np.linalg.inv(_information(ll, theta)), rtol=2e-3, atol=1e-7)
    assert math.sqrt(cov[2, 2]) == pytest.approx(eff["coefficients"][0]["se"], rel=1e-9)
    k = 8000
    d = models.parameter_draws(rec, k, seed=7)
    x = np.array([[e["beta"], e["lambda"], e["coefficients"][0]["value"]] for e in (r["covariate_effects"] for r in d)])
    u = np.column_stack([np.log(x[:, :2]), x[:, 2]])
    cov_u = cov / np.outer([theta[0], theta[1], 1.0], [theta[0], theta[1], 1.0])
    np.testing.assert_allclose(u.mean(axis=0), [math.log(theta[0]), math.log(theta[1]), theta[2]],
                               atol=4 * float(np.sqrt(np.diag(cov_u).max() / k)))
    np.testing.assert_allclose(np.cov(u.T), cov_u, rtol=8 * math.sqrt(2 / k), atol=1e-3 * np.abs(cov_u).max())
    # a record saved before the covariate fit stored its covariance is refused, saying to refit
    old = {**rec, "covariate_effects": {k: v for k, v in eff.items() if k != "covariance"}}
    with pytest.raises(InputError) as e:
        models.parameter_draws(old, 2, 1)
    assert "refit" in e.value.rule


def test_models_without_a_sampling_distribution_and_old_records_are_refused() -> None:
    t = _process(12, 1.5, 5)
    for dist, word in (("mcf", "non-parametric"), ("mcf_power_law", "least squares"), ("duane", "plot fit")):
        with pytest.raises(InputError) as e:
            models.parameter_draws(models.fit(dist, {"t": t}, {"t": "t"}), 2, 1, field="uncertainty")
        assert e.value.field == "uncertainty" and word in e.value.rule and "cannot be drawn" in e.value.rule
    for dist in ("loglinear", "kijima1"):
        old = {k: v for k, v in models.fit(dist, {"t": t}, {"t": "t"}).items() if k != "covariance"}
        with pytest.raises(InputError) as e:
            models.parameter_draws(old, 2, 1)
        assert "refit" in e.value.rule
