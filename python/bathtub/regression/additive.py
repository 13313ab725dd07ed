"""Lin and Ying's (1994) additive hazards model: h(t | z) = h0(t) + zβ.

A covariate adds a constant amount to the hazard rate (per unit time), whatever the baseline:
β is an excess failure rate, not a ratio. The estimator is closed form — no iteration:

    β̂ = A⁻¹ b,  A = Σ_i ∫ Y_i(t) (z_i − z̄(t))^{⊗2} dt,  b = Σ_i ∫ (z_i − z̄(t)) dN_i(t),

with z̄(t) the plain mean of z over the risk set. Its variance is Lin–Ying's sandwich
A⁻¹ B A⁻¹, B = Σ_i ∫ (z_i − z̄(t))^{⊗2} dN_i(t). The baseline cumulative hazard is
Λ0(t) = Σ_{t_i ≤ t} dN(t_i)/Y(t_i) − ∫₀ᵗ z̄(s)β ds, so S(t | z) = exp(−Λ0(t) − zβ·t).

The risk set is constant between consecutive observed times, so A is a sum over those gaps
of the gap length times the risk-set scatter matrix: one sort, cumulative sums, O(n·p²).
Counting-process rows (start, stop] enter and leave the risk set at their own times.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bathtub.errors import InputError


@dataclass(frozen=True, eq=False)
class AdditiveFit:
    beta: np.ndarray
    cov: np.ndarray
    times: np.ndarray  # distinct event times
    cumhaz0: np.ndarray  # Λ0 at those times (the step part and the drift up to each)
    grid: np.ndarray  # every change point of the risk set, for Λ0 between event times
    drift: np.ndarray  # ∫₀^grid z̄(s)β ds
    jumps: np.ndarray  # Σ dN/Y up to each event time
    n: int
    n_events: int


def _risk_sums(x: np.ndarray, start: np.ndarray | None, stop: np.ndarray, points: np.ndarray, right_closed: bool,
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unweighted risk-set sums (S0, S1, S2) at each of `points`: rows with start < t ≤ stop
    (right_closed), or rows at risk on the whole gap just after each point (start ≤ t < stop)."""
    side = "right" if right_closed else "left"
    k_stop = np.searchsorted(points, stop, side=side)  # at risk at points[g] for g < k_stop
    g = points.size
    p = x.shape[1]

    def tail(k: np.ndarray, w: np.ndarray) -> np.ndarray:
        return np.cumsum(np.bincount(k, w, g + 1)[::-1])[::-1][1:]

    s0 = tail(k_stop, np.ones(x.shape[0]))
    s1 = np.column_stack([tail(k_stop, x[:, j]) for j in range(p)])
    iu, ju = np.triu_indices(p)
    s2u = np.column_stack([tail(k_stop, x[:, a] * x[:, b]) for a, b in zip(iu, ju)])
    if start is not None:
        k_start = np.searchsorted(points, start, side=side)
        s0 -= tail(k_start, np.ones(x.shape[0]))
        s1 -= np.column_stack([tail(k_start, x[:, j]) for j in range(p)])
        s2u -= np.column_stack([tail(k_start, x[:, a] * x[:, b]) for a, b in zip(iu, ju)])
    s2 = np.zeros((g, p, p))
    s2[:, iu, ju] = s2u
    s2[:, ju, iu] = s2u
    return s0, s1, s2


def fit_additive(x: np.ndarray, stop: np.ndarray, event: np.ndarray, start: np.ndarray | None = None,
                 field: str = "covariates") -> AdditiveFit:
    n = x.shape[0]
    if not event.any():
        raise InputError("mapping.c", "no failures: the additive hazards model needs events")
    means = x.mean(axis=0)
    xc = x - means  # the estimator is invariant to shifts of z; centring keeps the sums well conditioned
    lo = np.zeros(n) if start is None else start
    grid = np.unique(np.concatenate([[0.0] if start is None else [], lo, stop]))
    # gaps (grid[k], grid[k+1]]: the risk set is the rows at risk just after grid[k]
    s0g, s1g, s2g = _risk_sums(xc, start if start is not None else np.full(n, -np.inf), stop, grid[:-1],
                               right_closed=False)
    dt = np.diff(grid)
    live = s0g > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        zbar_g = np.where(live[:, None], s1g / np.where(live, s0g, 1.0)[:, None], 0.0)
    scatter = s2g - np.where(live[:, None, None], np.einsum("gi,gj->gij", s1g, zbar_g), 0.0)
    a = np.einsum("g,gij->ij", dt, scatter)
    times = np.unique(stop[event])
    s0, s1, _ = _risk_sums(xc, start, stop, times, right_closed=True)
    zbar = s1 / s0[:, None]
    k = np.searchsorted(times, stop[event])
    resid = xc[event] - zbar[k]
    b = resid.sum(axis=0)
    bmat = resid.T @ resid
    try:
        beta = np.linalg.solve(a, b)
        ainv = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise InputError(field, "the covariates do not vary within the risk sets: no additive effect to "
                                "estimate") from None
    cov = ainv @ bmat @ ainv
    d = np.bincount(k, minlength=times.size).astype(float)
    jumps = np.cumsum(d / s0)
    # drift ∫₀ᵗ z̄β ds over the gaps, with z̄ of the original (uncentred) covariates: Λ0 is at z = 0
    rate = np.where(live, (zbar_g + means) @ beta, 0.0)
    drift_grid = np.concatenate([[0.0], np.cumsum(rate * dt)])
    drift_times = np.interp(times, grid, drift_grid)
    return AdditiveFit(beta, (cov + cov.T) / 2, times, jumps - drift_times, grid, drift_grid, jumps, n,
                       int(event.sum()))


def baseline_at(fit_grid: np.ndarray, drift: np.ndarray, times: np.ndarray, jumps_at_times: np.ndarray,
                t: np.ndarray) -> np.ndarray:
    """Λ0(t): event jumps up to t minus the drift ∫₀ᵗ z̄β ds (linear between grid points)."""
    idx = np.searchsorted(times, t, side="right") - 1
    jump = np.where(idx >= 0, jumps_at_times[np.maximum(idx, 0)], 0.0)
    return jump - np.interp(t, fit_grid, drift)
