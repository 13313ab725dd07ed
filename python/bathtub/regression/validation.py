"""How well a fitted regression model separates and predicts: the `validation` block.

- Concordance (Harrell's C): over every event i and every row j at risk at i's time (a later
  time, or censored at or after it; tied events excluded; within the same stratum), the share of
  pairs where i had the higher risk score, ties in score counting one half — R's `concordance`
  and lifelines' `concordance_index` on the same pairs. Counting-process rows compare the row
  at risk at that time.
- Brier score (Graf et al. 1999, inverse probability of censoring weights from the censoring
  Kaplan–Meier), integrated over [from, to], for the model and for the covariate-free
  Kaplan–Meier: `improvement` is 1 − model/baseline.
- Time-dependent AUC, cumulative cases / dynamic controls with the same weights (Uno et al. 2007).

Large data are compared on a fixed-seed sample of `SAMPLE` units (said in `sampled`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

SAMPLE = 4000
GRID = 50


def concordance(risk: np.ndarray, start: np.ndarray | None, stop: np.ndarray, event: np.ndarray,
                strata: np.ndarray) -> tuple[float, int]:
    """Harrell's C and the number of comparable pairs."""
    ev = np.flatnonzero(event)
    good = 0.0
    pairs = 0
    for chunk in np.array_split(ev, max(1, ev.size // 256)):
        t = stop[chunk][:, None]
        at_risk = stop[None, :] >= t
        if start is not None:
            at_risk &= start[None, :] < t
        at_risk &= ~((stop[None, :] == t) & event[None, :])  # tied events are not ordered
        at_risk &= strata[None, :] == strata[chunk][:, None]
        ri = risk[chunk][:, None]
        rj = risk[None, :]
        good += float(np.sum(at_risk & (ri > rj))) + 0.5 * float(np.sum(at_risk & (ri == rj)))
        pairs += int(at_risk.sum())
    return (good / pairs if pairs else float("nan")), pairs


def _km(times: np.ndarray, observed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Product-limit estimate: distinct observed times and S just after each."""
    u = np.unique(times[observed])
    at_risk = times.size - np.searchsorted(np.sort(times), u, side="left").astype(float)
    d = np.bincount(np.searchsorted(u, times[observed]), minlength=u.size).astype(float)
    return u, np.cumprod(1.0 - d / at_risk)


def _step(u: np.ndarray, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    if u.size == 0:  # nothing observed (no censoring at all): the curve stays at 1
        return np.ones(np.shape(t))
    idx = np.searchsorted(u, t, side="right") - 1
    return np.where(idx >= 0, s[np.maximum(idx, 0)], 1.0)


def brier_auc(surv_at: Callable[[np.ndarray], np.ndarray], risk: np.ndarray, stop: np.ndarray, event: np.ndarray,
              ) -> dict[str, Any]:
    """Integrated Brier score (model, covariate-free KM) and AUC(t) at the event-time quartiles.

    `surv_at(times)` gives S(t | x_i) as (rows × times)."""
    gu, gs = _km(stop, ~event)  # censoring distribution
    ku, ks = _km(stop, event)
    lo = float(stop[event].min())
    hi = float(np.quantile(stop, 0.8))
    if not hi > lo:
        hi = float(stop[event].max())
    grid = np.linspace(lo, hi, GRID) if hi > lo else np.array([lo])
    g_grid = _step(gu, gs, grid)
    g_own = _step(gu, gs, stop)
    model_s = surv_at(grid)  # rows × grid
    base_s = _step(ku, ks, grid)[None, :]
    case = (stop[:, None] <= grid[None, :]) & event[:, None]
    control = stop[:, None] > grid[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        wc = np.where(case, 1.0 / g_own[:, None], 0.0)
        wk = np.where(control, 1.0 / g_grid[None, :], 0.0)
    bs_model = np.mean(model_s**2 * wc + (1 - model_s) ** 2 * wk, axis=0)
    bs_base = np.mean(base_s**2 * wc + (1 - base_s) ** 2 * wk, axis=0)
    if grid.size > 1:
        ibs_model = float(np.trapezoid(bs_model, grid) / (hi - lo))
        ibs_base = float(np.trapezoid(bs_base, grid) / (hi - lo))
    else:
        ibs_model, ibs_base = float(bs_model[0]), float(bs_base[0])
    auc = []
    for q in (0.25, 0.5, 0.75):
        t = float(np.quantile(stop[event], q))
        cases = np.flatnonzero((stop <= t) & event)
        controls = np.flatnonzero(stop > t)
        if cases.size == 0 or controls.size == 0:
            continue
        w = 1.0 / _step(gu, gs, stop[cases])
        ri, rj = risk[cases][:, None], risk[controls][None, :]
        score = ((ri > rj) + 0.5 * (ri == rj)).sum(axis=1)
        auc.append({"time": t, "value": float(w @ score / (w.sum() * controls.size))})
    improvement = 1.0 - ibs_model / ibs_base if ibs_base > 0 else None
    return {"model": ibs_model, "baseline": ibs_base, "improvement": improvement, "from": lo, "to": hi,
            "auc": auc}


def rating(c: float) -> tuple[str, str]:
    if c >= 0.8:
        return "strong", "the model orders failures well: in at least 4 of 5 comparable pairs the unit that failed first had the higher predicted risk"  # noqa: E501
    if c >= 0.7:
        return "good", "the model orders most comparable pairs correctly"
    if c >= 0.6:
        return "moderate", "the covariates order failures better than chance, with many pairs the wrong way round"
    if c > 0.5:
        return "weak", "the covariates barely order failures better than a coin toss"
    return "none", "the covariates do not order failures better than chance"


def sample_units(units: np.ndarray, limit: int = SAMPLE, seed: int = 0) -> tuple[np.ndarray, int, bool]:
    """Row indices of at most `limit` units (all rows of each chosen unit), the unit count, sampled?"""
    labels, inverse = np.unique(units, return_inverse=True)
    if labels.size <= limit:
        return np.arange(units.size), int(labels.size), False
    chosen = np.random.default_rng(seed).choice(labels.size, limit, replace=False)
    keep = np.isin(inverse, chosen)
    return np.flatnonzero(keep), int(labels.size), True
