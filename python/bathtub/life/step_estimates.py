"""What both non-parametric estimates share: input checks, reading a step curve (value,
quantiles, area) and the saved-model record. The conventions are told in
`bathtub.life.nonparametric`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bathtub.errors import InputError

NO_DENSITY = (
    "a non-parametric estimate is a step function: it has no density or hazard rate "
    "(fit a distribution for those)"
)
NO_CUMULATIVE_HAZARD = "the estimate has reached 0, where -ln S is infinite"


# ----------------------------------------------------------------------------- input


def check_times(values: Any, name: str, *, allow_inf: bool = False) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(name, "must be an array of numbers") from exc
    if arr.ndim != 1:
        raise InputError(name, "must be a one-dimensional array")
    bad = np.isnan(arr) | (arr < 0) | (~np.isfinite(arr) if not allow_inf else np.isneginf(arr))
    if bad.any():
        i = int(np.argmax(bad))
        rule = "must be a number >= 0" + ("" if allow_inf else " and finite")
        raise InputError(f"{name}[{i}]", rule)
    return arr


def check_counts(n: Any, size: int, name: str = "n") -> np.ndarray:
    if n is None:
        return np.ones(size)
    try:
        arr = np.asarray(n, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(name, "must be an array of counts") from exc
    if arr.shape != (size,):
        raise InputError(name, f"must have one count per row ({size})")
    bad = ~np.isfinite(arr) | (arr < 0) | (arr != np.round(arr))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{name}[{i}]", "must be a whole number >= 0")
    if arr.sum() <= 0:
        raise InputError(name, "counts add up to 0: no units")
    return arr


def check_confidence(confidence: float) -> float:
    if not (isinstance(confidence, int | float) and 0.0 < float(confidence) < 1.0):
        raise InputError("confidence", "must be a number in (0, 1)")
    return float(confidence)


# ----------------------------------------------------------------- shared step curve


def first_at_or_below(time: np.ndarray, sf: np.ndarray, level: float) -> float | None:
    """Smallest time at which the (non-increasing) curve is <= level, or None."""
    hit = np.flatnonzero(sf <= level + 1e-12)  # tolerance: products of ratios land a hair off 0.5
    return float(time[hit[0]]) if hit.size else None


def step_area(time: np.ndarray, sf: np.ndarray, horizon: float) -> float:
    """Area under a right-continuous step curve that is 1 before time[0], from 0 to horizon."""
    edges = np.concatenate([[0.0], np.minimum(time, horizon), [horizon]])
    heights = np.concatenate([[1.0], sf])
    return float(np.sum(np.diff(edges) * heights))


def step_value(time: np.ndarray, sf: np.ndarray, t: np.ndarray) -> np.ndarray:
    """S(t) of a right-continuous step curve that is 1 before time[0]."""
    idx = np.searchsorted(time, t, side="right") - 1
    return np.where(idx >= 0, sf[np.maximum(idx, 0)], 1.0)


def point_record(t: float, sf: float) -> dict[str, Any]:
    hf = None if sf <= 0.0 else float(-math.log(sf)) + 0.0  # + 0.0 turns -0.0 into 0.0
    out: dict[str, Any] = {
        "t": float(t),
        "reliability": float(sf),
        "failure": float(1.0 - sf),
        "hazard": None,
        "cumulative_hazard": hf,
        "density": None,
        "null_reason": {"hazard": NO_DENSITY, "density": NO_DENSITY},
    }
    if hf is None:
        out["null_reason"]["cumulative_hazard"] = NO_CUMULATIVE_HAZARD
    return out


def step_curves(time: np.ndarray, sf: np.ndarray) -> dict[str, Any]:
    x = np.concatenate([[0.0], time]) if time.size == 0 or time[0] > 0 else time
    s = np.concatenate([[1.0], sf]) if time.size == 0 or time[0] > 0 else sf
    with np.errstate(divide="ignore"):
        hf = -np.log(s) + 0.0
    return {
        "step": "post",  # right-continuous: the value at x[i] holds until x[i + 1]
        "x": x.tolist(),
        "sf": s.tolist(),
        "ff": (1.0 - s).tolist(),
        "hf": None,
        "Hf": [float(h) if np.isfinite(h) else None for h in hf],
        "df": None,
        "null_reason": {"hf": NO_DENSITY, "df": NO_DENSITY, "Hf": "null where the estimate has reached 0"},
    }


def model_record(method: str, n: int, metrics: dict[str, Any], curve: dict[str, Any], extra: dict[str, Any]) -> dict:
    return {
        "distribution": method,
        "kind": "nonparametric",
        "n": n,
        "params": [],
        "coefficients": [],
        "metrics": metrics,
        "gof": [],
        "curve": curve,
        **extra,
    }


def finite_or_none(values: np.ndarray) -> list[float | None]:
    return [float(v) if np.isfinite(v) else None for v in values]


def check_time(t: Any) -> float:
    try:
        value = float(t)
    except (TypeError, ValueError) as exc:
        raise InputError("t", "must be a number") from exc
    if not (math.isfinite(value) and value >= 0):
        raise InputError("t", "must be a finite number >= 0")
    return value
