"""Poisson-process models of recurrent events, fitted by maximum likelihood:

- power law (Crow-AMSAA): rho(t) = lambda beta t^(beta-1), Lambda(t) = lambda t^beta;
- log-linear (Cox-Lewis): rho(t) = exp(g0 + g1 t);
- HPP: rho(t) = lambda;
- Duane: a least-squares line through log cumulative MTBF against log time (a plot fit).

Every fit runs on times divided by the latest end (so the numbers do not depend on the time
unit) and transforms back exactly. Systems are observed from age 0 to their end T_q.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from bathtub.errors import InputError
from bathtub.inference import hessian
from bathtub.recurrent.data import EventData, GroupedData


@dataclass(frozen=True)
class PowerLaw:
    beta: float
    lam: float
    cov: np.ndarray  # 2x2 covariance of (beta, lambda), inverse observed information
    log_likelihood: float

    def cumulative(self, t: np.ndarray | float) -> np.ndarray | float:
        return self.lam * np.power(t, self.beta)

    def intensity(self, t: np.ndarray | float) -> np.ndarray | float:
        return self.lam * self.beta * np.power(t, self.beta - 1.0)


def _ends(data: EventData) -> np.ndarray:
    return np.array([s.end for s in data.systems], dtype=float)


def _all_times(data: EventData) -> np.ndarray:
    return np.concatenate([s.times for s in data.systems]) if data.systems else np.zeros(0)


def _power_score_root(n: float, sum_log_t: float, ends: np.ndarray) -> float:
    """beta solving n/beta + sum log t - n sum(T^b log T)/sum(T^b) = 0 (times scaled to max end 1)."""
    log_e = np.log(ends)

    def score(b: float) -> float:
        w = np.exp(b * log_e)
        return n / b + sum_log_t - n * float(np.sum(w * log_e) / w.sum())

    lo, hi = 1e-3, 1.0
    while score(hi) > 0:
        hi *= 2.0
        if hi > 1e4:
            raise InputError("data", "every event is at the latest end of observation: beta cannot be estimated")
    while score(lo) < 0:
        lo /= 2.0
        if lo < 1e-12:
            raise InputError("data", "beta cannot be estimated from these times")
    return float(optimize.brentq(score, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps))


def power_law(data: EventData) -> PowerLaw:
    """Maximum-likelihood power law over all systems (common beta and lambda)."""
    ends = _ends(data)
    scale = float(ends.max())
    times = _all_times(data) / scale
    n = float(times.size)
    e = ends / scale
    beta = _power_score_root(n, float(np.log(times).sum()), e)
    lam_s = n / float(np.power(e, beta).sum())
    lam = lam_s * scale ** (-beta)
    # Observed information in (beta, lambda) at the original scale.
    log_e = np.log(ends)
    w = np.power(ends, beta)
    i_bb = n / beta**2 + lam * float(np.sum(w * log_e**2))
    i_bl = float(np.sum(w * log_e))
    i_ll = n / lam**2
    info = np.array([[i_bb, i_bl], [i_bl, i_ll]])
    cov = covariance_from_information(info)
    ll = n * math.log(lam) + n * math.log(beta) + (beta - 1.0) * float(np.log(_all_times(data)).sum()) - \
        lam * float(w.sum())
    return PowerLaw(beta, lam, cov, ll)


def power_law_grouped(data: GroupedData) -> PowerLaw:
    """Power law from failure counts per interval (Crow 1974): lambda = N / (K e_k^beta) and
    beta the root of sum n_i [(e_i^b ln e_i - e_{i-1}^b ln e_{i-1}) / (e_i^b - e_{i-1}^b) - ln e_k]."""
    scale = float(data.ends[-1])
    e = data.ends / scale
    s = data.starts / scale
    n = data.counts
    big_n = float(n.sum())
    log_e = np.log(e)
    log_s = np.log(np.where(s > 0, s, 1.0))

    def score(b: float) -> float:
        we, ws = np.power(e, b), np.where(s > 0, np.power(np.where(s > 0, s, 1.0), b), 0.0)
        return float(np.sum(n * ((we * log_e - ws * log_s) / (we - ws))))

    lo, hi = 1e-3, 1.0
    while score(hi) > 0:
        hi *= 2.0
        if hi > 1e4:
            raise InputError("data", "every failure is in the last interval: beta cannot be estimated")
    while score(lo) < 0:
        lo /= 2.0
        if lo < 1e-12:
            raise InputError("data", "beta cannot be estimated from these counts")
    beta = float(optimize.brentq(score, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps))
    k = data.systems
    lam = big_n / (k * scale**beta)
    ll_fun = _grouped_loglik(data)
    cov = covariance_from_information(-_hessian(ll_fun, np.array([beta, lam]), rel=np.array([1e-4, 1e-4])))
    return PowerLaw(beta, lam, cov, ll_fun(np.array([beta, lam])))


def _grouped_loglik(data: GroupedData):  # type: ignore[no-untyped-def]
    def ll(p: np.ndarray) -> float:
        b, lam = float(p[0]), float(p[1])
        if b <= 0 or lam <= 0:
            return -math.inf
        m = data.systems * lam * (np.power(data.ends, b) - np.power(data.starts, b))
        with np.errstate(divide="ignore"):
            terms = np.where(data.counts > 0, data.counts * np.log(m), 0.0)
        return float(terms.sum() - m.sum() - np.sum([math.lgamma(c + 1) for c in data.counts]))

    return ll


def covariance_from_information(info: np.ndarray) -> np.ndarray:
    """The inverse of an information matrix; NaN everywhere when it is singular (the fit then
    reports no standard errors rather than failing)."""
    try:
        return np.linalg.inv(info)
    except np.linalg.LinAlgError:
        return np.full(info.shape, math.nan)


def _hessian(f, x: np.ndarray, rel: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Central-difference Hessian of f at x with steps rel * |x| (x away from 0)."""
    return hessian(f, x, rel * np.maximum(np.abs(x), 1e-12))


