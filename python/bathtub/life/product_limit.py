"""Kaplan–Meier (product-limit) estimate with Greenwood bounds, for exact and
right-censored data; conventions in `bathtub.life.nonparametric`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from bathtub import inference
from bathtub.errors import InputError
from bathtub.life.step_estimates import (
    check_confidence,
    check_counts,
    check_time,
    check_times,
    finite_or_none,
    first_at_or_below,
    model_record,
    point_record,
    step_area,
    step_curves,
    step_value,
)

CiMethod = Literal["log-log", "plain"]


# ----------------------------------------------------------------------- Kaplan–Meier


@dataclass(frozen=True)
class KaplanMeier:
    """Kaplan–Meier estimate at each distinct observed time (failure or suspension).

    Arrays are aligned: `time` (in the data's unit), `sf` the estimate of S(t) = P(T > t)
    just after t, `variance` Greenwood's (NaN where sf = 0), `lower`/`upper` pointwise
    bounds at `confidence` by `ci`, `at_risk` units at risk just before t, `events`
    failures at t, `censored` suspensions at t.
    """

    time: np.ndarray
    sf: np.ndarray
    variance: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    at_risk: np.ndarray
    events: np.ndarray
    censored: np.ndarray
    confidence: float
    ci: CiMethod
    method: str = field(default="kaplan_meier")

    @property
    def n(self) -> int:
        return round(float(self.events.sum() + self.censored.sum()))

    @property
    def horizon(self) -> float:
        """Last observed time: the end of what the data can say."""
        return float(self.time[-1])

    @property
    def median(self) -> float | None:
        return first_at_or_below(self.time, self.sf, 0.5)

    @property
    def b10(self) -> float | None:
        return first_at_or_below(self.time, self.sf, 0.9)

    @property
    def restricted(self) -> bool:
        """True when the curve does not reach 0, so MTTF is a restricted mean."""
        return bool(self.sf[-1] > 0.0)

    @property
    def mttf(self) -> float:
        return step_area(self.time, self.sf, self.horizon)

    def reliability_at(self, t: float) -> dict[str, Any]:
        """S(t), F(t), -ln S(t) at one time t >= 0 (hazard and density are null, with why)."""
        t = check_time(t)
        return point_record(t, float(step_value(self.time, self.sf, np.array([t]))[0]))

    def curves(self) -> dict[str, Any]:
        """Whole curves {x, sf, ff, hf, Hf, df} for plotting as a post-step."""
        return step_curves(self.time, self.sf)

    def to_record(self) -> dict[str, Any]:
        """The spec's model record fields for a non-parametric model, plus the curve."""
        curve = {
            "time": self.time.tolist(),
            "sf": self.sf.tolist(),
            "lower": self.lower.tolist(),
            "upper": self.upper.tolist(),
            "variance": finite_or_none(self.variance),
            "at_risk": self.at_risk.tolist(),
            "events": self.events.tolist(),
            "censored": self.censored.tolist(),
        }
        metrics = {"median": self.median, "mttf": self.mttf, "b10": self.b10}
        extra = {
            "confidence": self.confidence,
            "ci": self.ci,
            "mttf_horizon": self.horizon,
            "restricted": self.restricted,
        }
        return model_record(self.method, self.n, metrics, curve, extra)

def _runs(sorted_times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of a sorted array and how often each occurs."""
    if sorted_times.size == 0:
        return sorted_times, np.zeros(0)
    starts = np.concatenate([[0], np.flatnonzero(sorted_times[1:] != sorted_times[:-1]) + 1])
    return sorted_times[starts], np.diff(np.append(starts, sorted_times.size)).astype(float)


def _tally_unweighted(times: np.ndarray, failed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct times with failures and suspensions at each, one unit per row.

    Two value sorts and a merge of two sorted runs (linear for timsort) instead of
    `np.unique(return_inverse=True)`'s argsort of every row: 2-3x faster on logs with ties.
    """
    tf, nf = _runs(np.sort(times[failed]))
    tc, nc = _runs(np.sort(times[~failed]))
    both = np.concatenate([tf, tc])
    order = np.argsort(both, kind="stable")
    merged = both[order]
    new = np.ones(merged.size, dtype=bool)
    np.not_equal(merged[1:], merged[:-1], out=new[1:])
    group = np.cumsum(new) - 1
    weight = np.concatenate([nf, nc])[order]
    is_failure = order < tf.size
    size = int(group[-1]) + 1
    events = np.bincount(group, weights=weight * is_failure, minlength=size)
    censored = np.bincount(group, weights=weight * ~is_failure, minlength=size)
    return merged[new], events, censored


def greenwood_bounds(
    sf: np.ndarray, greenwood_sum: np.ndarray, confidence: float, ci: CiMethod
) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise bounds on S from the Greenwood sum sum d/(r(r-d)).

    `log-log`: exp(-exp(log(-log S) ± z·sqrt(sum)/|log S|)), lifelines' interval.
    `plain`: S ± z·S·sqrt(sum) clipped to [0, 1], reliability's (and Minitab's) interval.
    Both are [1, 1] where S = 1 and [0, 0] where S = 0.
    """
    z = inference.z(confidence)
    lower = np.ones_like(sf)
    upper = np.ones_like(sf)
    inner = (sf > 0.0) & (sf < 1.0)
    s, g = sf[inner], greenwood_sum[inner]
    if ci == "log-log":
        v = np.log(s)
        w = z * np.sqrt(g) / -v
        lower[inner] = np.exp(-np.exp(np.log(-v) + w))
        upper[inner] = np.exp(-np.exp(np.log(-v) - w))
    elif ci == "plain":
        half = z * s * np.sqrt(g)
        lower[inner] = np.clip(s - half, 0.0, 1.0)
        upper[inner] = np.clip(s + half, 0.0, 1.0)
    else:
        raise InputError("ci", "must be 'log-log' or 'plain'")
    zero = sf <= 0.0
    lower[zero] = 0.0
    upper[zero] = 0.0
    return lower, upper


def kaplan_meier(
    x: Sequence[float] | np.ndarray,
    c: Sequence[int] | np.ndarray | None = None,
    n: Sequence[float] | np.ndarray | None = None,
    *,
    confidence: float = 0.95,
    ci: CiMethod = "log-log",
) -> KaplanMeier:
    """Kaplan–Meier estimate of S(t) for exact failures with right censoring.

    x: times >= 0 (any unit); c: 0 = failure, 1 = right-censored (default all failures);
    n: whole counts per row (default 1). Left- or interval-censored rows belong to
    `turnbull`. `confidence` is the two-sided level of the pointwise bounds, `ci` their
    construction ("log-log", lifelines'; "plain", reliability's).
    """
    times = check_times(x, "x")
    if times.size == 0:
        raise InputError("x", "needs at least one observation")
    if c is None:
        codes = np.zeros(times.size)
    else:
        if np.asarray(c).dtype == bool:
            # lifelines' event flag means the opposite (True = failed): refuse rather than guess.
            raise InputError("c", "must be numeric codes 0 (failure) / 1 (right-censored), not booleans")
        try:
            codes = np.asarray(c, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InputError("c", "must be an array of censoring codes (0 failure, 1 right-censored)") from exc
        if codes.shape != times.shape:
            raise InputError("c", f"must have one code per row ({times.size})")
        bad = (codes != 0) & (codes != 1)
        if bad.any():
            i = int(np.argmax(bad))
            rule = "must be 0 (failure) or 1 (right-censored)"
            if codes[i] in (-1, 2):
                rule += "; left- and interval-censored data need the Turnbull estimate"
            raise InputError(f"c[{i}]", rule)
    counts = check_counts(n, times.size)
    confidence = check_confidence(confidence)
    if ci not in ("log-log", "plain"):
        raise InputError("ci", "must be 'log-log' or 'plain'")

    failed = codes == 0
    if n is None:
        time, events, censored = _tally_unweighted(times, failed)
    else:
        time, inverse = np.unique(times, return_inverse=True)
        events = np.bincount(inverse, weights=counts * failed, minlength=time.size)
        censored = np.bincount(inverse, weights=counts * ~failed, minlength=time.size)
    leaving = events + censored
    at_risk = leaving.sum() - np.concatenate([[0.0], np.cumsum(leaving)[:-1]])
    with np.errstate(divide="ignore", invalid="ignore"):
        # Where r = d the curve reaches 0 and Greenwood's term is infinite: variance undefined.
        ratio = np.where(at_risk > 0, 1.0 - events / at_risk, 1.0)
        sf = np.cumprod(ratio)
        term = np.where(events > 0, events / (at_risk * (at_risk - events)), 0.0)
        greenwood_sum = np.cumsum(term)
        variance = np.where(sf > 0, sf**2 * greenwood_sum, np.nan)
    lower, upper = greenwood_bounds(sf, greenwood_sum, confidence, ci)
    return KaplanMeier(
        time=time,
        sf=sf,
        variance=variance,
        lower=lower,
        upper=upper,
        at_risk=at_risk,
        events=events,
        censored=censored,
        confidence=confidence,
        ci=ci,
    )
