"""Trend tests of recurrent events against "no trend" (a homogeneous Poisson process, or a
renewal process for Lewis-Robinson and reverse arrangements), pooled over systems.

Each returns {id, label, statistic, p_value, verdict, ...}: the verdict is `improving`
(failures thin out), `deteriorating` (they crowd in) or `no evidence`, two-sided at 5%.
Failure-terminated systems contribute every event but the last (its time is the end).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from bathtub.recurrent.data import EventData

LEVEL = 0.05
EXACT_ARRANGEMENTS_MAX = 20_000  # largest support of the exact reverse-arrangements law we convolve


def _verdict(p: float, improving: bool) -> str:
    if not p < LEVEL:
        return "no evidence"
    return "improving" if improving else "deteriorating"


def laplace(data: EventData) -> dict[str, Any]:
    """U = sum(t - T/2) / sqrt(sum m T^2 / 12), standard normal under an HPP."""
    num = 0.0
    var = 0.0
    for s in data.systems:
        t = s.informative
        num += float(np.sum(t - s.end / 2.0))
        var += t.size * s.end**2 / 12.0
    u = num / math.sqrt(var) if var > 0 else math.nan
    p = float(2 * stats.norm.sf(abs(u)))
    return {"id": "laplace", "label": "Laplace", "statistic": u, "p_value": p,
            "verdict": _verdict(p, u < 0), "reference": "standard normal"}


def mil_hdbk_189(data: EventData) -> dict[str, Any]:
    """2 sum ln(T/t) on 2M degrees of freedom (M informative events), chi-squared under an HPP."""
    s_log = sum(float(np.sum(np.log(s.end / s.informative))) for s in data.systems)
    m = sum(s.informative.size for s in data.systems)
    chi = 2.0 * s_log
    dof = 2 * m
    cdf = float(stats.chi2.cdf(chi, dof))
    p = min(1.0, 2 * min(cdf, 1 - cdf))
    return {"id": "mil_hdbk_189", "label": "MIL-HDBK-189", "statistic": chi, "dof": dof, "p_value": p,
            "verdict": _verdict(p, chi > dof), "reference": f"chi-squared on {dof} degrees of freedom"}


def _gaps(data: EventData) -> list[np.ndarray]:
    return [np.diff(np.concatenate([[0.0], s.times])) for s in data.systems if s.n]


def lewis_robinson(data: EventData) -> dict[str, Any]:
    """Laplace's U divided by the coefficient of variation of the times between failures:
    standard normal under a renewal process (Lewis & Robinson 1974)."""
    u = laplace(data)["statistic"]
    gaps = np.concatenate(_gaps(data))
    cv = float(np.std(gaps, ddof=1) / np.mean(gaps)) if gaps.size > 1 else math.nan
    lr = u / cv if cv > 0 else math.nan
    p = float(2 * stats.norm.sf(abs(lr))) if math.isfinite(lr) else math.nan
    return {"id": "lewis_robinson", "label": "Lewis-Robinson", "statistic": lr, "cv": cv, "p_value": p,
            "verdict": _verdict(p, lr < 0) if math.isfinite(p) else "no evidence", "reference": "standard normal"}


def _mahonian(n: int) -> np.ndarray:
    """Distribution of the number of inversions of a random permutation of n (exact)."""
    dist = np.array([1.0])
    for k in range(2, n + 1):
        dist = np.convolve(dist, np.full(k, 1.0 / k))
    return dist


def reverse_arrangements(data: EventData) -> dict[str, Any]:
    """A = number of pairs i < j with x_i < x_j among each system's times between failures,
    summed over systems; large A = lengthening gaps (improving). Exact law (convolution of
    the permutation-inversion laws) when small, normal with continuity correction otherwise."""
    a = 0
    sizes = []
    for g in _gaps(data):
        n = g.size
        if n < 2:
            continue
        sizes.append(n)
        a += int(np.sum(g[:, None] < g[None, :], where=np.triu(np.ones((n, n), dtype=bool), 1)))
    if not sizes:
        return {"id": "reverse_arrangements", "label": "Reverse arrangements", "statistic": math.nan,
                "p_value": math.nan, "verdict": "no evidence", "reference": "too few events"}
    mean = sum(n * (n - 1) / 4 for n in sizes)
    var = sum(n * (n - 1) * (2 * n + 5) / 72 for n in sizes)
    support = sum(n * (n - 1) // 2 for n in sizes)
    if support <= EXACT_ARRANGEMENTS_MAX:
        dist = np.array([1.0])
        for n in sizes:
            dist = np.convolve(dist, _mahonian(n))
        lower = float(dist[: a + 1].sum())
        upper = float(dist[a:].sum())
        p = min(1.0, 2 * min(lower, upper))
        ref = "exact"
    else:
        z = (abs(a - mean) - 0.5) / math.sqrt(var)
        p = float(min(1.0, 2 * stats.norm.sf(max(z, 0.0))))
        ref = "normal approximation"
    return {"id": "reverse_arrangements", "label": "Reverse arrangements", "statistic": a, "expected": mean,
            "p_value": p, "verdict": _verdict(p, a > mean), "reference": ref}


def all_tests(data: EventData) -> list[dict[str, Any]]:
    return [laplace(data), mil_hdbk_189(data), lewis_robinson(data), reverse_arrangements(data)]
