"""What a Cox record keeps so that an outer Monte Carlo loop can draw its coefficients and its
Breslow baseline together, and the draw itself.

The Breslow increment at event time t_i is dH_i(β) = d_i / S0_i(β), S0_i the sum of e^{xβ} over
the risk set. At a drawn β* = β̂ + δ the risk-set sum is, to first order, S0_i(β̂)·e^{δ·ē_i} with
ē_i = S1_i/S0_i the risk set's mean covariate row (the derivative of log S0), so the increment's
centre moves to dH_i(β̂)·e^{−δ·ē_i}. Given β the increments are drawn independently as
Gamma(d_i, 1)/S0_i: a counting process's d_i events over its risk set, whose variance d_i/S0_i² is
the Aalen term of the baseline's variance; with δ ~ N(0, V) the sum reproduces, to first order,
the Tsiatis variance Σ d_i/S0_i² + q'Vq (q = Σ ē_i dH_i) the point fit's own bands use. This is
the asymptotic law of the baseline, not a refit at β* over the raw risk sets: the record keeps
per event time only d_i and ē_i (p numbers), never the rows. A baseline thinned for storage
keeps its groups of adjacent event times: summed deaths and increments, ē weighted by increment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bathtub import steps
from bathtub.regression import risksets
from bathtub.regression.cox import CoxFit
from bathtub.regression.record_parts import BASELINE_MAX


def breslow_terms(fit: CoxFit) -> list[dict[str, Any]]:
    """Per stratum (as `fit.baseline`) {deaths, mean_covariates}: per stored baseline step, the
    events there and the risk set's mean (centred) covariate row at the fitted β."""
    out: list[dict[str, Any]] = [{"deaths": [], "mean_covariates": []} for _ in fit.baseline]
    owners = [k for k, b in enumerate(fit.baseline) if b["time"]]
    for k, s in zip(owners, fit.prepared, strict=True):
        w = np.exp(s.x @ fit.beta)
        s0 = risksets.at_risk_sums(s, w)
        s1 = np.column_stack([risksets.at_risk_sums(s, w * s.x[:, j]) for j in range(s.x.shape[1])]) \
            if s.x.shape[1] else np.zeros((s0.size, 0))
        dh = s.deaths / s0
        ebar = s1 / s0[:, None]
        keep = steps.kept(s.times.size, BASELINE_MAX)
        ends = np.arange(s.times.size) if keep is None else keep
        starts = np.concatenate([[0], ends[:-1] + 1])
        deaths, means = [], []
        for a, b in zip(starts, ends + 1, strict=True):
            h = float(dh[a:b].sum())
            deaths.append(float(s.deaths[a:b].sum()))
            means.append((dh[a:b] @ ebar[a:b] / h).tolist())
        out[k] = {"deaths": deaths, "mean_covariates": means}
    return out


def draw_baseline(record: Mapping[str, Any], delta: np.ndarray, rng: np.random.Generator) -> list[list[float]]:
    """Per stratum the drawn cumulative hazard at the stored baseline times, for coefficients
    β̂ + `delta` (the module's law), using `rng`."""
    out = []
    for b, terms in zip(record["baseline"], record["breslow_terms"], strict=True):
        if not b["time"]:
            out.append([])
            continue
        cum = np.asarray(b["cumhaz"], dtype=float)
        dh = np.diff(np.concatenate([[0.0], cum]))
        d = np.asarray(terms["deaths"], dtype=float)
        ebar = np.asarray(terms["mean_covariates"], dtype=float).reshape(d.size, -1)
        inc = rng.gamma(d, 1.0) * (dh / d) * np.exp(-(ebar @ delta))
        out.append(np.cumsum(inc).tolist())
    return out


def with_draw(record: Mapping[str, Any], beta: Sequence[float], cumhaz: Sequence[Sequence[float]]) -> dict[str, Any]:
    """The Cox `record` at drawn coefficients and baseline (se and intervals cleared)."""
    out = dict(record)
    out["coefficients"] = [{**c, "value": float(b), "exp_coef": float(np.exp(min(b, 700.0))), "se": None, "ci": None,
                            "exp_ci": None} for c, b in zip(record["coefficients"], beta, strict=True)]
    out["baseline"] = [{**b, "cumhaz": list(h)} for b, h in zip(record["baseline"], cumhaz, strict=True)]
    return out
