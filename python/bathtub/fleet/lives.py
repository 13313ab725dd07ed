"""The life law of each item of a fleet: one law for all (a saved life model), or each item's own
from its covariates (a saved regression model), evaluated row by row on an (items × ages) array."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bathtub.distributions import Lifetime
from bathtub.regression import kinds as regression_kinds
from bathtub.regression import models as regression_models


class ItemLives(ABC):
    """`logsf(use)`: log S_i(use[i, j]) for an (n, k) array, row i by item i's own law;
    `take(idx)`: the laws of a subset of the items; `groups()`: (item indices, a 1-D law with
    `cdf`, each item's time scale s_i) such that item i's life is the law's life divided by s_i
    (its renewal function is M(x·s_i)), for the renewal equation; `exponential_rate()`: λ when
    every item's life is the same memoryless one (renewal is then exact), else None."""

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def logsf(self, use: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def take(self, idx: np.ndarray) -> ItemLives: ...

    @abstractmethod
    def groups(self) -> list[tuple[np.ndarray, Any, np.ndarray]]: ...

    def exponential_rate(self) -> float | None:
        return None

    def distinct_laws(self) -> int:
        """How many groups `groups()` would give (checked before building them)."""
        return 1


class SameLife(ItemLives):
    """Every item follows one saved life model."""

    def __init__(self, life: Lifetime, n: int) -> None:
        self.life, self.n = life, n

    def __len__(self) -> int:
        return self.n

    def logsf(self, use: np.ndarray) -> np.ndarray:
        return np.asarray(self.life.logsf(use), dtype=float)

    def take(self, idx: np.ndarray) -> SameLife:
        return SameLife(self.life, int(np.asarray(idx).size))

    def groups(self) -> list[tuple[np.ndarray, Any, np.ndarray]]:
        return [(np.arange(self.n), self.life, np.ones(self.n))]

    def exponential_rate(self) -> float | None:
        if self.life.distribution_id == "exponential" and not self.life.params.get("gamma"):
            return float(self.life.params["failure_rate"])
        return None


class _OneUnit:
    """One covariate row's life as a 1-D law (what the renewal function needs)."""

    def __init__(self, record: Mapping[str, Any], x: np.ndarray, stratum: int) -> None:
        self.record, self.x, self.stratum = record, x[None, :], np.array([stratum])

    def logsf(self, t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        return regression_kinds.log_survival(self.record, self.x, self.stratum, t.reshape(1, -1))[0].reshape(t.shape)

    def cdf(self, t: np.ndarray) -> np.ndarray:
        return -np.expm1(self.logsf(t))


class CovariateLives(ItemLives):
    """Each item's life from a saved regression model (Cox or parametric) and its own covariates."""

    def __init__(self, record: Mapping[str, Any], x: np.ndarray, strata: np.ndarray) -> None:
        self.record, self.x, self.strata = record, x, strata

    @classmethod
    def from_covariates(cls, record: Mapping[str, Any], covariates: Sequence[Mapping[str, Any]]) -> CovariateLives:
        """Raises a RowError naming the item's index when its covariates do not fit the model."""
        x, strata = regression_models.unit_rows(record, list(covariates))
        return cls(record, x, strata)

    def __len__(self) -> int:
        return self.x.shape[0]

    def logsf(self, use: np.ndarray) -> np.ndarray:
        return regression_kinds.log_survival(self.record, self.x, self.strata, use)

    def take(self, idx: np.ndarray) -> CovariateLives:
        return CovariateLives(self.record, self.x[idx], self.strata[idx])

    def groups(self) -> list[tuple[np.ndarray, Any, np.ndarray]]:
        """A parametric (log-location-scale) model is one group: ln T = μ + xγ + σW makes each item's
        life the baseline's (x = 0) times e^{xγ}. A Cox model has a group per distinct covariate row."""
        n = len(self)
        if self.record["distribution"] != "cox":
            eta = self.x @ np.asarray(self.record["gamma"], dtype=float) if self.x.shape[1] else np.zeros(n)
            return [(np.arange(n), _OneUnit(self.record, np.zeros(self.x.shape[1]), 0), np.exp(-eta))]
        return [(idx, _OneUnit(self.record, self.x[idx[0]], int(self.strata[idx[0]])), np.ones(idx.size))
                for idx in self._distinct()]

    def distinct_laws(self) -> int:
        return 1 if self.record["distribution"] != "cox" else int(self._inverse().max(initial=-1)) + 1

    def _inverse(self) -> np.ndarray:
        """Each item's distinct-law number (Cox: items with the same covariate row and stratum share one)."""
        if len(self) == 0:
            return np.zeros(0, dtype=np.int64)
        keys = np.column_stack([self.x, self.strata.astype(float)])
        return np.asarray(np.unique(keys, axis=0, return_inverse=True)[1]).reshape(-1)

    def _distinct(self) -> list[np.ndarray]:
        inverse = self._inverse()
        order = np.argsort(inverse, kind="stable")
        cuts = np.nonzero(np.diff(inverse[order]))[0] + 1
        return np.split(order, cuts) if inverse.size else []
