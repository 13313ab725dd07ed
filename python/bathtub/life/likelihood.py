"""The log-likelihood of life data, its maximiser and its curvature.

ll = sum n log f(x) [exact] + sum n log S(x) [right] + sum n log F(x) [left]
     + sum n log(F(xr) - F(xl)) [interval]; with `zi`, exact failures at t = 0 count log f0.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from bathtub import inference
from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.life.data import LifeData
from bathtub.life.model import ModelSpec


def _wsum(w: np.ndarray, v: np.ndarray) -> float:
    return float(np.multiply(w, v).sum())


def loglik(dist: Lifetime, data: LifeData, f0: float | None = None) -> float:
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
    try:
        return loglik(dist, data, f0)
    except (ValueError, OverflowError, ZeroDivisionError):  # parameters at floating point's edge
        return -math.inf


def data_scale(data: LifeData) -> float:
    """A typical magnitude of the times (scales real-valued parameters for the optimiser)."""
    t = data.all_times()
    # on times divided by the largest, so squares neither overflow (1e300) nor underflow (1e-300)
    # and the scale is exactly k times larger for data k times larger
    top = float(np.max(np.abs(t))) if t.size else 0.0
    if top == 0.0:
        return 1.0
    s = top * float(np.std(t / top)) if t.size > 1 else 0.0
    return s if s > 0 else top


def maximise(
    spec: ModelSpec, data: LifeData, starts: list[np.ndarray], scale: float, tmin: float,
    reject: Callable[[np.ndarray], str | None] | None = None,
) -> tuple[np.ndarray, float]:
    """The MLE over the unconstrained vector: Nelder–Mead from each start, then a BFGS polish.

    Nelder–Mead tolerates the -inf walls (a location past the first failure, a beta sample
    outside [0, 1]); BFGS then converges the gradient so parameters agree with peers to ~1e-7.
    `reject(theta)` names why an end point is no fit (a mixture mode collapsed onto one time,
    where the likelihood is unbounded), or None; rejected end points do not compete, and if
    every start ends rejected the data are refused with the reason.
    """

    def neg(u: np.ndarray) -> float:
        ll = spec_loglik(spec, spec.from_u(u, scale, tmin), data)
        return -ll if math.isfinite(ll) else 1e300

    best_u, best = None, math.inf
    rejected: str | None = None
    for th in starts:
        try:
            u0 = spec.to_u(np.asarray(th, float), scale, tmin)
        except (ValueError, ZeroDivisionError):
            continue
        if not math.isfinite(neg(u0)) or neg(u0) >= 1e300:
            continue
        # the first simplex is the same in every time unit (coordinates move by constants)
        simplex = u0 + np.vstack([np.zeros(len(u0)), 0.1 * np.eye(len(u0))])
        r = inference.maximise(lambda u: -neg(u), u0, covariance=False, stages=(inference.Stage(
            "Nelder-Mead", {"xatol": 1e-9, "fatol": 1e-12, "maxiter": 400 * len(u0), "maxfev": 600 * len(u0),
                            "initial_simplex": simplex}),))
        why = reject(spec.from_u(r.estimate, scale, tmin)) if reject is not None else None
        if why is not None:
            rejected = why
            continue
        if -r.log_likelihood < best:
            best_u, best = r.estimate, -r.log_likelihood
    if best_u is None and rejected is not None:
        raise InputError("modes" if spec.modes > 1 else "data", rejected)
    if best_u is None:
        what = f"a mixture of {spec.modes} {spec.distribution}" if spec.modes > 1 else spec.distribution
        raise InputError("data", f"{what} gives these data zero likelihood at every starting point (times "
                         "too spread, too few distinct, or outside its support): choose another distribution")
    r = inference.maximise(lambda u: -neg(u), best_u, covariance=False,
                           stages=(inference.Stage("BFGS", {"gtol": 1e-9, "maxiter": 500}),))
    if -r.log_likelihood <= best and (reject is None or reject(spec.from_u(r.estimate, scale, tmin)) is None):
        best_u, best = r.estimate, -r.log_likelihood
    return spec.from_u(best_u, scale, tmin), -best


def observed_information(
    fun: Callable[[np.ndarray], float], u: np.ndarray, pilot: float = 1e-3, frac: float = 0.02
) -> np.ndarray | None:
    """-Hessian of a log-likelihood at its maximum u, each step a fraction of that coordinate's sd.

    A step must follow the parameter's own natural scale, not its magnitude: |ln alpha| or a
    location's value says nothing about how sharply the likelihood bends (a lognormal mu of
    ln(1e5) would get a step 10x too wide). So a pilot Hessian (fixed step `pilot` in the
    optimiser's coordinates, which are logs, logits or times over the data's scale) gives each
    coordinate's standard error, and the Hessian is then taken with steps `frac` of it and
    Richardson-extrapolated from steps h and h/2 (error O(h^4)). Steps defined this way are the
    same in every time unit, so the information transforms exactly with the data.
    Returns None when the likelihood is not finite around u.
    """
    u = np.asarray(u, dtype=float)
    k = u.size
    h0 = inference.hessian(fun, u, np.full(k, pilot), diagonal="three_point", nan_if_not_finite=True)
    if not np.all(np.isfinite(h0)):
        return None
    sd = np.full(k, pilot / frac)
    try:
        cov0 = np.linalg.inv(-h0)
        ok = np.all(np.linalg.eigvalsh((cov0 + cov0.T) / 2) > 0)
    except np.linalg.LinAlgError:
        ok = False
    if ok:
        sd = np.sqrt(np.diag(cov0))
    else:  # a flat or saddle direction: each coordinate's own curvature, where it has one
        d = -np.diag(h0)
        sd = np.where(d > 0, 1.0 / np.sqrt(np.where(d > 0, d, 1.0)), sd)
    sd = np.clip(sd, 1e-10, 10.0)
    for shrink in (1.0, 0.1, 0.01):
        h = frac * shrink * sd
        coarse, fine = (inference.hessian(fun, u, step, diagonal="three_point", nan_if_not_finite=True)
                        for step in (h, h / 2))
        if np.all(np.isfinite(coarse)) and np.all(np.isfinite(fine)):
            return -(4.0 * fine - coarse) / 3.0
    return None


def _gradient(fun: Callable[[np.ndarray], float], u: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Central differences with steps h and h/2, Richardson-extrapolated (error O(h^4))."""
    def central(step: np.ndarray) -> np.ndarray:
        g = np.empty(u.size)
        for i in range(u.size):
            e = np.zeros(u.size)
            e[i] = step[i]
            g[i] = (fun(u + e) - fun(u - e)) / (2 * step[i])
        return g

    return (4.0 * central(h / 2) - central(h)) / 3.0


