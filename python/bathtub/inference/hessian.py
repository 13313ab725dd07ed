"""Finite-difference Hessians. Each caller keeps the step rule its pinned numbers were computed
with (relative to the coordinate, with a floor, or fixed); the stencils live here once."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def hessian(f: Callable[[np.ndarray], float], x: np.ndarray, steps: np.ndarray | float, *,
            diagonal: str = "cross", nan_if_not_finite: bool = False) -> np.ndarray:
    """Central-difference Hessian of scalar `f` at `x` with per-coordinate `steps` (k,) or one step.

    Off-diagonal entries use the four-point stencil (f(++) - f(+-) - f(-+) + f(--)) / (4 h_i h_j).
    `diagonal="cross"` uses that stencil on the diagonal too (steps 2h); `"three_point"` uses
    (f(x+h) - 2 f(x) + f(x-h)) / h^2. With `nan_if_not_finite` a non-finite probe gives an all-nan
    matrix (the caller then reports no covariance rather than a wrong one)."""
    x = np.asarray(x, dtype=float)
    k = x.size
    h = np.broadcast_to(np.asarray(steps, dtype=float), (k,))
    out = np.empty((k, k))
    three = diagonal == "three_point"
    f0 = f(x) if three else 0.0
    for i in range(k):
        ei = np.zeros(k)
        ei[i] = h[i]
        if three:
            out[i, i] = (f(x + ei) - 2 * f0 + f(x - ei)) / h[i] ** 2
        for j in range(i) if three else range(i, k):
            ej = np.zeros(k)
            ej[j] = h[j]
            v = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (4 * h[i] * h[j])
            out[i, j] = out[j, i] = v
    if nan_if_not_finite and not np.all(np.isfinite(out)):
        return np.full((k, k), np.nan)
    return out


def hessian_from_gradient(grad: Callable[[np.ndarray], np.ndarray], x: np.ndarray,
                          steps: np.ndarray | float) -> np.ndarray:
    """Central differences of an analytic gradient (2k evaluations), symmetrised."""
    x = np.asarray(x, dtype=float)
    k = x.size
    h = np.broadcast_to(np.asarray(steps, dtype=float), (k,))
    out = np.empty((k, k))
    for j in range(k):
        e = np.zeros(k)
        e[j] = h[j]
        out[:, j] = (grad(x + e) - grad(x - e)) / (2 * h[j])
    return (out + out.T) / 2
