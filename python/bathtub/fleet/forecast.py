"""Expected failures per period of a fleet, with an interval on each period's count.

Item i has used a_i (in the life model's unit) and uses r_i per period, so period j covers its use
from a_i + (j−1)·r_i to a_i + j·r_i. Items fail independently.

- Failed items not replaced: item i fails in period j with p_ij = [S(a_i + (j−1)r_i) − S(a_i + j r_i)]
  / S(a_i) (it has survived to a_i). The count in a period is Poisson-binomial; its distribution is
  computed exactly as the product of the items' generating functions (1 − p + p z), multiplied in a
  balanced tree by FFT and truncated where the mass is nil (coefficients of low degree never depend on
  higher ones, so the truncation changes nothing).
- Failed items replaced by new ones (renewal): exponential lives give λ·r_i per period exactly; other
  lives use the renewal equation E N_i(x) = ∫0^x (1 + M0(x − s)) dF_a(s), M0 the renewal function from
  new (solved on a grid), F_a the residual-life distribution at age a_i, as a Stieltjes sum on quarter
  periods. The count's interval is then Poisson (items may fail more than once; for wearing-out lives
  the real spread is a little narrower, so the interval is on the safe side).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.fleet.lives import ItemLives, SameLife

SUBSTEPS = 4  # Stieltjes steps per period in the renewal sum
RENEWAL_GRID = 4000
MAX_RENEWAL_LAWS = 200  # distinct item lives a renewal forecast solves the renewal equation for


@dataclass(frozen=True)
class Forecast:
    periods: int
    expected_failures: list[float]
    lower: list[int]
    upper: list[int]
    confidence: float
    total_expected: float
    renewal: bool
    method: str
    interval_method: str
    item_expected: np.ndarray = field(repr=False)  # (n,) expected failures over the horizon
    item_next: np.ndarray = field(repr=False)  # (n,) chance of failing in the next period

    def to_dict(self) -> dict[str, Any]:
        return {"periods": self.periods, "expected_failures": self.expected_failures,
                "interval": {"confidence": self.confidence, "lower": self.lower, "upper": self.upper,
                             "method": self.interval_method},
                "total_expected": self.total_expected, "renewal": self.renewal, "method": self.method}


Life = Lifetime | ItemLives  # one law for every item, or each item's own


def _lives(life: Life, n: int) -> ItemLives:
    return life if isinstance(life, ItemLives) else SameLife(life, n)


def _conditional_sf(lives: ItemLives, ages: np.ndarray, rates: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """S(a + r·t)/S(a) for each item (rows) at each step t (columns), on the log scale."""
    base = lives.logsf(ages[:, None])[:, 0]
    if np.any(~np.isfinite(base)):
        raise InputError("items", "an item's current use is beyond where the life model gives any survival")
    use = ages[:, None] + rates[:, None] * steps[None, :]
    return np.exp(lives.logsf(use) - base[:, None])


def failure_probability(life: Life, ages: Sequence[float], rates: Sequence[float], periods: float) -> np.ndarray:
    """Each item's chance of failing within `periods` periods, given it works now."""
    a, r = np.asarray(ages, dtype=float), np.asarray(rates, dtype=float)
    return 1.0 - _conditional_sf(_lives(life, a.size), a, r, np.array([float(periods)]))[:, 0]


