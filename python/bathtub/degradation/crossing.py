"""Time to first crossing of a threshold by a line with Gaussian random coefficients.

On the transformed axes a unit's path is h(y) = A + B·t (time untransformed) with
(A, B) ~ bivariate normal(μ_A, μ_B, σ_A, σ_B, ρ); failure is the first time the path reaches
u = h(D) (upward; a downward threshold is the same problem with A, B, u negated). A line's
maximum over [0, t] is at an end, so the unit survives t exactly when A < u and A + B·t < u:

    S(t) = P(A < u, A + B·t < u) = Φ₂((u − μ_A)/σ_A, (u − μ_A − μ_B·t)/s(t); r(t)),
    s(t)² = σ_A² + 2ρσ_Aσ_B·t + σ_B²·t²,   r(t) = (σ_A² + ρσ_Aσ_B·t)/(σ_A·s(t)),

the bivariate normal distribution function (Owen's T function gives it in closed form). With
a fixed intercept a (σ_A = 0) it is S(t) = Φ((u − a − μ_B·t)/(σ_B·t)) for a < u: for
y = a + b·t with b ~ N(μ_b, σ_b²), T = (D − a)/b and P(T > t) = P(b < (D − a)/t).

A Gaussian slope is negative with positive probability, so a share of units never fails:
F(∞) = 1 − P(A < u, B ≤ 0) < 1 and the mean life is infinite; `p_never` reports that share.
Quantiles beyond F(∞) are infinite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr, owens_t

from bathtub.errors import InputError


def bvn_cdf(h: np.ndarray, k: np.ndarray, r: np.ndarray) -> np.ndarray:
    """P(X < h, Y < k) for standard normals with correlation r (Owen 1956, eq. 3.1 via T(h, a))."""
    h, k, r = np.broadcast_arrays(np.asarray(h, float), np.asarray(k, float), np.asarray(r, float))
    out = np.empty(h.shape)
    one = r >= 1.0 - 1e-12
    neg = r <= -1.0 + 1e-12
    out[one] = ndtr(np.minimum(h[one], k[one]))
    out[neg] = np.maximum(0.0, ndtr(h[neg]) + ndtr(k[neg]) - 1.0)
    m = ~(one | neg)
    hh, kk, rr = h[m], k[m], r[m]
    # Owen's formula divides by h and k: nudge an exact zero (its T term tends to ±1/4, which
    # the nudge reproduces to rounding).
    hh = np.where(hh == 0.0, 1e-300, hh)
    kk = np.where(kk == 0.0, 1e-300, kk)
    q = np.sqrt((1.0 - rr) * (1.0 + rr))
    with np.errstate(over="ignore", invalid="ignore"):
        a1 = (kk - rr * hh) / (hh * q)
        a2 = (hh - rr * kk) / (kk * q)
    beta = np.where(hh * kk < 0, 0.5, 0.0)
    val = 0.5 * (ndtr(hh) + ndtr(kk)) - owens_t(hh, a1) - owens_t(kk, a2) - beta
    out[m] = np.clip(val, 0.0, 1.0)
    return out


def crossing_sf(ma: Any, mb: Any, sa: Any, sb: Any, rho: Any, u: Any, t: Any) -> np.ndarray:
    """S(t) of the upward first crossing of u by A + B·t, (A, B) ~ N((ma, mb), (sa, sb, rho)),
    elementwise over broadcast arrays (many units' lines at once)."""
    ma, mb, sa, sb, rho, u, t = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (ma, mb, sa, sb, rho, u, t)))
    tt = np.maximum(t, 0.0)
    out = np.empty(tt.shape)
    fixed = sa == 0.0
    if np.any(fixed):
        a, b, s, c, x = ma[fixed], mb[fixed], sb[fixed], u[fixed], tt[fixed]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (c - a - b * x) / (s * x)
        val = np.where(x > 0, ndtr(np.where(x > 0, z, 0.0)), 1.0)
        val = np.where(s == 0.0, np.where(b * x >= c - a, 0.0, 1.0), val)  # a fixed line
        out[fixed] = np.where(a >= c, 0.0, val)  # a common intercept already past the threshold
    free = ~fixed
    if np.any(free):
        a, b, c, x = ma[free], mb[free], u[free], tt[free]
        s_a, s_b, r = sa[free], sb[free], rho[free]
        s2 = np.sqrt(np.maximum(s_a * s_a + 2 * r * s_a * s_b * x + s_b * s_b * x * x, 0.0))
        corr = np.clip((s_a * s_a + r * s_a * s_b * x) / (s_a * s2), -1.0, 1.0)
        out[free] = bvn_cdf((c - a) / s_a, (c - a - b * x) / s2, corr)
    return out


