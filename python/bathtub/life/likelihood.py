"""The log-likelihood of life data, its maximiser and its curvature.

ll = sum n log f(x) [exact] + sum n log S(x) [right] + sum n log F(x) [left]
     + sum n log(F(xr) - F(xl)) [interval]; with `zi`, exact failures at t = 0 count log f0.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import optimize

from bathtub.life.data import LifeData
from bathtub.life.dists import Dist
from bathtub.life.model import ModelSpec


def _wsum(w: np.ndarray, v: np.ndarray) -> float:
    return float(np.multiply(w, v).sum())


def loglik(dist: Dist, data: LifeData, f0: float | None = None) -> float:
    """Log-likelihood of `data` under `dist` (f0: the zero-inflation mass, if any)."""
    total = 0.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if data.f.size:
            if f0 is not None:
                zero = data.f == 0
                total += data.fn[zero].sum() * math.log(f0) if zero.any() else 0.0
                total += _wsum(data.fn[~zero], dist.logpdf(data.f[~zero]))
            else:
                total += _wsum(data.fn, dist.logpdf(data.f))
        if data.r.size:
            total += _wsum(data.rn, dist.logsf(data.r))
        if data.lt.size:
            total += _wsum(data.ln, dist.logcdf(data.lt))
        if data.il.size:
            total += _wsum(data.inn, dist.log_interval(data.il, data.ir))
    return total if math.isfinite(total) else -math.inf


def spec_loglik(spec: ModelSpec, theta: np.ndarray, data: LifeData) -> float:
    try:
        dist = spec.build(theta)
    except (ValueError, OverflowError, ZeroDivisionError):
        return -math.inf
    f0 = float(theta[spec.names.index("f0")]) if spec.zi else None
    return loglik(dist, data, f0)


def data_scale(data: LifeData) -> float:
    """A typical magnitude of the times (scales real-valued parameters for the optimiser)."""
    t = data.all_times()
    s = float(np.std(t)) if t.size > 1 else 0.0
    return s if s > 0 else max(float(np.mean(np.abs(t))), 1.0)


def maximise(
    spec: ModelSpec, data: LifeData, starts: list[np.ndarray], scale: float, tmin: float
) -> tuple[np.ndarray, float]:
    """The MLE over the unconstrained vector: Nelder–Mead from each start, then a BFGS polish.

    Nelder–Mead tolerates the -inf walls (a location past the first failure, a beta sample
    outside [0, 1]); BFGS then converges the gradient so parameters agree with peers to ~1e-7.
    """

    def neg(u: np.ndarray) -> float:
        ll = spec_loglik(spec, spec.from_u(u, scale, tmin), data)
        return -ll if math.isfinite(ll) else 1e300

    best_u, best = None, math.inf
    for th in starts:
        try:
            u0 = spec.to_u(np.asarray(th, float), scale, tmin)
        except (ValueError, ZeroDivisionError):
            continue
        if not math.isfinite(neg(u0)) or neg(u0) >= 1e300:
            continue
        r = optimize.minimize(
            neg, u0, method="Nelder-Mead",
            options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 400 * len(u0), "maxfev": 600 * len(u0)},
        )
        if r.fun < best:
            best_u, best = r.x, r.fun
    if best_u is None:
        raise ValueError("no starting point with a finite likelihood")
    r = optimize.minimize(neg, best_u, method="BFGS", options={"gtol": 1e-9, "maxiter": 500})
    if r.fun <= best:
        best_u, best = r.x, r.fun
    return spec.from_u(best_u, scale, tmin), -best


def hessian(fun: Callable[[np.ndarray], float], x: np.ndarray, rel: float = 1e-4) -> np.ndarray:
    """Central-difference Hessian of a scalar function (step relative to |x|, at least `rel`)."""
    x = np.asarray(x, dtype=float)
    k = x.size
    h = rel * np.maximum(np.abs(x), 1.0)
    f0 = fun(x)
    out = np.empty((k, k))
    for i in range(k):
        ei = np.zeros(k)
        ei[i] = h[i]
        out[i, i] = (fun(x + ei) - 2 * f0 + fun(x - ei)) / h[i] ** 2
        for j in range(i):
            ej = np.zeros(k)
            ej[j] = h[j]
            v = (fun(x + ei + ej) - fun(x + ei - ej) - fun(x - ei + ej) + fun(x - ei - ej)) / (4 * h[i] * h[j])
            out[i, j] = out[j, i] = v
    return out
