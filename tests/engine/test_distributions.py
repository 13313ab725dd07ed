"""The engine's distributions against scipy.stats (the independent reference), 1e-10
relative on a grid of quantiles, plus KS tests of its sampling at fixed seeds."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bathtub.engine import EngineError, EngineLifetime

# (id, params, scipy frozen distribution) — parameterisation as bathtub.distributions documents.
CASES = [
    ("exponential", {"failure_rate": 0.002}, stats.expon(scale=500.0)),
    ("exponential", {"failure_rate": 0.5, "gamma": 3.0}, stats.expon(loc=3.0, scale=2.0)),
    ("weibull", {"alpha": 1000.0, "beta": 2.5}, stats.weibull_min(2.5, scale=1000.0)),
    ("weibull", {"alpha": 50.0, "beta": 0.6, "gamma": 10.0}, stats.weibull_min(0.6, loc=10.0, scale=50.0)),
    ("normal", {"mu": 100.0, "sigma": 15.0}, stats.norm(100.0, 15.0)),
    ("lognormal", {"mu": 3.0, "sigma": 0.8}, stats.lognorm(0.8, scale=np.exp(3.0))),
    ("lognormal", {"mu": 1.0, "sigma": 1.5, "gamma": 2.0}, stats.lognorm(1.5, loc=2.0, scale=np.exp(1.0))),
    ("gamma", {"alpha": 0.7, "beta": 30.0}, stats.gamma(0.7, scale=30.0)),
    ("gamma", {"alpha": 4.5, "beta": 2.0}, stats.gamma(4.5, scale=2.0)),
    ("gamma", {"alpha": 60.0, "beta": 0.5}, stats.gamma(60.0, scale=0.5)),
    ("loglogistic", {"alpha": 200.0, "beta": 3.0}, stats.fisk(3.0, scale=200.0)),
    ("loglogistic", {"alpha": 20.0, "beta": 1.5, "gamma": 5.0}, stats.fisk(1.5, loc=5.0, scale=20.0)),
    ("gumbel", {"mu": 500.0, "sigma": 40.0}, stats.gumbel_l(500.0, 40.0)),
    ("logistic", {"mu": 80.0, "sigma": 6.0}, stats.logistic(80.0, 6.0)),
    ("uniform", {"a": 10.0, "b": 30.0}, stats.uniform(10.0, 20.0)),
]
PROBS = np.array([1e-6, 1e-4, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.9999])
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


def close(got: np.ndarray, want: np.ndarray, rtol: float = 1e-10) -> None:
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0.0)


@pytest.mark.parametrize(("dist_id", "params", "ref"), CASES, ids=IDS)
def test_functions_match_scipy(dist_id, params, ref):
    d = EngineLifetime.from_input(dist_id, params)
    t = ref.ppf(PROBS)
    close(d.sf(t), ref.sf(t))
    close(d.cdf(t), ref.cdf(t))
    close(d.pdf(t), ref.pdf(t))
    close(d.hazard(t), np.exp(ref.logpdf(t) - ref.logsf(t)))
    close(d.cumulative_hazard(t), -ref.logsf(t))
    close(d.quantile(PROBS), ref.ppf(PROBS))
    close(d.isf(PROBS), ref.isf(PROBS))
    close(np.array(d.mean()), np.array(ref.mean()), rtol=1e-12)


def test_mixture_matches_weighted_scipy():
    params = {"alpha1": 100.0, "beta1": 0.8, "weight1": 0.3, "alpha2": 1000.0, "beta2": 3.0, "weight2": 0.7}
    d = EngineLifetime.from_input("mixture", params, "weibull")
    a, b = stats.weibull_min(0.8, scale=100.0), stats.weibull_min(3.0, scale=1000.0)
    t = np.array([1.0, 10.0, 50.0, 200.0, 700.0, 1000.0, 1500.0])
    close(d.sf(t), 0.3 * a.sf(t) + 0.7 * b.sf(t))
    close(d.cdf(t), 0.3 * a.cdf(t) + 0.7 * b.cdf(t))
    close(d.pdf(t), 0.3 * a.pdf(t) + 0.7 * b.pdf(t))
    close(d.hazard(t), (0.3 * a.pdf(t) + 0.7 * b.pdf(t)) / (0.3 * a.sf(t) + 0.7 * b.sf(t)))
    close(np.array(d.mean()), np.array(0.3 * a.mean() + 0.7 * b.mean()), rtol=1e-12)
    q = d.quantile(PROBS[2:-1])
    close(0.3 * a.cdf(q) + 0.7 * b.cdf(q), PROBS[2:-1], rtol=1e-10)


@pytest.mark.parametrize(("dist_id", "params", "ref"), CASES, ids=IDS)
def test_sampling_passes_ks(dist_id, params, ref):
    d = EngineLifetime.from_input(dist_id, params)
    x = d.sample(20_000, seed=2026)
    assert stats.kstest(x, ref.cdf).pvalue > 1e-3


@pytest.mark.parametrize(("dist_id", "params", "ref"), [CASES[2], CASES[5], CASES[8], CASES[10]], ids=IDS[:4])
def test_residual_life_passes_ks(dist_id, params, ref):
    # Remaining life of a unit aged a: P(X > x) = S(a + x) / S(a).
    d = EngineLifetime.from_input(dist_id, params)
    age = float(ref.median())
    x = d.sample(20_000, seed=7, age=age)
    assert stats.kstest(x, lambda y: 1.0 - ref.sf(age + y) / ref.sf(age)).pvalue > 1e-3


def test_mixture_sampling_passes_ks():
    params = {"mu1": 2.0, "sigma1": 0.3, "weight1": 0.4, "mu2": 4.0, "sigma2": 0.5, "weight2": 0.6}
    d = EngineLifetime.from_input("mixture", params, "lognormal")
    a, b = stats.lognorm(0.3, scale=np.exp(2.0)), stats.lognorm(0.5, scale=np.exp(4.0))
    x = d.sample(20_000, seed=11)
    assert stats.kstest(x, lambda y: 0.4 * a.cdf(y) + 0.6 * b.cdf(y)).pvalue > 1e-3


def test_same_seed_same_draws_and_streams_differ():
    d = EngineLifetime.from_input("weibull", {"alpha": 10.0, "beta": 2.0})
    np.testing.assert_array_equal(d.sample(5, seed=1), d.sample(5, seed=1))
    assert not np.array_equal(d.sample(5, seed=1, stream=0), d.sample(5, seed=1, stream=1))


def test_engine_refuses_out_of_domain_params():
    # EngineLifetime() skips the Python validation, so the engine's own checks are seen.
    with pytest.raises(EngineError, match="beta"):
        EngineLifetime("weibull", {"alpha": 1.0, "beta": float("nan")}).sf([1.0])
    with pytest.raises(EngineError, match="weights"):
        EngineLifetime("mixture", {"alpha1": 1.0, "beta1": 1.0, "weight1": 0.5, "alpha2": 2.0, "beta2": 1.0,
                                 "weight2": 0.6}, "weibull").sf([1.0])
    with pytest.raises(ValueError):
        EngineLifetime.from_input("gamma", {"alpha": -1.0, "beta": 1.0})
