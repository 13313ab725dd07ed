"""Median ranks (Johnson's adjusted ranks for censored data), Anderson–Darling, rank regression.

Johnson's adjusted rank of a failure: r_i = r_{i-1} + (n + 1 - r_{i-1}) / (1 + R_i), with R_i
the reverse rank (units at or after it, failures sorted before suspensions at a tie). It is a
product, n + 1 - r_i = (n + 1) prod R_j / (1 + R_j), and over m tied failures the product
telescopes to (R - m + 1) / (R + 1), so collapsed data is ranked in one vectorised pass.
The median rank is Bernard's (r - 0.3) / (n + 0.4) or the exact beta median.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import special, stats

from bathtub.errors import InputError
from bathtub.life.data import LifeData


def adjusted_ranks(data: LifeData) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(failure times, counts, adjusted rank of the *last* failure at each time, n).

    Exact and right-censored data only; the rank of the first failure of a tied group is
    recovered by the caller when needed.
    """
    # units before a failure time t: the failures before it and the suspensions strictly before
    # t (failures come first at a tie), known to the data since its construction sorted them
    n = float(data.fn.sum() + data.rn.sum())
    fw = data.fn
    # ln((R - m + 1) / (R + 1)) with R = n - units before; one buffer, updated in place (at
    # 10^6 rows each fresh temporary costs its page faults as much as its arithmetic)
    x = np.subtract(n, data.units_before())
    x += 1.0
    np.divide(fw, x, out=x)
    np.negative(x, out=x)
    np.log1p(x, out=x)
    np.cumsum(x, out=x)
    np.exp(x, out=x)
    np.subtract(1.0, x, out=x)
    x *= n + 1.0
    return data.f, fw, x, n


def median_rank(r: np.ndarray, n: float, exact: bool = False) -> np.ndarray:
    """Median rank of adjusted rank r among n: Bernard's approximation or the exact beta median."""
    if exact:
        return special.betaincinv(r, n - r + 1.0, 0.5)
    return (r - 0.3) / (n + 0.4)


def anderson_darling(logsf: Callable[[np.ndarray], np.ndarray] | np.ndarray, data: LifeData) -> float | None:
    """Anderson–Darling statistic in Minitab's adjusted form for exact + right-censored data.

    Sum over failures i (sorted) of the integral of (Fn - F)^2 / (F (1 - F)) dF between
    consecutive fitted CDF values Z_{i-1}, Z_i, with Fn the (Bernard) median rank; scaled by the
    number of failures. Takes the fitted log survival function (ln(1 - Z) without cancellation),
    or its values at the distinct failure times `data.f` when the fit already has them.
    None for left- or interval-censored data, where it is not defined.
    """
    if not data.only_exact_and_right or data.f.size == 0:
        return None
    tf, fw, ranks, n = adjusted_ranks(data)
    m = float(fw.sum())
    fr = ranks  # Fn after the last failure of each tied group: Bernard's median rank, in place
    fr -= 0.3
    fr /= n + 0.4
    top = math.log(1e-12)  # Z capped at 1 - 1e-12, as the last term's upper end
    ln1mz = np.maximum(np.asarray(logsf if isinstance(logsf, np.ndarray) else logsf(tf), dtype=float), top)
    logit = np.expm1(ln1mz)  # built in place: -expm1 is Z, then ln Z - ln(1 - Z)
    np.negative(logit, out=logit)
    np.maximum(logit, 1e-300, out=logit)
    np.log(logit, out=logit)
    logit -= ln1mz
    logit_top = math.log1p(-1e-12) - top
    # Per failure i the terms are (Z_{i-1} - Z_i) + (ln(1-Z_{i-1}) - ln(1-Z_i))
    # + 2 F_{i-1} (ln(1-Z_i) - ln(1-Z_{i-1})) + F_{i-1}^2 (logit Z_i - logit Z_{i-1}), with Z_0 = 0,
    # F_0 = 0 and a last term up to Z = 1 - 1e-12. The first pair telescopes; the others are
    # sums of previous F times successive differences.
    first = -(1.0 - 1e-12) - top
    f_prev = fr[:-1]
    step = np.diff(ln1mz)
    scratch = np.empty_like(step)
    second = 2.0 * (_dot(f_prev, step, scratch) + fr[-1] * (top - ln1mz[-1]))
    np.subtract(logit[1:], logit[:-1], out=step)
    f_last = fr[-1]
    np.square(f_prev, out=f_prev)  # fr is ours (a fresh array of ranks) and not needed after
    third = _dot(f_prev, step, scratch) + f_last**2 * (logit_top - logit[-1])
    return float(m * (first + second + third))


