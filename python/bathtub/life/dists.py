"""Closed-form life distributions for fitting: the `Lifetime` representation of the common families.

Every class here states `logpdf`, `logsf`, `logcdf` (the three log-likelihood pieces), `quantile`
and `mean` in numpy, without a scipy object per likelihood call; `Lifetime` derives sf, cdf, pdf,
hazard and cumulative hazard from them, so a wrapper (`wrappers.py`: location shift, zero
inflation, limited failure population, mixture) only states how it changes the three log pieces.
The other families fit through scipy (`Lifetime.of`). Times are in the data's unit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import integrate, special

from bathtub.distributions import Lifetime, log1mexp

ArrayLike = Any


class Weibull(Lifetime):
    """Two-parameter Weibull in closed form (the hot path of every fit)."""

    def __init__(self, alpha: float, beta: float) -> None:
        self.alpha, self.beta = alpha, beta

    def _z(self, t: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        t = np.asarray(t, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            lt = np.log(t)
        if t.size and t.min() <= 0:  # no mass at or below 0 (ln of a negative time is nan)
            lt = np.where(t > 0, lt, -np.inf)
        lz = self.beta * (lt - math.log(self.alpha))
        return lz, np.exp(lz)

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        lz, z = self._z(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = math.log(self.beta) - np.log(t) + lz - z
        return np.where(t > 0, out, -np.inf if self.beta > 1 else (0.0 if self.beta == 1 else np.inf))

    def logsf(self, t: ArrayLike) -> np.ndarray:
        return -self._z(t)[1]

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        return log1mexp(-self._z(t)[1])

    def quantile(self, q: float) -> float:
        if q >= 1.0:
            return math.inf
        return self.alpha * (-math.log1p(-q)) ** (1.0 / self.beta)

    def mean(self) -> float:
        return self.alpha * math.gamma(1.0 + 1.0 / self.beta)


LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
EULER = 0.5772156649015329


def _pos(t: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """t as floats, the mask t > 0, and ln t where positive (-inf elsewhere)."""
    t = np.asarray(t, dtype=float)
    pos = t > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        lt = np.where(pos, np.log(np.where(pos, t, 1.0)), -np.inf)
    return t, pos, lt


class Exponential(Lifetime):
    """Constant hazard `rate`, in closed form."""

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        return np.where(t >= 0, math.log(self.rate) - self.rate * t, -np.inf)

    def logsf(self, t: ArrayLike) -> np.ndarray:
        return -self.rate * np.maximum(np.asarray(t, dtype=float), 0.0)

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        return log1mexp(self.logsf(t))

    def quantile(self, q: float) -> float:
        return math.inf if q >= 1 else -math.log1p(-q) / self.rate

    def mean(self) -> float:
        return 1.0 / self.rate


class Normal(Lifetime):
    """Normal (mu, sigma); tails through log_ndtr, so deep tails keep their digits."""

    def __init__(self, mu: float, sigma: float) -> None:
        self.mu, self.sigma = mu, sigma

    def _z(self, t: ArrayLike) -> np.ndarray:
        return (np.asarray(t, dtype=float) - self.mu) / self.sigma

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        z = self._z(t)
        return -0.5 * z * z - math.log(self.sigma) - LOG_SQRT_2PI

    def logsf(self, t: ArrayLike) -> np.ndarray:
        return special.log_ndtr(-self._z(t))

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        return special.log_ndtr(self._z(t))

    def quantile(self, q: float) -> float:
        return self.mu + self.sigma * float(special.ndtri(q))

    def mean(self) -> float:
        return self.mu


class Lognormal(Lifetime):
    """ln T ~ Normal(mu, sigma)."""

    def __init__(self, mu: float, sigma: float) -> None:
        self.mu, self.sigma = mu, sigma

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        _, pos, lt = _pos(t)
        z = np.where(pos, (lt - self.mu) / self.sigma, 0.0)
        return np.where(pos, -0.5 * z * z - math.log(self.sigma) - LOG_SQRT_2PI - np.where(pos, lt, 0.0), -np.inf)

    def logsf(self, t: ArrayLike) -> np.ndarray:
        _, _, lt = _pos(t)
        return special.log_ndtr(-(lt - self.mu) / self.sigma)

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        _, _, lt = _pos(t)
        return special.log_ndtr((lt - self.mu) / self.sigma)

    def quantile(self, q: float) -> float:
        return math.exp(self.mu + self.sigma * float(special.ndtri(q)))

    def mean(self) -> float:
        return math.exp(self.mu + 0.5 * self.sigma**2)


class Logistic(Lifetime):
    """Logistic (mu, sigma): F = 1 / (1 + e^-z)."""

    def __init__(self, mu: float, sigma: float) -> None:
        self.mu, self.sigma = mu, sigma

    def _z(self, t: ArrayLike) -> np.ndarray:
        return (np.asarray(t, dtype=float) - self.mu) / self.sigma

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        z = self._z(t)
        return -np.logaddexp(0.0, -z) - np.logaddexp(0.0, z) - math.log(self.sigma)

    def logsf(self, t: ArrayLike) -> np.ndarray:
        return -np.logaddexp(0.0, self._z(t))

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        return -np.logaddexp(0.0, -self._z(t))

    def quantile(self, q: float) -> float:
        return self.mu + self.sigma * float(special.logit(q))

    def mean(self) -> float:
        return self.mu


class SmallestExtremeValue(Lifetime):
    """Gumbel of minima (mu, sigma): S = exp(-e^z), the log of a Weibull variable."""

    def __init__(self, mu: float, sigma: float) -> None:
        self.mu, self.sigma = mu, sigma

    def _z(self, t: ArrayLike) -> np.ndarray:
        return (np.asarray(t, dtype=float) - self.mu) / self.sigma

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        z = self._z(t)
        return z - np.exp(z) - math.log(self.sigma)

    def logsf(self, t: ArrayLike) -> np.ndarray:
        return -np.exp(self._z(t))

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        return log1mexp(-np.exp(self._z(t)))

    def quantile(self, q: float) -> float:
        return math.inf if q >= 1 else self.mu + self.sigma * math.log(-math.log1p(-q))

    def mean(self) -> float:
        return self.mu - EULER * self.sigma


class LogLogistic(Lifetime):
    """Log-logistic (alpha scale = median, beta shape): F = 1 / (1 + (t/alpha)^-beta)."""

    def __init__(self, alpha: float, beta: float) -> None:
        self.alpha, self.beta = alpha, beta

    def _y(self, t: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        _, pos, lt = _pos(t)
        return self.beta * (lt - math.log(self.alpha)), pos, lt

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        y, pos, lt = self._y(t)
        yy = np.where(pos, y, 0.0)
        out = math.log(self.beta) - np.where(pos, lt, 0.0) - np.logaddexp(0.0, -yy) - np.logaddexp(0.0, yy)
        return np.where(pos, out, -np.inf if self.beta > 1 else (-math.log(self.alpha) if self.beta == 1 else np.inf))

    def logsf(self, t: ArrayLike) -> np.ndarray:
        return -np.logaddexp(0.0, self._y(t)[0])

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        return -np.logaddexp(0.0, -self._y(t)[0])

    def quantile(self, q: float) -> float:
        if q >= 1:
            return math.inf
        return self.alpha * (q / (1.0 - q)) ** (1.0 / self.beta) if q > 0 else 0.0

    def mean(self) -> float:
        if self.beta <= 1:
            return math.inf
        b = math.pi / self.beta
        return self.alpha * b / math.sin(b)


class Gamma(Lifetime):
    """Gamma (alpha shape, beta scale) in closed form: F = P(alpha, t / beta), the regularised
    incomplete gamma (what scipy's gamma uses, without a frozen object per likelihood call)."""

    def __init__(self, alpha: float, beta: float) -> None:
        self.alpha, self.beta = alpha, beta
        self.norm = special.gammaln(alpha) + alpha * math.log(beta)

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        t, pos, lt = _pos(t)
        out = (self.alpha - 1.0) * np.where(pos, lt, 0.0) - np.where(pos, t, 0.0) / self.beta - self.norm
        at0 = -np.inf if self.alpha > 1 else (-math.log(self.beta) if self.alpha == 1 else np.inf)
        return np.where(pos, out, np.where(t == 0, at0, -np.inf))

    def _pq(self, t: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        x = np.maximum(np.asarray(t, dtype=float), 0.0) / self.beta
        return special.gammainc(self.alpha, x), special.gammaincc(self.alpha, x)

    def logsf(self, t: ArrayLike) -> np.ndarray:
        p, q = self._pq(t)
        with np.errstate(divide="ignore"):  # from the smaller tail, so neither end loses digits
            return np.where(p < 0.5, np.log1p(-p), np.log(q))

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        p, q = self._pq(t)
        with np.errstate(divide="ignore"):
            return np.where(q < 0.5, np.log1p(-q), np.log(p))

    def quantile(self, q: float) -> float:
        return math.inf if q >= 1 else self.beta * float(special.gammaincinv(self.alpha, q))

    def mean(self) -> float:
        return self.alpha * self.beta


class ExpoWeibull(Lifetime):
    """Exponentiated Weibull (alpha scale, beta shape, theta exponent): F = (1 - exp(-(t/alpha)^beta))^theta."""

    def __init__(self, alpha: float, beta: float, theta: float) -> None:
        self.alpha, self.beta, self.theta = alpha, beta, theta

    def _z(self, t: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(t, ln(t/alpha) where t > 0 else -inf, z = (t/alpha)^beta)."""
        t, _, lt = _pos(t)
        lr = lt - math.log(self.alpha)
        return t, lr, np.exp(self.beta * lr)

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        _, _, z = self._z(t)
        with np.errstate(divide="ignore"):
            return self.theta * log1mexp(-z)

    def logsf(self, t: ArrayLike) -> np.ndarray:
        return log1mexp(self.logcdf(t))

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        t, lr, z = self._z(t)
        pos = t > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            lw = np.where(pos, log1mexp(-np.where(pos, z, 1.0)), 0.0)
            out = (math.log(self.theta * self.beta / self.alpha) + (self.beta - 1.0) * np.where(pos, lr, 0.0)
                   - np.where(pos, z, 0.0) + (self.theta - 1.0) * lw)
        # at t = 0 the density behaves like t^(beta*theta - 1)
        bt = self.beta * self.theta
        at0 = -np.inf if bt > 1 else (math.log(self.theta * self.beta / self.alpha) if bt == 1 else np.inf)
        return np.where(pos, out, np.where(t == 0, at0, -np.inf))

    def quantile(self, q: float) -> float:
        if q >= 1:
            return math.inf
        if q <= 0:
            return 0.0
        # F^-1(q) = alpha (-ln(1 - q^(1/theta)))^(1/beta)
        return self.alpha * (-math.log(-math.expm1(math.log(q) / self.theta))) ** (1.0 / self.beta)

    def mean(self) -> float:
        """E[T] = int_0^1 F^-1(q) dq = alpha theta int_0^1 u^(theta - 1 + 1/beta) g(u) du with u = q^(1/theta)
        and g(u) = (-ln(1 - u) / u)^(1/beta), smooth at 0: the algebraic factor goes to quadrature
        weights (QAWS) on [0, 1/2]; the integrable log-power end at 1 to QAGS on [1/2, 1]."""
        ib, th = 1.0 / self.beta, self.theta

        def g(u: float) -> float:
            return (-math.log1p(-u) / u) ** ib if u > 0 else 1.0

        head = integrate.quad(g, 0.0, 0.5, weight="alg", wvar=(th - 1.0 + ib, 0.0), epsabs=0.0, epsrel=1e-12)[0]
        def h(u: float) -> float:  # -ln(1 - u) at u = 1 in floating point: -ln of the least double
            return u ** (th - 1.0) * (-math.log1p(-u) if u < 1.0 else 744.44) ** ib

        tail = integrate.quad(h, 0.5, 1.0, epsabs=0.0, epsrel=1e-12, limit=200)[0]
        return self.alpha * th * (head + tail)


_DIRECT_TERMS = 100_000  # discrete Weibull mean: terms summed one by one before the tail formula


class DiscreteWeibull(Lifetime):
    """Discrete Weibull (Nakagawa–Osaki type I) on cycles k = 1, 2, ...: P(T > k) = q^(k^beta).

    q in (0, 1) is the probability of surviving the first cycle, beta > 0 the shape. beta = 1
    is the geometric distribution (constant chance 1 - q of failing at each cycle). `pdf` is the
    probability mass P(T = k) = q^((k-1)^beta) - q^(k^beta); between integers sf is a step.
    """

    def __init__(self, q: float, beta: float) -> None:
        self.q, self.beta = q, beta
        self.lq = math.log(q)

    def _logsf_k(self, k: np.ndarray) -> np.ndarray:
        return self.lq * np.power(np.maximum(k, 0.0), self.beta)

    def logsf(self, t: ArrayLike) -> np.ndarray:
        return self._logsf_k(np.floor(np.asarray(t, dtype=float)))

    def logcdf(self, t: ArrayLike) -> np.ndarray:
        return log1mexp(self.logsf(t))

    def logpdf(self, t: ArrayLike) -> np.ndarray:
        k = np.asarray(t, dtype=float)
        a, b = self._logsf_k(k - 1.0), self._logsf_k(k)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = a + log1mexp(b - a)
        return np.where((k >= 1) & (k == np.floor(k)), out, -np.inf)

    def quantile_real(self, q: float) -> float:
        """The real root t of q^(t^beta) = 1 - q: (ln(1 - q) / ln q)^(1/beta)."""
        if q >= 1.0:
            return math.inf
        if q <= 0.0:
            return 0.0
        return math.exp(math.log(math.log1p(-q) / self.lq) / self.beta)

    def quantile(self, q: float) -> float:
        """The smallest cycle k with F(k) >= q, i.e. ceil of the real root (at least 1)."""
        t = self.quantile_real(q)
        if not math.isfinite(t):
            return t
        return float(max(math.ceil(t - 1e-12), 1))

    def mean(self) -> float:
        """E[T] = sum_{k>=0} P(T > k) = sum_k q^(k^beta).

        Summed directly while the terms matter; a slowly decaying tail (q near 1, small beta)
        is closed by Euler–Maclaurin from K on: the integral of f(x) = exp(-c x^beta),
        c^(-1/beta) Gamma(1/beta, c K^beta) / beta, plus f(K)/2 - f'(K)/12 + f(3)(K)/720.
        """
        c, b = -self.lq, self.beta
        k = np.arange(_DIRECT_TERMS, dtype=float)
        terms = np.exp(-c * k**b)
        total = math.fsum(terms)
        if terms[-1] < 1e-17 * total:
            return total
        big = float(_DIRECT_TERMS)
        a = 1.0 / b
        x = c * big**b
        upper = float(special.gammaincc(a, x))
        f = math.exp(-x)
        # f' = d1 f, f''' = (d1^3 + 3 d1 d2 + d3) f with d_n the n-th derivative of -c t^b at K
        d1 = -c * b * big ** (b - 1)
        d2 = -c * b * (b - 1) * big ** (b - 2)
        d3 = -c * b * (b - 1) * (b - 2) * big ** (b - 3)
        try:
            integral = math.exp(-a * math.log(c) + special.gammaln(a) + math.log(upper) - math.log(b))
        except (OverflowError, ValueError):
            return math.inf if upper > 0 else total
        return total + integral + f / 2.0 - d1 * f / 12.0 + (d1**3 + 3 * d1 * d2 + d3) * f / 720.0
