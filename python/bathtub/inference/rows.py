"""One place that turns an estimate, its standard error and a confidence into a parameter row
`{name, value, se, ci: [lower, upper]}`.

The interval is the delta method on the parameter's natural scale: identity (value -/+ z se),
log for positive parameters (value * exp(-/+ z se_log), so it never crosses 0) and logit for
probabilities (expit(logit p -/+ z se_logit)). Likelihood-ratio limits, where a model computes
them, pass through unchanged (`limits`)."""

from __future__ import annotations

import math
from typing import Any, Literal

from scipy import special, stats

from bathtub.errors import InputError

Scale = Literal["identity", "log", "logit"]


def z(confidence: float, sides: int = 2) -> float:
    """The standard normal quantile for a confidence: two-sided Phi^-1(1/2 + c/2), one-sided Phi^-1(c)."""
    if sides == 2:
        return float(stats.norm.ppf(0.5 + confidence / 2))
    if sides == 1:
        return float(stats.norm.ppf(confidence))
    raise ValueError("sides must be 1 or 2")


def checked_z(confidence: object, field: str = "confidence") -> float:
    """`z` of a confidence a caller supplied, refused unless it is a number in [0.5, 1)."""
    if not (isinstance(confidence, (int, float)) and 0.5 <= confidence < 1):
        raise InputError(field, "must be in [0.5, 1)")
    return z(float(confidence))


def _finite(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


def interval(value: float, se: float, scale: Scale, zq: float) -> tuple[float, float]:
    """Delta-method limits; `se` is the standard error on `scale` (of ln value for "log")."""
    if scale == "identity":
        return value - zq * se, value + zq * se
    if scale == "log":
        return value * math.exp(-zq * se), value * math.exp(zq * se)
    if scale == "logit":
        lp = math.log(value) - math.log1p(-value)
        return float(special.expit(lp - zq * se)), float(special.expit(lp + zq * se))
    raise ValueError(f"unknown scale {scale!r}")


def reported_se(value: float, se: float, scale: Scale) -> float:
    """The standard error of `value` itself from the one on `scale` (first-order delta method)."""
    if scale == "log":
        return value * se
    if scale == "logit":
        return value * (1 - value) * se
    return se


def row(name: str, value: float, se: float | None, *, scale: Scale = "identity", confidence: float | None = None,
        zq: float | None = None, limits: tuple[float | None, float | None] | None = None, finite: bool = False,
        **extra: Any) -> dict[str, Any]:
    """`{name, value, se, ci, **extra}`.

    `se` is on `scale` (identity: of the value; log: of ln value; logit: of logit value); the row's
    `se` is of the value. Give `confidence` or its `zq`. `limits` replaces the delta-method interval
    with limits the model computed itself (likelihood-ratio, profile, or on a scale of its own).
    Without `se` and `limits`, `ci` is None. `finite` turns a non-finite number
    into None (JSON has no inf)."""
    if limits is not None:
        ci: list[float | None] | None = [limits[0], limits[1]]
        out_se = None if se is None else reported_se(value, se, scale)
    elif se is None:
        ci, out_se = None, None
    else:
        q = zq if zq is not None else z(confidence if confidence is not None else 0.95)
        lo, hi = interval(value, se, scale, q)
        ci, out_se = [lo, hi], reported_se(value, se, scale)
    if finite:
        out_se = None if out_se is None else _finite(out_se)
        ci = None if ci is None else [None if c is None else _finite(c) for c in ci]
    return {"name": name, "value": value, "se": out_se, "ci": ci, **extra}
