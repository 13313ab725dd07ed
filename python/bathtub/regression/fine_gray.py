"""Fine–Gray regression on the subdistribution hazard of one failure mode (Fine & Gray 1999),
with the definitions of R's cmprsk::crr.

The subdistribution hazard of mode 1 is h1(t | x) = h10(t) exp(xβ). Its risk set at a mode-1
failure time T keeps, besides every unit still under observation (t_j >= T, weight 1), the
units that failed earlier from another mode, weighted by w_j(T) = G(T-)/G(t_j-): G is the
Kaplan–Meier estimate of the censoring distribution (censorings as events, failures of any
mode as removals), read just before each time. Ties among mode-1 failures: Breslow.

    log PL(β) = sum_k [ sum_{i in D_k} x_i β - d_k log S0(T_k) ],  S0 = sum_j w_j e^{x_j β},

maximised by Newton–Raphson (step halving). The variance is crr's sandwich
V = I⁻¹ (sum_i (η_i + ψ_i)(η_i + ψ_i)ᵀ) I⁻¹, I the information, η_i unit i's score residual

    η_i = δ1_i (x_i - x̄(t_i)) - sum_k d_k w_i(T_k) e^{x_i β} (x_i - x̄(T_k)) / S0(T_k),

and ψ_i the term for G having been estimated (Fine & Gray, Section 3):

    ψ_i = q(t_i) δc_i / Y(t_i) - sum_{u <= t_i} q(u) dNc(u) / Y(u)^2,
    q(u) = sum_{T_k >= u} (d_k / S0(T_k)) sum_{j: other mode, t_j < u} w_j(T_k) e^{x_j β} (x_j - x̄(T_k)),

Y(u) the units with t >= u, dNc(u) the censorings at u. The baseline cumulative subdistribution
hazard is Breslow's, Λ10(t) = sum_{T_k <= t} d_k / S0(T_k) at x = 0, and the cumulative
incidence of a unit F1(t | x) = 1 - exp(-Λ10(t) e^{xβ}) (crr's predict).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bathtub.errors import InputError

MAX_ITER = 60
GRAD_TOL = 1e-10


@dataclass(frozen=True)
class FineGrayFit:
    beta: np.ndarray
    information: np.ndarray
    var: np.ndarray  # robust (sandwich), crr's
    model_var: np.ndarray  # inverse information: ignores the weights' estimation, too small
    loglik: float
    loglik0: float
    iterations: int
    times: np.ndarray  # distinct mode-1 failure times
    cumhaz: np.ndarray  # Λ10 at those times, at x = 0
    n: int
    n_events: int
    n_competing: int
    n_censored: int
    tied_times: int


def censoring_km_left(t: np.ndarray, censored: np.ndarray) -> np.ndarray:
    """G(t_i-): the Kaplan–Meier of the censoring times, just before each row's time."""
    times, inv = np.unique(t, return_inverse=True)
    at_risk = np.bincount(inv, minlength=times.size)[::-1].cumsum()[::-1].astype(float)
    events = np.bincount(inv, weights=censored.astype(float), minlength=times.size)
    g = np.cumprod(1.0 - events / at_risk)
    g_left = np.concatenate([[1.0], g[:-1]])
    return g_left[inv]


