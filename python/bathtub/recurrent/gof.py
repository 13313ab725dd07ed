"""Goodness of fit of a power-law process: Cramér-von Mises with Crow's critical values for
event times, and Pearson's chi-squared for grouped counts.

CRITICAL_CVM are the critical values of the Cramér-von Mises statistic C²_M for the power-law
(Weibull) process with beta estimated by its unbiased estimate, by M (the number of informative
events) and significance level: Crow (1974), "Reliability analysis for complex, repairable
systems", tabulated in MIL-HDBK-189 (1981) and MIL-HDBK-189C (2011), section 5, "Critical
values for Cramér-von Mises goodness-of-fit test". For M between rows we take the nearest
tabulated M below (its values are the smaller, so the test is not made more lenient); above 100 the 100 row
(the table's asymptote).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from bathtub.recurrent.data import EventData, GroupedData

LEVELS = (0.20, 0.15, 0.10, 0.05, 0.01)
CRITICAL_CVM: dict[int, tuple[float, float, float, float, float]] = {
    2: (0.138, 0.149, 0.162, 0.175, 0.186),
    3: (0.121, 0.135, 0.154, 0.184, 0.230),
    4: (0.121, 0.134, 0.155, 0.191, 0.280),
    5: (0.121, 0.137, 0.160, 0.199, 0.300),
    6: (0.123, 0.139, 0.162, 0.204, 0.310),
    7: (0.124, 0.140, 0.165, 0.208, 0.320),
    8: (0.124, 0.141, 0.165, 0.210, 0.320),
    9: (0.125, 0.142, 0.167, 0.212, 0.320),
    10: (0.125, 0.142, 0.167, 0.212, 0.320),
    11: (0.126, 0.143, 0.169, 0.214, 0.320),
    12: (0.126, 0.144, 0.169, 0.214, 0.320),
    13: (0.126, 0.144, 0.169, 0.214, 0.330),
    14: (0.126, 0.144, 0.169, 0.214, 0.330),
    15: (0.126, 0.144, 0.169, 0.215, 0.330),
    16: (0.127, 0.145, 0.171, 0.216, 0.330),
    17: (0.127, 0.145, 0.171, 0.217, 0.330),
    18: (0.127, 0.146, 0.171, 0.217, 0.330),
    19: (0.127, 0.146, 0.171, 0.217, 0.330),
    20: (0.128, 0.146, 0.172, 0.217, 0.330),
    30: (0.128, 0.146, 0.172, 0.218, 0.330),
    60: (0.128, 0.147, 0.173, 0.220, 0.330),
    100: (0.129, 0.147, 0.173, 0.220, 0.340),
}
SOURCE = "Crow (1974); MIL-HDBK-189C (2011) critical values for the Cramér-von Mises test"


def critical_values(m: int) -> dict[str, float] | None:
    rows = [k for k in CRITICAL_CVM if k <= m]
    if not rows:
        return None
    row = CRITICAL_CVM[max(rows)]
    return {f"{a:.2f}": v for a, v in zip(LEVELS, row, strict=True)}


def cramer_von_mises(data: EventData, beta_unbiased: float) -> dict[str, Any]:
    """C²_M = 1/(12M) + sum_i [z_(i) - (2i-1)/(2M)]², z = (t/T)^beta_bar over the informative
    events of every system (each uniform on (0, 1) under the model, given the counts)."""
    z = np.sort(np.concatenate([np.power(s.informative / s.end, beta_unbiased) for s in data.systems]))
    m = int(z.size)
    out: dict[str, Any] = {"id": "cramer_von_mises", "label": "Cramér-von Mises", "m": m, "source": SOURCE}
    if m < 2:
        return {**out, "statistic": None, "verdict": "not available", "reason": "fewer than 2 informative events"}
    i = np.arange(1, m + 1)
    c2 = 1.0 / (12 * m) + float(np.sum((z - (2 * i - 1) / (2 * m)) ** 2))
    crit = critical_values(m)
    assert crit is not None
    reject = c2 > crit["0.05"]
    passed = [lvl for lvl, v in crit.items() if c2 > v]
    return {**out, "statistic": c2, "critical_values": crit, "level": 0.05,
            "verdict": "rejects the power law" if reject else "consistent with the power law",
            "p_value_below": min(float(x) for x in passed) if passed else None}


def chi_square_grouped(data: GroupedData, expected: np.ndarray, n_params: int) -> dict[str, Any]:
    """Pearson's X² of observed against expected counts per interval, adjacent intervals pooled
    until each expects at least 5, on (cells - 1 - (params - 1)) = cells - params degrees of
    freedom (the total is fitted exactly)."""
    obs = data.counts.astype(float)
    cells_o: list[float] = []
    cells_e: list[float] = []
    acc_o = acc_e = 0.0
    for o, e in zip(obs, expected, strict=True):
        acc_o += o
        acc_e += e
        if acc_e >= 5.0:
            cells_o.append(acc_o)
            cells_e.append(acc_e)
            acc_o = acc_e = 0.0
    if acc_e > 0 or acc_o > 0:
        if cells_e:
            cells_o[-1] += acc_o
            cells_e[-1] += acc_e
        else:
            cells_o.append(acc_o)
            cells_e.append(acc_e)
    dof = len(cells_e) - n_params
    out: dict[str, Any] = {"id": "chi_square", "label": "Chi-squared (grouped)", "cells": len(cells_e), "dof": dof}
    o, e = np.asarray(cells_o), np.asarray(cells_e)
    x2 = float(np.sum((o - e) ** 2 / e))
    if dof < 1:
        return {**out, "statistic": x2, "p_value": None, "verdict": "not available",
                "reason": "too few intervals expecting 5 or more failures"}
    p = float(stats.chi2.sf(x2, dof))
    return {**out, "statistic": x2, "p_value": p,
            "verdict": "rejects the model" if p < 0.05 else "consistent with the model"}


def poisson_two_sided(k: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Two-sided p of counts k against Poisson means mu (twice the smaller tail, capped at 1),
    element-wise."""
    k = np.asarray(k, dtype=float)
    mu = np.asarray(mu, dtype=float)
    safe = np.where(mu > 0, mu, 1.0)
    lo = stats.poisson.cdf(k, safe)
    hi = stats.poisson.sf(k - 1, safe)
    p = np.minimum(1.0, 2 * np.minimum(lo, hi))
    return np.where(mu > 0, p, np.where(k == 0, 1.0, 0.0))
