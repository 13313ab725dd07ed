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

import numpy as np
from scipy import optimize

from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.strategy.guard import answered
from bathtub.strategy.inputs import life_model, mean_life, probability
from bathtub.strategy.replacement import integral_cdf, integral_sf

_NUDGES = 60  # halvings/doublings allowed when rounding leaves a bracket end on the wrong side


def mean_unavailability(life: Lifetime, interval: float) -> float:
    """1 − (1/T)∫₀ᵀ R(t) dt: the share of time a hidden function is failed with tests every T."""
    if interval <= 0.0:
        return 0.0
    share_failed = integral_cdf(life, interval) / interval
    # the smaller share computed directly: a tiny unavailability keeps its digits
    return share_failed if share_failed < 0.5 else max(0.0, 1.0 - integral_sf(life, interval) / interval)


def exponential_mean_unavailability(failure_rate: float, interval: float) -> float:
    """Closed form for a constant rate: 1 − (1 − e^{−λT})/(λT), computed without cancellation."""
    x = failure_rate * interval
    return 1.0 + math.expm1(-x) / x


@answered
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

    interval = _solve(life, a)
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


def _solve(life: Lifetime, a: float) -> float:
    """T with mean availability (1/T)∫₀ᵀ R = a. The smaller of the two shares is compared
    directly (∫F/T for a high target, ∫R/T for a low one), so neither cancels to noise, and the
    root is bracketed in closed form from quantiles, with no open-ended search:
    F rises, so (1/T)∫₀ᵀF ≤ F(T), and (1/T)∫₀ᵀF ≥ F(t₀)/2 at T = 2t₀; R falls, so
    (1/T)∫₀ᵀR ≥ R(T), and (1/T)∫₀ᵀR ≤ t₀/T + R(t₀) ≤ a at R(t₀) = a/2, T = 2t₀/a."""
    with np.errstate(all="ignore"):
        if a > 0.5:
            u = 1.0 - a  # exact for a in [0.5, 1]

            def gap(t: float) -> float:
                return integral_cdf(life, t) / t - u

            lo, hi = float(life.quantile(u)), 2.0 * float(life.quantile(2.0 * u))
        else:
            def gap(t: float) -> float:
                return a - integral_sf(life, t) / t

            lo, hi = float(life.isf(a)), 2.0 * float(life.isf(a / 2.0)) / a
            mttf = mean_life(life)
            if mttf is not None and lo < mttf / a < hi:  # (1/T)∫₀ᵀR ≤ MTTF/T: tighter when the mean is finite
                hi = mttf / a
    if not (math.isfinite(hi) and hi > 0.0 and math.isfinite(lo)):
        raise InputError("target_availability", f"{a!r} needs a test interval outside floating-point range for "
                                                "this life model")
    lo = lo if lo > 0.0 else hi * 1e-300
    g_lo, g_hi = gap(lo), gap(hi)
    for _ in range(_NUDGES):  # quadrature within its tolerance of an exact bound
        if g_lo <= 0.0 or lo < 1e-300:
            break
        lo /= 2.0
        g_lo = gap(lo)
    for _ in range(_NUDGES):
        if g_hi >= 0.0 or hi > 1e300:
            break
        hi *= 2.0
        g_hi = gap(hi)
    if not (g_lo <= 0.0 <= g_hi):
        raise InputError("target_availability", f"{a!r} cannot be met: this life model's mean availability is "
                                                "not resolvable in floating point near that target")
    if g_lo == 0.0:
        return lo
    if g_hi == 0.0:
        return hi
    # on log-time: the bracket may span decades, and 1e-12 there is a relative 1e-12 in T
    root = optimize.brentq(lambda v: gap(math.exp(v)), math.log(lo), math.log(hi), xtol=1e-12, rtol=1e-15,
                           maxiter=200)
    return math.exp(root)
