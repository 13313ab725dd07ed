"""Parametric regression life models as location-scale models in log time (R's `survreg` form).

log T = μ + xγ + σ·ε with ε standard minimum extreme value (Weibull), normal (lognormal) or
logistic (loglogistic). Rows may be left-truncated at `start` (counting-process rows): the
likelihood conditions on survival to `start`.

Weibull read as proportional hazards (`weibull_ph`): h(t|x) = (β/α)(t/α)^{β−1}·e^{xb} with
β = 1/σ, α = e^μ and b = −γ/σ; lognormal and loglogistic are read as accelerated failure time
(`*_aft`): exp(γ) multiplies the time scale (a time ratio).

The fit maximises the log-likelihood with its analytic gradient (BFGS from least squares on the
events), polishes with Newton steps on the Hessian (central differences of that gradient), and
reports standard errors from the inverse Hessian; PH coefficients get theirs by the delta method.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bathtub.errors import InputError
from bathtub.inference import Stage, hessian_from_gradient, maximise, standard_terms

FAMILIES = {"weibull_ph": "extreme", "lognormal_aft": "normal", "loglogistic_aft": "logistic"}


@dataclass(frozen=True, eq=False)
class ParametricFit:
    distribution: str
    mu: float
    sigma: float
    gamma: np.ndarray  # AFT coefficients on log time
    cov: np.ndarray  # covariance of (μ, log σ, γ)
    loglik: float
    loglik0: float  # the same family without covariates
    n: int
    n_events: int
    iterations: int


def _negll(theta: np.ndarray, kind: str, x: np.ndarray, logt: np.ndarray, event: np.ndarray,
           logs: np.ndarray | None) -> tuple[float, np.ndarray]:
    p = x.shape[1]
    mu, log_sigma, gamma = theta[0], theta[1], theta[2:]
    if not abs(log_sigma) < 700:
        return math.inf, np.zeros_like(theta)  # an optimiser's trial step far off: rejected, not an overflow
    sigma = math.exp(log_sigma)
    loc = mu + (x @ gamma if p else 0.0)
    z = (logt - loc) / sigma
    lf, ls, df, ds = standard_terms(kind, z)
    ll = float(np.sum(np.where(event, lf - log_sigma - logt, ls)))
    psi = np.where(event, df, ds)
    g_loc = -psi / sigma  # ∂ℓ/∂loc per row
    g_ls = -psi * z - event  # ∂ℓ/∂log σ per row
    if logs is not None:
        zs = (logs - loc) / sigma
        finite = np.isfinite(zs)
        zs = np.where(finite, zs, -50.0)
        _, lss, _, dss = standard_terms(kind, zs)
        lss, dss = np.where(finite, lss, 0.0), np.where(finite, dss, 0.0)
        ll -= float(lss.sum())
        g_loc += dss / sigma
        g_ls += dss * zs
    grad = np.concatenate([[g_loc.sum(), g_ls.sum()], x.T @ g_loc if p else []])
    return -ll, -grad


def _loglik(theta: np.ndarray, *args: object) -> tuple[float, np.ndarray]:
    v, g = _negll(theta, *args)  # type: ignore[arg-type]
    return -v, -g


def gradient_hessian(f: object, theta: np.ndarray, args: tuple) -> np.ndarray:
    """The Hessian by central differences of an analytic gradient (`f` returns (value, gradient)),
    symmetrised; steps relative to each coordinate, at least 1e-5."""
    return hessian_from_gradient(lambda th: f(th, *args)[1], theta,  # type: ignore[operator]
                                 1e-5 * np.maximum(1.0, np.abs(theta)))


def _maximise(kind: str, x: np.ndarray, logt: np.ndarray, event: np.ndarray, logs: np.ndarray | None,
              field: str) -> tuple[np.ndarray, np.ndarray, float, int]:
    p = x.shape[1]
    ev = event
    design = np.column_stack([np.ones(int(ev.sum())), x[ev]]) if p else np.ones((int(ev.sum()), 1))
    coef, *_ = np.linalg.lstsq(design, logt[ev], rcond=None)
    resid = logt[ev] - design @ coef
    sd = float(np.std(resid)) if resid.size > 1 else 1.0
    theta = np.concatenate([[coef[0], math.log(max(sd, 1e-3))], coef[1:]])
    args = (kind, x, logt, event, logs)
    res = maximise(_loglik, theta, grad=True, args=args, stages=(Stage("BFGS", {"gtol": 1e-9, "maxiter": 2000}),),
                   covariance=False)
    theta = res.estimate
    iterations = res.iterations
    hess = gradient_hessian(_negll, theta, args)
    for _ in range(20):  # Newton polish: BFGS stops on the gradient norm, we want the maximum itself
        grad = _negll(theta, *args)[1]
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            break
        theta = theta - step
        hess = gradient_hessian(_negll, theta, args)
        iterations += 1
        if np.max(np.abs(step)) < 1e-10:
            break
    value, grad = _negll(theta, *args)
    if not np.all(np.isfinite(theta)) or not math.isfinite(value) or np.max(np.abs(grad)) > 1e-3 * (1 + abs(value)):
        raise InputError(field, "the likelihood did not converge (a covariate that separates failures from "
                                "survivors, or too few failures for this model)")
    try:
        cov = np.linalg.inv(hess)
    except np.linalg.LinAlgError:
        raise InputError(field, "the information matrix is singular at the fit") from None
    if np.any(np.diag(cov) <= 0):
        raise InputError(field, "the likelihood has no maximum (a covariate that separates failures from survivors?)")
    return theta, (cov + cov.T) / 2, -value, iterations


def fit_parametric(distribution: str, x: np.ndarray, stop: np.ndarray, event: np.ndarray,
                   start: np.ndarray | None = None, field: str = "covariates") -> ParametricFit:
    """Maximum-likelihood location-scale regression in log time (covariates centred while fitting)."""
    if distribution not in FAMILIES:
        raise InputError("distribution", f"must be one of {', '.join(FAMILIES)}")
    kind = FAMILIES[distribution]
    if np.any(stop <= 0):
        raise InputError("mapping.x", f"{distribution} needs every time > 0")
    if int(event.sum()) < 2:
        raise InputError("mapping.c", f"{distribution} needs at least 2 failures")
    means = x.mean(axis=0)
    xc = x - means
    logt = np.log(stop)
    logs = None
    if start is not None:
        with np.errstate(divide="ignore"):
            logs = np.where(start > 0, np.log(np.maximum(start, 1e-300)), -np.inf)
    theta, cov, ll, iterations = _maximise(kind, xc, logt, event, logs, field)
    _, _, ll0, _ = _maximise(kind, np.empty((x.shape[0], 0)), logt, event, logs, field)
    # back to uncentred covariates: μ_raw = μ_c − means·γ
    k = theta.size
    jac = np.eye(k)
    jac[0, 2:] = -means
    theta_raw = jac @ theta
    cov_raw = jac @ cov @ jac.T
    return ParametricFit(distribution, float(theta_raw[0]), math.exp(theta_raw[1]), theta_raw[2:], cov_raw, ll, ll0,
                         x.shape[0], int(event.sum()), iterations)


def ph_coefficients(fit: ParametricFit) -> tuple[np.ndarray, np.ndarray]:
    """Weibull PH coefficients b = −γ/σ with their covariance (delta method over (μ, log σ, γ))."""
    sigma = fit.sigma
    b = -fit.gamma / sigma
    p = b.size
    jac = np.zeros((p, p + 2))
    jac[:, 1] = fit.gamma / sigma  # ∂(−γ e^{−logσ})/∂logσ = γ/σ
    jac[:, 2:] = -np.eye(p) / sigma
    return b, jac @ fit.cov @ jac.T


def survival(distribution: str, mu: float, sigma: float, eta_aft: np.ndarray, t: np.ndarray) -> np.ndarray:
    """S(t | x) of the family with log-time location mu + xγ and scale sigma, for linear predictors xγ
    (rows) at times t (columns)."""
    kind = FAMILIES[distribution]
    with np.errstate(divide="ignore"):
        z = (np.log(np.maximum(t, 0.0))[None, :] - mu - eta_aft[:, None]) / sigma
    return np.exp(standard_terms(kind, z)[1])


def hazard_density(distribution: str, mu: float, sigma: float, eta_aft: float,
                   t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """h(t|x) and f(t|x) for one linear predictor."""
    kind = FAMILIES[distribution]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (np.log(t) - mu - eta_aft) / sigma
        lf, ls, _, _ = standard_terms(kind, z)
        log_density = lf - math.log(sigma) - np.log(t)
    return np.exp(log_density - ls), np.exp(log_density)
