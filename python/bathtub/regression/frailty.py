"""Weibull proportional hazards with a shared gamma frailty, fitted by its marginal likelihood.

Unit j of group i has hazard Z_i·h0(t)·e^{x b}, with h0 Weibull: H0(t) = e^{c}·t^ρ (so the
`alpha` of the record is e^{−c/ρ}), and the group's frailty Z_i ~ Gamma(mean 1, variance θ)
shared by its units. Given Z the units are independent; integrating Z out in closed form (the
gamma Laplace transform and its derivatives) gives each group's marginal likelihood

    L_i = ∏_{events} h0(t)e^{xb} · E[Z^{d_i} e^{−Z H_i}]
        = ∏_{events} h0(t)e^{xb} · ∏_{k<d_i}(1 + kθ) · (1 + θH_i)^{−(1/θ + d_i)}

with d_i the group's failures and H_i = Σ_j H0(t_ij)e^{x_ij b}. θ → 0 is the Weibull PH model
(L_i → ∏ h·e^{−H_i}); θ = 0 is the boundary of the parameter space, so the test of θ = 0 is the
likelihood ratio against weibull_ph referred to ½χ²₀ + ½χ²₁.

The fit maximises the marginal log-likelihood over (c, log ρ, b, log θ) with its analytic
gradient (BFGS from the Weibull PH fit), polishes with Newton steps on the Hessian of central
differences of that gradient, and reports standard errors from its inverse (delta method for α,
ρ and θ). Population-averaged (marginal) survival is S(t|x) = (1 + θH0(t)e^{xb})^{−1/θ}.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from bathtub.errors import InputError
from bathtub.inference import Stage, maximise
from bathtub.regression import cox, parametric

THETA_FLOOR = 1e-7  # below this the fitted frailty variance is the boundary θ = 0
THETA_MAX = 1e4  # above this the frailty variance is running off (groups that separate failures)


@dataclass(frozen=True, eq=False)
class WeibullFrailtyFit:
    c: float  # log of H0's scale at every covariate 0: H0(t) = e^c t^rho
    rho: float  # Weibull shape
    b: np.ndarray  # log hazard ratios (conditional on the frailty)
    theta: float  # frailty variance (0 at the boundary)
    cov: np.ndarray  # covariance of (c, log ρ, b, log θ); the last row/column absent at the boundary
    loglik: float  # marginal log-likelihood
    loglik_ph: float  # the Weibull PH model (θ = 0) of the same covariates
    loglik0: float  # no covariates, frailty free
    n: int
    n_events: int
    n_groups: int
    iterations: int
    boundary: bool  # θ̂ on the boundary 0: the fit is the Weibull PH fit


def group_codes(group: np.ndarray | list[object], field: str = "mapping.group") -> tuple[np.ndarray, list[str]]:
    """Integer code per row and the group labels; at least 2 groups."""
    labels = np.array([str(v) for v in group], dtype=object)
    levels, codes = np.unique(labels, return_inverse=True)
    if levels.size < 2:
        raise InputError(field, f"every row is in one group ({levels[0]!r}): a shared frailty needs at least 2 "
                                "groups to tell their variation from the baseline")
    return codes.astype(np.int64), [str(v) for v in levels]


def _dtheta_term(theta: float, h: np.ndarray) -> np.ndarray:
    """d/dθ of −(1/θ)·log(1 + θH): log1p(θH)/θ² − H/(θ(1+θH)), by its series where θH is small."""
    x = theta * h
    small = x < 1e-3
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = np.log1p(x) / theta**2 - h / (theta * (1 + x))
    series = np.zeros_like(h)
    for m in range(6, 1, -1):  # Σ_{m≥2} (−1)^m θ^{m−2} H^m (m−1)/m
        series = series + (-1) ** m * theta ** (m - 2) * h**m * (m - 1) / m
    return np.where(small, series, direct)


def group_terms(theta: float, h: np.ndarray, d: np.ndarray) -> tuple[float, np.ndarray, float]:
    """Σ_i log E[Z^{d_i} e^{−Z H_i}] for Z ~ Gamma(1, θ), its derivative in each H_i, and in θ."""
    if theta <= 0:
        return float(-h.sum()), -np.ones_like(h), float(0.5 * np.sum((d - h) ** 2 - d))
    dmax = int(d.max()) if d.size else 0
    k = np.arange(dmax)
    # Σ_{k<d} log(1 + kθ) per group, from the cumulative sum over k
    cum = np.concatenate([[0.0], np.cumsum(np.log1p(k * theta))])
    cumk = np.concatenate([[0.0], np.cumsum(k / (1 + k * theta))])
    di = d.astype(np.int64)
    lg = np.log1p(theta * h)
    value = float(np.sum(cum[di] - (1 / theta + d) * lg))
    dh = -(1 + d * theta) / (1 + theta * h)
    dth = float(np.sum(cumk[di] + _dtheta_term(theta, h) - d * h / (1 + theta * h)))
    return value, dh, dth


@dataclass(frozen=True, eq=False)
class _Data:
    x: np.ndarray  # centred covariates
    logt: np.ndarray
    event: np.ndarray
    codes: np.ndarray
    d: np.ndarray  # failures per group
    q: int


def _negll(par: np.ndarray, data: _Data) -> tuple[float, np.ndarray]:
    p = data.x.shape[1]
    c, log_rho, b, log_theta = par[0], par[1], par[2:2 + p], par[2 + p]
    if not (abs(log_rho) < 700 and log_theta < 700):
        return math.inf, np.zeros_like(par)  # an optimiser's trial step far off: rejected
    rho = math.exp(log_rho)
    theta = math.exp(log_theta)
    log_h = c + rho * data.logt + (data.x @ b if p else 0.0)
    hij = np.exp(log_h)
    hi = np.bincount(data.codes, hij, data.q)
    gv, gh, gth = group_terms(theta, hi, data.d)
    ev = data.event
    ll = float(np.sum(np.where(ev, log_rho - data.logt + log_h, 0.0))) + gv
    a = ev + gh[data.codes] * hij  # ∂ℓ/∂log H_ij
    grad = np.concatenate([[a.sum(), ev.sum() + rho * float(a @ data.logt)], data.x.T @ a if p else [],
                           [theta * gth]])
    return -ll, -grad


def _loglik(par: np.ndarray, data: _Data) -> tuple[float, np.ndarray]:
    v, g = _negll(par, data)
    return -v, -g


def _maximise(data: _Data, start: np.ndarray, field: str) -> tuple[np.ndarray, float, int]:
    best = None
    for log_theta in (math.log(0.5), math.log(0.05), math.log(2.0)):
        par0 = np.concatenate([start, [log_theta]])
        res = maximise(_loglik, par0, args=(data,), grad=True,
                       stages=(Stage("BFGS", {"gtol": 1e-8, "maxiter": 3000}),), covariance=False)
        if best is None or res.log_likelihood > best.log_likelihood:
            best = res
    assert best is not None
    par = best.estimate
    iterations = best.iterations
    if math.exp(par[-1]) < THETA_FLOOR:
        return par, best.log_likelihood, iterations
    hess = parametric.gradient_hessian(_negll, par, (data,))
    for _ in range(30):  # Newton polish to the maximum itself
        grad = _negll(par, data)[1]
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            break
        new = par - step
        if not _negll(new, data)[0] <= _negll(par, data)[0] + 1e-12 * abs(best.log_likelihood):
            break
        par = new
        hess = parametric.gradient_hessian(_negll, par, (data,))
        iterations += 1
        if np.max(np.abs(step)) < 1e-10:
            break
    value, grad = _negll(par, data)
    if not np.all(np.isfinite(par)) or not math.isfinite(value):
        raise InputError(field, "the marginal likelihood did not converge")
    return par, -value, iterations


def fit_weibull_frailty(x: np.ndarray, stop: np.ndarray, event: np.ndarray, group: np.ndarray | list[object],
                        field: str = "covariates") -> WeibullFrailtyFit:
    """Maximum marginal likelihood Weibull PH with a shared gamma frailty per group."""
    x = np.asarray(x, dtype=float)
    stop = np.asarray(stop, dtype=float)
    event = np.asarray(event, dtype=bool)
    codes, levels = group_codes(group)
    if np.any(stop <= 0):
        raise InputError("mapping.x", "weibull_frailty needs every time > 0")
    if int(event.sum()) < 2:
        raise InputError("mapping.c", "weibull_frailty needs at least 2 failures")
    n, p = x.shape
    means = x.mean(axis=0)
    xc = x - means
    q = len(levels)
    d = np.bincount(codes, event.astype(float), q)
    data = _Data(xc, np.log(stop), event, codes, d, q)
    # trial steps of the optimisers may overflow e^{log H}; they are rejected, not errors
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        ph = parametric.fit_parametric("weibull_ph", xc, stop, event, None, field)
        # survreg's (μ, σ, γ) as log H = (log t − μ − xγ)/σ: c = −μ/σ, ρ = 1/σ, b = −γ/σ
        start = np.concatenate([[-ph.mu / ph.sigma, -math.log(ph.sigma)], -ph.gamma / ph.sigma])
        par, ll, iterations = _maximise(data, start, field)
        null = _Data(np.empty((n, 0)), data.logt, event, codes, d, q)
        _, ll0, _ = _maximise(null, start[:2], field)
    ll0 = max(ll0, ph.loglik0)  # the null model's own boundary is the Weibull without covariates
    boundary = math.exp(par[-1]) < THETA_FLOOR or ll <= ph.loglik + 1e-10 * abs(ph.loglik)
    if boundary:
        par = np.concatenate([start, [-math.inf]])
        ll = ph.loglik
        jac = np.zeros((p + 2, p + 2))  # survreg's (μ, log σ, γ) → (c, log ρ, b)
        jac[0, 0], jac[0, 1] = -1 / ph.sigma, ph.mu / ph.sigma
        jac[1, 1] = -1.0
        jac[2:, 1] = ph.gamma / ph.sigma
        jac[2:, 2:] = -np.eye(p) / ph.sigma
        cov = jac @ ph.cov @ jac.T
    else:
        if math.exp(par[-1]) > THETA_MAX:
            raise InputError("mapping.group", "the frailty variance runs off to infinity (groups that almost "
                                              "separate failures from survivors); fewer, larger groups may help")
        with np.errstate(over="ignore", invalid="ignore"):
            hess = parametric.gradient_hessian(_negll, par, (data,))
        try:
            cov = np.linalg.inv(hess)
        except np.linalg.LinAlgError:
            raise InputError(field, "the information matrix is singular at the fit") from None
        if not np.all(np.isfinite(cov)) or np.any(np.diag(cov) <= 0):
            raise InputError(field, "the marginal likelihood has no maximum (a covariate that separates failures "
                                    "from survivors?)")
    # a coefficient running off (monotone likelihood), by the Cox fit's rule
    sd = np.sqrt(np.mean(xc**2, axis=0))
    spread = np.maximum(np.abs(par[2:2 + p]) * sd / cox.SEPARATION, np.sqrt(np.diag(cov))[2:2 + p] * sd /
                        cox.SE_SEPARATION) if p else np.zeros(0)
    if p and float(spread.max()) > 1.0:
        worst = int(np.argmax(spread))
        raise InputError(field, f"covariate {worst + 1} of the design separates failures from survivors (monotone "
                                "likelihood): its coefficient runs to infinity; drop it or merge its levels")
    # back to uncentred covariates: c_raw = c − means·b
    k = cov.shape[0]
    jac = np.eye(k)
    jac[0, 2:2 + p] = -means
    raw = par.copy()
    raw[0] = par[0] - float(means @ par[2:2 + p])
    cov = jac @ cov @ jac.T
    return WeibullFrailtyFit(float(raw[0]), math.exp(raw[1]), raw[2:2 + p].copy(),
                             0.0 if boundary else math.exp(raw[-1]), (cov + cov.T) / 2, ll, ph.loglik, ll0, n,
                             int(event.sum()), q, iterations, boundary)


def marginal_loglik(c: float, rho: float, b: np.ndarray, theta: float, x: np.ndarray, stop: np.ndarray,
                    event: np.ndarray, codes: np.ndarray) -> float:
    """The marginal log-likelihood at given parameters (uncentred covariates)."""
    q = int(codes.max()) + 1
    d = np.bincount(codes, event.astype(float), q)
    data = _Data(np.asarray(x, float), np.log(stop), np.asarray(event, bool), codes, d, q)
    par = np.concatenate([[c, math.log(rho)], b, [math.log(theta) if theta > 0 else -math.inf]])
    if theta <= 0:
        log_h = c + rho * data.logt + (data.x @ b if b.size else 0.0)
        return float(np.sum(np.where(data.event, math.log(rho) - data.logt + log_h, 0.0)) - np.exp(log_h).sum())
    return -_negll(par, data)[0]


def marginal_survival(c: float, rho: float, theta: float, eta: float, t: np.ndarray) -> np.ndarray:
    """Population-averaged S(t|x) = (1 + θ·H0(t)e^{xb})^{−1/θ} (e^{−H} at θ = 0)."""
    with np.errstate(divide="ignore"):
        h = np.exp(c + eta + rho * np.log(np.maximum(t, 0.0)))
    if theta <= 0:
        return np.exp(-h)
    return np.exp(-np.log1p(theta * h) / theta)


def marginal_hazard_density(c: float, rho: float, theta: float, eta: float,
                            t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Population-averaged hazard h0e^{xb}/(1 + θH) and density h·S at t > 0."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        h_cum = np.exp(c + eta + rho * np.log(t))
        hz = rho / t * h_cum / (1 + theta * h_cum)
    s = marginal_survival(c, rho, theta, eta, t)
    return hz, hz * s


def quantile(c: float, rho: float, theta: float, eta: float, q: float) -> float:
    """t with marginal failure probability q."""
    s = 1.0 - q
    h = -math.log(s) if theta <= 0 else float(special.expm1(-theta * math.log(s)) / theta)
    return math.exp((math.log(h) - c - eta) / rho)
