"""Cox partial likelihood, gradient and Hessian for Efron and Breslow ties in one pass.

Each row is placed once against the stratum's distinct event times t_1 < … < t_G:
k_stop = #{t_g ≤ stop}, k_start = #{t_g ≤ start}, so the row is at risk at t_g exactly when
k_start ≤ g < k_stop (the counting-process risk set {start < t ≤ stop}; plain right-censored
rows have k_start = 0). At each Newton step:

- S0, S1 (risk-set sums of w and w·x, w = e^{xβ}) at every event time are a reverse cumulative
  sum of `bincount`s over k_stop minus the same over k_start: O(n·p), no sort;
- Efron's correction runs over l = 0..d−1 with S·_l = S· − (l/d)·D· (D· over the deaths at that
  time); every sum over l collapses to per-time scalars Σ1/S0_l, Σf/S0_l, Σ1/S0_l², Σf/S0_l²,
  Σf²/S0_l² (f = l/d). Breslow is f = 0;
- the second-moment part of the Hessian, Σ_g c1_g·S2_g, is Σ_i w_i·(C1[k_stop] − C1[k_start])·x_i x_iᵀ
  with C1 the cumulative c1, and Efron's correction on the dying rows folds into the same weights:
  one BLAS product XᵀVX instead of n·p² running sums.

Weights are e^{eta − max eta} so nothing overflows; the shift is put back in the log-likelihood.
At 10⁶ rows the cost is memory traffic, not arithmetic: no transposed copies of x are kept, and
the one n×p temporary of the Hessian is a buffer reused across Newton steps (a fresh 40 MB array
is a fresh mapping, page-faulted in on every step).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Stratum:
    """One stratum's rows placed against its event times (computed once per fit)."""

    rows: np.ndarray  # original row indices of this stratum
    x: np.ndarray  # the stratum's (centred) covariates
    k_stop: np.ndarray  # #event times <= stop, per row
    k_start: np.ndarray | None  # #event times <= start (counting process), per row
    times: np.ndarray  # distinct event times, ascending
    deaths: np.ndarray  # d per event time (float)
    death_pos: np.ndarray  # row positions of the events, grouped by time
    death_time: np.ndarray  # event-time index of each of death_pos
    death_bins: np.ndarray  # start of each time's run in death_pos
    death_f: np.ndarray  # Efron's l/d of each death within its time
    x_dead: np.ndarray  # x of the dying rows (in death_pos order)
    row_time: np.ndarray  # per row: its event time's index if it dies, else len(times)
    xd: np.ndarray  # Σ x over all events (p)
    work: np.ndarray  # rows × p scratch for the Hessian's X·diag(v) (reused across Newton steps)

    @property
    def p(self) -> int:
        return self.x.shape[1]


def prepare(x: np.ndarray, start: np.ndarray | None, stop: np.ndarray, event: np.ndarray,
            rows: np.ndarray) -> Stratum | None:
    """Place one stratum's rows; None when it holds no event (it adds nothing to the likelihood)."""
    whole = rows.size == x.shape[0] and bool(rows[0] == 0 and rows[-1] == rows.size - 1)
    xs = np.ascontiguousarray(x) if whole else np.ascontiguousarray(x[rows])
    ts = stop if whole else stop[rows]
    ev = event if whole else event[rows]
    death_pos = np.flatnonzero(ev)
    if death_pos.size == 0:
        return None
    times = np.unique(ts[death_pos])
    k_stop = np.searchsorted(times, ts, side="right")
    # deaths grouped by time, in row order within a time: a stable sort of small integers
    # (numpy radix-sorts them), cheaper than sorting the times themselves
    kd = k_stop[death_pos]
    death_pos = death_pos[np.argsort(kd.astype(np.uint16) if times.size < 2**16 else kd, kind="stable")]
    dt = ts[death_pos]
    first = np.flatnonzero(np.concatenate([[True], dt[1:] != dt[:-1]]))
    deaths = np.diff(np.append(first, dt.size)).astype(float)
    death_time = np.repeat(np.arange(times.size), deaths.astype(np.int64))
    k_start = None if start is None else np.searchsorted(times, start if whole else start[rows], side="right")
    f = (np.arange(death_time.size) - first[death_time]) / deaths[death_time]
    x_dead = xs[death_pos]
    row_time = np.full(xs.shape[0], times.size, dtype=np.int64)
    row_time[death_pos] = death_time
    return Stratum(rows, xs, k_stop, k_start, times, deaths, death_pos, death_time, first, f, x_dead, row_time,
                   x_dead.sum(axis=0), np.empty_like(xs))


