"""Optimal preventive replacement: age, block and minimal-repair policies.

Cost rates (cost per unit time, in the model's time unit), with planned cost Cp and unplanned
cost Cu, life model R = 1 − F, hazard h, cumulative hazard H and renewal function M:

- age (replace at age T or at failure, whichever first; Barlow & Proschan 1965):
  C(T) = [Cp·R(T) + Cu·F(T)] / ∫₀ᵀ R(t) dt, which tends to Cu/MTTF as T → ∞ (run to failure);
- block (replace every T on the calendar, and at each failure): C(T) = [Cp + Cu·M(T)] / T;
- minimal repair (renew every T; failures in between are repaired as-bad-as-old at Cu):
  C(T) = [Cp + Cu·H(T)] / T. `reliability`'s optimal_replacement_time(q=1) swaps Cp and Cu in
  this formula; we follow the textbook (Barlow & Hunter 1960) and our tests say so. A power-law
  hazard (two-parameter Weibull, β > 1) has the exact optimum T* = α·(Cp/((β−1)·Cu))^{1/β}.
  Otherwise the search reaches far past the life range (a barely rising hazard can rightly keep a
  part for many lives) and reports the first local minimum, as the root of T²·C'(T) =
  Cu·(T·h − H) − Cp bracketed by a sign change: where the hazard later falls back (lognormal), the
  rate creeps towards 0 only over absurdly long intervals.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np
from scipy import integrate, optimize
from scipy.interpolate import PchipInterpolator

from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.strategy.guard import answered, checkpoint
from bathtub.strategy.inputs import DEGENERATE_RULE, cost, integer, life_model, mean_life, time_scale
from bathtub.strategy.renewal import renewal_function

POLICIES = ("age", "block", "minimal_repair")
_REL = 1e-9  # relative margin under which a cost saving is numerical noise


def integral_sf(life: Lifetime, t: float) -> float:
    """∫₀ᵗ R(u) du (expected life truncated at t), by adaptive quadrature, in time units."""
    if t <= 0.0:
        return 0.0
    lo = max(0.0, life.support_low())
    if t <= lo:
        return t  # R = 1 throughout a failure-free period
    return lo + _quad(life, life.sf, lo, t)


def integral_cdf(life: Lifetime, t: float) -> float:
    """∫₀ᵗ F(u) du = t − ∫₀ᵗ R, integrated directly: accurate to the last digits when it is a
    tiny share of t (a short test interval), where the difference would cancel to noise."""
    lo = max(0.0, life.support_low())
    if t <= lo:
        return 0.0  # nothing fails in a failure-free period
    return _quad(life, life.cdf, lo, t)


# Quantiles at which an integral over a wide range is split, so adaptive quadrature samples where
# the probability is (an interval reaching 1e300 times the life's scale would otherwise look empty).
_SPLIT_AT = (1e-12, 1e-6, 1e-3, 0.05, 0.25, 0.5, 0.75, 0.95, 0.999, 1 - 1e-6, 1 - 1e-12)


@functools.lru_cache(maxsize=16)  # the cost-rate searches integrate one life many times
def _quantiles(life: Lifetime) -> tuple[float, ...]:
    with np.errstate(all="ignore"):
        inside = [float(life.quantile(q)) for q in _SPLIT_AT]
    return tuple(sorted({x for x in inside if math.isfinite(x) and x > 0.0}))


def _quad(life: Lifetime, fn: Any, a: float, b: float) -> float:
    """∫ₐᵇ fn: up to the life's first quantile mark directly, beyond it over log-time, split at
    the marks. On log-time a heavy tail is smooth and a vanishing one is short, so an interval
    reaching 1e300 times the life's scale costs a few hundred evaluations, not a stall."""
    marks = [x for x in _quantiles(life) if a < x < b]

    # Each evaluation checks the caller's CPU budget: a near-degenerate model (a shape of 1e6, an
    # exponent of 1e-6) can keep quadrature at its subdivision limit for every one of a search's calls.
    def on_line(u: float) -> float:
        checkpoint()
        return float(fn(u))

    if not marks:
        return _gk(on_line, a, b, [])
    head = _gk(on_line, a, marks[0], [])

    def on_log(v: float) -> float:
        checkpoint()
        u = math.exp(v)
        return float(fn(u)) * u

    return head + _gk(on_log, math.log(marks[0]), math.log(b), [math.log(x) for x in marks[1:]])


