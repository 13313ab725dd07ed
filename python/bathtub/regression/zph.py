"""Test of proportional hazards from scaled Schoenfeld residuals, as R's `cox.zph` (survival ≥ 3).

For each covariate the model is widened to β_j(t) = β_j + γ_j·g(t), g a transform of time centred
on its mean over the events, and the score test of γ_j = 0 is taken at the fitted β with every β
free (the full information matrix of [x, x·g(t)], not Grambsch–Therneau's one-step approximation).
The global test frees every γ at once. Transforms: `km` (1 − the left-continuous Kaplan–Meier of
all rows, R's default), `identity`, `log`, `rank`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from bathtub.errors import InputError
from bathtub.regression import risksets
from bathtub.regression.risksets import Stratum

TRANSFORMS = ("km", "identity", "log", "rank")


def _km_left(start: np.ndarray | None, stop: np.ndarray, event: np.ndarray, at: np.ndarray) -> np.ndarray:
    """1 − S(t−) of the pooled product-limit estimate (risk set start < t ≤ stop) at times `at`."""
    times = np.unique(stop[event])
    k_stop = np.searchsorted(times, stop, side="right")
    at_risk = np.cumsum(np.bincount(k_stop, minlength=times.size + 1)[::-1])[::-1][1:].astype(float)
    if start is not None:
        k_start = np.searchsorted(times, start, side="right")
        at_risk -= np.cumsum(np.bincount(k_start, minlength=times.size + 1)[::-1])[::-1][1:]
    deaths = np.bincount(np.searchsorted(times, stop[event]), minlength=times.size).astype(float)
    surv = np.cumprod(1.0 - deaths / at_risk)
    before = np.searchsorted(times, at, side="left")  # number of event times < t
    return 1.0 - np.concatenate([[1.0], surv])[before]


def transform_times(transform: str, start: np.ndarray | None, stop: np.ndarray, event: np.ndarray) -> np.ndarray:
    """g(t) at every row's stop time, centred on its mean over the events."""
    if transform == "km":
        g = _km_left(start, stop, event, stop)
    elif transform == "identity":
        g = stop.astype(float)
    elif transform == "log":
        if np.any(stop <= 0):
            raise InputError("options.ph_transform", "log needs every time > 0")
        g = np.log(stop)
    elif transform == "rank":
        g = stats.rankdata(stop)
    else:
        raise InputError("options.ph_transform", f"must be one of {', '.join(TRANSFORMS)}")
    return g - g[event].mean()


def ph_test(strata: list[Stratum], beta: np.ndarray, names: list[str], efron: bool, gtime_rows: np.ndarray,
            ) -> dict[str, Any]:
    """Per-covariate and global score tests of γ = 0 (chi-square, df 1 and p)."""
    p = beta.size
    u = np.zeros(p)
    ibb = np.zeros((p, p))
    ibg = np.zeros((p, p))
    igg = np.zeros((p, p))
    for s in strata:
        _, _, _, t = risksets.evaluate(s, s.x @ beta, efron, hessian=False)
        gt = gtime_rows[s.rows[s.death_pos[s.death_bins]]]  # g at each event time (same for its ties)
        xd_time = np.add.reduceat(s.x_dead, s.death_bins, axis=0)
        resid = xd_time - (t.s1 * t.c1[:, None] - t.d1 * t.c2[:, None])  # Schoenfeld sums per time
        u += gt @ resid
        ibb += risksets.information(s, t, efron)
        ibg += risksets.information(s, t, efron, gt)
        igg += risksets.information(s, t, efron, gt * gt)
    imat = np.block([[ibb, ibg], [ibg.T, igg]])
    if np.linalg.cond(imat) > 1e12:
        return {"unavailable": "the time transform barely varies over the event times (events at one or two "
                               "times?): the test has no information"}
    rows = []
    for j in range(p):
        jj = [*range(p), p + j]
        vec = np.zeros(p + 1)
        vec[-1] = u[j]
        stat = float(vec @ np.linalg.solve(imat[np.ix_(jj, jj)], vec))
        rows.append({"covariate": names[j], "statistic": stat, "df": 1, "p": float(stats.chi2.sf(stat, 1))})
    vec = np.concatenate([np.zeros(p), u])
    stat = float(vec @ np.linalg.solve(imat, vec))
    return {"rows": rows, "global": {"statistic": stat, "df": p, "p": float(stats.chi2.sf(stat, p))}}


def verdict(test: dict[str, Any], transform: str, alpha: float = 0.05) -> dict[str, Any]:
    """The test with a verdict and a plain reading."""
    if "unavailable" in test:
        return {"available": False, "reason": test["unavailable"]}
    bad = [r["covariate"] for r in test["rows"] if r["p"] < alpha]
    gp = test["global"]["p"]
    if gp < alpha or bad:
        verdict_ = "violated"
        title = "Proportional hazards doubtful"
        names = ", ".join(bad) if bad else "no single covariate"
        reading = (f"The effect of {names} changes with time (p < {alpha:g} against a {transform} time transform; "
                   f"global p = {gp:.3g}). A hazard ratio is then an average over time: stratify on that "
                   "covariate, split time, or add its interaction with time.")
    else:
        verdict_ = "holds"
        title = "Proportional hazards hold"
        reading = (f"No covariate's effect drifts with time detectably (every p ≥ {alpha:g}, global p = {gp:.3g}, "
                   f"{transform} time transform): one hazard ratio per covariate describes the data.")
    return {"available": True, "verdict": verdict_, "title": title, "reading": reading, "transform": transform,
            "method": "score test of beta(t) = beta + gamma*g(t) (scaled Schoenfeld residuals), as R's cox.zph",
            **test}