def at_risk_sums(s: Stratum, weights: np.ndarray) -> np.ndarray:
    """Σ over rows at risk at each event time of `weights` (rows,) → (times,)."""
    g = s.times.size
    b = np.bincount(s.k_stop, weights, g + 1)
    if s.k_start is not None:
        b -= np.bincount(s.k_start, weights, g + 1)
    # a row with k_stop = k is at risk at t_0..t_{k-1}: the sum at t_g is Σ_{k > g} b[k]
    return np.cumsum(b[::-1])[::-1][1:]


def at_risk_spans(s: Stratum, per_time: np.ndarray) -> np.ndarray:
    """Σ over the event times at which each row is at risk of `per_time` (times,) → (rows,)."""
    cum = np.concatenate([[0.0], np.cumsum(per_time)])
    out = cum[s.k_stop]
    if s.k_start is not None:
        out = out - cum[s.k_start]
    return out


@dataclass(frozen=True, eq=False)
class Terms:
    """Per-event-time quantities at one β, enough for score residuals and the baseline hazard."""

    w: np.ndarray  # e^{eta - shift} per row
    s0: np.ndarray  # risk-set Σw per time
    s1: np.ndarray  # Σ w x per time
    d0: np.ndarray  # Σ w over the deaths per time
    d1: np.ndarray
    c1: np.ndarray  # Σ_l 1/S0_l
    c2: np.ndarray  # Σ_l f_l/S0_l
    e1: np.ndarray  # Σ_l 1/S0_l²
    e2: np.ndarray  # Σ_l f_l/S0_l²
    e3: np.ndarray  # Σ_l f_l²/S0_l²
    shift: float


def evaluate(s: Stratum, eta: np.ndarray, efron: bool,
             hessian: bool = True) -> tuple[float, np.ndarray, np.ndarray, Terms]:
    """Log partial likelihood, gradient and Hessian (negative definite) of one stratum at `eta`."""
    p = s.p
    shift = float(eta.max())
    w = np.exp(eta - shift)
    s0 = at_risk_sums(s, w)
    s1 = np.column_stack([at_risk_sums(s, w * s.x[:, j]) for j in range(p)])
    d = s.deaths
    g = d.size
    wd = w[s.death_pos]
    d0 = np.add.reduceat(wd, s.death_bins)
    d1 = np.add.reduceat(wd[:, None] * s.x_dead, s.death_bins, axis=0)
    if efron:
        f = s.death_f
        s0l = s0[s.death_time] - f * d0[s.death_time]
        inv = 1.0 / s0l
        inv2 = inv * inv
        # per-time sums over the (contiguous, time-grouped) deaths
        bins = s.death_bins
        c1 = np.add.reduceat(inv, bins)
        c2 = np.add.reduceat(f * inv, bins)
        e1 = np.add.reduceat(inv2, bins)
        e2 = np.add.reduceat(f * inv2, bins)
        e3 = np.add.reduceat(f * f * inv2, bins)
        den = float(np.sum(np.log(s0l)))
    else:
        c1 = d / s0
        e1 = c1 / s0
        c2 = e2 = e3 = np.zeros(g)
        den = float(np.sum(d * np.log(s0)))
    loglik = float(np.sum(eta[s.death_pos])) - den - float(d.sum()) * shift
    grad = s.xd - c1 @ s1 + c2 @ d1
    terms = Terms(w, s0, s1, d0, d1, c1, c2, e1, e2, e3, shift)
    if not hessian:
        return loglik, grad, np.zeros((p, p)), terms
    return loglik, grad, -information(s, terms, efron), terms


