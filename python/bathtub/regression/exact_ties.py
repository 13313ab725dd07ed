"""Exact treatments of tied event times: the discrete (conditional logistic) likelihood and
Kalbfleisch–Prentice's marginal likelihood.

- `exact` (R's `coxph(ties="exact")`): at a time with d deaths in a risk set R, the term is
  Π_{i∈D} w_i / E_d(R), E_d the elementary symmetric polynomial of degree d of the weights
  (the sum over every d-subset of R of its weight product). E_d and its first two derivatives
  follow Gail, Lubin and Rubinstein's (1981) recursion E_k(m) = E_k(m−1) + w_m E_{k−1}(m−1),
  written as a cumulative sum over m for each k, rescaled at every k so nothing overflows.
- `kalbfleisch-prentice`: the probability that the d deaths come first, in any order, among the
  risk set (the marginal likelihood of the ranks for continuous time with grouped recording):
  L = ∫₀^∞ e^{−v} Π_{i∈D} (1 − e^{−r_i v}) dv, r_i = w_i / Σ_{j∈R∖D} w_j. The integral and its
  gradient come from adaptive quadrature (`scipy.integrate.quad_vec`); the Hessian is a
  central difference of that gradient.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate

from bathtub.regression.risksets import Stratum


def _groups(s: Stratum) -> list[tuple[np.ndarray, np.ndarray]]:
    """(risk-set rows, death rows) per event time."""
    out = []
    order = np.argsort(-s.k_stop, kind="stable")
    kstop_sorted = s.k_stop[order]
    for g in range(s.times.size):
        # rows with k_stop > g form a prefix of `order`
        m = int(np.searchsorted(-kstop_sorted, -g, side="left"))
        rows = order[:m]
        if s.k_start is not None:
            rows = rows[s.k_start[rows] <= g]
        lo = s.death_bins[g]
        hi = s.death_bins[g + 1] if g + 1 < s.death_bins.size else s.death_pos.size
        out.append((rows, s.death_pos[lo:hi]))
    return out


def exact_terms(s: Stratum, eta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Discrete-time log partial likelihood, gradient and Hessian of one stratum."""
    p = s.p
    ll, grad, hess = 0.0, np.zeros(p), np.zeros((p, p))
    for rows, dead in _groups(s):
        d = dead.size
        e_r = eta[rows]
        top = float(e_r.max())
        w = np.exp(e_r - top)
        x = s.x[rows]
        r = rows.size
        e_prev = np.ones(r + 1)
        g_prev = np.zeros((r + 1, p))
        h_prev = np.zeros((r + 1, p, p))
        log_scale = 0.0
        xx = x[:, :, None] * x[:, None, :]
        for _ in range(d):
            ep, gp, hp = e_prev[:-1], g_prev[:-1], h_prev[:-1]
            e_new = np.concatenate([[0.0], np.cumsum(w * ep)])
            g_new = np.vstack([np.zeros((1, p)), np.cumsum(w[:, None] * (gp + x * ep[:, None]), axis=0)])
            h_inc = hp + x[:, :, None] * gp[:, None, :] + gp[:, :, None] * x[:, None, :] + xx * ep[:, None, None]
            h_new = np.concatenate([np.zeros((1, p, p)), np.cumsum(w[:, None, None] * h_inc, axis=0)])
            scale = e_new[-1]
            log_scale += np.log(scale)
            e_prev, g_prev, h_prev = e_new / scale, g_new / scale, h_new / scale
        mean = g_prev[-1] / e_prev[-1]
        ll += float(eta[dead].sum()) - d * top - log_scale - float(np.log(e_prev[-1]))
        grad += s.x[dead].sum(axis=0) - mean
        hess -= h_prev[-1] / e_prev[-1] - np.outer(mean, mean)
    return ll, grad, hess


def _kp_group(w: np.ndarray, x: np.ndarray, dead_mask: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """log L, its gradient and Hessian for one time (weights already shifted).

    With y_i = r_i v, Q = Π(1 − e^{−y_i}), φ(y) = y/(e^y − 1), dx_i = x_i − x̄_c (x̄_c, V_c the weighted
    mean and covariance of the survivors): ∂Q/Q = Σφ_i dx_i = A and
    ∂²Q/Q = AAᵀ + Σ φ'(y_i) y_i dx_i dx_iᵀ − (Σφ_i) V_c.
    """
    p = x.shape[1]
    wd, xd = w[dead_mask], x[dead_mask]
    wc, xc = w[~dead_mask], x[~dead_mask]
    sc = float(wc.sum())
    if sc <= 0.0:  # everyone at risk dies: they surely come first
        return 0.0, np.zeros(p), np.zeros((p, p))
    rate = wd / sc
    xbar = (wc @ xc) / sc
    vc = ((xc - xbar) * wc[:, None]).T @ (xc - xbar) / sc
    dx = xd - xbar
    outer = dx[:, :, None] * dx[:, None, :]
    log_rate = float(np.log(rate).sum())

    def integrand(v: float) -> np.ndarray:
        out = np.zeros(1 + p + p * p)
        if v <= 0:
            return out
        y = rate * v
        # Π (1 − e^{−y_i}) / r_i, in logs: it behaves like v^d near 0 whatever the r_i
        core = np.exp(-v + float(np.log(-np.expm1(-y)).sum()) - log_rate)
        # φ = y q/(1−q), φ' = q/(1−q) − y q/(1−q)², q = e^{−y}: no overflow for large y; a series near 0
        small = y < 1e-5
        ys = np.where(small, 1.0, y)
        q = np.exp(-ys)
        one_q = -np.expm1(-ys)
        phi = np.where(small, 1.0 - y / 2 + y * y / 12, ys * q / one_q)
        dphi = np.where(small, -0.5 + y / 6, q / one_q - ys * q / (one_q * one_q))
        a = phi @ dx
        second = np.outer(a, a) + np.einsum("i,ijk->jk", dphi * y, outer) - phi.sum() * vc
        out[0] = core
        out[1:1 + p] = core * a
        out[1 + p:] = core * second.ravel()
        return out

    val, _ = integrate.quad_vec(integrand, 0.0, np.inf, epsabs=0.0, epsrel=1e-11, limit=400)
    mean = val[1:1 + p] / val[0]
    hess = val[1 + p:].reshape(p, p) / val[0] - np.outer(mean, mean)
    return float(np.log(val[0]) + log_rate), mean, hess


def kp_terms(s: Stratum, eta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Kalbfleisch–Prentice log marginal likelihood, gradient and Hessian of one stratum."""
    p = s.p
    ll, grad, hess = 0.0, np.zeros(p), np.zeros((p, p))
    for rows, dead in _groups(s):
        e_r = eta[rows]
        top = float(e_r.max())
        w = np.exp(e_r - top)
        x = s.x[rows]
        if dead.size == 1:  # one death: w_i / S0, as every other method
            i = int(np.flatnonzero(rows == dead[0])[0])
            s0 = float(w.sum())
            mean = (w @ x) / s0
            ll += float(np.log(w[i] / s0))
            grad += x[i] - mean
            hess -= ((x - mean) * w[:, None]).T @ (x - mean) / s0
            continue
        a, b, c = _kp_group(w, x, np.isin(rows, dead))
        ll += a
        grad += b
        hess += c
    return ll, grad, hess
