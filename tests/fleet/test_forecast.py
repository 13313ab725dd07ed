"""Fleet forecasts against independent values: closed forms for exponential lives, the conditional-
probability sum for Weibull lives computed here with scipy, the exact Poisson-binomial law against a
brute-force convolution, the large-fleet approximation against the exact law, renewal counts and the
intervals against a simulation of the same fleet (fixed seed), and exact invariance to the use unit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from bathtub.distributions import Lifetime
from bathtub.fleet import forecast
from bathtub.fleet.forecast import _quantiles, poisson_binomial_pmf, rna_quantile

EXP = Lifetime.of("exponential", {"failure_rate": 1e-3})
WEIBULL = Lifetime.of("weibull", {"alpha": 5000.0, "beta": 2.5})


def fleet(n: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 4000, n), rng.uniform(50, 150, n)


def test_exponential_closed_forms() -> None:
    ages, _ = fleet(1000)
    rates = np.full(1000, 100.0)
    plain = forecast(EXP, ages, rates, 12)
    # without replacement the fleet thins: period j expects n·e^{−λrΔ(j−1)}·(1 − e^{−λrΔ}) (the first
    # period the textbook n·(1 − e^{−λrΔ}))
    q = 1 - math.exp(-1e-3 * 100)
    assert plain.expected_failures == pytest.approx([1000 * (1 - q) ** j * q for j in range(12)], rel=1e-10)
    renewed = forecast(EXP, ages, rates, 12, renewal=True)
    assert renewed.expected_failures == pytest.approx([1000 * 1e-3 * 100] * 12, rel=1e-12)
    assert renewed.total_expected == pytest.approx(1000 * 1e-3 * 100 * 12, rel=1e-12)


def test_weibull_conditional_probability_sum() -> None:
    ages, rates = fleet(500)
    out = forecast(WEIBULL, ages, rates, 10)
    law = stats.weibull_min(2.5, scale=5000.0)
    for j in range(10):
        p = (law.sf(ages + j * rates) - law.sf(ages + (j + 1) * rates)) / law.sf(ages)
        assert out.expected_failures[j] == pytest.approx(p.sum(), rel=1e-10)
    assert out.interval_method == "Poisson-binomial, exact"


def test_poisson_binomial_exact_and_approximation() -> None:
    rng = np.random.default_rng(5)
    p = rng.uniform(0, 0.4, 60)
    brute = np.array([1.0])
    for q in p:
        brute = np.convolve(brute, [1 - q, q])
    pmf = poisson_binomial_pmf(p)
    assert np.abs(pmf - brute[: len(pmf)]).max() < 1e-13
    big = rng.uniform(0, 0.05, 20_000)
    exact = _quantiles(poisson_binomial_pmf(big), 0.9)
    assert (rna_quantile(big, 0.05), rna_quantile(big, 0.95)) == exact


def simulate(life_sf, ages: np.ndarray, rates: np.ndarray, periods: int, reps: int, seed: int) -> np.ndarray:
    """Counts per period over `reps` simulated fleets, no replacement: each item's residual life by
    inverting its conditional survival, then the period it falls in."""
    rng = np.random.default_rng(seed)
    law = stats.weibull_min(2.5, scale=5000.0)
    u = rng.uniform(size=(reps, ages.size))
    life = law.isf(u * law.sf(ages)[None, :])  # total use at failure, given survival to the age
    period = np.floor((life - ages[None, :]) / rates[None, :]).astype(int)
    counts = np.zeros((reps, periods), dtype=int)
    for j in range(periods):
        counts[:, j] = (period == j).sum(axis=1)
    return counts


def test_interval_covers_a_simulation_of_the_same_fleet() -> None:
    ages, rates = fleet(2000)
    out = forecast(WEIBULL, ages, rates, 6, confidence=0.9)
    counts = simulate(None, ages, rates, 6, 4000, seed=11)
    for j in range(6):
        inside = ((counts[:, j] >= out.lower[j]) & (counts[:, j] <= out.upper[j])).mean()
        # a discrete 90% interval covers at least 90%; 4000 fleets put the estimate within ±0.015
        assert 0.885 < inside < 0.96, (j, inside)
        assert counts[:, j].mean() == pytest.approx(out.expected_failures[j], rel=0.02)


def test_renewal_matches_a_simulation() -> None:
    ages, rates = fleet(300)
    periods = 40
    out = forecast(WEIBULL, ages, rates, periods, renewal=True)
    rng = np.random.default_rng(21)
    law = stats.weibull_min(2.5, scale=5000.0)
    reps = 3000
    use_end = ages + rates * periods
    totals = np.zeros(periods)
    t = law.isf(rng.uniform(size=(reps, ages.size)) * law.sf(ages)[None, :])  # first failure (total use)
    alive = np.ones_like(t, dtype=bool)
    while alive.any():
        alive &= t < use_end[None, :]
        j = np.floor((t - ages[None, :]) / rates[None, :]).astype(int)
        for k in range(periods):
            totals[k] += ((j == k) & alive).sum()
        t = np.where(alive, t + law.rvs(size=t.shape, random_state=rng), t)
    simulated = totals / reps
    # per period the simulation's standard error is about 1%; the quadrature's own error is smaller
    assert np.asarray(out.expected_failures) == pytest.approx(simulated, rel=0.05)
    assert sum(out.expected_failures) == pytest.approx(simulated.sum(), rel=0.01)
    assert out.renewal and "renewal equation" in out.method


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3, 1e6])
def test_forecast_does_not_depend_on_the_use_unit(scale: float) -> None:
    ages, rates = fleet(200)
    base = forecast(WEIBULL, ages, rates, 8)
    scaled = forecast(Lifetime.of("weibull", {"alpha": 5000.0 * scale, "beta": 2.5}), ages * scale, rates * scale, 8)
    assert scaled.expected_failures == pytest.approx(base.expected_failures, rel=1e-9)
    assert (scaled.lower, scaled.upper) == (base.lower, base.upper)
