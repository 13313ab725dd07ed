"""Renewal functions: exponential and gamma(2) closed forms, Weibull by Monte Carlo (fixed seed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bathtub.distributions import Lifetime
from bathtub.strategy.renewal import delayed_renewal_function, renewal_function


def _simulate_counts(rng, first_draw, draw, t, reps):
    """Failures in [0, t] of a part renewed at failure; `first_draw` gives the present part's life."""
    clock = first_draw(reps)
    count = np.zeros(reps)
    alive = clock <= t
    while alive.any():
        count[alive] += 1
        clock[alive] += draw(int(alive.sum()))
        alive &= clock <= t
    return count


def test_exponential_renewal_function_is_linear():
    t, m = renewal_function(Lifetime.of("exponential", {"failure_rate": 0.5}), 20.0, 2000)
    np.testing.assert_allclose(m, 0.5 * t, atol=2e-5)


def test_gamma_shape_two_closed_form():
    """Gamma(2, scale θ): M(t) = t/(2θ) − 1/4 + e^{−2t/θ}/4 (Cox, Renewal Theory, 1962)."""
    theta = 3.0
    t, m = renewal_function(Lifetime.of("gamma", {"alpha": 2.0, "beta": theta}), 60.0, 3000)
    exact = t / (2 * theta) - 0.25 + np.exp(-2 * t / theta) / 4
    np.testing.assert_allclose(m, exact, atol=1e-5)


def test_weibull_renewal_function_monte_carlo():
    alpha, beta = 2.0, 3.0
    life = Lifetime.of("weibull", {"alpha": alpha, "beta": beta})
    t, m = renewal_function(life, 10.0, 2000)
    rng = np.random.default_rng(11)
    reps = 100_000
    draw = lambda k: alpha * rng.weibull(beta, size=k)  # noqa: E731
    for horizon in (1.5, 4.0, 10.0):
        counts = _simulate_counts(rng, draw, draw, horizon, reps)
        se = counts.std(ddof=1) / math.sqrt(reps)
        assert abs(counts.mean() - np.interp(horizon, t, m)) < 4 * se


def test_delayed_renewal_exponential_ignores_age():
    life = Lifetime.of("exponential", {"failure_rate": 0.1})
    t, m = renewal_function(life, 50.0, 1000)
    np.testing.assert_allclose(delayed_renewal_function(life, 30.0, t, m), 0.1 * t, atol=1e-5)


@pytest.mark.parametrize("age", [0.0, 1.0, 2.5])
def test_delayed_renewal_weibull_monte_carlo(age):
    """A part already `age` old: its remaining life is drawn from the conditional distribution."""
    alpha, beta = 2.0, 3.0
    life = Lifetime.of("weibull", {"alpha": alpha, "beta": beta})
    t, m = renewal_function(life, 8.0, 2000)
    d = delayed_renewal_function(life, age, t, m)
    rng = np.random.default_rng(int(age * 10) + 3)
    reps = 100_000

    def first(k):  # inverse transform of R(age + x)/R(age)
        u = rng.random(k)
        return alpha * ((age / alpha) ** beta - np.log(u)) ** (1 / beta) - age

    counts = _simulate_counts(rng, first, lambda k: alpha * rng.weibull(beta, size=k), 5.0, reps)
    se = counts.std(ddof=1) / math.sqrt(reps)
    assert abs(counts.mean() - np.interp(5.0, t, d)) < 4 * se
    if age == 0.0:
        # two discretisations of the same function (second order: error ~ h²)
        np.testing.assert_allclose(d, m, atol=1e-5)
