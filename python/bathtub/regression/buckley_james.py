"""Buckley–James semi-parametric accelerated failure time regression.

log T = α + xβ + ε with ε of unknown distribution. Each censored log time is replaced by its
conditional expectation under the Kaplan–Meier estimate of the residual distribution,

    ŷ_i = x_iβ + Σ_{e_k > e_i} e_k ΔF̂(e_k) / Ŝ(e_i),   e = log t − xβ,

and (α, β) is refitted by least squares on the completed data, until the estimate repeats
(Buckley & James 1979; Miller & Halpern 1982; the algorithm of R's `rms::bj`). The largest
residual is taken as a failure so the estimated residual distribution has total mass 1
(Efron's tail convention); tied residuals count failures before censorings.

Convergence: the Kaplan–Meier imputation is a step function of β, so the iteration either
reaches a fixed point (β repeats to 1e-9 relative to the slopes) or is drawn into a cycle (an
iterate returns to within that of an earlier one; cycles of 20 and more steps occur under heavy
censoring). A cycle's estimate is the mean over the cycle (as `rms::bj`), and the fit says so
(`cycle`, its length); neither within `MAX_ITER` steps is a refusal.

Standard errors: `se` is Buckley & James's approximate variance σ̂²(X_uᵀX_u)⁻¹ over the failures
(σ̂ from their residuals, d − p − 1 degrees of freedom), as `rms::bj` reports; `boot_se` is the
nonparametric bootstrap over units (a fixed seed), which does not lean on that
approximation, when asked for (`boot` resamples). With no censoring the estimate is ordinary least squares on log t.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bathtub.errors import InputError

MAX_ITER = 1000
REPEAT = 1e-9  # iterates this close (relative to the slopes) are the same point
SEED = 20261123


@dataclass(frozen=True, eq=False)
class BuckleyJamesFit:
    intercept: float
    beta: np.ndarray
    var: np.ndarray  # Buckley–James approximate variance of (intercept, β)
    boot_var: np.ndarray | None  # bootstrap variance of (intercept, β)
    boot_used: int  # resamples that gave a fit
    sigma: float  # residual standard deviation over the failures
    iterations: int
    cycle: int  # 0: a fixed point; else the length of the cycle averaged
    residual_time: np.ndarray  # distinct residuals with Kaplan–Meier mass (ascending)
    residual_surv: np.ndarray  # Ŝ_ε just after each of residual_time
    n: int
    n_events: int


def km_residuals(e: np.ndarray, event: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Order (failures before censorings at ties), the Kaplan–Meier mass of each ordered residual, and
    the survival just after it; the largest residual counts as a failure."""
    state = event.copy()
    state[e == e.max()] = True
    order = np.lexsort((~state, e))
    st = state[order]
    n = e.size
    at_risk = n - np.arange(n)
    # one factor (1 − 1/at_risk) per failure row: over a block of d tied failures (first in their tie)
    # the product is (n_risk − d)/n_risk, Kaplan–Meier's step at that value
    factor = np.where(st, 1.0 - 1.0 / at_risk, 1.0)
    surv = np.cumprod(factor)
    mass = -np.diff(np.concatenate([[1.0], surv]))
    return order, mass, surv


def impute(y: np.ndarray, event: np.ndarray, fitted: np.ndarray) -> np.ndarray:
    """Completed log times: censored rows get fitted + E[ε | ε > e_i] under the residuals' KM."""
    e = y - fitted
    order, mass, surv = km_residuals(e, event)
    es = e[order]
    tail = np.cumsum((mass * es)[::-1])[::-1]  # Σ_{k ≥ j} mass_k e_k in sorted order
    above = np.concatenate([tail[1:], [0.0]])  # strictly after position j
    out = y.copy()
    cond = np.empty_like(y)
    with np.errstate(invalid="ignore", divide="ignore"):
        cond[order] = above / surv
    state = event.copy()
    state[e == e.max()] = True
    cens = ~state
    out[cens] = fitted[cens] + cond[cens]
    return out


