"""The P–F interval a degradation model implies: the time from a unit's path crossing the
potential-failure level P (a defect an inspection can see) to its crossing the failure
threshold F.

On the transformed axes a unit's path is h(y) = A + B·g(t), so it meets a level L at
g(t_L) = (h(L) − A)/B and, with time untransformed (g = t: linear and exponential paths),
its P–F interval is t_F − t_P = (h(F) − h(P))/B: only the unit's rate B matters, not where it
started. The path is read as a line through both crossings (a unit already past P at time 0
has the same P–F interval as one that crosses P later).

- random_effects: B ~ N(μ_B, σ_B²) across units, so the P–F interval Δ/B (Δ = h(F) − h(P),
  with the sign of the failure direction) has the closed-form quantiles
  x_q = Δ'/(μ' + σ_B·z_{1−q}) (Δ' = |Δ|, μ' = μ_B toward the threshold, z the standard normal
  quantile), infinite where the denominator is not positive (units that never get there).
- pseudo_failure: each unit's own fitted line gives its P–F interval t_F − t_P (for any path,
  through g⁻¹); the figures are the empirical quantiles of those (units heading away from the
  threshold are left out).

The record's `pf_interval` row has `value` the median P–F interval (half the units have a
longer one) and `ci` the central `confidence` range of it among units: a new unit's P–F
interval lies in it with that chance. Its lower end is what an inspection interval must stay
below (the RCM evidence check reads it). Times are in the model's time unit; P is in the
threshold's measurement unit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import ndtri

from bathtub.degradation.paths import Path, check_direction
from bathtub.degradation.pseudo import crossing_times
from bathtub.degradation.random_effects import values
from bathtub.errors import InputError
from bathtub.validate import check_number

PF_CONFIDENCE = 0.9


def check_potential_failure(value: Any, threshold: float, direction: str, path: Path) -> float:
    """The potential-failure level: finite, reached before the threshold (below it for an
    upward failure, above it for a downward one) and in the value transform's domain."""
    p = check_number(value, "potential_failure")
    if not math.isfinite(p):
        raise InputError("potential_failure", "must be a finite number")
    sign = check_direction(direction)
    if not sign * (threshold - p) > 0:
        side = "below" if sign > 0 else "above"
        raise InputError("potential_failure", f"must be {side} the failure threshold {threshold:g} (direction "
                                              f"{direction}: a path reaches P before it fails); got {p:g}")
    if path.y != "identity" and p <= 0:
        raise InputError("potential_failure", f"must be > 0 (the path takes the {path.y} of values)")
    return p


def _row(value: float, lo: float, hi: float, p: float, threshold: float, method: str,
         confidence: float) -> dict[str, Any]:
    def num(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None

    return {"name": "pf_interval", "value": num(value), "se": None, "ci": [num(lo), num(hi)],
            "confidence": confidence, "potential_failure": p, "threshold": threshold, "method": method}


def pf_random_effects(path: Path, record: dict[str, Any], p: float, threshold: float, direction: str,
                      confidence: float = PF_CONFIDENCE) -> dict[str, Any]:
    """The P–F interval row of a fitted random-effects model (`record["random_effects"]`)."""
    sign = check_direction(direction)
    v = values(record)
    h = path.h(np.array([p, threshold]), "potential_failure")
    delta = sign * float(h[1] - h[0])
    mu, sd = sign * v["mu_b"], v["sd_b"]

    def quantile(q: float) -> float:
        # P(Δ/B <= x) = P(B >= Δ/x): the (1 - q) quantile of the rate, toward the threshold
        rate = mu + sd * float(ndtri(1.0 - q))
        return delta / rate if rate > 0 else math.inf

    tail = (1.0 - confidence) / 2.0
    return _row(quantile(0.5), quantile(tail), quantile(1.0 - tail), p, threshold,
                "closed form: (h(F) - h(P)) / B with B ~ N(mu_b, sd_b^2)", confidence)


def pf_pseudo(path: Path, lines: np.ndarray, p: float, threshold: float, direction: str,
              confidence: float = PF_CONFIDENCE) -> dict[str, Any]:
    """The P–F interval row from each unit's own fitted line (rows (A, B, ...) of `unit_lines`)."""
    t_f = crossing_times(path, lines, threshold, direction)
    t_p = crossing_times(path, lines, p, direction)
    ok = np.isfinite(t_f) & np.isfinite(t_p)
    if not np.any(ok):
        raise InputError("potential_failure", "no unit's fitted path crosses both the potential-failure level and "
                                              "the threshold")
    gaps = t_f[ok] - t_p[ok]
    tail = (1.0 - confidence) / 2.0
    lo, med, hi = np.quantile(gaps, [tail, 0.5, 1.0 - tail])
    return _row(float(med), float(lo), float(hi), p, threshold,
                f"empirical quantiles of {int(ok.sum())} units' own crossings of P and F", confidence)
