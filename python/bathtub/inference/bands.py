"""Pointwise delta-method bands of a positive curve of the parameters (a hazard rate h(t)).

The band lives on the log scale, ln f(t; theta) -/+ z sqrt(g' Sigma g) with g the gradient of
ln f in theta, so it never crosses 0 — the rule the parameter rows apply to positive values.
The gradient is by central differences with a step relative to each parameter and to its
standard error, so it is scale-true whatever the unit of time.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from bathtub.inference.rows import z


def log_delta_band(
    curve: Callable[[np.ndarray], np.ndarray], theta: np.ndarray, cov: np.ndarray, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(value, lower, upper) of the positive curve `curve(theta)` (an array over t) with its
    two-sided pointwise `confidence` band; `cov` is theta's covariance. Where the curve is not
    positive and finite, or its variance is not finite, the limits are nan."""
    theta = np.asarray(theta, dtype=float)
    sigma = np.asarray(cov, dtype=float)
    with np.errstate(all="ignore"):
        base = np.asarray(curve(theta), dtype=float)
        grad = np.empty((theta.size, base.size))
        for k in range(theta.size):
            h = 1e-5 * max(abs(theta[k]), math.sqrt(max(sigma[k, k], 0.0)), 1e-300)
            up, down = theta.copy(), theta.copy()
            up[k] += h
            down[k] -= h
            grad[k] = (np.log(np.asarray(curve(up), float)) - np.log(np.asarray(curve(down), float))) / (2 * h)
        var = np.einsum("in,ij,jn->n", grad, sigma, grad)
        half = z(confidence) * np.sqrt(np.maximum(var, 0.0))
        ok = (base > 0) & np.isfinite(base) & np.isfinite(var)
        lower = np.where(ok, base * np.exp(-half), np.nan)
        upper = np.where(ok, base * np.exp(half), np.nan)
    return base, lower, upper
