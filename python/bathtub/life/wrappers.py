"""Wrappers around a life distribution: a location shift, zero inflation, a limited failure
population and mixtures. Each states only how it changes the log pieces of `Lifetime`."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from bathtub.distributions import Lifetime, log1mexp
from bathtub.life.dists import ArrayLike


class Shifted(Lifetime):
    """A base distribution delayed by a failure-free time gamma (the location, `offset`)."""

    def __init__(self, base: Lifetime, gamma: float) -> None:
        self.base, self.gamma = base, gamma

    def _s(self, t: ArrayLike) -> np.ndarray:
        return np.asarray(t, dtype=float) - self.gamma

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        s = self._s(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(s >= 0, self.base.logpdf(np.maximum(s, 0.0)), -np.inf)

    def logsf(self, t: ArrayLike) -> np.ndarray:
        return np.where(self._s(t) > 0, self.base.logsf(np.maximum(self._s(t), 0.0)), 0.0)

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.where(self._s(t) > 0, self.base.logcdf(np.maximum(self._s(t), 0.0)), -np.inf)

    def quantile(self, q: float) -> float:
        return self.gamma + self.base.quantile(q)

    def quantile_real(self, q: float) -> float:
        return self.gamma + self.base.quantile_real(q)

    def mean(self) -> float:
        return self.gamma + self.base.mean()


class ZeroInflated(Lifetime):
    """A point mass f0 at t = 0 (dead on arrival) and the base for the rest: F = f0 + (1 - f0) Fb.

    `logpdf` is the density of the continuous part; the likelihood counts failures at exactly
    0 as log f0 (see `likelihood.py`).
    """

    def __init__(self, base: Lifetime, f0: float) -> None:
        self.base, self.f0 = base, f0

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        return math.log1p(-self.f0) + self.base.logpdf(t)

    def logsf(self, t: ArrayLike) -> np.ndarray:
        return math.log1p(-self.f0) + self.base.logsf(t)

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        return np.logaddexp(math.log(self.f0), math.log1p(-self.f0) + self.base.logcdf(t))

    def log_interval(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        # the point mass sits at 0, outside every (lo, hi] with lo >= 0
        return math.log1p(-self.f0) + self.base.log_interval(lo, hi)

    def quantile(self, q: float) -> float:
        if q <= self.f0:
            return 0.0
        return self.base.quantile((q - self.f0) / (1.0 - self.f0))

    def quantile_real(self, q: float) -> float:
        if q <= self.f0:
            return 0.0
        return self.base.quantile_real((q - self.f0) / (1.0 - self.f0))

    def mean(self) -> float:
        return (1.0 - self.f0) * self.base.mean()


class LimitedPopulation(Lifetime):
    """Limited failure population: only a fraction p is susceptible, F = p Fb (sf never below 1-p)."""

    def __init__(self, base: Lifetime, p: float) -> None:
        self.base, self.p = base, p

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        return math.log(self.p) + self.base.logpdf(t)

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        return math.log(self.p) + self.base.logcdf(t)

    def logsf(self, t: ArrayLike) -> np.ndarray:
        return log1mexp(self.logcdf(t))

    def log_interval(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return math.log(self.p) + self.base.log_interval(lo, hi)

    def quantile(self, q: float) -> float:
        if q >= self.p:
            return math.inf  # that share of units never fails
        return self.base.quantile(q / self.p)

    def quantile_real(self, q: float) -> float:
        if q >= self.p:
            return math.inf
        return self.base.quantile_real(q / self.p)

    def mean(self) -> float:
        return math.inf if self.p < 1.0 else self.base.mean()


class Mixture(Lifetime):
    """Weighted mixture of subpopulations: F = sum w_i F_i."""

    def __init__(self, components: list[Lifetime], weights: np.ndarray) -> None:
        self.components, self.weights = components, np.asarray(weights, dtype=float)
        self.lw = np.log(self.weights)

    def _lse(self, pieces: list[np.ndarray]) -> np.ndarray:
        return special.logsumexp(np.array([lw + p for lw, p in zip(self.lw, pieces, strict=False)]), axis=0)

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        return self._lse([c.logpdf(t) for c in self.components])

    def logsf(self, t: ArrayLike) -> np.ndarray:
        return self._lse([c.logsf(t) for c in self.components])

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        return self._lse([c.logcdf(t) for c in self.components])

    def log_interval(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return self._lse([c.log_interval(lo, hi) for c in self.components])

    def quantile(self, q: float) -> float:
        if q >= 1.0:
            return math.inf
        qs = [c.quantile(q) for c in self.components]
        lo, hi = min(qs), max(qs)
        if lo == hi:
            return lo
        return self.invert(q, lo, hi)

    def mean(self) -> float:
        return float(sum(w * c.mean() for w, c in zip(self.weights, self.components, strict=False)))