def _gk(f: Any, a: float, b: float, points: list[float]) -> float:
    if not b > a:
        return 0.0
    with warnings.catch_warnings():
        # An integrand with an infinite slope at 0 (shape < 1) can stall the tight tolerance; a
        # looser one is then still far below anything a cost or an interval could resolve.
        warnings.simplefilter("error", integrate.IntegrationWarning)
        try:
            return float(integrate.quad(f, a, b, points=points or None, epsabs=0.0, epsrel=1e-11, limit=200)[0])
        except integrate.IntegrationWarning:
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            return float(integrate.quad(f, a, b, points=points or None, epsabs=0.0, epsrel=1e-8, limit=200)[0])


def _time_grid(life: Lifetime, n: int = 1200) -> np.ndarray:
    """Times spread by probability (logit-spaced quantiles), so any shape or scale is covered."""
    z = np.linspace(-18.0, 18.0, n)
    q = 1.0 / (1.0 + np.exp(-z))
    if life.distribution_id == "mixture":
        # each mode's quantiles (vectorised) together cover the mixture; its own ppf is a root search
        t = np.concatenate([np.asarray(c.ppf(q[::2]), dtype=float) for c in life.components])
    else:
        t = np.asarray(life.quantile(q), dtype=float)
    t = t[np.isfinite(t) & (t > 0)]
    lo = max(0.0, life.support_low())
    if lo > 0:
        t = np.concatenate([np.linspace(0.0, lo, 50)[1:], t])
    t = np.unique(t)
    if t.size < 3:  # e.g. a Weibull beta of 1e-139: its quantiles leave floating point
        raise InputError("params", f"the life model's times are not finite numbers ({DEGENERATE_RULE})")
    return t


def _cumulative_sf(life: Lifetime, t: np.ndarray) -> np.ndarray:
    """∫₀^{t_k} R for increasing grid times: 10-point Gauss–Legendre on each cell, summed.

    The cells are small against the life's spread, so this agrees with adaptive quadrature
    to ~1e-12 relative at a fraction of the cost (one vectorised sf call).
    """
    edges = np.concatenate([[0.0], np.asarray(t, dtype=float)])
    a, b = edges[:-1], edges[1:]
    x, w = _GL
    pts = a[:, None] + (b - a)[:, None] * (x[None, :] + 1.0) / 2.0
    vals = np.asarray(life.sf(pts), dtype=float)
    return np.cumsum((b - a) / 2.0 * (vals @ w))


_GL = np.polynomial.legendre.leggauss(10)


def _age_rate(life: Lifetime, cp: float, cu: float, t: float) -> float:
    r = float(life.sf(t))
    return (cp * r + cu * (1.0 - r)) / integral_sf(life, t)


def cost_rate_at(life: Lifetime, policy: str, planned_cost: float, unplanned_cost: float, t: float | None) -> float:
    """The long-run cost rate (cost per unit time) of replacing every `t` under `policy`, by the
    formulas above; `t` None is never replacing preventively: Cu/MTTF for age and block (0 for a
    life with no finite mean), and for minimal repair the limit of Cu·H(T)/T, refused here as it
    is not a plan (a rising hazard makes it grow without bound)."""
    cp, cu = planned_cost, unplanned_cost
    if t is None:
        if policy == "minimal_repair":
            raise InputError("policy", "minimal repair has no cost rate without a renewal interval")
        mttf = mean_life(life)
        return cu / mttf if mttf is not None else 0.0
    if policy == "age":
        return _age_rate(life, cp, cu, t)
    if policy == "block":
        return (cp + cu * float(renewal_function(life, t, steps=4000)[1][-1])) / t
    return (cp + cu * float(life.cumulative_hazard(t))) / t


def _minimize_on_grid(rate, grid: np.ndarray, values: np.ndarray) -> tuple[float, float, int]:
    """Grid argmin, then bounded Brent refinement between its neighbours."""
    if not np.isfinite(values).any():
        raise InputError("params", f"the cost rate has no finite value for this life model ({DEGENERATE_RULE})")
    k = int(np.nanargmin(values))
    lo = grid[max(k - 1, 0)]
    hi = grid[min(k + 1, len(grid) - 1)]
    if hi <= lo:
        return float(grid[k]), float(values[k]), k
    res = optimize.minimize_scalar(rate, bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-12 * max(hi, 1e-300), "maxiter": 200})
    if res.success and res.fun <= values[k]:
        return float(res.x), float(res.fun), k
    return float(grid[k]), float(values[k]), k