def poisson_binomial_pmf(p: np.ndarray, kmax: int | None = None) -> np.ndarray:
    """P(K = k), k = 0..kmax, for K the number of successes of independent trials with chances p
    (one row of chances per column of the answer when p is 2-D: items × periods)."""
    p = np.asarray(p, dtype=float)
    flat = p.ndim == 1
    p = p[:, None] if flat else p
    mean, var = p.sum(axis=0), (p * (1.0 - p)).sum(axis=0)
    top = int(min(p.shape[0], math.ceil(float(np.max(mean + 12.0 * np.sqrt(var))) + 12.0))) if kmax is None else kmax
    polys = np.stack([1.0 - p.T, p.T], axis=2)  # (columns, items, 2): one product per column
    while polys.shape[1] > 1:
        if polys.shape[1] % 2:
            one = np.zeros((polys.shape[0], 1, polys.shape[2]))
            one[:, 0, 0] = 1.0
            polys = np.concatenate([polys, one], axis=1)
        a, b = polys[:, 0::2], polys[:, 1::2]
        width = min(a.shape[2] + b.shape[2] - 1, top + 1)
        if a.shape[2] <= 16:  # short polynomials: direct products beat an FFT's set-up
            prod = np.zeros((*a.shape[:2], width))
            for i in range(a.shape[2]):
                span = min(b.shape[2], width - i)
                if span > 0:
                    prod[:, :, i:i + span] += a[:, :, i:i + 1] * b[:, :, :span]
        else:
            full = a.shape[2] + b.shape[2] - 1
            nfft = 1 << (full - 1).bit_length()
            prod = np.fft.irfft(np.fft.rfft(a, nfft, axis=2) * np.fft.rfft(b, nfft, axis=2), nfft, axis=2)[:, :, :width]
        polys = np.clip(prod, 0.0, None)
    pmf = polys[:, 0, :]
    pmf = pmf / pmf.sum(axis=1, keepdims=True)
    return pmf[0] if flat else pmf.T


EXACT_CELLS = 240_000  # items × periods up to which the count's distribution is computed exactly


