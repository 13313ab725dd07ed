"""Fleets on a regression model: each item's own life from its covariates.

References written here: a Weibull PH item with covariates x has S(t) = exp(−(t/η)^β), η = α·e^{xγ}
(AFT form; the hazard ratio is e^{−xγβ}), so the fleet's expected failures per period without renewal is
Σ_i [S_i(a_i + (j−1)r_i) − S_i(a_i + j·r_i)] / S_i(a_i); a lognormal AFT item is lognormal(μ + xγ, σ);
with renewal each item must forecast exactly as a lone item of the plain Weibull(η_i, β) life (whose
renewal sums tests/fleet/test_forecast.py checks against their own references).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from bathtub.distributions import Lifetime
from bathtub.errors import RowError
from bathtub.fleet import forecast
from bathtub.fleet.forecast import failure_probability
from bathtub.fleet.lives import CovariateLives

ALPHA, BETA, GAMMA = 900.0, 1.8, np.array([-0.02, 0.3])
DESIGN = {"covariates": ["temp", "load"], "terms": [{"column": "temp", "kind": "numeric"},
                                                     {"column": "load", "kind": "numeric"}]}


def record(distribution: str = "weibull_ph", sigma: float = 1 / BETA) -> dict:
    return {"kind": "regression", "distribution": distribution, "mu": math.log(ALPHA), "sigma": sigma,
            "gamma": GAMMA.tolist(), "design": DESIGN}


def fleet(n: int = 40, seed: int = 3) -> tuple[list[dict], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    cov = [{"temp": float(t), "load": float(v)} for t, v in zip(rng.uniform(20, 90, n), rng.uniform(0, 3, n))]
    return cov, rng.uniform(0, 800, n), rng.uniform(10, 60, n)


def eta(c: dict) -> float:
    return ALPHA * math.exp(GAMMA[0] * c["temp"] + GAMMA[1] * c["load"])


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e6])
def test_weibull_ph_items_sum_their_own_conditional_probabilities(scale: float) -> None:
    cov, ages, rates = fleet()
    rec = record()
    rec["mu"] = math.log(ALPHA * scale)  # use measured in another unit: η scales, the counts do not
    lives = CovariateLives.from_covariates(rec, cov)
    fc = forecast(lives, ages * scale, rates * scale, 12)
    expected = np.zeros(12)
    for c, a, r in zip(cov, ages, rates):
        e = eta(c)
        s = [math.exp(-(((a + j * r) / e) ** BETA)) for j in range(13)]
        expected += [(s[j] - s[j + 1]) / s[0] for j in range(12)]
    assert fc.expected_failures == pytest.approx(expected.tolist(), rel=1e-9)
    probs = failure_probability(lives, ages * scale, rates * scale, 3)
    for k in (0, 7):
        e = eta(cov[k])
        ref = 1 - math.exp(-(((ages[k] + 3 * rates[k]) / e) ** BETA) + (ages[k] / e) ** BETA)
        assert probs[k] == pytest.approx(ref, rel=1e-9)


def test_lognormal_aft_items() -> None:
    cov, ages, rates = fleet(10)
    fc = forecast(CovariateLives.from_covariates(record("lognormal_aft", 0.6), cov), ages, rates, 6)
    expected = np.zeros(6)
    for c, a, r in zip(cov, ages, rates):
        d = stats.lognorm(0.6, scale=eta(c))
        s = d.sf(a + r * np.arange(7))
        expected += (s[:-1] - s[1:]) / s[0]
    assert fc.expected_failures == pytest.approx(expected.tolist(), rel=1e-9)


def test_renewal_per_item_equals_each_items_plain_weibull() -> None:
    cov, ages, rates = fleet(6)
    cov[3] = dict(cov[1])  # two items share a covariate row: one renewal function serves both
    fc = forecast(CovariateLives.from_covariates(record(), cov), ages, rates, 8, renewal=True)
    lone = [forecast(Lifetime.of("weibull", {"alpha": eta(c), "beta": BETA}), [a], [r], 8,
                     renewal=True).item_expected[0] for c, a, r in zip(cov, ages, rates)]
    # the renewal function is solved on a grid spanning the fleet's largest use, a lone item's on its own:
    # the two discretisations agree to their grid error (about 1e-6 here), not to rounding
    assert fc.item_expected.tolist() == pytest.approx(lone, rel=1e-5)


def test_a_missing_or_unknown_covariate_names_the_item() -> None:
    with pytest.raises(RowError) as e:
        CovariateLives.from_covariates(record(), [{"temp": 1.0, "load": 1.0}, {"temp": 2.0}])
    assert e.value.row == 1 and e.value.field == "covariates.load"
    with pytest.raises(RowError) as e:
        CovariateLives.from_covariates(record(), [{"temp": 1.0, "load": 1.0, "speed": 3.0}])
    assert e.value.row == 0 and e.value.field == "covariates.speed"