@dataclass(frozen=True)
class LogLinear:
    g0: float
    g1: float
    cov: np.ndarray  # covariance of (g0, g1)
    log_likelihood: float

    def cumulative(self, t: np.ndarray | float) -> np.ndarray | float:
        t = np.asarray(t, dtype=float)
        if self.g1 == 0:
            return math.exp(self.g0) * t
        return math.exp(self.g0) * np.expm1(self.g1 * t) / self.g1

    def intensity(self, t: np.ndarray | float) -> np.ndarray | float:
        return np.exp(self.g0 + self.g1 * np.asarray(t, dtype=float))


def _loglinear_parts(g1: float, e: np.ndarray) -> tuple[float, float]:
    """sum_q (exp(g1 T_q) - 1)/g1 and its derivative in g1 (series near g1 = 0)."""
    x = g1 * e
    if abs(g1) < 1e-8:
        return float(np.sum(e + g1 * e**2 / 2)), float(np.sum(e**2 / 2 + g1 * e**3 / 3))
    a = np.expm1(x) / g1
    da = (e * np.exp(x) - a) / g1
    return float(a.sum()), float(da.sum())


def loglinear(data: EventData) -> LogLinear:
    """Cox-Lewis log-linear NHPP by maximum likelihood (g0 profiled out)."""
    ends = _ends(data)
    scale = float(ends.max())
    t = _all_times(data) / scale
    e = ends / scale
    n = float(t.size)
    st = float(t.sum())

    def score(g1: float) -> float:
        a, da = _loglinear_parts(g1, e)
        return st - n * da / a

    lo, hi = -1.0, 1.0
    while score(lo) < 0:
        lo *= 2
        if lo < -1e4:
            raise InputError("data", "the log-linear model does not fit: events crowd at time 0")
    while score(hi) > 0:
        hi *= 2
        if hi > 1e4:
            raise InputError("data", "the log-linear model does not fit: events crowd at the end")
    g1s = float(optimize.brentq(score, lo, hi, xtol=1e-14))
    a, _ = _loglinear_parts(g1s, e)
    g0s = math.log(n / a)

    def ll(p: np.ndarray) -> float:
        a_, _ = _loglinear_parts(float(p[1]), e)
        return n * float(p[0]) + float(p[1]) * st - math.exp(float(p[0])) * a_

    # Observed information analytically in the scaled problem: the profile is smooth.
    h = _hessian(ll, np.array([g0s, g1s]), rel=np.array([1e-4, 1e-4]))
    if abs(g1s) < 1e-6:
        h = _hessian(lambda p: ll(np.array([p[0], p[1] - 1.0])), np.array([g0s, g1s + 1.0]),
                     rel=np.array([1e-4, 1e-4]))
    cov_s = covariance_from_information(-h)
    # Back to the original unit: g1 = g1s / c, g0 = g0s - ln c.
    jac = np.array([[1.0, 0.0], [0.0, 1.0 / scale]])
    cov = jac @ cov_s @ jac.T
    ll_orig = ll(np.array([g0s, g1s])) - n * math.log(scale)
    return LogLinear(g0s - math.log(scale), g1s / scale, cov, ll_orig)


