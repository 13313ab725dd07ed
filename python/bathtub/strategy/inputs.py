"""Input checks shared by the strategy calculators: one life model, costs, probabilities.

Every check raises `InputError(field, rule)` so the service can answer 422 naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from bathtub.distributions import Lifetime
from bathtub.errors import InputError

# A life distribution may leak a little probability below t = 0 (a normal with mu >> sigma);
# beyond this share the model is not a lifetime and the calculators refuse it.
MAX_MASS_BELOW_ZERO = 1e-3
BELOW_ZERO_RULE = "a life distribution must be positive"
# Parameters inside their domains whose model floating point cannot evaluate (a Weibull beta of
# 1e-139, beta shapes of 5e-324): a rule between the values and the arithmetic, stated, not a schema.
DEGENERATE_RULE = "degenerate parameters"
# The most failures a demonstration test may allow: the request's bound on `failures`, and the
# most a solved plan may need (its trade-off table lists every count up to failures + 2).
MAX_FAILURES = 1000
# A plan meeting both risks is searched failure count by failure count this far; past it the
# search jumps to where a plan first becomes possible (a closed-form bracket), so its cost is bounded.
SCANNED_FAILURES = 64


def life_model(
    distribution_id: str | None,
    params: Any,
    lifetime: Lifetime | None = None,
    base_distribution_id: str | None = None,
) -> Lifetime:
    """The part's life model: an already built `Lifetime` (saved model) or an id + params."""
    if lifetime is None:
        if distribution_id is None:
            raise InputError("distribution_id", "required")
        if params is None:
            raise InputError("params", "required")
    try:
        if lifetime is None:
            lifetime = Lifetime.from_input(distribution_id, params, base_distribution_id)
        # Quantiles are what every calculator's time grid is made of; scipy raises (not NaN) where
        # a special function leaves floating point, e.g. boost's beta function at shapes of 5e-324.
        with np.errstate(all="ignore"):
            lifetime.ppf(np.array([1e-9, 0.5, 1.0 - 1e-9]))
        below = float(lifetime.cdf(0.0))
    except OverflowError:  # e.g. a lognormal mu of 1e71: e^mu is past floating point
        raise InputError("params", f"out of floating-point range for this distribution ({DEGENERATE_RULE})") \
            from None
    if below > MAX_MASS_BELOW_ZERO:
        raise InputError("params", f"puts {below:.3g} of the lifetimes at or below 0; {BELOW_ZERO_RULE}")
    return lifetime


def number(value: Any, field: str, *, low: float | None = None, low_inclusive: bool = True,
           high: float | None = None, high_inclusive: bool = True) -> float:
    """A finite real within [low, high] (bounds optional, inclusive or not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(field, "must be a finite number")
    v = float(value)
    if low is not None and (v < low or (v == low and not low_inclusive)):
        raise InputError(field, f"must be {'>=' if low_inclusive else '>'} {low:g}")
    if high is not None and (v > high or (v == high and not high_inclusive)):
        raise InputError(field, f"must be {'<=' if high_inclusive else '<'} {high:g}")
    return v


def probability(value: Any, field: str) -> float:
    """A probability strictly inside (0, 1)."""
    return number(value, field, low=0.0, low_inclusive=False, high=1.0, high_inclusive=False)


def cost(value: Any, field: str) -> float:
    """A cost >= 0."""
    return number(value, field, low=0.0)


def integer(value: Any, field: str, *, low: int = 0, high: int | None = None) -> int:
    """A whole number in [low, high] (floats that are whole are accepted, as JSON may send 3.0)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(field, "must be an integer")
    if float(value) != int(value):
        raise InputError(field, "must be an integer")
    v = int(value)
    if v < low:
        raise InputError(field, f"must be >= {low}")
    if high is not None and v > high:
        raise InputError(field, f"must be <= {high}")
    return v


def mean_life(life: Lifetime) -> float | None:
    """MTTF, or None when the distribution has no finite mean (log-logistic with beta <= 1)."""
    m = life.mean()
    return m if math.isfinite(m) and m > 0 else None


def time_scale(life: Lifetime) -> float:
    """A natural time scale of the model: its mean, else its median (used to scale searches)."""
    m = mean_life(life)
    return m if m is not None else float(life.ppf(0.5))


def boundary(lo: int, hi: int, holds: Callable[[int], bool]) -> int:
    """For a condition that holds at `lo` and fails at `hi` (and changes once between them), the
    last integer where it holds, by bisection."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(mid):
            lo = mid
        else:
            hi = mid
    return lo
