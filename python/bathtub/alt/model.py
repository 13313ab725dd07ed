"""A fitted (or given) ALT model: natural coefficients with their covariance, and what follows
from them at any stress — life, use-level distribution, percentiles (B-lives), MTTF,
acceleration factors — each with delta-method (Fisher) bounds.

Natural coefficients are theta = (a, b_1[, b_2][, ln sigma]) of
ln L(S) = offset(S) + a + sum_j b_j g_j(S) (see `relationships`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from bathtub.alt.relationships import AltSpec, check_stresses, parse_model
from bathtub.errors import InputError
from bathtub.inference import row
from bathtub.inference.rows import checked_z
from bathtub.validate import is_number


@dataclass(frozen=True)
class Estimate:
    value: float
    se: float | None
    lower: float | None
    upper: float | None

    def to_dict(self) -> dict[str, Any]:
        """{value, se, ci: [lower, upper]} (ci null without bounds): the one row shape less its
        name, for a figure a record keys by what it is (use.life, use.mttf)."""
        ci = None if self.lower is None and self.upper is None else [self.lower, self.upper]
        return {"value": self.value, "se": self.se, "ci": ci}

    def row(self, name: str, **extra: Any) -> dict[str, Any]:
        """A row of the one record shape: {name, value, se, ci, **extra}."""
        return {"name": name, **self.to_dict(), **extra}


def _z(confidence: float) -> float:
    return checked_z(confidence)


def _finite(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


def log_estimate(log_value: float, grad: np.ndarray, cov: np.ndarray | None, z: float) -> Estimate:
    """e^{log_value} with bounds exp(log_value -/+ z se) (positive quantities)."""
    value = math.exp(log_value)
    if cov is None:
        return Estimate(value, None, None, None)
    se = math.sqrt(max(float(grad @ cov @ grad), 0.0))
    return Estimate(value, _finite(value * se), _finite(math.exp(log_value - z * se)),
                    _finite(math.exp(log_value + z * se)))


def lin_estimate(value: float, grad: np.ndarray, cov: np.ndarray | None, z: float) -> Estimate:
    if cov is None:
        return Estimate(value, None, None, None)
    se = math.sqrt(max(float(grad @ cov @ grad), 0.0))
    return Estimate(value, se, value - z * se, value + z * se)


def standard_quantile(life: str, p: float) -> float:
    """w_p of the standardised log-time law: SEV ln(-ln(1-p)), or the normal quantile."""
    return float(stats.norm.ppf(p)) if life == "lognormal" else math.log(-math.log1p(-p))


@dataclass(frozen=True)
class AltModel:
    spec: AltSpec
    theta: np.ndarray  # natural coefficients (a, b..., [ln sigma])
    cov: np.ndarray | None  # their covariance (inverse observed information), None if given

    @property
    def k(self) -> int:
        return 1 + self.spec.relationship.stresses

    @property
    def sigma(self) -> float:
        return math.exp(float(self.theta[self.k])) if self.spec.has_sigma else 1.0

    def stress_vector(self, stress: float | None, stress2: float | None = None,
                      fields: tuple[str, str] = ("stress", "stress2")) -> np.ndarray:
        """d ln L / d theta at one stress point: (1, g_1, [g_2], [0]); also checks the stress."""
        rel = self.spec.relationship
        given = (stress, stress2)[: rel.stresses]
        for v, f in zip(given, fields):
            if v is None or not is_number(v):
                raise InputError(f, f"a number is needed: {self.spec.id} takes {rel.stresses} stress(es)")
        if rel.stresses == 1 and stress2 is not None:
            raise InputError(fields[1], f"{self.spec.id} takes one stress")
        arrays = tuple(np.array([float(v)]) for v in given)
        check_stresses(self.spec, arrays, fields[: rel.stresses])
        vec = np.zeros(self.theta.size)
        vec[0] = 1.0
        vec[1: self.k] = rel.design(arrays)[0]
        return vec

    def log_life(self, vec: np.ndarray, stress: float) -> float:
        return float(self.spec.relationship.offset(np.array([float(stress)]))[0] + vec[: self.k] @ self.theta[: self.k])

    def life(self, stress: float | None, stress2: float | None = None, confidence: float = 0.95) -> Estimate:
        """L(S): Weibull characteristic life, lognormal median, exponential mean."""
        vec = self.stress_vector(stress, stress2)
        return log_estimate(self.log_life(vec, float(stress)), vec, self.cov, _z(confidence))  # type: ignore[arg-type]

    def percentile(self, p: float, stress: float | None, stress2: float | None = None,
                   confidence: float = 0.95) -> Estimate:
        """t_p with F(t_p) = p at the stress (B-life B_{100p})."""
        if not (isinstance(p, (int, float)) and 0 < p < 1):
            raise InputError("b_lives", f"probabilities must be in (0, 1); got {p!r}")
        vec = self.stress_vector(stress, stress2)
        w = standard_quantile(self.spec.life, p)
        grad = vec.copy()
        if self.spec.has_sigma:
            grad[self.k] = self.sigma * w
        return log_estimate(self.log_life(vec, float(stress)) + self.sigma * w, grad, self.cov,  # type: ignore[arg-type]
                            _z(confidence))

    def mttf(self, stress: float | None, stress2: float | None = None, confidence: float = 0.95) -> Estimate:
        vec = self.stress_vector(stress, stress2)
        s = self.sigma
        grad = vec.copy()
        log_mu = self.log_life(vec, float(stress))  # type: ignore[arg-type]
        if self.spec.life == "weibull":
            log_mu += math.lgamma(1.0 + s)
            grad[self.k] = s * float(special.digamma(1.0 + s))
        elif self.spec.life == "lognormal":
            log_mu += 0.5 * s * s
            grad[self.k] = s * s
        return log_estimate(log_mu, grad, self.cov, _z(confidence))

    def acceleration_factor(self, use: tuple[float | None, float | None], at: tuple[float | None, float | None],
                            confidence: float = 0.95) -> Estimate:
        """L(use) / L(at): how many times longer life lasts at `use` than at `at`."""
        vu = self.stress_vector(*use)
        va = self.stress_vector(*at, fields=("levels.stress", "levels.stress2"))
        log_af = self.log_life(vu, float(use[0])) - self.log_life(va, float(at[0]))  # type: ignore[arg-type]
        return log_estimate(log_af, vu - va, self.cov, _z(confidence))

    def distribution(self, stress: float | None, stress2: float | None = None) -> dict[str, Any]:
        """The life distribution at a stress as a life-model record (`distribution`, `params`)."""
        vec = self.stress_vector(stress, stress2)
        log_l = self.log_life(vec, float(stress))  # type: ignore[arg-type]
        if self.spec.life == "weibull":
            params = {"alpha": math.exp(log_l), "beta": 1.0 / self.sigma}
        elif self.spec.life == "lognormal":
            params = {"mu": log_l, "sigma": self.sigma}
        else:
            params = {"failure_rate": math.exp(-log_l)}
        return {"distribution": self.spec.life, "params": [{"name": k, "value": v} for k, v in params.items()]}

    def reported(self, confidence: float = 0.95) -> list[dict[str, Any]]:
        """The relationship's named parameters, then the life's shape (beta or sigma), as
        `{name, value, se, ci}` rows: positive ones with bounds on the log scale."""
        z = _z(confidence)
        out: list[dict[str, Any]] = []

        def add(name: str, j: int, sign: float, log: bool) -> None:
            grad = np.zeros(self.theta.size)
            grad[j] = sign
            v = sign * float(self.theta[j])
            se = None if self.cov is None else math.sqrt(max(float(grad @ self.cov @ grad), 0.0))
            out.append(row(name, math.exp(v) if log else v, se, scale="log" if log else "identity", zq=z,
                           finite=True))

        for j, c in enumerate(self.spec.relationship.coefs):
            add(c.name, j, c.sign, c.exp)
        if self.spec.has_sigma:
            weibull = self.spec.life == "weibull"
            add("beta" if weibull else "sigma", self.k, -1.0 if weibull else 1.0, True)
        return out

    def coefficient_names(self) -> list[str]:
        names = ["a", *(f"b{j + 1}" for j in range(self.spec.relationship.stresses))]
        return names + (["ln_sigma"] if self.spec.has_sigma else [])

    def coefficients(self, confidence: float = 0.95) -> list[dict[str, Any]]:
        """The natural coefficients theta as `{name, value, se, ci}` rows (Wald intervals on
        theta itself, the scale the covariance and the likelihood live on)."""
        z = _z(confidence)
        se = [None] * self.theta.size if self.cov is None else \
            [math.sqrt(v) if v >= 0 else None for v in np.diag(self.cov).tolist()]
        return [row(nm, float(v), s, zq=z, finite=True)
                for nm, v, s in zip(self.coefficient_names(), self.theta, se, strict=True)]

    def covariance(self) -> dict[str, Any] | None:
        """The covariance of theta in the one record shape {names, matrix}."""
        return None if self.cov is None else {"names": self.coefficient_names(), "matrix": self.cov.tolist()}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> AltModel:
        """The model a record in the one shape holds (`bathtub.models.upgrade` brings an older one
        to it): coefficient rows' values and the covariance {names, matrix} of theta."""
        spec = parse_model(str(record.get("distribution")))
        theta = np.array([float(c["value"]) for c in record["coefficients"]])
        cov = record.get("covariance")
        matrix = None if cov is None else cov["matrix"]
        return cls(spec, theta, None if matrix is None else np.asarray(matrix, dtype=float))


def b_life_name(p: float) -> str:
    """The row name of the B-life at fraction failed p: b10 for 0.1."""
    return f"b{100 * p:g}"


def use_level(model: AltModel, stress: float | None, stress2: float | None, *, confidence: float = 0.95,
              b_lives: Sequence[float] = (0.01, 0.1), levels: Sequence[tuple[float, float | None]] = ()
              ) -> dict[str, Any]:
    """Everything at a use stress: distribution, life, B-lives, MTTF, and the acceleration
    factor of each test level relative to it, all with bounds."""
    return {
        "stress": stress, "stress2": stress2, "confidence": confidence,
        "distribution": model.distribution(stress, stress2),
        "life": model.life(stress, stress2, confidence).to_dict(),
        "b_lives": [model.percentile(p, stress, stress2, confidence).row(b_life_name(p), p=float(p))
                    for p in b_lives],
        "mttf": model.mttf(stress, stress2, confidence).to_dict(),
        "acceleration_factors": [
            model.acceleration_factor((stress, stress2), (s1, s2), confidence).row(
                f"af_{s1:g}" + ("" if s2 is None else f"_{s2:g}"), stress=s1, stress2=s2)
            for s1, s2 in levels],
    }