# Newton steps on the observed information, at most 4, never halved: a step that loses more than
# 1e-12 max(1, |ℓ|) stops there; converged once a step is below 1e-9 of each coordinate's sd
POLISH = inference.NewtonRule(max_iter=4, tries=1, accept=1e-12, accept_floor=1.0, exhausted="stop",
                              value_tol=None, step_tol=1e-9, relative_step=False)


def polish(fun: Callable[[np.ndarray], float], u: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Newton steps on the observed information from a maximiser's end point u.

    Direct-search and quasi-Newton ends stop at a tolerance on their own coordinates (~1e-7 of
    a standard error or worse on a flat likelihood); Newton with differences on each
    coordinate's own scale converges quadratically to where the gradient vanishes, in any time
    unit alike. A step longer than one standard error means the point is not near a regular
    maximum (a boundary, a ridge): u is then kept. Returns (u, information at u or None).
    """

    def derivatives(v: np.ndarray, _: object) -> tuple[None, np.ndarray | None]:
        info = observed_information(fun, v)
        return None, None if info is None else -info

    def direction(v: np.ndarray, _: None, hess: np.ndarray | None) -> inference.Direction:
        if hess is None:
            raise inference.Stop("the likelihood is not finite around the point")
        try:
            cov = np.linalg.inv(-hess)
        except np.linalg.LinAlgError:
            raise inference.Stop("the information is singular") from None
        sd2 = np.diag(cov)
        if not np.all(np.isfinite(cov)) or np.any(sd2 <= 0):
            raise inference.Stop("the information is not positive definite")
        sd = np.sqrt(sd2)
        du = cov @ _gradient(fun, v, 1e-3 * sd)
        size = float(np.max(np.abs(du) / sd)) if np.all(np.isfinite(du)) else math.inf
        if size > 1.0:
            raise inference.Stop("a step longer than one standard error")
        return inference.Direction(du, scale=sd)

    m = inference.newton(lambda v: (fun(v), None), np.asarray(u, dtype=float), derivatives=derivatives,
                         direction=direction, rule=POLISH)
    return m.estimate, None if m.hessian is None else -m.hessian
