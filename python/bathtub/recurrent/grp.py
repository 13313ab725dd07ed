"""Generalised renewal processes (Kijima virtual age) with a Weibull baseline, fitted by
maximum likelihood to one or many systems.

A system's virtual age after its i-th repair is v_i = v_{i-1} + q x_i (Kijima I) or
v_i = q (v_{i-1} + x_i) (Kijima II), x_i the running time since the previous repair; the
next life is the Weibull residual life at age v_i. q = 0 is renewal (as good as new), q = 1
minimal repair (as bad as old, the power-law NHPP). These are the engine's repair-quality
models (rust/engine `fail_kijima`: the same recursions and the residual-life draw), so a
fitted q means what `repair_quality.q` means in a diagram.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bathtub import inference
from bathtub.errors import InputError
from bathtub.recurrent.data import EventData
from bathtub.recurrent.nhpp import covariance_from_information, power_law

KINDS = ("kijima1", "kijima2")


@dataclass(frozen=True)
class Spells:
    """Every running spell of every system, padded by system: x[k, j] the j-th spell's
    length (event j, or the censored run to the end after the last event), d[k, j] 1 for a
    spell that ended in a failure, 0 for the censored one, m[k, j] whether it exists."""

    x: np.ndarray
    d: np.ndarray
    m: np.ndarray
    flat: np.ndarray  # flat indices of the spells that exist

    @classmethod
    def of(cls, data: EventData, scale: float) -> Spells:
        k = len(data.systems)
        width = max(s.n for s in data.systems) + 1
        x = np.zeros((k, width))
        d = np.zeros((k, width))
        m = np.zeros((k, width), dtype=bool)
        for i, s in enumerate(data.systems):
            t = s.times / scale
            gaps = np.diff(np.concatenate([[0.0], t]))
            x[i, : s.n] = gaps
            d[i, : s.n] = 1.0
            m[i, : s.n] = True
            tail = s.end / scale - (t[-1] if s.n else 0.0)
            if tail > 0:
                x[i, s.n] = tail
                m[i, s.n] = True
        return cls(x, d, m, np.flatnonzero(m.ravel()))

    def ages_and_slopes(self, q: float, kind: str) -> tuple[np.ndarray, np.ndarray]:
        """Virtual ages at the start of each spell and their derivatives in q."""
        if kind == "kijima1":
            starts = np.cumsum(self.x, axis=1) - self.x
            return q * starts, starts
        # Column by column over the spell index, on the transposed (contiguous) arrays.
        xt = np.ascontiguousarray(self.x.T)
        v = np.zeros_like(xt)
        dv = np.zeros_like(xt)
        for j in range(1, xt.shape[0]):
            run = v[j - 1] + xt[j - 1]
            v[j] = q * run
            dv[j] = run + q * dv[j - 1]
        return v.T, dv.T

    def ages(self, q: float, kind: str) -> np.ndarray:
        """Virtual age at the start of each spell."""
        if kind == "kijima1":
            # v_{j} = q * (time of the j-th repair): a cumulative sum, no recursion.
            starts = np.cumsum(self.x, axis=1) - self.x
            return q * starts
        v = np.zeros_like(self.x)
        for j in range(1, self.x.shape[1]):
            v[:, j] = q * (v[:, j - 1] + self.x[:, j - 1])
        return v


@dataclass(frozen=True)
class GrpFit:
    kind: str
    alpha: float
    beta: float
    q: float
    cov: np.ndarray  # covariance of (alpha, beta, q)
    log_likelihood: float
    q_fixed: bool


def _loglik_grad(p: np.ndarray, sp: Spells, kind: str) -> tuple[float, np.ndarray]:
    """Log-likelihood and its gradient in (log alpha, log beta, q), on the flat spells."""
    log_a, log_b, q = float(p[0]), float(p[1]), float(p[2])
    b = math.exp(log_b)
    v2, dv2 = sp.ages_and_slopes(q, kind)
    v = v2.ravel()[sp.flat]
    dv = dv2.ravel()[sp.flat]
    x = sp.x.ravel()[sp.flat]
    ev = sp.d.ravel()[sp.flat] > 0
    # Sums of products, not np.dot: BLAS threads contend on a busy machine (50x slower).
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        end = v + x
        le = np.log(end) - log_a
        h_end = np.exp(b * le)
        pos = v > 0
        ls = np.log(np.where(pos, v, 1.0)) - log_a
        h_start = np.where(pos, np.exp(b * ls), 0.0)
        le_ev = le[ev]
        n_ev = float(le_ev.size)
        dh = float(np.sum(h_end) - np.sum(h_start))
        total = n_ev * (log_b - log_a) + (b - 1.0) * float(le_ev.sum()) - dh
        g_a = -b * n_ev + b * dh
        g_b = n_ev + b * float(le_ev.sum()) - b * float(np.sum(h_end * le) - np.sum(h_start * ls))
        rate = b * (h_end / end - np.where(pos, h_start / np.where(pos, v, 1.0), 0.0))
        g_q = (b - 1.0) * float(np.sum(dv[ev] / end[ev])) - float(np.sum(rate * dv))
    grad = np.array([g_a, g_b, g_q])
    if not (math.isfinite(total) and np.all(np.isfinite(grad))):
        return -1e300, np.zeros(3)
    return total, grad


def _negative(p: np.ndarray, sp: Spells, kind: str, q: float | None) -> tuple[float, np.ndarray]:
    if q is None:
        v, g = _loglik_grad(p, sp, kind)
        return -v, -g
    v, g = _loglik_grad(np.array([p[0], p[1], q]), sp, kind)
    return -v, -g[:2]


def _loglik(p: np.ndarray, sp: Spells, kind: str, q: float | None) -> tuple[float, np.ndarray]:
    v, g = _negative(p, sp, kind, q)
    return -v, -g


def fit(data: EventData, kind: str, q: float | None = None, start: tuple[float, float] | None = None) -> GrpFit:
    """Kijima I or II by maximum likelihood; `q` fixed (0 renewal, 1 minimal repair) or free in [0, 1].
    `start`: (alpha, beta) to start from (default: the power law's, minimal repair)."""
    if kind not in KINDS:
        raise InputError("distribution", f"must be one of {', '.join(KINDS)}")
    scale = max(s.end for s in data.systems)
    sp = Spells.of(data, scale)
    if start is None:
        pl = power_law(data.scaled(1.0 / scale))
        a0, b0 = pl.lam ** (-1.0 / pl.beta), pl.beta
    else:
        a0, b0 = start[0] / scale, start[1]
    bounds = [(None, None), (math.log(1e-3), math.log(50.0))]
    if q is not None:
        best = inference.maximise(_loglik, np.array([math.log(a0), math.log(b0)]), args=(sp, kind, q), grad=True,
                                  stages=(inference.Stage("L-BFGS-B", bounds=bounds),), covariance=False)
        p = np.array([best.estimate[0], best.estimate[1], q])
    else:
        # One start mid-way; a result on a bound of q is checked from the other end.
        best = None
        for q0 in (0.5, 0.02, 0.98):
            res = inference.maximise(_loglik, np.array([math.log(a0), math.log(b0), q0]), args=(sp, kind, None),
                                     grad=True, stages=(inference.Stage("L-BFGS-B", bounds=[*bounds, (0.0, 1.0)]),),
                                     covariance=False)
            if best is None or res.log_likelihood > best.log_likelihood:
                best = res
            if 1e-6 < best.estimate[2] < 1 - 1e-6:
                break
        assert best is not None
        p = np.asarray(best.estimate, dtype=float)
    ll = best.log_likelihood
    free = 3 if q is None else 2
    # Covariance of (log alpha, log beta, q) from the observed information (central
    # differences; q stepped inward at a bound), then to (alpha, beta, q).
    z = p[:free].copy()
    hq = 1e-4
    if q is None:
        z[2] = min(max(z[2], hq * 2), 1 - hq * 2)
    steps = np.array([1e-4, 1e-4, hq])[:free]
    hess = inference.hessian_from_gradient(lambda v: _loglik(v, sp, kind, q)[1], z, steps)
    cov_l = covariance_from_information(-hess)
    a, b = math.exp(p[0]) * scale, math.exp(p[1])
    jac = np.diag([a, b, 1.0][:free])
    cov = np.full((3, 3), math.nan)
    cov[:free, :free] = jac @ cov_l @ jac.T
    if q is not None:
        cov[2, 2] = 0.0
    n = data.n_events
    # Log-likelihood in the original unit: each event's log-intensity shifts by -log(scale).
    return GrpFit(kind, a, b, float(p[2]), cov, ll - n * math.log(scale), q is not None)


def compensator(g: GrpFit, data: EventData) -> np.ndarray:
    """Each system's expected number of events given its own history (the sum of the
    cumulative hazard over its spells): observed minus this is its martingale residual."""
    sp = Spells.of(data, 1.0)
    v = sp.ages(g.q, g.kind)
    inc = np.power((v + sp.x) / g.alpha, g.beta) - np.power(v / g.alpha, g.beta)
    return np.where(sp.m, inc, 0.0).sum(axis=1)


def current_age(g: GrpFit, times: np.ndarray, end: float) -> float:
    """Virtual age at the end of observation (age after the last repair plus the run since)."""
    v = 0.0
    prev = 0.0
    for t in times:
        x = float(t) - prev
        v = v + g.q * x if g.kind == "kijima1" else g.q * (v + x)
        prev = float(t)
    return v + (end - prev)


def residual_quantile(alpha: float, beta: float, age: float, p: np.ndarray | float) -> np.ndarray | float:
    """Quantile of the time to the next failure of a Weibull unit of virtual age `age`."""
    h0 = (age / alpha) ** beta
    return alpha * np.power(h0 - np.log1p(-np.asarray(p, dtype=float)), 1.0 / beta) - age


def simulate(alpha: float, beta: float, q: float, kind: str, ends: np.ndarray,
             rng: np.random.Generator) -> list[np.ndarray]:
    """Event times of systems observed to `ends` under Kijima `kind` with a Weibull(alpha, beta)
    baseline: each life is the residual life at the current virtual age (inverse transform)."""
    out = []
    for end in np.asarray(ends, dtype=float):
        t, v, times = 0.0, 0.0, []
        while True:
            x = float(residual_quantile(alpha, beta, v, rng.uniform()))
            if t + x > end:
                break
            t += x
            times.append(t)
            v = v + q * x if kind == "kijima1" else q * (v + x)
        out.append(np.asarray(times))
    return out


def q_interval(g: GrpFit, confidence: float) -> tuple[float, float]:
    """Wald interval of q from the observed information, clipped to [0, 1]."""
    se = math.sqrt(g.cov[2, 2]) if math.isfinite(g.cov[2, 2]) and g.cov[2, 2] >= 0 else math.nan
    z = inference.z(confidence)
    return max(0.0, g.q - z * se), min(1.0, g.q + z * se)
