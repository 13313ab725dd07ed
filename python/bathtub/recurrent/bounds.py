"""Confidence bounds of the power-law process.

- beta: exact. Given each system's count (time-terminated) or its last failure (failure-
  terminated), the informative times satisfy 2 beta S ~ chi2(2M), S = sum ln(T_q / t_qi) over
  the M informative events (Crow 1974; MIL-HDBK-189C section 5). The unbiased estimate is
  (M-1)/S: (N-1)/N beta_hat time-terminated, (N-2)/N beta_hat failure-terminated for one system.
- instantaneous MTBF at the end of a failure-terminated test of one system: exact (Crow
  1982): MTBF_hat / MTBF is distributed as G1 G2 / N^2, G1 ~ Gamma(N), G2 ~ Gamma(N-1)
  independent, so the bounds are MTBF_hat over that law's quantiles.
- instantaneous MTBF at the end T of a time-terminated test of K systems all ending at T:
  exact given S (Crow 1982): with V = beta S ~ Gamma(N), the count N given V is distributed as
  P(N = j) ~ (x/2)^(2j-1) / ((j-1)! j!), j >= 1, x = 2 sqrt(K rho(T) T S), i.e.
  P(N <= k | S) = H(x | k) = sum_{j<=k} (x/2)^(2j-1) / ((j-1)! j! I_1(x)). Inverting the
  observed N (N for one side, N - 1 for the other) bounds rho(T) = x^2 / (4 K T S), and the
  MTBF is its inverse;
- cumulative MTBF T / Lambda(T) with all systems ending together: N ~ Poisson(K Lambda(T))
  (time-terminated) or K Lambda(T_N) ~ Gamma(N) (failure-terminated): exact chi-squared bounds.
- otherwise: Fisher-matrix bounds on the log scale (the delta method), named so.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import integrate, optimize, special, stats

from bathtub import inference


def beta_chi2(s: float, m: int, confidence: float) -> tuple[float, float]:
    a = 1.0 - confidence
    return float(stats.chi2.ppf(a / 2, 2 * m) / (2 * s)), float(stats.chi2.ppf(1 - a / 2, 2 * m) / (2 * s))


def _product_cdf(r: float, n: int) -> float:
    """P(G1 G2 / n^2 <= r), G1 ~ Gamma(n), G2 ~ Gamma(n-1): the integral over G2's density of
    G1's distribution function (special functions only: the integrand is called many times)."""
    c = special.gammaln(n - 1)

    def f(g: float) -> float:
        return math.exp((n - 2) * math.log(g) - g - c) * float(special.gammainc(n, n * n * r / g))

    top = n + 40.0 * math.sqrt(n) + 60.0  # G2 beyond this has probability far below 1e-15
    val, _ = integrate.quad(f, 0.0, top, limit=200, epsabs=1e-13, epsrel=1e-11, points=[max(n - 2.0, 1e-9)])
    return val


@lru_cache(maxsize=512)
def product_quantile(p: float, n: int) -> float:
    """Quantile p of G1 G2 / n^2 (Crow's failure-terminated MTBF ratio)."""
    lo, hi = 1e-6, 1.0
    while _product_cdf(hi, n) < p:
        hi *= 2
    while _product_cdf(lo, n) > p:
        lo /= 2
    return float(optimize.brentq(lambda r: _product_cdf(r, n) - p, lo, hi, xtol=1e-13, rtol=1e-12))


def crow_failure_terminated(mtbf_hat: float, n: int, confidence: float) -> tuple[float, float]:
    """Two-sided exact bounds of the instantaneous MTBF at the last failure of one system."""
    a = 1.0 - confidence
    return mtbf_hat / product_quantile(1 - a / 2, n), mtbf_hat / product_quantile(a / 2, n)


def crow_failure_terminated_lower(mtbf_hat: float, n: int, confidence: float) -> float:
    """One-sided exact lower bound at `confidence`."""
    return mtbf_hat / product_quantile(confidence, n)


def poisson_mean(n: int, failure_terminated: bool, confidence: float) -> tuple[float, float]:
    """Bounds of the expected count behind n events: chi2(2n)/2 and chi2(2n+2)/2 for a fixed
    time (Poisson), chi2(2n)/2 both sides when the n-th event closed the test (Gamma(n))."""
    a = 1.0 - confidence
    lo = float(stats.chi2.ppf(a / 2, 2 * n) / 2)
    hi = float(stats.chi2.ppf(1 - a / 2, 2 * n if failure_terminated else 2 * n + 2) / 2)
    return lo, hi


def fisher_log(value: float, grad_log: np.ndarray, cov: np.ndarray, confidence: float) -> tuple[float, float]:
    """Bounds value exp(-+z se(ln value)), se from the gradient of ln value and the covariance."""
    var = float(grad_log @ cov @ grad_log)
    if not (math.isfinite(var) and var >= 0):
        return math.nan, math.nan
    z = inference.z(confidence)
    f = math.exp(z * math.sqrt(var))
    return value / f, value * f


def wald(value: float, se: float, confidence: float) -> tuple[float, float]:
    z = inference.z(confidence)
    return value - z * se, value + z * se


@lru_cache(maxsize=64)
def _bessel_terms(k: int) -> tuple[np.ndarray, np.ndarray]:
    j = np.arange(1, k + 1)
    return (2 * j - 1).astype(float), -special.gammaln(j) - special.gammaln(j + 1)


def _h(x: float, k: int) -> float:
    """H(x | k) = P(N <= k | S), N's conditional law a truncated Bessel series (see above)."""
    if k < 1:
        return 0.0
    power, const = _bessel_terms(k)
    log_terms = power * math.log(x / 2) + const
    top = float(log_terms.max())
    log_sum = top + math.log(float(np.sum(np.exp(log_terms - top))))
    log_i1 = math.log(float(special.ive(1, x))) + x
    return min(1.0, math.exp(log_sum - log_i1))


def _x_solving(target: float, k: int) -> float:
    """x with H(x | k) = target (H falls from 1 to 0 as x grows)."""
    lo, hi = 1e-8, max(4.0 * k, 10.0)
    while _h(hi, k) > target:
        hi *= 2
    return float(optimize.brentq(lambda x: _h(x, k) - target, lo, hi, xtol=1e-12, rtol=1e-12))


def crow_time_terminated(s: float, n: int, t: float, k: int, confidence: float,
                         one_sided: bool = False) -> tuple[float, float]:
    """Bounds of the instantaneous MTBF at T (time-terminated, K systems ending at T, N events,
    S = sum ln(T/t)). Two-sided at `confidence`, or (lower, inf) one-sided."""
    a = 1.0 - confidence
    tail = a if one_sided else a / 2
    x_hi = _x_solving(tail, n)  # largest rho: P(N <= n | S) = tail
    lower = 4 * k * t * s / x_hi**2
    if one_sided:
        return lower, math.inf
    if n < 2:
        return lower, math.inf
    x_lo = _x_solving(1 - tail, n - 1)  # smallest rho: P(N >= n | S) = tail
    return lower, 4 * k * t * s / x_lo**2
