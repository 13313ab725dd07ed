"""Failure-finding (proof-test) interval of a hidden function.

A hidden failure stays undetected until the next test, so with tests every T (instant, perfect,
as-good-as-new when a failure is found) the mean unavailability over an interval is
U(T) = 1 − (1/T)·∫₀ᵀ R(t) dt. U rises monotonically from 0, so the interval meeting a target
availability A solves U(T) = 1 − A exactly for any life model. For a constant failure rate λ,
U(T) = 1 − (1 − e^{−λT})/(λT), and the classic approximation U ≈ λT/2 gives T ≈ 2(1 − A)/λ
(Moubray, RCM II).
"""

from __future__ import annotations

import math
from typing import Any

from scipy import optimize

from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.strategy.inputs import life_model, mean_life, probability, time_scale
from bathtub.strategy.replacement import integral_sf


def mean_unavailability(life: Lifetime, interval: float) -> float:
    """1 − (1/T)∫₀ᵀ R(t) dt: the share of time a hidden function is failed with tests every T."""
    if interval <= 0.0:
        return 0.0
    return max(0.0, 1.0 - integral_sf(life, interval) / interval)


def exponential_mean_unavailability(failure_rate: float, interval: float) -> float:
    """Closed form for a constant rate: 1 − (1 − e^{−λT})/(λT), computed without cancellation."""
    x = failure_rate * interval
    return 1.0 + math.expm1(-x) / x


def failure_finding_interval(
    distribution_id: str | None = None,
    params: Any = None,
    target_availability: Any = None,
    unit: str | None = None,
    *,
    lifetime: Lifetime | None = None,
    base_distribution_id: str | None = None,
) -> dict[str, Any]:
    """Test interval T (model time unit) at which the mean availability equals the target.

    Returns {distribution, unit, mttf, target_availability, interval, method, note} plus
    `approximate_interval` (2(1 − A)·MTTF, the classic λT/2 rule, exact only as A → 1) and
    `mean_unavailability` at the interval found.
    """
    if target_availability is None:
        raise InputError("target_availability", "required")
    a = probability(target_availability, "target_availability")
    life = life_model(distribution_id, params, lifetime, base_distribution_id)
    mttf = mean_life(life)
    u_target = 1.0 - a

    def gap(t: float) -> float:
        return mean_unavailability(life, t) - u_target

    hi = time_scale(life)
    while gap(hi) < 0.0:
        hi *= 2.0
        if hi > 1e300:
            raise InputError("target_availability", "cannot be reached: the function is never unavailable enough")
    lo = hi / 2.0
    while lo > 1e-300 and gap(lo) > 0.0:
        lo /= 2.0
    interval = float(optimize.brentq(gap, lo, hi, xtol=1e-14 * hi, rtol=1e-15, maxiter=200))
    approx = 2.0 * u_target * mttf if mttf is not None else None
    exponential = life.distribution_id == "exponential" and not life.params.get("gamma")
    if exponential:
        method = "exact_exponential"
        note = (
            "Constant failure rate: mean unavailability 1 − (1 − e^(−λT))/(λT) solved exactly; the classic "
            f"approximation T ≈ 2(1 − A)/λ gives {approx:.6g}."
        )
    else:
        method = "exact_mean_unavailability"
        note = (
            "Mean unavailability 1 − (1/T)∫₀ᵀ R(t) dt solved exactly for this life model"
            + (f"; the constant-rate approximation T ≈ 2(1 − A)·MTTF would give {approx:.6g}." if approx else ".")
        )
    note += " Assumes instant, perfect tests that restore a failed function to as good as new."
    return {
        "distribution": life.distribution_id,
        "unit": unit,
        "mttf": mttf,
        "target_availability": a,
        "interval": interval,
        "method": method,
        "note": note,
        "approximate_interval": approx,
        "mean_unavailability": mean_unavailability(life, interval),
    }
