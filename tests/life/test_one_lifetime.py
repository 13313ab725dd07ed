"""One life-distribution class: every representation (a family by id through scipy, the closed
forms and wrappers a fit builds, the engine's own evaluation) is a `Lifetime` with one method set,
and they agree with each other and with scipy's reference on the same law."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from scipy import stats

from bathtub.distributions import Lifetime, ScipyLifetime
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
