"""Nelson's non-parametric mean cumulative function (MCF) of recurrent events, with both
variance estimators and their bounds, and the comparison of two populations' MCFs.

At each distinct event time t_j, r_j systems are under observation (end >= t_j) and d_j
events happen; MCF(t) = sum_{t_j <= t} d_j / r_j (Nelson 1988, 2003).

- Nelson's variance, increments taken as uncorrelated: sum_j (1/r_j^2) sum_i (d_ij - d_j/r_j)^2
  over the systems at risk (Nelson 2003, "Recurrent events data analysis", eq. for the
  "naive" estimate);
  At a time where several events tie, that is one term per time. The `per_row` convention
  (ReliaWiki's worked example, the `reliability` package's MCF_nonparametric) lists each event as
  its own row, so it adds one term per event: sum over event rows (r - 1)/r^3, larger at ties
  (by up to ~10% where many of a few systems fail together); without ties both are the same;
- Lawless-Nadeau's robust variance: sum_i [sum_{t_j <= t} delta_i(t_j)/r_j (d_ij - d_j/r_j)]^2
  (Lawless & Nadeau 1995), which keeps each system's own covariance across times.

Bounds are two-sided at `confidence` on the log scale, MCF exp(+-z sqrt(V)/MCF), z the
two-sided normal quantile (1.96 at 95%).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bathtub import inference
from bathtub.errors import InputError
from bathtub.recurrent.data import EventData

VARIANCES = ("nelson", "per_row")  # the naive variance's two conventions at tied times


def mcf(data: EventData, confidence: float = 0.95, variance: str = "nelson") -> dict[str, Any]:
    """{time, mcf, at_risk, events, variance_<v>, lower/upper_<v>, variance_lawless_nadeau,
    lower/upper_lawless_nadeau} at each distinct event time; <v> is `variance` (nelson: one term
    per time; per_row: one term per event row, as ReliaWiki and `reliability`)."""
    if variance not in VARIANCES:
        raise InputError("options.variance", f"must be one of {', '.join(VARIANCES)}")
    ends = np.array([s.end for s in data.systems])
    k = len(data.systems)
    sys_idx = np.concatenate([np.full(s.n, i) for i, s in enumerate(data.systems)])
    times = np.concatenate([s.times for s in data.systems])
    if times.size == 0:
        raise InputError("data", "no events: the MCF is 0")
    order = np.lexsort((sys_idx, times))
    times, sys_idx = times[order], sys_idx[order]
    uniq, first = np.unique(times, return_index=True)
    d = np.diff(np.append(first, times.size)).astype(float)
    r = (k - np.searchsorted(np.sort(ends), uniq, side="left")).astype(float)
    inc = d / r
    m = np.cumsum(inc)
    # Per (time, system) event counts d_ij (several events of one system at one time count).
    pair_t = np.searchsorted(uniq, times)
    keys = pair_t * k + sys_idx
    ukeys, counts = np.unique(keys, return_counts=True)
    pt = ukeys // k
    ps = ukeys % k
    cij = counts.astype(float)
    sum_d2 = np.bincount(pt, weights=cij**2, minlength=uniq.size)
    if variance == "nelson":
        var_naive = np.cumsum((sum_d2 - d**2 / r) / r**2)
    else:
        # each event row on its own: that system 1, the others 0, mean 1/r: ((1-1/r)^2 + (r-1)/r^2)/r^2
        var_naive = np.cumsum(d * (r - 1) / r**3)
    var_ln = _lawless_nadeau(uniq, r, inc, pt, ps, cij, ends)
    z = inference.z(confidence)
    out: dict[str, Any] = {"time": uniq.tolist(), "mcf": m.tolist(), "at_risk": r.astype(int).tolist(),
                           "events": d.astype(int).tolist(), "confidence": confidence, "variance": variance}
    for name, v in ((variance, var_naive), ("lawless_nadeau", var_ln)):
        if k == 1:
            # One system has nothing to compare its counts with: both estimates are 0, not a bound.
            out.update({f"variance_{name}": None, f"lower_{name}": None, f"upper_{name}": None,
                        "bounds_note": "the MCF's variance needs 2 or more systems"})
            continue
        v = np.maximum(v, 0.0)
        f = np.exp(z * np.sqrt(v) / m)
        out[f"variance_{name}"] = v.tolist()
        out[f"lower_{name}"] = (m / f).tolist()
        out[f"upper_{name}"] = (m * f).tolist()
    return out


def _lawless_nadeau(uniq: np.ndarray, r: np.ndarray, inc: np.ndarray, pt: np.ndarray, ps: np.ndarray,
                    cij: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """sum_i C_i(t)^2 with C_i(t) = D_i(t) - W(min(t, end_i)): D_i the running sum of the
    system's own d_ij / r_j, W(t) = sum_{t_j <= t} (d_j / r_j) / r_j. Expanded into running
    sums that change only at events and departures (vectorised, no systems-by-times grid):
    sum D_i^2 - 2 W sum_{at risk} D_i - 2 sum_{gone} D_i W(end_i) + n_at_risk W^2 + sum_{gone} W(end_i)^2."""
    k = ends.size
    m = uniq.size
    w = np.cumsum(inc / r)
    add = cij / r[pt]
    # Each system's running D after each of its events (pairs sorted by system, then time).
    order = np.lexsort((pt, ps))
    s_sys, s_add, s_t = ps[order], add[order], pt[order]
    csum = np.cumsum(s_add)
    first = np.r_[True, s_sys[1:] != s_sys[:-1]]
    base = np.maximum.accumulate(np.where(first, csum - s_add, -np.inf))
    d_after = csum - base
    d_before = d_after - s_add
    sum_d2 = np.cumsum(np.bincount(s_t, weights=2 * d_before * s_add + s_add**2, minlength=m))
    sum_d = np.cumsum(np.bincount(pt, weights=add, minlength=m))
    d_final = np.bincount(ps, weights=add, minlength=k)
    # A system leaves the risk set for every t_j > end_i, its W frozen at W(end_i).
    leave = np.searchsorted(uniq, ends, side="right")
    w_end = np.where(leave > 0, w[np.maximum(leave - 1, 0)], 0.0)
    gone = leave < m
    idx = leave[gone]
    gone_n = np.cumsum(np.bincount(idx, minlength=m))
    gone_d = np.cumsum(np.bincount(idx, weights=d_final[gone], minlength=m))
    gone_dw = np.cumsum(np.bincount(idx, weights=(d_final * w_end)[gone], minlength=m))
    gone_w2 = np.cumsum(np.bincount(idx, weights=(w_end**2)[gone], minlength=m))
    return sum_d2 - 2 * (w * (sum_d - gone_d) + gone_dw) + (k - gone_n) * w * w + gone_w2


def compare(a: EventData, b: EventData, labels: tuple[str, str], confidence: float = 0.95) -> dict[str, Any]:
    """Difference of two populations' MCFs, MCF_a - MCF_b, at every event time of either up to
    the earlier of their last ends, with bounds from the sum of their Lawless-Nadeau variances
    (independent populations): D +- z sqrt(V_a + V_b)."""
    for label, part in zip(labels, (a, b), strict=True):
        if len(part.systems) < 2:
            raise InputError("mapping.group", f"group {label!r} has {len(part.systems)} system: comparing MCFs "
                                              "needs 2 or more systems in each group")
    fa, fb = mcf(a, confidence), mcf(b, confidence)
    horizon = min(max(s.end for s in a.systems), max(s.end for s in b.systems))
    grid = np.union1d(fa["time"], fb["time"])
    grid = grid[grid <= horizon]

    def at(f: dict[str, Any], key: str) -> np.ndarray:
        t = np.asarray(f["time"])
        v = np.asarray(f[key])
        idx = np.searchsorted(t, grid, side="right") - 1
        return np.where(idx >= 0, v[np.maximum(idx, 0)], 0.0)

    diff = at(fa, "mcf") - at(fb, "mcf")
    var = at(fa, "variance_lawless_nadeau") + at(fb, "variance_lawless_nadeau")
    z = inference.z(confidence)
    half = z * np.sqrt(var)
    lower, upper = diff - half, diff + half
    apart = (lower > 0) | (upper < 0)
    where = grid[apart]
    verdict = (f"the MCFs differ (the interval of the difference excludes 0 from t = {where[0]:g})"
               if where.size else "no difference detected at this confidence")
    return {"groups": list(labels), "time": grid.tolist(), "difference": diff.tolist(), "variance": var.tolist(),
            "lower": lower.tolist(), "upper": upper.tolist(), "confidence": confidence,
            "differs_at": where.tolist()[:1000], "verdict": verdict,
            "final": {"time": float(grid[-1]) if grid.size else None,
                      "difference": float(diff[-1]) if grid.size else None,
                      "ci": [float(lower[-1]), float(upper[-1])] if grid.size else None}}


def mcf_at(curve: dict[str, Any], t: np.ndarray) -> np.ndarray:
    """The step MCF at times t (0 before the first event)."""
    time = np.asarray(curve["time"])
    m = np.asarray(curve["mcf"])
    idx = np.searchsorted(time, t, side="right") - 1
    return np.where(idx >= 0, m[np.maximum(idx, 0)], 0.0)


