"""The parametric (power-law) MCF: MCF(t) = (t/α)^β fitted by least squares to Nelson's
non-parametric MCF, as the `reliability` package's MCF_parametric and Nelson's plot fit.

The points are the MCF after each recurrence in time order (Nelson's worksheet: at a time where
d events tie, d points M_prev + k/r, k = 1..d). The fit is nonlinear least squares on the MCF
itself, not a line through ln MCF against ln t: the scale the reference fits on, so the two
agree (a log-scale fit weights the early, small MCF values far more). Standard errors are the
least-squares ones, s² (JᵀJ)⁻¹ with s² = SSE/(n - 2) and J the Jacobian at the optimum, and the
two-sided bounds θ·exp(±z·se/θ) (log-scale Wald, so both stay positive).

This is a plot fit: the points are cumulative, so not independent, and the standard errors
understate the uncertainty; crow_amsaa (maximum likelihood on the event times) is the model to
test growth with. β < 1 says events thin out with age, β > 1 that they crowd in.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize

from bathtub.errors import InputError
from bathtub.inference import z as z_of
from bathtub.recurrent import mcf
from bathtub.recurrent.data import EventData

FITTED_POINTS = 200  # points of the stored fitted curve, from 0 to the last end


def recurrence_points(curve: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(t, MCF) after each recurrence: d points at a time where d events tie."""
    time = np.asarray(curve["time"], dtype=float)
    d = np.asarray(curve["events"], dtype=int)
    r = np.asarray(curve["at_risk"], dtype=float)
    before = np.asarray(curve["mcf"], dtype=float) - d / r
    t = np.repeat(time, d)
    k = np.concatenate([np.arange(1, n + 1) for n in d]) if d.size else np.zeros(0)
    return t, np.repeat(before, d) + k / np.repeat(r, d)


def fit_power_law(t: np.ndarray, m: np.ndarray, confidence: float = 0.95) -> dict[str, Any]:
    """Least squares of m = (t/α)^β; {alpha, beta, se, cov, sse, n, ci}. `t` > 0, `m` > 0."""
    n = t.size
    if n < 3:
        raise InputError("data", f"{n} recurrences: the power-law MCF fit needs at least 3 (2 parameters and "
                                 "a residual)")
    lt, lm = np.log(t), np.log(m)
    if np.ptp(lt) == 0:
        raise InputError("data", "every recurrence is at one time: no curve can be fitted")
    slope, icpt = np.polyfit(lt, lm, 1)  # the log-scale line starts the least squares
    beta0 = max(float(slope), 1e-3)
    start = np.array([math.log(float(np.exp(-icpt / beta0))) if np.isfinite(icpt) else float(lt.mean()), beta0])

    # ln α as the unknown keeps α > 0 without bounds; the covariance is taken on (α, β) below
    def resid(p: np.ndarray) -> np.ndarray:
        return np.exp(p[1] * (lt - p[0])) - m

    sol = optimize.least_squares(resid, start, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=10_000)
    la, beta = float(sol.x[0]), float(sol.x[1])
    alpha = math.exp(la)
    pred = np.exp(beta * (lt - la))
    jac = np.column_stack([-pred * beta / alpha, pred * (lt - la)])  # d pred / d(α, β)
    sse = float(np.sum((pred - m) ** 2))
    s2 = sse / (n - 2)
    try:
        cov = s2 * np.linalg.inv(jac.T @ jac)
    except np.linalg.LinAlgError as exc:
        raise InputError("data", "the power-law MCF's least squares is singular at its optimum") from exc
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    z = z_of(confidence)
    ci = [[v * math.exp(-z * s / v), v * math.exp(z * s / v)] for v, s in zip((alpha, beta), se, strict=True)]
    return {"alpha": alpha, "beta": beta, "se": se.tolist(), "cov": cov.tolist(), "sse": sse, "n": n, "ci": ci,
            "confidence": confidence}


def record_body(data: EventData, confidence: float, variance: str) -> dict[str, Any]:
    """What an `mcf_power_law` record adds to the recurrent base: params, growth, both curves."""
    curve = mcf.mcf(data, confidence, variance)
    t, m = recurrence_points(curve)
    fit = fit_power_law(t, m, confidence)
    alpha, beta = fit["alpha"], fit["beta"]
    ends = np.array([s.end for s in data.systems])
    t_end = float(ends.max())
    grid = np.linspace(0.0, t_end, FITTED_POINTS)
    b_lo, b_hi = fit["ci"][1]
    verdict = "improving" if b_hi < 1 else "deteriorating" if b_lo > 1 else "no evidence"
    params = [{"name": name, "value": v, "se": s, "ci": c, "ci_method": "least_squares_log_wald"}
              for name, v, s, c in zip(("alpha", "beta"), (alpha, beta), fit["se"], fit["ci"], strict=True)]
    return {
        "params": params,
        "covariance": {"names": ["alpha", "beta"], "matrix": fit["cov"]},
        "gof": [{"id": "sse", "label": "Sum of squared MCF residuals", "value": fit["sse"]},
                {"id": "residual_se", "label": "Residual standard error of the MCF",
                 "value": math.sqrt(fit["sse"] / (fit["n"] - 2))}],
        "fit_points": fit["n"],
        "method": ("least squares of MCF = (t/alpha)^beta on Nelson's MCF after each recurrence (as reliability's "
                   "MCF_parametric); standard errors s²(JᵀJ)⁻¹, bounds exp(±z se/θ): a plot fit, its intervals "
                   "understate the uncertainty (fit crow_amsaa for likelihood bounds)"),
        "growth": {"verdict": verdict, "on": "beta", "interval": [b_lo, b_hi], "beta": beta,
                   "reading": {"improving": "recurrences thin out with age",
                               "deteriorating": "recurrences crowd in with age",
                               "no evidence": "the interval holds a constant rate"}[verdict]},
        "at": t_end,
        "curve": curve,
        "fitted_curve": {"time": grid.tolist(), "mcf": ((grid / alpha) ** beta).tolist()},
        "metrics": {"mcf_at_end": (t_end / alpha) ** beta},
        "expected_by_system": ((ends / alpha) ** beta).tolist(),
    }
