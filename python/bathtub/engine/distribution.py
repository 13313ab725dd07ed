"""The engine's representation of a `Lifetime`: evaluated and sampled by the same Rust code the
simulator draws from, so a check on a block's life reads exactly what a run uses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from bathtub.distributions import Lifetime, parse_params
from bathtub.engine import binding

__all__ = ["EngineLifetime"]


@dataclass(frozen=True)
class EngineLifetime(Lifetime):
    """A family (or a mixture of one) by the service's ids, evaluated in Rust; functions take
    arrays of times (or probabilities for `quantile`/`isf`) and return float arrays. The log
    pieces are the logs of the engine's values (its survival through -H(t))."""

    distribution_id: str
    params: Mapping[str, float]
    base_distribution_id: str | None = None

    @classmethod
    def from_input(cls, distribution_id: str, params: Any, base_distribution_id: str | None = None,
                   field: str = "params") -> EngineLifetime:
        values = parse_params(distribution_id, params, base_distribution_id=base_distribution_id, field=field)
        return cls(distribution_id, values, base_distribution_id)

    def _eval(self, function: str, x: Any) -> np.ndarray:
        xs = np.asarray(x, dtype=float)
        out = binding.dist_eval(
            self.distribution_id, dict(self.params), function, xs.ravel().tolist(), self.base_distribution_id
        )
        return np.asarray(out, dtype=float).reshape(xs.shape)

    def sf(self, t: Any) -> np.ndarray:
        return self._eval("sf", t)

    def cdf(self, t: Any) -> np.ndarray:
        return self._eval("cdf", t)

    def pdf(self, t: Any) -> np.ndarray:
        return self._eval("pdf", t)

    def hazard(self, t: Any) -> np.ndarray:
        return self._eval("hazard", t)

    def cumulative_hazard(self, t: Any) -> np.ndarray:
        return self._eval("cumulative_hazard", t)

    def logpdf(self, t: Any) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.pdf(t))

    def logsf(self, t: Any) -> np.ndarray:
        return -self.cumulative_hazard(t)

    def logcdf(self, t: Any) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.cdf(t))

    def quantile(self, q: Any) -> np.ndarray:
        return self._eval("quantile", q)

    def isf(self, q: Any) -> np.ndarray:
        return self._eval("isf", q)

    def mean(self) -> float:
        return float(binding.dist_mean(self.distribution_id, dict(self.params), self.base_distribution_id))

    def sample(self, n: int, *, seed: int = 0, stream: int = 0, age: float | None = None) -> np.ndarray:
        """n lives from the engine's stream (seed, stream); with `age`, remaining lives of
        units that have survived to `age`."""
        out = binding.dist_sample(
            self.distribution_id, dict(self.params), int(n), int(seed), int(stream), age, self.base_distribution_id
        )
        return np.asarray(out, dtype=float)