def rna_cdf(p: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """P(K <= k) at counts `ks` of a Poisson-binomial count by the refined normal approximation
    (Volkova 1996): Φ(x) + γ(1 − x²)φ(x)/6 at x = (k + ½ − μ)/σ, γ the skewness, made
    non-decreasing; its error falls like 1/n, below 1e-3 in probability for the fleets it is used
    on (tested against the exact law). A count with no spread is a step at its mean."""
    mu = float(p.sum())
    var = float((p * (1.0 - p)).sum())
    ks = np.asarray(ks, dtype=float)
    if var <= 0.0:
        return (ks >= round(mu)).astype(float)
    sd = math.sqrt(var)
    gamma = float((p * (1.0 - p) * (1.0 - 2.0 * p)).sum()) / sd**3
    x = (ks + 0.5 - mu) / sd
    return np.asarray(np.maximum.accumulate(stats.norm.cdf(x) + gamma * (1.0 - x**2) * stats.norm.pdf(x) / 6.0))


def rna_quantile(p: np.ndarray, q: float) -> int:
    """The q-quantile of a Poisson-binomial count by the refined normal approximation (`rna_cdf`)."""
    mu = float(p.sum())
    var = float((p * (1.0 - p)).sum())
    if var <= 0.0:
        return round(mu)
    sd = math.sqrt(var)
    ks = np.arange(max(0, math.floor(mu - 10 * sd - 5)), math.ceil(mu + 10 * sd + 5) + 1)
    idx = int(np.searchsorted(rna_cdf(p, ks), q, side="left"))
    return int(ks[min(idx, len(ks) - 1)])


def _quantiles(pmf: np.ndarray, confidence: float) -> tuple[int, int]:
    return cdf_quantiles(np.cumsum(pmf), confidence)


def cdf_quantiles(cdf: np.ndarray, confidence: float) -> tuple[int, int]:
    """The equal-tailed `confidence` interval (lower, upper) of a count from its P(K <= k), k = 0..:
    the least k whose distribution function reaches each tail (the last k where it never does)."""
    tail = (1.0 - confidence) / 2.0
    lo = int(np.searchsorted(cdf, tail, side="left"))
    hi = int(np.searchsorted(cdf, 1.0 - tail, side="left"))
    return lo, min(hi, len(cdf) - 1)


def _renewal_function(life: Any, top: float, points: int = RENEWAL_GRID) -> tuple[np.ndarray, np.ndarray]:
    """M0(u), the expected renewals in use [0, u] from new, on a grid: M0 = F + dF * M0."""
    u = np.linspace(0.0, top, points + 1)
    cdf = np.asarray(life.cdf(u), dtype=float)
    d_cdf = np.diff(cdf)
    m = np.zeros_like(u)
    for k in range(1, points + 1):
        # M0(u_k) = F(u_k) + Σ_{l=1..k} M0(u_{k−l}) (F(u_l) − F(u_{l−1})): error of order the grid step
        back = m[k - 1::-1][:k]  # M0(u_{k-1}), ..., M0(u_0)
        m[k] = cdf[k] + float(np.dot(d_cdf[:k], back))
    return u, m


def forecast(life: Life, ages: Sequence[float], rates: Sequence[float], periods: int, *, renewal: bool = False,
             confidence: float = 0.9) -> Forecast:
    """Expected failures in each of `periods` periods for items at `ages` using `rates` per period; `life` is
    one law for every item or an ItemLives with each item's own (rows in the order of `ages`)."""
    if not 1 <= periods <= 1200:
        raise InputError("periods", "must be 1 to 1200")
    a = np.asarray(ages, dtype=float)
    r = np.asarray(rates, dtype=float)
    if a.shape != r.shape or a.ndim != 1:
        raise InputError("items", "ages and rates must be arrays of one length")
    if np.any(~np.isfinite(a)) or np.any(a < 0) or np.any(~np.isfinite(r)) or np.any(r < 0):
        raise InputError("items", "current use and rates must be finite and >= 0")
    n = a.size
    lives = _lives(life, n)
    if len(lives) != n:
        raise InputError("items", "one life law per item is needed")
    steps = np.arange(periods + 1, dtype=float)
    if n == 0:
        zeros = [0.0] * periods
        return Forecast(periods, zeros, [0] * periods, [0] * periods, confidence, 0.0, renewal, "no items", "none",
                        np.zeros(0), np.zeros(0))
    surv = _conditional_sf(lives, a, r, steps)  # (n, periods + 1)
    p = -np.diff(surv, axis=1)  # (n, periods): chance of (first) failure in each period
    item_next = p[:, 0]
    if not renewal:
        expected = p.sum(axis=0)
        if n * periods <= EXACT_CELLS:
            pmf = poisson_binomial_pmf(p)
            bounds = [_quantiles(pmf[:, j], confidence) for j in range(periods)]
            how = "Poisson-binomial, exact"
        else:
            tail = (1.0 - confidence) / 2.0
            bounds = [(rna_quantile(p[:, j], tail), rna_quantile(p[:, j], 1.0 - tail)) for j in range(periods)]
            how = "Poisson-binomial, refined normal approximation (large fleet)"
        return Forecast(periods, expected.tolist(), [b[0] for b in bounds], [b[1] for b in bounds], confidence,
                        float(expected.sum()), False, "conditional survival per item (no replacement)",
                        how, p.sum(axis=1), item_next)
    per_item = _renewal_counts(lives, a, r, periods)  # (n, periods)
    expected = per_item.sum(axis=0)
    tail = (1.0 - confidence) / 2.0
    lower = [int(stats.poisson.ppf(tail, m)) if m > 0 else 0 for m in expected]
    upper = [int(stats.poisson.ppf(1.0 - tail, m)) if m > 0 else 0 for m in expected]
    method = ("renewal, exponential lives: λ·rate per period exactly" if lives.exponential_rate() is not None
              else "renewal equation (residual life at the current use, then renewals from new)")
    return Forecast(periods, expected.tolist(), lower, upper, confidence, float(expected.sum()), True, method,
                    "Poisson with the expected count", per_item.sum(axis=1), 1.0 - surv[:, 1])


def count_distribution(life: Life, ages: Sequence[float], rates: Sequence[float], periods: int, *,
                       renewal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(expected failures per period (periods,), P(K_j <= k) for k = 0..K (K + 1, periods)): each
    period's count under one life law, by the forecast's own laws (Poisson-binomial, exact up to
    EXACT_CELLS items × periods, else the refined normal approximation; Poisson with replacement).
    K reaches where every period's distribution function is 1 to within 1e-12 or so."""
    a = np.asarray(ages, dtype=float)
    r = np.asarray(rates, dtype=float)
    lives = _lives(life, a.size)
    if not renewal:
        p = -np.diff(_conditional_sf(lives, a, r, np.arange(periods + 1, dtype=float)), axis=1)
        if a.size * periods <= EXACT_CELLS:
            return p.sum(axis=0), np.cumsum(poisson_binomial_pmf(p), axis=0)
        mean, sd = p.sum(axis=0), np.sqrt((p * (1.0 - p)).sum(axis=0))
        ks = np.arange(min(a.size, math.ceil(float(np.max(mean + 12.0 * sd))) + 12) + 1)
        return mean, np.column_stack([rna_cdf(p[:, j], ks) for j in range(periods)])
    expected = _renewal_counts(lives, a, r, periods).sum(axis=0)
    ks = np.arange(math.ceil(float(np.max(expected + 12.0 * np.sqrt(expected)))) + 13)
    return expected, stats.poisson.cdf(ks[:, None], expected[None, :])


def _renewal_counts(lives: ItemLives, a: np.ndarray, r: np.ndarray, periods: int) -> np.ndarray:
    """Expected failures of each item in each period when failed items are replaced by new ones (a
    replacement is new with the same law as the item it replaces: same model, same covariates)."""
    lam = lives.exponential_rate()
    if lam is not None:
        return np.repeat((lam * r)[:, None], periods, axis=1)
    steps = periods * SUBSTEPS
    grid = np.arange(steps + 1, dtype=float) / SUBSTEPS  # in periods
    surv = _conditional_sf(lives, a, r, grid)
    d_f = -np.diff(surv, axis=1)  # (n, steps): residual-life mass in each quarter period
    offsets = (np.arange(steps, dtype=float) + 0.5) / SUBSTEPS  # periods between a failure and a time point
    kernel = np.ones((a.size, steps))
    laws = lives.distinct_laws()
    if laws > MAX_RENEWAL_LAWS:
        raise InputError("replace_failed", f"replacement needs a renewal function per distinct item life: at most "
                                           f"{MAX_RENEWAL_LAWS} (here {laws}; a Cox model has one per distinct "
                                           "covariate set)")
    for idx, one, scale in lives.groups():  # the renewal function from new of each distinct law, in its own time scale
        use = r[idx] * scale  # the law's time per period, item by item
        # items whose horizons (in the law's time) lie within a factor 2 share one grid, so every item's
        # horizon spans at least half the grid's points
        octave = np.floor(np.log2(np.where(use > 0, use, 1.0))).astype(np.int64)
        for o in np.unique(octave[use > 0]):
            sel = (octave == o) & (use > 0)
            u, m0 = _renewal_function(one, float(use[sel].max()) * periods)
            kernel[idx[sel]] = 1.0 + np.interp(use[sel, None] * offsets[None, :], u, m0)  # (items, steps)
    nfft = 1 << (2 * steps - 1).bit_length()
    conv = np.fft.irfft(np.fft.rfft(d_f, nfft, axis=1) * np.fft.rfft(kernel, nfft, axis=1), nfft, axis=1)
    # E N(x_j) = Σ_{m < jS} dF_m · (1 + M0((jS − m − ½)·r/S)): the causal convolution at jS − 1
    cumulative = conv[:, SUBSTEPS - 1: steps: SUBSTEPS]
    cumulative = np.maximum.accumulate(np.clip(cumulative, 0.0, None), axis=1)
    return np.diff(np.concatenate([np.zeros((a.size, 1)), cumulative], axis=1), axis=1)