def information(s: Stratum, t: Terms, efron: bool, by_time: np.ndarray | None = None) -> np.ndarray:
    """Σ over event times of by_time_g · V_g, V_g the (Efron-averaged) risk-set covariance of x at t_g;
    by_time None is 1 (the observed information). cox.zph needs it weighted by g(t) and g(t)²."""
    one = np.ones(s.times.size) if by_time is None else by_time
    c1, c2, e1, e2, e3 = (one * a for a in (t.c1, t.c2, t.e1, t.e2, t.e3))
    # Σ_g c1_g S2_g − c2_g D2_g, minus Σ_l a_l a_lᵀ expanded with e1, e2, e3
    span = at_risk_spans(s, c1)
    if efron:  # a dying row's own time counts with Efron's (1 − f) share: Σ c1 − c2 there (still > 0)
        span -= np.append(c2, 0.0)[s.row_time]
    if by_time is None:
        # Xᵀ diag(v) X = YᵀY with Y = X·√v (v = w·span >= 0 here): one BLAS rank-p update
        np.multiply(s.x, np.sqrt(np.maximum(t.w * span, 0.0))[:, None], out=s.work)
        second = s.work.T @ s.work
    else:  # cox.zph's weights g(t) may be negative: the plain product
        np.multiply(s.x, (t.w * span)[:, None], out=s.work)
        second = s.work.T @ s.x
    cross = (t.s1 * e2[:, None]).T @ t.d1
    outer = (t.s1 * e1[:, None]).T @ t.s1 - cross - cross.T + (t.d1 * e3[:, None]).T @ t.d1
    return second - outer


def score_residuals(s: Stratum, t: Terms) -> np.ndarray:
    """Per-row score residuals U_i (rows × p), Σ_i U_i = gradient (as R's `residuals(type="score")`).

    U_i = δ_i (x_i − ā_g) − w_i Σ_g c_il (x_i − a_l)/S0_l over the times at which i is at risk, with
    c_il = 1 − f_l for a row dying at that time (Efron's share of the hazard) and 1 otherwise.
    """
    x = s.x
    d = s.deaths
    # m_g = Σ_l a_l/S0_l = S1·e1 − D1·e2 ; for the dying: Σ_l (1−f_l) a_l/S0_l
    m = t.s1 * t.e1[:, None] - t.d1 * t.e2[:, None]
    m_die = t.s1 * (t.e1 - t.e2)[:, None] - t.d1 * (t.e2 - t.e3)[:, None]
    h = at_risk_spans(s, t.c1)
    b = np.column_stack([at_risk_spans(s, m[:, j]) for j in range(x.shape[1])])
    gi = s.death_time
    dp = s.death_pos
    h[dp] -= t.c2[gi]  # c1 − (c1 − c2): the dying row's own time counts with weight (1 − f_l)
    b[dp] -= m[gi] - m_die[gi]
    u = -(t.w[:, None] * (x * h[:, None] - b))
    abar = (t.s1 * t.c1[:, None] - t.d1 * t.c2[:, None]) / d[:, None]
    u[dp] += x[dp] - abar[gi]
    return u


def hazard_steps(s: Stratum, t: Terms, efron: bool) -> np.ndarray:
    """Baseline hazard increments at the event times for eta = 0 (Breslow: d/S0; Efron: Σ_l 1/S0_l),
    undoing the weight shift."""
    scale = np.exp(-t.shift)
    return (t.c1 if efron else s.deaths / t.s0) * scale
