"""The log-likelihood of a log-location-scale regression on log time, with its gradient and
observed information, and a damped Newton maximiser.

y = ln t, mu = offset + X @ b, z = (y - mu) / sigma. A failure contributes
ln f(z) - ln sigma - y (the density of t, so figures match other tools'), a right-censored
unit ln S(z). Parameters are (b, ln sigma); with `fixed_sigma` (exponential life) only b.
The derivatives are the textbook ones (Meeker & Escobar, *Statistical Methods for
Reliability Data*, app. B): d1 = dl/dz, d2 = d2l/dz2 per unit, chained through
dz/dmu = -1/sigma and dz/dln(sigma) = -z.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from bathtub.errors import InputError

_LOG_2PI = math.log(2.0 * math.pi)


def _sev_terms(z: np.ndarray, fail: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ez = np.exp(z)
    ll = np.where(fail, z - ez, -ez)
    d1 = np.where(fail, 1.0 - ez, -ez)
    return ll, d1, -ez


def _normal_terms(z: np.ndarray, fail: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    log_sf = special.log_ndtr(-z)
    # inverse Mills ratio phi(z)/Phi(-z), through logs so it stays finite far in the tail
    mills = np.exp(-0.5 * z * z - 0.5 * _LOG_2PI - log_sf)
    ll = np.where(fail, -0.5 * z * z - 0.5 * _LOG_2PI, log_sf)
    d1 = np.where(fail, -z, -mills)
    d2 = np.where(fail, -1.0, -mills * (mills - z))
    return ll, d1, d2


def loglik(theta: np.ndarray, y: np.ndarray, fail: np.ndarray, x: np.ndarray, offset: np.ndarray,
           life: str, fixed_sigma: bool) -> tuple[float, np.ndarray, np.ndarray]:
    """(log-likelihood, gradient, Hessian) at theta = (b, [ln sigma])."""
    p = x.shape[1]
    b = theta[:p]
    log_s = 0.0 if fixed_sigma else float(theta[p])
    s = math.exp(log_s)
    z = (y - offset - x @ b) / s
    ll_i, d1, d2 = (_normal_terms if life == "lognormal" else _sev_terms)(z, fail)
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


def newton(theta0: np.ndarray, y: np.ndarray, fail: np.ndarray, x: np.ndarray, offset: np.ndarray, life: str,
           fixed_sigma: bool, max_iter: int = 200) -> tuple[np.ndarray, float, np.ndarray]:
    """Maximise `loglik` from theta0: Newton steps, Levenberg-damped while the Hessian is not
    negative definite or a step does not raise the likelihood. Returns (theta, ll, Hessian)."""
    theta = np.asarray(theta0, dtype=float).copy()
    ll, g, h = loglik(theta, y, fail, x, offset, life, fixed_sigma)
    lam = 0.0
    eye = np.eye(theta.size)
    for _ in range(max_iter):
        while True:
            try:
                np.linalg.cholesky(-(h - lam * eye))
                step = np.linalg.solve(-(h - lam * eye), g)
            except np.linalg.LinAlgError:
                lam = max(1e-6, lam * 10.0)
                continue
            cand = theta + step
            with np.errstate(all="ignore"):  # a wild trial step overflows; it is then refused below
                ll_new, g_new, h_new = loglik(cand, y, fail, x, offset, life, fixed_sigma)
            if math.isfinite(ll_new) and np.isfinite(h_new).all() and ll_new >= ll - 1e-12 * (1.0 + abs(ll)):
                break
            lam = max(1e-6, lam * 10.0)
            if lam > 1e12:
                raise InputError("data", "the ALT likelihood could not be maximised from these data")
        decrement = float(g @ step)
        theta, ll, g, h = cand, ll_new, g_new, h_new
        lam = lam / 10.0 if lam > 1e-6 else 0.0
        if decrement < 1e-12 and float(np.max(np.abs(step))) < 1e-9:
            break
    else:
        raise InputError("data", "the ALT fit did not converge; the data may not identify the model")
    return theta, ll, h