class _Data:
    """Rows sorted by time, the risk-set pieces that do not depend on β."""

    def __init__(self, x: np.ndarray, t: np.ndarray, status: np.ndarray) -> None:
        order = np.argsort(t, kind="stable")
        self.x, self.t, self.status = x[order], t[order], status[order]
        self.order = order
        self.g = censoring_km_left(self.t, self.status == 0)
        fail = self.status == 1
        self.times, self.d = np.unique(self.t[fail], return_counts=True)
        self.d = self.d.astype(float)
        # rows with t >= T_k start at first[k]; other-mode rows with t < T_k end before it
        self.first = np.searchsorted(self.t, self.times, side="left")
        self.g_k = self.g[self.first]  # G(T_k-)
        self.other = self.status == 2

    def sums(self, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """S0, S1, S2 at each T_k, and e^{xβ} per row."""
        eta = self.x @ beta
        r = np.exp(eta)
        x = self.x
        outer = x[:, :, None] * x[:, None, :]
        tail0 = np.concatenate([r[::-1].cumsum()[::-1], [0.0]])
        tail1 = np.vstack([(r[:, None] * x)[::-1].cumsum(axis=0)[::-1], np.zeros((1, x.shape[1]))])
        tail2 = np.concatenate([(r[:, None, None] * outer)[::-1].cumsum(axis=0)[::-1],
                                np.zeros((1, *outer.shape[1:]))])
        wo = np.where(self.other, r / self.g, 0.0)
        head0 = np.concatenate([[0.0], wo.cumsum()])  # sum over rows before index k
        head1 = np.vstack([np.zeros((1, x.shape[1])), (wo[:, None] * x).cumsum(axis=0)])
        head2 = np.concatenate([np.zeros((1, *outer.shape[1:])), (wo[:, None, None] * outer).cumsum(axis=0)])
        f, gk = self.first, self.g_k
        s0 = tail0[f] + gk * head0[f]
        s1 = tail1[f] + gk[:, None] * head1[f]
        s2 = tail2[f] + gk[:, None, None] * head2[f]
        return s0, s1, s2, r

    def loglik(self, beta: np.ndarray) -> float:
        s0, _, _, _ = self.sums(beta)
        fail = self.status == 1
        return float(np.sum(self.x[fail] @ beta) - np.sum(self.d * np.log(s0)))


def fit(x: np.ndarray, t: np.ndarray, status: np.ndarray, field: str = "covariates") -> FineGrayFit:
    """Fit on rows (x: n × p covariates, t: times, status 1 the mode of interest, 2 another
    mode, 0 censored)."""
    x = np.asarray(x, dtype=float)
    t = np.asarray(t, dtype=float)
    status = np.asarray(status, dtype=int)
    n, p = x.shape
    if p == 0:
        raise InputError(field, "Fine–Gray regression needs at least one covariate")
    if not np.any(status == 1):
        raise InputError("options.failure_mode", "no failure of this mode: nothing to regress on")
    center = x.mean(axis=0)  # for exp's range only: coefficients and variances do not move
    data = _Data(x - center, t, status)
    fail = data.status == 1
    sx = data.x[fail].sum(axis=0)
    beta = np.zeros(p)
    ll = ll0 = data.loglik(beta)
    it = 0
    info = np.eye(p)
    for _ in range(MAX_ITER):
        it += 1
        s0, s1, s2, _ = data.sums(beta)
        xbar = s1 / s0[:, None]
        grad = sx - (data.d[:, None] * xbar).sum(axis=0)
        info = (data.d[:, None, None] * (s2 / s0[:, None, None] - xbar[:, :, None] * xbar[:, None, :])).sum(axis=0)
        if np.max(np.abs(grad) * np.maximum(np.abs(beta), 1.0)) < GRAD_TOL * max(abs(ll), 1.0):
            break
        try:
            step = np.linalg.solve(info, grad)
        except np.linalg.LinAlgError as exc:
            raise InputError(field, "the covariates are collinear (or one is constant among the units at "
                                    "risk): no unique fit") from exc
        for _ in range(40):  # backtrack until the log partial likelihood rises
            new = data.loglik(beta + step)
            if math.isfinite(new) and new >= ll - 1e-12 * abs(ll):
                break
            step = step / 2
        beta = beta + step
        ll = data.loglik(beta)
    else:
        raise InputError(field, f"the fit did not converge in {MAX_ITER} iterations (separation: a covariate "
                                "level with every or no failure of this mode?)")
    if not np.all(np.isfinite(beta)) or np.max(np.abs(beta)) > 50:
        raise InputError(field, "a coefficient runs off to infinity (a covariate level with every or no failure "
                                "of this mode): the data cannot estimate it")
    s0, s1, s2, r = data.sums(beta)
    xbar = s1 / s0[:, None]
    info = (data.d[:, None, None] * (s2 / s0[:, None, None] - xbar[:, :, None] * xbar[:, None, :])).sum(axis=0)
    inv = np.linalg.inv(info)
    resid = _residuals(data, s0, xbar, r)
    var = inv @ (resid.T @ resid) @ inv
    # Λ10 at x = 0 of the uncentred covariates: the centred fit's steps times e^{-center·β}
    cumhaz = np.cumsum(data.d / s0) * math.exp(-float(center @ beta))
    return FineGrayFit(beta, info, var, inv, ll, ll0, it, data.times, cumhaz, n, int(fail.sum()),
                       int(np.sum(status == 2)), int(np.sum(status == 0)), int(np.sum(data.d > 1)))


def _residuals(data: _Data, s0: np.ndarray, xbar: np.ndarray, r: np.ndarray) -> np.ndarray:
    """η_i + ψ_i per row (module docstring), rows in time order."""
    x, t, g = data.x, data.t, data.g
    n, p = x.shape
    a = data.d / s0  # d_k / S0(T_k)
    # own-risk part: steps T_k <= t_i (weight 1)
    upto = np.searchsorted(data.times, t, side="right")  # steps with T_k <= t_i
    ca = np.concatenate([[0.0], a.cumsum()])
    cb = np.vstack([np.zeros((1, p)), (a[:, None] * xbar).cumsum(axis=0)])
    eta = -r[:, None] * (x * ca[upto][:, None] - cb[upto])
    # other-mode rows keep a weighted place for T_k > t_i
    ga = a * data.g_k
    sa = np.concatenate([ga[::-1].cumsum()[::-1], [0.0]])
    sb = np.vstack([(ga[:, None] * xbar)[::-1].cumsum(axis=0)[::-1], np.zeros((1, p))])
    later = upto  # first step with T_k > t_i
    extra = -(r / g)[:, None] * (x * sa[later][:, None] - sb[later])
    eta += np.where(data.other[:, None], extra, 0.0)
    fail = data.status == 1
    k_own = np.searchsorted(data.times, t[fail])
    eta[fail] += x[fail] - xbar[k_own]
    # ψ: q(u) at each distinct time with censorings
    times, first = np.unique(t, return_index=True)
    at_risk = n - first
    cens = np.bincount(np.searchsorted(times, t), weights=(data.status == 0).astype(float), minlength=times.size)
    wo = np.where(data.other, r / g, 0.0)
    p0 = np.concatenate([[0.0], wo.cumsum()])[first]  # other-mode rows with t_j < u
    p1 = np.vstack([np.zeros((1, p)), (wo[:, None] * x).cumsum(axis=0)])[first]
    from_k = np.searchsorted(data.times, times, side="left")  # steps with T_k >= u
    e = sa[from_k]
    f = sb[from_k]
    q = p1 * e[:, None] - p0[:, None] * f
    dlam = np.where(cens > 0, cens / at_risk**2, 0.0)
    cum = (q * dlam[:, None]).cumsum(axis=0)
    row_time = np.searchsorted(times, t)
    psi = -cum[row_time]
    censored = data.status == 0
    psi[censored] += q[row_time[censored]] / at_risk[row_time[censored], None]
    return eta + psi


def cumulative_incidence(fit: FineGrayFit, x_row: np.ndarray, at: np.ndarray) -> np.ndarray:
    """F1(t | x) at times `at`: 1 - exp(-Λ10(t) e^{xβ}), Λ10 a step function."""
    idx = np.searchsorted(fit.times, at, side="right") - 1
    lam = np.where(idx >= 0, fit.cumhaz[np.maximum(idx, 0)], 0.0)
    return -np.expm1(-lam * math.exp(float(x_row @ fit.beta)))
