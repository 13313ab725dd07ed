"""Input checks shared by the strategy calculators: one life model, costs, probabilities.

The primitive checks are the library's one toolkit's (`bathtub.validate`), under the
keyword forms the calculators call them by.

Every check raises `InputError(field, rule)` so the service can answer 422 naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.validate import check_integer, check_number

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
            lifetime.quantile(np.array([1e-9, 0.5, 1.0 - 1e-9]))
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
    return check_number(value, field, -math.inf if low is None else low, math.inf if high is None else high,
                        lo_open=not low_inclusive, hi_open=not high_inclusive)


def probability(value: Any, field: str) -> float:
    """A probability strictly inside (0, 1)."""
    return number(value, field, low=0.0, low_inclusive=False, high=1.0, high_inclusive=False)


def cost(value: Any, field: str) -> float:
    """A cost >= 0."""
    return number(value, field, low=0.0)


def integer(value: Any, field: str, *, low: int = 0, high: int | None = None) -> int:
    """A whole number in [low, high] (floats that are whole are accepted, as JSON may send 3.0)."""
    return check_integer(value, field, low, high)


def mean_life(life: Lifetime) -> float | None:
    """MTTF, or None when the distribution has no finite mean (log-logistic with beta <= 1)."""
    m = life.mean()
    return m if math.isfinite(m) and m > 0 else None


def time_scale(life: Lifetime) -> float:
    """A natural time scale of the model: its mean, else its median (used to scale searches)."""
    m = mean_life(life)
    return m if m is not None else float(life.quantile(0.5))


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