@dataclass(frozen=True)
class LineCrossing:
    """The first-crossing life of h(y) = A + B·t across `u` = h(D) in `direction` (+1 up, -1 down)."""

    mu_a: float
    mu_b: float
    sd_a: float
    sd_b: float
    rho: float
    u: float
    direction: int = 1

    def __post_init__(self) -> None:
        for name in ("mu_a", "mu_b", "sd_a", "sd_b", "rho", "u"):
            if not math.isfinite(getattr(self, name)):
                raise InputError(name, "must be finite")
        if self.sd_a < 0 or self.sd_b < 0 or abs(self.rho) > 1:
            raise InputError("sd", "standard deviations must be >= 0 and |rho| <= 1")

    # upward form: A, B, u negated for a downward threshold (rho unchanged)
    @property
    def _up(self) -> tuple[float, float, float]:
        s = self.direction
        return s * self.mu_a, s * self.mu_b, s * self.u

    def sf(self, t: np.ndarray | float) -> np.ndarray:
        ma, mb, u = self._up
        return crossing_sf(ma, mb, self.sd_a, self.sd_b, self.rho, u, t)

    def cdf(self, t: np.ndarray | float) -> np.ndarray:
        return 1.0 - self.sf(t)

    @property
    def p_never(self) -> float:
        """P(the path never reaches the threshold) = P(A < u, B <= 0)."""
        ma, mb, u = self._up
        if self.sd_a == 0.0:
            if ma >= u:
                return 0.0
            if self.sd_b == 0.0:
                return 1.0 if mb <= 0 else 0.0
            return float(ndtr(-mb / self.sd_b))
        if self.sd_b == 0.0:
            return float(ndtr((u - ma) / self.sd_a)) if mb <= 0 else 0.0
        return float(bvn_cdf(np.array((u - ma) / self.sd_a), np.array(-mb / self.sd_b), np.array(self.rho)))

    def scale(self) -> float:
        """A time of the order of the typical crossing (to bracket quantiles)."""
        ma, mb, u = self._up
        if mb > 0 and u > ma:
            return (u - ma) / mb
        return max(abs(u - ma), 1.0) / max(abs(mb) + self.sd_b, 1e-300)

    def mean(self) -> float:
        if self.p_never > 0:
            return math.inf
        return _integral_sf(self.sf, self.scale())

    def quantile(self, p: np.ndarray | float) -> np.ndarray:
        return _ppf(self.sf, p, self.p_never, self.scale())


@dataclass(frozen=True)
class Residual:
    """A life conditioned on survival to `age`: remaining life s with S(age + s) / S(age)."""

    base: LineCrossing
    age: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.age) and self.age >= 0):
            raise InputError("age", "must be a finite number >= 0")
        if float(self.base.sf(self.age)) <= 0.0:
            raise InputError("age", f"no chance of surviving to age {self.age:g}: the path (given any readings) "
                                  "is past the threshold by then")

    @property
    def s_age(self) -> float:
        return float(self.base.sf(self.age))

    def sf(self, s: np.ndarray | float) -> np.ndarray:
        s = np.asarray(s, dtype=float)
        return np.where(s < 0, 1.0, self.base.sf(self.age + np.maximum(s, 0.0)) / self.s_age)

    def cdf(self, s: np.ndarray | float) -> np.ndarray:
        return 1.0 - self.sf(s)

    @property
    def p_never(self) -> float:
        return self.base.p_never / self.s_age

    def mean(self) -> float:
        if self.p_never > 0:
            return math.inf
        return _integral_sf(self.sf, self.base.scale())

    def quantile(self, p: np.ndarray | float) -> np.ndarray:
        return _ppf(self.sf, p, self.p_never, max(self.base.scale() - self.age, self.base.scale() * 1e-3))


def _ppf(sf: object, p: np.ndarray | float, p_never: float, scale: float) -> np.ndarray:
    """Quantiles by root-finding on S (monotone): 0 below F(0), inf at or above F(∞)."""
    p = np.asarray(p, dtype=float)
    out = np.empty(p.shape)
    f0 = 1.0 - float(sf(0.0))  # type: ignore[operator]
    for idx, q in np.ndenumerate(p):
        if not 0.0 <= q <= 1.0:
            raise InputError("p", "probabilities must lie in [0, 1]")
        if q <= f0:
            out[idx] = 0.0
            continue
        if q >= 1.0 - p_never:
            out[idx] = math.inf
            continue
        target = 1.0 - q

        def g(x: float, target: float = target) -> float:
            return float(sf(x)) - target  # type: ignore[operator]

        hi = max(scale, 1e-300)
        for _ in range(2000):
            if g(hi) <= 0:
                break
            hi *= 2.0
        else:
            out[idx] = math.inf
            continue
        lo = hi / 2.0
        while lo > 1e-300 * scale and g(lo) <= 0:
            lo /= 2.0
        out[idx] = brentq(g, lo if g(lo) > 0 else 0.0, hi, xtol=1e-14 * hi, rtol=1e-13)
    return out


def _integral_sf(sf: object, scale: float) -> float:
    """∫₀^∞ S(t) dt for a proper life (S → 0), by Gauss–Legendre panels out to where S < 1e-16."""
    nodes, weights = np.polynomial.legendre.leggauss(64)
    total, lo, width = 0.0, 0.0, scale / 4.0
    for _ in range(200):
        hi = lo + width
        x = lo + (nodes + 1.0) * (width / 2.0)
        vals = np.asarray(sf(x), dtype=float)  # type: ignore[operator]
        total += float(np.dot(weights, vals)) * width / 2.0
        if float(sf(hi)) < 1e-16:  # type: ignore[operator]
            return total
        lo, width = hi, width * 1.5
    return total
