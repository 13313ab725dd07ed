"""Competing risks: one model per failure mode, each mode's share, and a test of one model for all.

Each mode's model treats the other modes' failures as right-censored at their times (the
modes act independently, so the system survives while every mode does: S = prod S_m).

The test compares, by likelihood ratio, the per-mode models with the simpler description
"one distribution for every failure, the mode independent of the time" (log-likelihood of the
pooled fit plus the multinomial log-likelihood of the mode counts). For Weibull modes sharing a
shape the two coincide, so the simple model is nested and 2 (ll_modes - ll_one) is chi-squared
with M k - k - (M - 1) degrees of freedom; for other families the nesting is approximate.

Beside the parametric fits, the record's `cumulative_incidence` block holds each mode's
non-parametric Aalen–Johansen cumulative incidence with bounds and, with groups, Gray's test
(`cumulative_incidence`): the chance of failing by that mode by t with the others competing,
which needs no independence of the modes (1 - S_m of a per-mode fit does).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

from bathtub.censoring import FAILURE, RIGHT, censoring_codes
from bathtub.errors import InputError
from bathtub.life.cumulative_incidence import incidence_block, label
from bathtub.life.data import LifeData
from bathtub.life.fit import fit


def fit_competing_risks(
    x: Sequence[float] | np.ndarray,
    c: Sequence[Any] | np.ndarray | None,
    modes: Sequence[Any],
    distribution: str = "weibull",
    *,
    options: Mapping[str, Any] | None = None,
    groups: Sequence[Any] | None = None,
    confidence: float = 0.95,
    cif_variance: str = "aalen",
    field: str = "modes",
) -> dict[str, Any]:
    """Per-mode fits, shares with 95% Clopper–Pearson intervals, the competing-risks test and
    each mode's cumulative incidence (`groups`: a label per row, adding per-group incidence and
    Gray's test; `cif_variance` aalen, as cmprsk::cuminc, or delta).

    `x` times, `c` censoring codes (0 failure, 1 right-censored; see `life.data`), `modes` the
    failure mode of each row (none on censored rows), `field` its name in refusals. Returns a
    JSON-ready dict.
    """
    t = np.asarray(x, dtype=float)
    if len(modes) != t.size:
        raise InputError(field, f"has {len(modes)} rows, expected {t.size}")
    codes = np.zeros(t.size, int) if c is None else censoring_codes(c, "c")
    if np.any((codes != FAILURE) & (codes != RIGHT)):
        raise InputError("c", "competing risks take failures and right-censored units only")
    labels = np.array([label(m) for m in modes], dtype=object)
    fail = codes == FAILURE
    if np.any(fail & (labels == "")):
        raise InputError(field, f"row {int(np.argmax(fail & (labels == ''))) + 1}: every failure needs a mode")
    if np.any(~fail & (labels != "")):
        raise InputError(field, f"row {int(np.argmax(~fail & (labels != ''))) + 1}: a censored row has no "
                                  "failure mode (leave the cell empty, or code the row as a failure)")
    names = sorted(set(labels[fail]))
    if len(names) < 2:
        raise InputError(field, "competing risks need failures of at least 2 modes")
    pooled = fit(LifeData.from_arrays(t, codes), distribution, options=options)
    r = int(fail.sum())
    out_modes = []
    ll_modes = 0.0
    for m in names:
        own = fail & (labels == m)
        f = fit(LifeData.from_arrays(t, np.where(own, FAILURE, RIGHT)), distribution, options=options)
        ll_modes += f.log_likelihood
        k = int(own.sum())
        lo = float(stats.beta.ppf(0.025, k, r - k + 1)) if k > 0 else 0.0
        hi = float(stats.beta.ppf(0.975, k + 1, r - k)) if k < r else 1.0
        out_modes.append({"mode": m, "failures": k, "share": k / r, "share_ci": [lo, hi], "model": f.to_record()})
    counts = np.array([mm["failures"] for mm in out_modes], dtype=float)
    ll_one = pooled.log_likelihood + float(counts @ np.log(counts / r))
    kp = pooled.spec.k
    df = len(names) * kp - kp - (len(names) - 1)
    lr = max(2.0 * (ll_modes - ll_one), 0.0)
    p = float(stats.chi2.sf(lr, df)) if df > 0 else math.nan
    verdict = (
        "the modes follow different life distributions: analyse them separately"
        if p < 0.05 else "one distribution explains all failures as well as the per-mode models"
    )
    cif = incidence_block(t, fail, list(labels), confidence, groups, variance=cif_variance)
    return {
        "distribution": pooled.distribution,
        "cumulative_incidence": cif,
        "kind": "competing_risks",
        "n": pooled.n,
        "modes": out_modes,
        "pooled_fit": pooled.to_record(),
        "test": {
            "statistic": lr, "df": df, "p": p if math.isfinite(p) else None,
            "meaning": "likelihood ratio of per-mode models against one distribution for all failures "
                       "with the mode independent of time; a small p says the modes differ",
            "verdict": verdict,
            "approximate": distribution not in ("weibull", "exponential"),
        },
    }
