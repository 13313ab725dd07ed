"""One maximiser: a log-likelihood in, the estimate, its covariance (inverse observed
information), the log-likelihood at the maximum and the convergence facts out.

The method policy is the caller's, passed as data, so each model keeps the optimiser settings
its pinned numbers were computed with: a sequence of scipy stages (BFGS, then Nelder-Mead from
where BFGS stopped, L-BFGS-B with bounds, SLSQP with constraints, ...). ALT's damped Newton on
the log-location-scale likelihood runs in the engine (`engine.binding.alt_fit`), which is faster.
Models with an analytic Hessian take Newton steps through `newton.newton`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize

from bathtub.inference.hessian import hessian as fd_hessian


@dataclass(frozen=True, eq=False)
class Maximum:
    """The maximum of a log-likelihood. `covariance` is None when it was not asked for or the
    information is not positive definite there."""

    estimate: np.ndarray
    covariance: np.ndarray | None
    log_likelihood: float
    converged: bool
    iterations: int
    method: str
    message: str = ""
    hessian: np.ndarray | None = field(default=None, repr=False)
    state: Any = field(default=None, repr=False)  # a Newton model's own state at the estimate (newton.py)

    def to_dict(self) -> dict[str, Any]:
        return {"estimate": self.estimate.tolist(),
                "covariance": None if self.covariance is None else self.covariance.tolist(),
                "log_likelihood": self.log_likelihood, "converged": self.converged,
                "iterations": self.iterations, "method": self.method, "message": self.message}


@dataclass(frozen=True)
class Stage:
    """One scipy.optimize.minimize call: `method` with its `options` (and `bounds` or
    `constraints` where the method takes them)."""

    method: str
    options: dict[str, Any] = field(default_factory=dict)
    bounds: Sequence[tuple[float | None, float | None]] | None = None
    constraints: Sequence[dict[str, Any]] = ()


def inverse_information(hess: np.ndarray) -> np.ndarray | None:
    """(-H)^-1 if it is a covariance (finite, positive diagonal), else None."""
    try:
        cov = np.linalg.inv(-hess)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(cov)) or np.any(np.diag(cov) <= 0):
        return None
    return cov


def maximise(loglik: Callable[..., Any], x0: np.ndarray, *, grad: bool = False,
             stages: Sequence[Stage] = (Stage("BFGS"),), args: tuple = (),
             hessian: Callable[[np.ndarray], np.ndarray] | None = None,
             steps: np.ndarray | float | None = None, covariance: bool = True) -> Maximum:
    """Maximise `loglik(x, *args)` from `x0`.

    `grad=True`: `loglik` returns (value, gradient) and the gradient is used (scipy's `jac=True`).
    `stages` run in turn, each from where the previous one stopped. The covariance is the inverse
    of minus the Hessian of `loglik` at the maximum: `hessian(x)` when given, else central
    differences with `steps` (default 1e-4 * max(1, |x|))."""
    if grad:
        def neg(x: np.ndarray, *a: Any) -> tuple[float, np.ndarray]:
            v, g = loglik(x, *a)
            return -v, -np.asarray(g)
    else:
        def neg(x: np.ndarray, *a: Any) -> float:  # type: ignore[misc]
            return -loglik(x, *a)
    x = np.asarray(x0, dtype=float)
    iterations = 0
    res: Any = None
    for st in stages:
        extra: dict[str, Any] = {}
        if st.bounds is not None:
            extra["bounds"] = st.bounds
        if st.constraints:
            extra["constraints"] = list(st.constraints)
        res = optimize.minimize(neg, x, args=args, jac=True if grad else None, method=st.method,
                                options=st.options, **extra)
        x = res.x
        iterations += int(getattr(res, "nit", 0) or 0)
    value = -float(res.fun)
    cov = None
    h = None
    if covariance:
        if hessian is not None:
            h = hessian(x)
        else:
            def scalar(p: np.ndarray) -> float:
                return float(loglik(p, *args)[0] if grad else loglik(p, *args))
            h = fd_hessian(scalar, x, steps if steps is not None else 1e-4 * np.maximum(1.0, np.abs(x)))
        cov = inverse_information(h)
    return Maximum(x, cov, value, bool(res.success), iterations, "+".join(s.method for s in stages),
                   str(res.message), h)