def _hazard_never_rises(life: Lifetime, grid: np.ndarray) -> bool:
    with np.errstate(all="ignore"):
        h = np.asarray(life.hazard(grid), dtype=float)
    h = h[np.isfinite(h)]
    return bool(np.all(np.diff(h) <= 1e-9 * np.maximum(np.abs(h[:-1]), 1e-300)))


@answered
def optimal_replacement(
    distribution_id: str | None = None,
    params: Any = None,
    planned_cost: Any = None,
    unplanned_cost: Any = None,
    unit: str | None = None,
    *,
    lifetime: Lifetime | None = None,
    base_distribution_id: str | None = None,
    policy: str = "age",
    curve_points: int = 200,
) -> dict[str, Any]:
    """Replacement time minimising the long-run cost rate of a part.

    Inputs: life model (`distribution_id` + `params`, or `lifetime` for a saved model), costs
    per event (`planned_cost` Cp, `unplanned_cost` Cu, >= 0), `policy` one of age, block,
    minimal_repair. Times are in the model's unit (`unit`, display only).

    Returns {distribution, unit, mttf, beneficial, optimal_time, optimal_cost_rate,
    planned_cost, unplanned_cost} plus `policy`, `run_to_failure_cost_rate` (Cu/MTTF, cost per
    unit time), `reason` (why replacement does not pay, when `beneficial` is false, else None)
    and `curve` {t, cost_rate} for plotting. When replacement does not pay, `optimal_time` is
    None and `optimal_cost_rate` is the best achievable rate (running to failure for age and
    block; for minimal repair the rate at the longest interval searched, far past the life range).
    """
    if policy not in POLICIES:
        raise InputError("policy", f"must be one of {', '.join(POLICIES)}")
    if planned_cost is None:
        raise InputError("planned_cost", "required")
    if unplanned_cost is None:
        raise InputError("unplanned_cost", "required")
    cp = cost(planned_cost, "planned_cost")
    cu = cost(unplanned_cost, "unplanned_cost")
    n_curve = integer(curve_points, "curve_points", low=10)
    if n_curve > 5000:
        raise InputError("curve_points", "must be <= 5000")
    life = life_model(distribution_id, params, lifetime, base_distribution_id)
    mttf = mean_life(life)
    rtf = cu / mttf if mttf is not None else 0.0
    grid = _time_grid(life)
    if policy == "age":
        out = _age(life, cp, cu, rtf, grid)
    elif policy == "block":
        out = _block(life, cp, cu, rtf, grid)
    else:
        out = _minimal_repair(life, cp, cu, grid)
    t_opt = out["optimal_time"]
    span = 3.0 * t_opt if t_opt is not None else float(life.quantile(0.99))
    t_curve = np.linspace(span / n_curve, span, n_curve)
    rates = out.pop("rate_fn")(t_curve)
    return {
        "distribution": life.distribution_id,
        "unit": unit,
        "mttf": mttf,
        "beneficial": out["beneficial"],
        "optimal_time": t_opt,
        "optimal_cost_rate": out["optimal_cost_rate"],
        "planned_cost": cp,
        "unplanned_cost": cu,
        "policy": policy,
        "run_to_failure_cost_rate": rtf if mttf is not None else None,
        "reason": out["reason"],
        "curve": {"t": [float(x) for x in t_curve], "cost_rate": [float(x) for x in rates]},
    }


def _not_beneficial(life: Lifetime, cp: float, cu: float, grid: np.ndarray, tail: str) -> str:
    if cu <= cp:
        return "unplanned cost does not exceed planned cost, so replacing early only adds cost"
    if _hazard_never_rises(life, grid):
        return ("the hazard rate never rises (no wear-out, e.g. Weibull beta <= 1), "
                "so a replaced part is no better than the old one")
    return tail


def _age(life: Lifetime, cp: float, cu: float, rtf: float, grid: np.ndarray) -> dict[str, Any]:
    def rate_fn(ts: np.ndarray) -> np.ndarray:
        r = np.asarray(life.sf(ts), dtype=float)
        return (cp * r + cu * (1.0 - r)) / _cumulative_sf(life, np.asarray(ts))

    values = rate_fn(grid)
    t_opt, c_opt, k = _minimize_on_grid(lambda x: _age_rate(life, cp, cu, x), grid, values)
    tail = "the cost rate is lowest when running to failure (Cu/MTTF)"
    if cu <= cp or k >= len(grid) - 2 or not c_opt < rtf * (1.0 - _REL):
        return {"beneficial": False, "optimal_time": None, "optimal_cost_rate": rtf,
                "reason": _not_beneficial(life, cp, cu, grid, tail), "rate_fn": rate_fn}
    return {"beneficial": True, "optimal_time": t_opt, "optimal_cost_rate": c_opt, "reason": None,
            "rate_fn": rate_fn}


