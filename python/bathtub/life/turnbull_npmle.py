"""Turnbull's NPMLE for exact, right-, left- and interval-censored data, with pointwise
bootstrap bounds; conventions in `bathtub.life.nonparametric`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize

from bathtub.errors import InputError
from bathtub.life.step_estimates import (
    check_confidence,
    check_counts,
    check_time,
    check_times,
    model_record,
    point_record,
    step_curves,
    step_value,
)

# Resampled fits feed percentiles, read to 2-3 digits: mass settled to 1e-6 is plenty.
BOOTSTRAP_TOL = 1e-6


# --------------------------------------------------------------------------- Turnbull


@dataclass(frozen=True)
class Turnbull:
    """Turnbull's NPMLE for exact, right-, left- and interval-censored data.

    `left`/`right`/`mass`: the innermost (Turnbull) intervals (left, right] — a point
    [t, t] when left == right — and the probability mass the NPMLE puts on each; the last
    may be (left, inf) for mass beyond every observation.
    `time`: every finite observed endpoint; `sf` the estimate just after each with each
    interval's mass at its right end (surpyval's `R`), `sf_left` with it at its left end
    (surpyval's `R_lower`); between the two the data cannot choose. `lower`/`upper`:
    bootstrap percentile bounds on `sf` at `confidence` (None when `bootstrap` = 0).
    `at_risk` and `events` are the expected counts at each time under the NPMLE (the
    self-consistency equations' r and d). `iterations`, `converged`, `kkt_gap` (how far the
    optimality condition max_j d_j / N <= 1 is from holding; ~0 at the NPMLE) report the fit.
    """

    left: np.ndarray
    right: np.ndarray
    mass: np.ndarray
    time: np.ndarray
    sf: np.ndarray
    sf_left: np.ndarray
    lower: np.ndarray | None
    upper: np.ndarray | None
    at_risk: np.ndarray
    events: np.ndarray
    n_units: float
    log_likelihood: float
    iterations: int
    converged: bool
    kkt_gap: float
    confidence: float
    bootstrap: int
    seed: int
    method: str = field(default="turnbull")

    @property
    def n(self) -> int:
        return round(self.n_units)

    @property
    def horizon(self) -> float:
        """Largest finite endpoint: beyond it the data say nothing."""
        return float(self.time[-1])

    @property
    def restricted(self) -> bool:
        """True when mass lies beyond the last finite endpoint, so MTTF is a restricted mean."""
        # 1e-10: the fit's own precision; a vanishing mass there is not a censored tail.
        return bool(np.isinf(self.right[-1]) and self.mass[-1] > 1e-10)

    def quantile_time(self, p: float) -> float | None:
        """Time by which a fraction p has failed, each interval's mass uniform over it."""
        cum = np.cumsum(self.mass)
        j = int(np.searchsorted(cum, p - 1e-12))
        if j >= cum.size or not np.isfinite(self.right[j]):
            return None
        before = cum[j] - self.mass[j]
        share = min(max((p - before) / self.mass[j], 0.0), 1.0)
        return float(self.left[j] + share * (self.right[j] - self.left[j]))

    @property
    def median(self) -> float | None:
        return self.quantile_time(0.5)

    @property
    def b10(self) -> float | None:
        return self.quantile_time(0.1)

    @property
    def mttf(self) -> float:
        """Mean with each interval's mass at its midpoint; mass beyond the horizon counts as
        the horizon (restricted mean)."""
        mid = np.where(np.isfinite(self.right), (self.left + self.right) / 2.0, self.horizon)
        return float(np.sum(self.mass * np.minimum(mid, self.horizon)))

    def reliability_at(self, t: float) -> dict[str, Any]:
        """S(t) with mass at right ends, plus `reliability_range` [S with mass at right ends,
        ... at left ends] — the span the NPMLE leaves open (equal outside Turnbull intervals)."""
        t = check_time(t)
        arr = np.array([t])
        out = point_record(t, float(step_value(self.time, self.sf, arr)[0]))
        low = float(step_value(self.time, self.sf_left, arr)[0])
        out["reliability_range"] = [low, out["reliability"]]
        return out

    def curves(self) -> dict[str, Any]:
        """Whole curves {x, sf, ff, hf, Hf, df} (mass at right ends) as a post-step."""
        return step_curves(self.time, self.sf)

    def to_record(self) -> dict[str, Any]:
        """The spec's model record fields for a non-parametric model, plus the curve."""
        curve = {
            "time": self.time.tolist(),
            "sf": self.sf.tolist(),
            "sf_left": self.sf_left.tolist(),
            "lower": None if self.lower is None else self.lower.tolist(),
            "upper": None if self.upper is None else self.upper.tolist(),
            "at_risk": self.at_risk.tolist(),
            "events": self.events.tolist(),
        }
        intervals = {
            "left": self.left.tolist(),
            "right": [float(r) if np.isfinite(r) else None for r in self.right],  # None: open to infinity
            "mass": self.mass.tolist(),
        }
        metrics = {"median": self.median, "mttf": self.mttf, "b10": self.b10}
        extra = {
            "intervals": intervals,
            "confidence": self.confidence,
            "ci": f"bootstrap percentile ({self.bootstrap} resamples, seed {self.seed})" if self.bootstrap else None,
            "mttf_horizon": self.horizon,
            "restricted": self.restricted,
            "fit": {
                "log_likelihood": self.log_likelihood,
                "iterations": self.iterations,
                "converged": self.converged,
                "kkt_gap": self.kkt_gap,
            },
        }
        return model_record(self.method, self.n, metrics, curve, extra)


def _innermost(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Turnbull's innermost intervals of the sets {lo} (lo == hi) and (lo, hi].

    Sort every endpoint, left ends tagged L and right ends R, and take each L directly
    followed by an R. At equal values a point's closed left end sorts before right ends
    (they meet), an open left end after them (they do not).
    """
    exact = lo == hi
    values = np.concatenate([lo, hi])
    kind = np.concatenate([np.where(exact, 0, 2), np.ones(hi.size, dtype=int)])  # 0 [L, 1 R], 2 (L
    order = np.lexsort((kind, values))
    v, k = values[order], kind[order]
    is_left = k != 1
    starts = np.flatnonzero(is_left[:-1] & ~is_left[1:])
    return v[starts], v[starts + 1]


def _supports(lo: np.ndarray, hi: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each set, the first and one-past-last innermost interval it holds (a contiguous run).

    Innermost intervals are disjoint and ordered, and no endpoint lies inside one, so a set
    holds an interval exactly when it holds the interval's right end: lo < right <= hi, or
    right == t for an exact time t.
    """
    exact = lo == hi
    first = np.where(exact, np.searchsorted(right, lo, side="left"), np.searchsorted(right, lo, side="right"))
    last = np.searchsorted(right, hi, side="right")
    return first, last


def _em_icm(
    first: np.ndarray, last: np.ndarray, w: np.ndarray, p0: np.ndarray, tol: float, max_iter: int
) -> tuple[np.ndarray, int, bool]:
    """NPMLE masses by EM-ICM (Wellner & Zhan 1997): each round one self-consistency (EM)
    step p_j <- p_j d_j / N, then one iterative-convex-minorant step on the cumulative
    F_j = p_1 + ... + p_j — a diagonal Newton step made monotone by weighted isotonic
    regression, with a halving line search so the likelihood never falls. EM alone crawls
    where the likelihood is flat (current-status data); ICM alone can stall on exact points.

    Row i's probability is F[last_i] - F[first_i] on F = (0, F_1, ..., F_m = 1).
    Stops when no F_j moves by more than `tol` in a round.
    """
    m = p0.size
    total = w.sum()
    if m == 1:
        return np.ones(1), 0, True

    def loglik(cum: np.ndarray) -> float:
        prob = cum[last] - cum[first]
        if np.any(prob <= 0.0):
            return -math.inf
        return float(np.sum(w * np.log(prob)))

    def em(cum: np.ndarray) -> np.ndarray:
        ratio = w / (cum[last] - cum[first])
        d = np.cumsum(np.bincount(first, ratio, m + 1) - np.bincount(last, ratio, m + 1))[:m]
        p = np.diff(cum) * d / total
        return np.concatenate([[0.0], np.cumsum(p / p.sum())])

    def icm(cum: np.ndarray, ll: float) -> tuple[np.ndarray, float]:
        prob = cum[last] - cum[first]
        ratio = w / prob
        grad = (np.bincount(last, ratio, m + 1) - np.bincount(first, ratio, m + 1))[1:m]
        curv = (np.bincount(last, ratio / prob, m + 1) + np.bincount(first, ratio / prob, m + 1))[1:m]
        curv = np.maximum(curv, 1e-12 * curv.max())  # a rowless F_j (bootstrap) just stays put
        target = optimize.isotonic_regression(cum[1:m] + grad / curv, weights=curv).x
        direction = np.concatenate([[0.0], np.clip(target, 0.0, 1.0), [1.0]]) - cum
        step = 1.0
        for _ in range(40):
            trial = cum + step * direction
            trial_ll = loglik(trial)
            if trial_ll >= ll:
                return trial, trial_ll
            step /= 2.0
        return cum, ll

    cum = np.concatenate([[0.0], np.cumsum(p0 / p0.sum())])
    cum[-1] = 1.0
    for it in range(1, max_iter + 1):
        new = em(cum)
        new[-1] = 1.0
        new, _ = icm(new, loglik(new))
        moved = float(np.max(np.abs(new - cum)))
        cum = new
        if moved < tol:
            return np.clip(np.diff(cum), 0.0, None), it, True
    return np.clip(np.diff(cum), 0.0, None), max_iter, False


def turnbull(
    xl: Sequence[float] | np.ndarray,
    xr: Sequence[float] | np.ndarray,
    n: Sequence[float] | np.ndarray | None = None,
    *,
    confidence: float = 0.95,
    bootstrap: int = 200,
    seed: int = 0,
    tol: float = 1e-12,
    max_iter: int = 100_000,
) -> Turnbull:
    """Turnbull's non-parametric MLE of S(t) from (xl, xr] intervals with counts n.

    xl == xr: exact failure; xr = inf: right-censored at xl; xl = 0: left-censored at xr;
    otherwise failed in (xl, xr]. Times in any one unit. The NPMLE is found by
    EM-ICM on the innermost intervals until no cumulative mass moves by more than `tol`.

    Bounds: `bootstrap` resamples of the rows (seeded by `seed`), each refitted, give
    pointwise percentile bounds at `confidence`. There is no Greenwood-like formula for
    interval data; the bootstrap is consistent when the data hold exact or right-censored
    failures, but for purely current-status (one inspection per unit) data the NPMLE
    converges at the n^(1/3) rate and bootstrap bounds are known to be unreliable (Sen,
    Banerjee & Woodroofe 2010): read them as indicative there. `bootstrap=0` skips them.
    """
    lo = check_times(xl, "xl")
    hi = check_times(xr, "xr", allow_inf=True)
    if lo.shape != hi.shape:
        raise InputError("xr", f"must have one value per row of xl ({lo.size})")
    if lo.size == 0:
        raise InputError("xl", "needs at least one observation")
    bad = hi < lo
    if bad.any():
        raise InputError(f"xr[{int(np.argmax(bad))}]", "must be >= xl of the same row")
    counts = check_counts(n, lo.size)
    confidence = check_confidence(confidence)
    if not (isinstance(bootstrap, int) and 0 <= bootstrap <= 10_000):
        raise InputError("bootstrap", "must be a whole number of resamples in [0, 10000]")
    if np.all(hi[counts > 0] == np.inf) and np.all(lo[counts > 0] == 0):
        raise InputError("xl", "every row is censored at 0: no information")

    # Identical rows collapse to one with their total count: the EM works on distinct sets.
    keep = counts > 0
    rows, inverse = np.unique(np.column_stack([lo[keep], hi[keep]]), axis=0, return_inverse=True)
    inverse = inverse.ravel()
    w = np.bincount(inverse, weights=counts[keep], minlength=rows.shape[0])
    lo_u, hi_u = rows[:, 0], rows[:, 1]
    left, right = _innermost(lo_u, hi_u)
    first, last = _supports(lo_u, hi_u, right)

    p0 = np.full(left.size, 1.0 / left.size)
    mass, iterations, converged = _em_icm(first, last, w, p0, tol, max_iter)

    total = w.sum()
    cum = np.concatenate([[0.0], np.cumsum(mass)])
    prob = cum[last] - cum[first]
    log_likelihood = float(np.sum(w * np.log(prob)))
    grad = np.bincount(first, w / prob, left.size + 1) - np.bincount(last, w / prob, left.size + 1)
    kkt_gap = float(np.max(np.cumsum(grad)[: left.size]) / total - 1.0)

    time = np.unique(np.concatenate([lo_u, hi_u[np.isfinite(hi_u)]]))
    sf, sf_left = _turnbull_curves(left, right, mass, time)
    at_risk, events = _expected_counts(left, right, mass, total, time)

    lower = upper = None
    if bootstrap:
        rng = np.random.default_rng(seed)
        draws = np.empty((bootstrap, time.size))
        warm = 0.5 * mass + 0.5 / mass.size  # keep every interval alive so EM can move mass there
        for b in range(bootstrap):
            wb = rng.multinomial(round(total), w / total).astype(float)
            alive = wb > 0
            pb, _, _ = _em_icm(first[alive], last[alive], wb[alive], warm, BOOTSTRAP_TOL, max_iter)
            draws[b] = _turnbull_curves(left, right, pb, time)[0]
        tail = (1.0 - confidence) / 2.0
        lower, upper = np.quantile(draws, [tail, 1.0 - tail], axis=0)

    return Turnbull(
        left=left,
        right=right,
        mass=mass,
        time=time,
        sf=sf,
        sf_left=sf_left,
        lower=lower,
        upper=upper,
        at_risk=at_risk,
        events=events,
        n_units=float(total),
        log_likelihood=log_likelihood,
        iterations=iterations,
        converged=converged,
        kkt_gap=kkt_gap,
        confidence=confidence,
        bootstrap=bootstrap,
        seed=seed,
    )


def _turnbull_curves(
    left: np.ndarray, right: np.ndarray, mass: np.ndarray, time: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """S just after each time with mass at right ends, and with mass at left ends.

    With mass at right ends an interval (l, r] has failed by t when r <= t; with mass at
    left ends, when l <= t (the limit just after l). A point [t, t] has failed by t in both.
    """
    cum = np.concatenate([[0.0], np.cumsum(mass)])
    at_right = 1.0 - cum[np.searchsorted(right, time, side="right")]
    at_left = 1.0 - cum[np.searchsorted(left, time, side="right")]
    return np.clip(at_right, 0.0, 1.0), np.clip(at_left, 0.0, 1.0)


def _expected_counts(
    left: np.ndarray, right: np.ndarray, mass: np.ndarray, total: float, time: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Expected failures at each time (mass at right ends) and units at risk just before it."""
    idx = np.searchsorted(time, np.where(np.isfinite(right), right, np.inf))
    events = np.zeros(time.size + 1)
    np.add.at(events, idx, mass * total)
    events = events[:-1]
    before = total * (1.0 - np.concatenate([[0.0], np.cumsum(mass)]))
    at_risk = before[np.searchsorted(right, time, side="left")]
    return at_risk, events
