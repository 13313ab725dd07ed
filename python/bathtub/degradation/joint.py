"""Condition-based (joint) life: a running unit's remaining life from its own readings.

For the random-effects model h(y) = A + B·t + e with (A, B) ~ N(μ, Σ) and e ~ N(0, σ²), a
unit's readings (t_j, y_j) update its coefficients in closed form (Gaussian prior, Gaussian
likelihood, linear in A and B): with X = [1, t_j], z = h(y_j) and Σ = L Lᵀ,

    M = σ² I + Lᵀ XᵀX L,   μ' = μ + L M⁻¹ Lᵀ Xᵀ (z − X μ),   Σ' = σ² L M⁻¹ Lᵀ

(the Kalman update in Woodbury form: it holds for a singular Σ, so a common intercept stays
common). For the exponential path (h = ln y) this is Gebraeel's log-linear exponential
degradation model. The unit's life is the first crossing under (μ', Σ'); a running unit has
not crossed by its age, so its remaining life is that life conditioned on survival to the
age, exactly: S(age + s) / S(age) (conditioning on {T > age} after the readings' update is the
whole posterior, since {T > age + s} lies inside {T > age}). With no readings μ' = μ, Σ' = Σ:
the population life conditioned on the age.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bathtub.degradation.crossing import LineCrossing, Residual
from bathtub.degradation.paths import Path, check_direction
from bathtub.degradation.random_effects import values
from bathtub.errors import InputError
from bathtub.validate import is_number

MAX_READINGS = 2000


def _prior(v: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray, float]:
    """(μ, L with Σ = L Lᵀ, σ²) of a fitted random-effects model."""
    sb, sa, rho = v["sd_b"], v.get("sd_a", 0.0), v.get("rho", 0.0)
    if sa == 0.0:
        L = np.array([[0.0], [sb]])
    else:
        L = np.array([[sa, 0.0], [rho * sb, sb * math.sqrt(max(1.0 - rho * rho, 0.0))]])
    return np.array([v["mu_a"], v["mu_b"]]), L, v["sigma"] ** 2


def check_readings(readings: Any, age: float, path: Path) -> tuple[np.ndarray, np.ndarray]:
    """[age, value] pairs: at most 2000, ages >= 0, increasing and not after the unit's age."""
    if not (isinstance(age, (int, float)) and not isinstance(age, bool) and math.isfinite(age) and age >= 0):
        raise InputError("age", "must be a finite number >= 0")
    if readings is None:
        readings = []
    if not isinstance(readings, Sequence) or isinstance(readings, str):
        raise InputError("readings", "must be an array of [age, value] pairs")
    if len(readings) > MAX_READINGS:
        raise InputError("readings", f"at most {MAX_READINGS} readings")
    ts, ys = np.empty(len(readings)), np.empty(len(readings))
    for j, pair in enumerate(readings):
        if (not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) != 2
                or any(not is_number(v) or not math.isfinite(v) for v in pair)):
            raise InputError(f"readings.{j}", "must be an [age, value] pair of finite numbers")
        ts[j], ys[j] = pair
        if ts[j] < 0:
            raise InputError(f"readings.{j}", "age must be >= 0")
        if ts[j] > age:
            raise InputError(f"readings.{j}", f"read at age {ts[j]:g}, after the unit's age {age:g}")
        if j and ts[j] <= ts[j - 1]:
            raise InputError(f"readings.{j}", "ages must increase")
    for j, y in enumerate(ys):
        try:
            path.h(np.array([y]), f"readings.{j}")
        except InputError:
            raise InputError(f"readings.{j}", f"value {y:g} is outside the path's domain "
                                              f"({path.y} transform)") from None
    return ts, ys