def _dot(a: np.ndarray, b: np.ndarray, scratch: np.ndarray) -> float:
    # pairwise summation (np.sum), not a running sum: the statistic is a small difference of
    # sums of order 1 per failure, so their rounding is what limits its digits at large n;
    # the products go to a reused buffer (a fresh 10^6 one costs its page faults)
    return float(np.multiply(a, b, out=scratch).sum())


# Linearisations: (transform of t, transform of F, recover params from intercept a, slope b of
# y = a + b x).
def _lin(distribution: str) -> tuple[Callable, Callable, Callable]:
    if distribution == "weibull":
        return np.log, lambda f: np.log(-np.log1p(-f)), lambda a, b: {"alpha": math.exp(-a / b), "beta": b}
    if distribution == "exponential":
        return (lambda t: t), lambda f: -np.log1p(-f), None
    if distribution == "normal":
        return (lambda t: t), stats.norm.ppf, lambda a, b: {"mu": -a / b, "sigma": 1.0 / b}
    if distribution == "lognormal":
        return np.log, stats.norm.ppf, lambda a, b: {"mu": -a / b, "sigma": 1.0 / b}
    if distribution == "gumbel":
        return (lambda t: t), lambda f: np.log(-np.log1p(-f)), lambda a, b: {"mu": -a / b, "sigma": 1.0 / b}
    if distribution == "logistic":
        return (lambda t: t), special.logit, lambda a, b: {"mu": -a / b, "sigma": 1.0 / b}
    if distribution == "loglogistic":
        return np.log, special.logit, lambda a, b: {"alpha": math.exp(-a / b), "beta": b}
    raise InputError("method", f"rank regression is offered for weibull, exponential, normal, lognormal, "
                     f"gumbel, logistic, loglogistic; not {distribution}")


def rank_regression(data: LifeData, distribution: str, method: str, exact: bool = False) -> dict[str, float]:
    """Parameters by least squares on the probability plot: `rry` (y on x) or `rrx` (x on y).

    Each failure is one point (tied failures each keep their own rank). Exact and
    right-censored data only. Exponential is a line through the origin, y = lambda t.
    """
    if not data.only_exact_and_right:
        raise InputError("method", "rank regression needs exact and right-censored data; use mle")
    tx, ty, back = _lin(distribution)
    tf, fw, ranks, n = adjusted_ranks(data)
    # expand tied groups: ranks of a group of m end at `ranks`, spaced by the common increment
    reps = fw.astype(int)
    prev = np.concatenate([[0.0], ranks[:-1]])
    step = (ranks - prev) / fw
    idx = np.repeat(np.arange(tf.size), reps)
    within = np.arange(idx.size) - np.repeat(np.cumsum(reps) - reps, reps) + 1.0
    r_each = prev[idx] + step[idx] * within
    x = tx(tf[idx])
    y = ty(median_rank(r_each, n, exact))
    if distribution == "exponential":
        lam = float(x @ y / (x @ x)) if method == "rry" else float(y @ y / (x @ y))
        return {"failure_rate": lam}
    if method == "rry":
        b, a = np.polyfit(x, y, 1)
    else:
        d, cpt = np.polyfit(y, x, 1)  # x = cpt + d y  ->  y = -cpt/d + x/d
        b, a = 1.0 / d, -cpt / d
    return back(float(a), float(b))