@dataclass(frozen=True)
class Hpp:
    lam: float
    exposure: float
    n: int
    log_likelihood: float


def hpp(data: EventData | GroupedData) -> Hpp:
    if isinstance(data, GroupedData):
        exposure = float(data.ends[-1]) * data.systems
        n = data.n_events
        m = data.counts / exposure * (data.ends - data.starts) * data.systems
        lam = n / exposure
        ll = float(np.sum(np.where(data.counts > 0, data.counts * np.log(lam * (data.ends - data.starts)
                                                                       * data.systems), 0.0))
                   - m.sum() - np.sum([math.lgamma(c + 1) for c in data.counts]))
        return Hpp(lam, exposure, n, ll)
    exposure = float(_ends(data).sum())
    n = data.n_events
    lam = n / exposure
    return Hpp(lam, exposure, n, n * math.log(lam) - n)


def hpp_rate_interval(h: Hpp, failure_terminated: bool, confidence: float) -> tuple[float, float]:
    """Exact chi-squared interval of a constant rate: 2 lambda T ~ chi2(2N) given a failure-
    terminated test; chi2(2N) / chi2(2N+2) bounds for a time-terminated one (Poisson)."""
    a = 1.0 - confidence
    lo = stats.chi2.ppf(a / 2, 2 * h.n) / (2 * h.exposure)
    hi_df = 2 * h.n if failure_terminated else 2 * h.n + 2
    return float(lo), float(stats.chi2.ppf(1 - a / 2, hi_df) / (2 * h.exposure))


@dataclass(frozen=True)
class Duane:
    alpha: float  # growth rate: the slope of log cumulative MTBF on log time
    b: float  # cumulative MTBF at t = 1 (time unit)
    r_squared: float
    points: tuple[tuple[float, float], ...]  # (t, cumulative MTBF) the line was fitted to

    def cumulative_mtbf(self, t: float) -> float:
        return self.b * t**self.alpha

    def instantaneous_mtbf(self, t: float) -> float:
        return self.cumulative_mtbf(t) / (1.0 - self.alpha)


def duane(times: np.ndarray, mcf: np.ndarray) -> Duane:
    """Duane's plot fit: least squares of ln(t / MCF(t)) on ln t at the event times (for one
    system MCF(t_i) = i, the textbook cumulative MTBF t_i / i)."""
    t = np.asarray(times, dtype=float)
    m = np.asarray(mcf, dtype=float)
    if np.unique(t).size < 2:
        raise InputError("data", "Duane's fit needs events at 2 or more distinct times")
    x = np.log(t)
    y = np.log(t / m)
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (slope * x + intercept)
    ss = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum(resid**2)) / ss if ss > 0 else 1.0
    return Duane(float(slope), float(math.exp(intercept)), r2, tuple(zip(t.tolist(), (t / m).tolist())))
