"""One life-distribution class: every representation (a family by id through scipy, the closed
forms and wrappers a fit builds, the engine's own evaluation) is a `Lifetime` with one method set,
and they agree with each other and with scipy's reference on the same law."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from scipy import stats

from bathtub.distributions import Lifetime, ScipyLifetime, family
from bathtub.engine import EngineLifetime
from bathtub.life import dists, wrappers
from bathtub.life.model import ModelSpec

ALPHA, BETA = 120.0, 1.7
T = np.array([5.0, 60.0, 120.0, 300.0])
REF = stats.weibull_min(BETA, scale=ALPHA)  # the independent reference
REPRESENTATIONS = {
    "scipy": Lifetime.of("weibull", {"alpha": ALPHA, "beta": BETA}),
    "engine": EngineLifetime.from_input("weibull", {"alpha": ALPHA, "beta": BETA}),
    "closed_form": dists.Weibull(ALPHA, BETA),
    "fit": ModelSpec("weibull").build({"alpha": ALPHA, "beta": BETA}),
}
METHODS = ("sf", "cdf", "pdf", "hazard", "cumulative_hazard", "logsf", "logpdf", "logcdf")


def _public_methods(cls: type) -> set[str]:
    return {n for n, v in inspect.getmembers(cls) if not n.startswith("_") and callable(v)}


def test_every_representation_is_a_lifetime_with_its_method_set() -> None:
    base = _public_methods(Lifetime)
    assert {"sf", "cdf", "pdf", "hazard", "cumulative_hazard", "quantile", "isf", "mean", "sample"} <= base
    classes = [ScipyLifetime, EngineLifetime, wrappers.Shifted, wrappers.ZeroInflated, wrappers.LimitedPopulation,
               wrappers.Mixture, *(c for _, c in inspect.getmembers(dists, inspect.isclass)
                                   if issubclass(c, Lifetime) and c is not Lifetime)]
    for cls in classes:
        assert issubclass(cls, Lifetime)
        assert _public_methods(cls) == base, (cls.__name__, _public_methods(cls) ^ base)
    with pytest.raises(TypeError, match="abstract"):
        Lifetime()  # type: ignore[abstract]


@pytest.mark.parametrize("name", list(REPRESENTATIONS))
def test_each_representation_is_the_weibull(name: str) -> None:
    life = REPRESENTATIONS[name]
    with np.errstate(divide="ignore"):
        want = {"sf": REF.sf(T), "cdf": REF.cdf(T), "pdf": REF.pdf(T), "hazard": REF.pdf(T) / REF.sf(T),
                "cumulative_hazard": (T / ALPHA) ** BETA, "logsf": REF.logsf(T), "logpdf": REF.logpdf(T),
                "logcdf": REF.logcdf(T)}
    for method in METHODS:
        assert np.asarray(getattr(life, method)(T)) == pytest.approx(want[method], rel=1e-12), method
    for q in (0.01, 0.5, 0.9):
        assert float(life.quantile(q)) == pytest.approx(REF.ppf(q), rel=1e-12)
        assert float(life.isf(q)) == pytest.approx(REF.isf(q), rel=1e-10)
    assert life.mean() == pytest.approx(ALPHA * math.gamma(1 + 1 / BETA), rel=1e-12)
    assert life.support_low() == 0.0


def test_sampling_by_inversion_follows_the_law() -> None:
    """The base's sampler (inversion of numpy uniforms on stream (seed, stream)): a Weibull sample
    passes Kolmogorov–Smirnov against scipy's cdf; an exponential's remaining life at any age is
    the same exponential (memoryless); a seed and stream give the same lives."""
    life = REPRESENTATIONS["closed_form"]
    x = life.sample(4000, seed=7, stream=2)
    assert stats.kstest(x, REF.cdf).pvalue > 0.01
    assert np.array_equal(x, life.sample(4000, seed=7, stream=2))
    assert not np.array_equal(x, life.sample(4000, seed=7, stream=3))
    expo = Lifetime.of("exponential", {"failure_rate": 0.02})
    rest = expo.sample(4000, seed=3, age=150.0)
    assert stats.kstest(rest, stats.expon(scale=50.0).cdf).pvalue > 0.01


def test_the_engine_samples_from_its_own_streams() -> None:
    """The engine's representation keeps the simulator's sampler: its lives follow the law too."""
    life = REPRESENTATIONS["engine"]
    x = life.sample(4000, seed=11)
    assert stats.kstest(x, REF.cdf).pvalue > 0.01
    assert np.array_equal(x, life.sample(4000, seed=11))


# One law per family, parameters away from any boundary, with a location where the family takes one.
BOUND_CASES = {
    "exponential": {"failure_rate": 0.01, "gamma": 0.2}, "weibull": {"alpha": 3.0, "beta": 1.7, "gamma": 0.1},
    "normal": {"mu": 1.0, "sigma": 2.0}, "lognormal": {"mu": 0.5, "sigma": 0.8, "gamma": 0.05},
    "gamma": {"alpha": 2.5, "beta": 1.3}, "loglogistic": {"alpha": 2.0, "beta": 3.0},
    "gumbel": {"mu": 1.0, "sigma": 0.5}, "logistic": {"mu": 1.0, "sigma": 0.5}, "uniform": {"a": 0.1, "b": 0.95},
    "beta": {"alpha": 2.0, "beta": 3.0}, "expo_weibull": {"alpha": 2.0, "beta": 1.5, "theta": 0.7},
}


@pytest.mark.parametrize("family_id", sorted(BOUND_CASES))
def test_a_family_s_bound_law_is_scipy_s_frozen_one_to_the_bit(family_id: str) -> None:
    """`Bound` skips scipy's per-freeze copy of the distribution object; every figure must stay
    scipy's frozen distribution's own, bit for bit, tails and draws included."""
    bound = family(family_id).build(BOUND_CASES[family_id])
    frozen = bound.dist(*bound.args, **bound.kwds)  # scipy's own freeze of the same law
    t = np.array([0.0, 0.01, 0.3, 0.9, 1.5, 7.0, 120.0, 1e4])
    q = np.array([0.0, 1e-9, 0.1, 0.5, 0.9, 1.0 - 1e-12])
    with np.errstate(all="ignore"):
        for name in ("sf", "cdf", "pdf", "logpdf", "logsf", "logcdf"):
            assert np.array_equal(getattr(bound, name)(t), getattr(frozen, name)(t), equal_nan=True), name
        for name in ("ppf", "isf"):
            assert np.array_equal(getattr(bound, name)(q), getattr(frozen, name)(q), equal_nan=True), name
    assert bound.mean() == frozen.mean() and bound.support() == frozen.support()
    draws = bound.rvs(size=7, random_state=np.random.default_rng(3))
    assert np.array_equal(draws, frozen.rvs(size=7, random_state=np.random.default_rng(3)))