def _iterate(xi: np.ndarray, y: np.ndarray, event: np.ndarray,
             start: np.ndarray | None) -> tuple[np.ndarray, int, int]:
    """Buckley–James iterations from `start` (least squares on the observed times when None)."""
    coef = np.linalg.lstsq(xi, y, rcond=None)[0] if start is None else start
    history = np.empty((MAX_ITER + 1, coef.size))
    history[0] = coef
    q, r = np.linalg.qr(xi)
    for it in range(1, MAX_ITER + 1):
        ystar = impute(y, event, xi @ coef)
        new = np.linalg.solve(r, q.T @ ystar)  # least squares by the one QR of the design
        if not np.all(np.isfinite(new)):
            raise InputError("covariates", "the Buckley–James iterations diverged")
        # relative to the slopes: the intercept moves with the time unit, the iteration does not
        tol = REPEAT * (1 + (np.max(np.abs(new[1:])) if new.size > 1 else 0.0))
        same = np.flatnonzero(np.max(np.abs(history[:it] - new), axis=1) <= tol)
        if same.size:
            k = int(same[-1])
            cycle = it - k
            if cycle == 1:
                return new, it, 0
            return history[k:it].mean(axis=0), it, cycle
        history[it] = new
        coef = new
    raise InputError("covariates", f"the Buckley–James iterations neither settled nor cycled in {MAX_ITER} steps")


def fit_buckley_james(x: np.ndarray, stop: np.ndarray, event: np.ndarray, field: str = "covariates",
                      boot: int = 0) -> BuckleyJamesFit:
    """Buckley–James AFT fit on log time with approximate and bootstrap standard errors."""
    x = np.asarray(x, dtype=float)
    stop = np.asarray(stop, dtype=float)
    event = np.asarray(event, dtype=bool)
    n, p = x.shape
    if np.any(stop <= 0):
        raise InputError("mapping.x", "buckley_james needs every time > 0 (it models log time)")
    d = int(event.sum())
    if d < p + 2:
        raise InputError("mapping.c", f"buckley_james needs at least {p + 2} failures for {p} covariates "
                                      f"(has {d})")
    y = np.log(stop)
    xi = np.column_stack([np.ones(n), x])
    try:
        coef, iterations, cycle = _iterate(xi, y, event, None)
    except InputError as exc:
        raise InputError(field, exc.rule) from None
    e = y - xi @ coef
    eu = e[event]
    sigma = math.sqrt(float(np.sum((eu - eu.mean()) ** 2)) / (d - p - 1))
    xu = xi[event]
    try:
        var = np.linalg.inv(xu.T @ xu) * sigma**2
    except np.linalg.LinAlgError:
        raise InputError(field, "the covariates are collinear among the failures") from None
    boot_var, used = _bootstrap(xi, y, event, coef, boot)
    order, mass, surv = km_residuals(e, event)
    keep = mass > 0
    return BuckleyJamesFit(float(coef[0]), coef[1:].copy(), (var + var.T) / 2, boot_var, used, sigma, iterations,
                           cycle, e[order][keep], surv[keep], n, d)


def _bootstrap(xi: np.ndarray, y: np.ndarray, event: np.ndarray, coef: np.ndarray,
               boot: int) -> tuple[np.ndarray | None, int]:
    if boot <= 0:
        return None, 0
    rng = np.random.default_rng(SEED)
    n, k = xi.shape
    draws = []
    for _ in range(boot):
        idx = rng.integers(0, n, n)
        ev = event[idx]
        if ev.sum() < k + 1 or np.linalg.matrix_rank(xi[idx][ev]) < k:
            continue
        try:
            draws.append(_iterate(xi[idx], y[idx], ev, coef)[0])
        except InputError:
            continue
    if len(draws) < max(20, boot // 2):
        return None, len(draws)
    arr = np.array(draws)
    return np.cov(arr, rowvar=False).reshape(k, k), len(draws)


def survival(fit_time: np.ndarray, fit_surv: np.ndarray, intercept: float, eta: float,
             t: np.ndarray) -> np.ndarray:
    """S(t|x) = Ŝ_ε(log t − α − xβ): the residuals' Kaplan–Meier step function, right-continuous."""
    with np.errstate(divide="ignore"):
        r = np.log(np.maximum(t, 0.0)) - intercept - eta
    idx = np.searchsorted(fit_time, r, side="right") - 1
    return np.where(idx >= 0, fit_surv[np.maximum(idx, 0)], 1.0)