def _block(life: Lifetime, cp: float, cu: float, rtf: float, grid: np.ndarray) -> dict[str, Any]:
    # M(T) on a uniform grid reaching well past the mean life; C(T) is then smooth in T.
    scale = time_scale(life)
    t_max = max(float(life.quantile(0.999)), 4.0 * scale)
    for _ in range(4):
        t, m = renewal_function(life, t_max, steps=4000)
        tt, values = t[1:], (cp + cu * m[1:]) / t[1:]
        k = int(np.argmin(values))
        # a minimum on the grid's end that still beats running to failure lies further out
        if k < len(tt) - 2 or not values[k] < rtf:
            break
        t_max *= 4.0

    def rate_fn(ts: np.ndarray) -> np.ndarray:
        ts = np.asarray(ts, dtype=float)
        mm = np.interp(ts, t, m) if ts.max() <= t_max else _extend(ts, t, m)
        return (cp + cu * mm) / ts

    tail = "the cost rate is lowest when running to failure (Cu/MTTF)"
    if cu <= cp or k >= len(tt) - 2 or not values[k] < rtf * (1.0 - 1e-6):
        return {"beneficial": False, "optimal_time": None, "optimal_cost_rate": rtf,
                "reason": _not_beneficial(life, cp, cu, grid, tail), "rate_fn": rate_fn}
    # Refine between grid neighbours on a monotone cubic through M: M never decreases, and a
    # plain spline would overshoot at a kink of F (a failure-free period) and undercut the minimum.
    lo, hi = tt[max(k - 3, 0)], tt[min(k + 3, len(tt) - 1)]
    sel = (t >= lo) & (t <= hi)
    spline = PchipInterpolator(t[sel], m[sel])
    res = optimize.minimize_scalar(lambda x: (cp + cu * float(spline(x))) / x,
                                   bounds=(tt[max(k - 1, 0)], tt[min(k + 1, len(tt) - 1)]), method="bounded",
                                   options={"xatol": 1e-10 * tt[k]})
    t_opt, c_opt = (float(res.x), float(res.fun)) if res.fun <= values[k] else (float(tt[k]), float(values[k]))
    return {"beneficial": True, "optimal_time": t_opt, "optimal_cost_rate": c_opt, "reason": None,
            "rate_fn": rate_fn}


def _extend(ts: np.ndarray, t: np.ndarray, m: np.ndarray) -> np.ndarray:
    """M beyond the grid by its linear asymptote (slope taken over the last tenth)."""
    j = int(0.9 * len(t))
    slope = (m[-1] - m[j]) / (t[-1] - t[j])
    return np.where(ts <= t[-1], np.interp(ts, t, m), m[-1] + slope * (ts - t[-1]))