def posterior(record: Mapping[str, Any], ts: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(μ', Σ') of a unit's (A, B) given its readings on the model's path."""
    path = Path.parse(record["path"])
    mu, L, s2 = _prior(values(record["random_effects"]))
    if ts.size == 0:
        return mu, L @ L.T
    X = np.column_stack([np.ones(ts.size), path.g(ts)])
    z = path.h(ys)
    XL = X @ L
    M = s2 * np.eye(L.shape[1]) + XL.T @ XL
    Minv = np.linalg.inv(M)
    mu_post = mu + L @ (Minv @ (XL.T @ (z - X @ mu)))
    cov = s2 * (L @ Minv @ L.T)
    return mu_post, (cov + cov.T) / 2.0


def unit_life(record: Mapping[str, Any], mu: np.ndarray, cov: np.ndarray) -> LineCrossing:
    path = Path.parse(record["path"])
    sa, sb = math.sqrt(max(cov[0, 0], 0.0)), math.sqrt(max(cov[1, 1], 0.0))
    rho = float(np.clip(cov[0, 1] / (sa * sb), -1.0, 1.0)) if sa > 0 and sb > 0 else 0.0
    u = float(path.h(np.array([record["threshold"]]))[0])
    return LineCrossing(float(mu[0]), float(mu[1]), sa, sb, rho, u, check_direction(record["direction"]))


def conditional_life(record: Mapping[str, Any], age: float, readings: Any = ()) -> Residual:
    """A running unit's remaining-life distribution (sf, cdf, quantile, mean) given its age and its
    [age, value] readings, from a saved random-effects degradation model record."""
    if record.get("model") != "random_effects":
        raise InputError("id", "a unit's conditional life needs a random-effects degradation model "
                               "(model: random_effects); a pseudo-failure model has no unit effects to update")
    path = Path.parse(record["path"])
    ts, ys = check_readings(readings, age, path)
    mu, cov = posterior(record, ts, ys)
    return Residual(unit_life(record, mu, cov), float(age))


def summarise(life: Residual, probability: float = 0.9) -> dict[str, Any]:
    """Median, central `probability` interval, mean and P(never) of a remaining life."""
    if not 0.0 < probability < 1.0:
        raise InputError("probability", "must lie in (0, 1)")
    lo, med, hi = life.quantile(np.array([(1 - probability) / 2, 0.5, (1 + probability) / 2]))
    mean = life.mean()

    def num(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None

    b = life.base
    never = (f"the unit's path never reaches the threshold with probability p_never = {life.p_never:.3g} (a "
             "Gaussian slope takes the wrong sign), so quantiles at or above 1 - p_never and the mean are infinite")
    reasons = {k: never for k, v in (("median", med), ("interval", hi), ("mean", mean)) if not math.isfinite(v)}
    return {"median": num(med), "interval": [num(lo), num(hi)], "probability": probability,
            "mean": num(mean), "p_never": life.p_never, "null_reason": reasons or None,
            "unit_effects": {"mu_a": b.mu_a, "mu_b": b.mu_b, "sd_a": b.sd_a, "sd_b": b.sd_b, "rho": b.rho}}


TABLE_KNOTS = 4000
TABLE_TAIL = 1e-9  # failure mass left past the last knot (the engine treats it as never failing)


def life_table(life: Residual, knots: int = TABLE_KNOTS) -> list[list[float]]:
    """[t, F] knots of a remaining life for the engine's `table` distribution (F linear
    between knots, sampled by inverting it; mass past the last knot never fails).

    F is exact at every knot (the first-crossing law, already conditioned on the unit's age);
    half the knots are evenly spaced up to the 0.999 quantile, half geometric from the 1e-9
    quantile to the one where all but TABLE_TAIL of the failing mass has failed (a crossing
    time's tail is heavy, like 1/t, where a slope is near zero), so linear interpolation between
    knots is the only approximation (about 1e-6 in F, tests/degradation). The mass beyond the
    last knot is p_never + TABLE_TAIL."""
    top = 1.0 - life.p_never - TABLE_TAIL
    if top <= 1e-9:
        raise InputError("joint_unit", "the unit's path (given its readings) almost surely never reaches the "
                                       "threshold: its life cannot be tabulated")
    lo, body, hi = (float(x) for x in life.quantile(np.array([1e-9, min(0.999, top), top])))
    lo = max(lo, hi * 1e-12)
    t = np.unique(np.concatenate([np.linspace(0.0, body, knots // 2), np.geomspace(lo, hi, knots - knots // 2)]))
    f = np.maximum.accumulate(np.clip(life.cdf(t), 0.0, 1.0))
    return [[float(a), float(b)] for a, b in zip(t, f)]
