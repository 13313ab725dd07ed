"""The log-location-scale likelihood in log time, the one both parametric regression and ALT
(a regression on its stress relationship's design) maximise.

y = ln t, mu = offset + X @ b, z = (y - mu) / sigma, with a standard error law: minimum
extreme value ("extreme": Weibull, exponential), "normal" (lognormal) or "logistic"
(loglogistic). A failure contributes ln f0(z) - ln sigma - y (the density of t, so figures
match other tools'), a right-censored unit ln S0(z). The derivatives are the textbook ones
(Meeker & Escobar, *Statistical Methods for Reliability Data*, app. B): d1 = dl/dz,
d2 = d2l/dz2 per unit, chained through dz/dmu = -1/sigma and dz/dln(sigma) = -z.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

_LOG_2PI = math.log(2.0 * math.pi)


def standard_terms(kind: str, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """log f0(z), log S0(z), d log f0/dz, d log S0/dz of the standard error law."""
    if kind == "extreme":
        ez = np.exp(z)
        return z - ez, -ez, 1.0 - ez, -ez
    if kind == "normal":
        log_s = special.log_ndtr(-z)
        # inverse Mills ratio phi(z)/Phi(-z), through logs so it stays finite far in the tail
        log_pdf = -0.5 * z * z - 0.5 * _LOG_2PI
        return log_pdf, log_s, -z, -np.exp(log_pdf - log_s)
    ex = special.expit(z)
    log_s = -np.logaddexp(0.0, z)
    return z + 2 * log_s, log_s, 1.0 - 2.0 * ex, -ex


def unit_terms(kind: str, z: np.ndarray, fail: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per unit: log-likelihood in z (without -ln sigma - y), its first and second z-derivatives."""
    lf, ls, df, ds = standard_terms(kind, z)
    if kind == "extreme":
        d2 = ls  # both d2 ln f0 and d2 ln S0 are -e^z
    elif kind == "normal":
        d2 = np.where(fail, -1.0, ds * (-ds - z))
    else:
        ex = -ds
        d2 = np.where(fail, -2.0 * ex * (1.0 - ex), -ex * (1.0 - ex))
    return np.where(fail, lf, ls), np.where(fail, df, ds), d2


def loglik(theta: np.ndarray, y: np.ndarray, fail: np.ndarray, x: np.ndarray, offset: np.ndarray,
           kind: str, fixed_sigma: bool) -> tuple[float, np.ndarray, np.ndarray]:
    """(log-likelihood, gradient, Hessian) of right-censored log times at theta = (b, [ln sigma])."""
    p = x.shape[1]
    b = theta[:p]
    log_s = 0.0 if fixed_sigma else float(theta[p])
    s = math.exp(log_s)
    z = (y - offset - x @ b) / s
    ll_i, d1, d2 = unit_terms(kind, z, fail)
    nf = float(fail.sum())
    ll = float(ll_i.sum() - nf * log_s - y[fail].sum())
    k = p if fixed_sigma else p + 1
    grad = np.empty(k)
    hess = np.empty((k, k))
    grad[:p] = -(d1 / s) @ x
    hess[:p, :p] = (x * (d2 / (s * s))[:, None]).T @ x
    if not fixed_sigma:
        grad[p] = -(d1 * z).sum() - nf
        cross = ((d2 * z + d1) / s) @ x
        hess[:p, p] = cross
        hess[p, :p] = cross
        hess[p, p] = (z * d1 + z * z * d2).sum()
    return ll, grad, hess