def _minimal_repair(life: Lifetime, cp: float, cu: float, grid: np.ndarray) -> dict[str, Any]:
    def rate_fn(ts: np.ndarray) -> np.ndarray:
        ts = np.asarray(ts, dtype=float)
        return (cp + cu * np.asarray(life.cumulative_hazard(ts), dtype=float)) / ts

    weibull = _power_law(life)
    if weibull is not None and weibull[1] > 1.0 and cp > 0.0 and cu > 0.0:
        # A power-law hazard (Weibull, no location) has the exact optimum (Barlow & Hunter 1960).
        t_opt, c_opt = minimal_repair_weibull_optimum(weibull[0], weibull[1], cp, cu)
        return {"beneficial": True, "optimal_time": t_opt, "optimal_cost_rate": c_opt, "reason": None,
                "rate_fn": rate_fn}
    never_rises = _hazard_never_rises(life, grid)
    # Under minimal repair a part may rightly be kept for many mean lives (hazard barely rising),
    # so the search runs past the life distribution's own range, as far as H(T) = -ln R(T) is
    # still computable (sf above ~1e-300).
    far = np.geomspace(grid[-1], grid[-1] * 1e6, 600)[1:]
    with np.errstate(all="ignore"):
        far = far[np.asarray(life.cumulative_hazard(far), dtype=float) < 650.0]
        grid = np.concatenate([grid, far])
        values = rate_fn(grid)
        # C'(T) = g(T)/T² with g(T) = Cu·(T·h(T) − H(T)) − Cp: a minimum of C is where g turns
        # from negative to non-negative, and g (unlike C, flat at its minimum) has a sharp root.
        slope = _minimal_repair_slope(life, cp, cu, grid)
        if cp > 0.0 and slope[0] >= 0.0:
            # the turn lies before the first grid time (Cp/Cu tiny): g(0+) = -Cp < 0, so halving
            # the time reaches the other side of the root
            t0 = float(grid[0])
            for _ in range(2000):
                t0 *= 0.5
                g0 = _minimal_repair_slope(life, cp, cu, np.array([t0]))
                if g0[0] < 0.0 or t0 == 0.0:
                    break
            if t0 > 0.0 and g0[0] < 0.0:
                grid, slope = np.concatenate([[t0], grid]), np.concatenate([g0, slope])
                values = rate_fn(grid)
    values = np.where(np.isfinite(values), values, np.inf)
    # The first local minimum: a hazard that later falls (lognormal, log-logistic) makes the rate
    # creep back towards 0 over astronomically long intervals, which is no maintenance plan.
    turns = np.flatnonzero((slope[:-1] < 0.0) & (slope[1:] >= 0.0)) + 1
    if never_rises or (cp == 0.0 and cu == 0.0) or (len(turns) == 0 and cp > 0.0):
        reason = ("the hazard rate never rises (no wear-out, e.g. Weibull beta <= 1), so renewing does not pay"
                  if never_rises else "the cost rate keeps falling with a longer interval")
        return {"beneficial": False, "optimal_time": None, "optimal_cost_rate": float(values[-1]),
                "reason": reason, "rate_fn": rate_fn}
    if cp == 0.0:
        # Free renewals: the rate tends to Cu·h(0+) as T → 0; there is no interior optimum to report.
        return {"beneficial": True, "optimal_time": float(grid[0]), "optimal_cost_rate": float(values[0]),
                "reason": None, "rate_fn": rate_fn}
    k = int(turns[0])
    lo, hi = float(grid[k - 1]), float(grid[k])

    def g(x: float) -> float:
        with np.errstate(all="ignore"):
            return float(_minimal_repair_slope(life, cp, cu, np.array([x]))[0])

    # the bracket [lo, hi] holds the sign change, so Brent's root is exact to the last bits
    t_opt = float(optimize.brentq(g, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500))
    c_opt = float(rate_fn(np.array([t_opt]))[0])
    return {"beneficial": True, "optimal_time": t_opt, "optimal_cost_rate": c_opt, "reason": None,
            "rate_fn": rate_fn}


def _minimal_repair_slope(life: Lifetime, cp: float, cu: float, t: np.ndarray) -> np.ndarray:
    """g(T) = Cu·(T·h(T) − H(T)) − Cp = T²·dC/dT under minimal repair (nan read as +inf)."""
    t = np.asarray(t, dtype=float)
    g = cu * (t * np.asarray(life.hazard(t), dtype=float) - np.asarray(life.cumulative_hazard(t), dtype=float)) - cp
    return np.where(np.isnan(g), np.inf, g)


def _power_law(life: Lifetime) -> tuple[float, float] | None:
    """(alpha, beta) of a two-parameter Weibull (H = (t/α)^β), else None."""
    if life.distribution_id != "weibull" or float(life.params.get("gamma", 0.0) or 0.0) != 0.0:
        return None
    return float(life.params["alpha"]), float(life.params["beta"])


def minimal_repair_weibull_optimum(alpha: float, beta: float, planned_cost: float,
                                   unplanned_cost: float) -> tuple[float, float]:
    """Closed form for a Weibull under minimal repair (beta > 1): T* = α·(Cp / (Cu·(β − 1)))^{1/β}.

    Returns (T*, C(T*)) with C(T) = [Cp + Cu·(T/α)^β] / T.
    """
    if not beta > 1.0:
        raise InputError("beta", "must be > 1 for an optimum to exist")
    t = alpha * (planned_cost / (unplanned_cost * (beta - 1.0))) ** (1.0 / beta)
    return t, (planned_cost + unplanned_cost * (t / alpha) ** beta) / t


__all__ = ["POLICIES", "cost_rate_at", "integral_cdf", "integral_sf", "minimal_repair_weibull_optimum",
           "optimal_replacement"]

