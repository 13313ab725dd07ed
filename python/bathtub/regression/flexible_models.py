"""Records of the Royston–Parmar models (`royston_parmar`, `proportional_odds`) and their use.

The record carries what the curves need (the log-time knots, the spline coefficients γ, the
covariate coefficients β and the scale), beside coefficients, params, gof, validation and
diagnostics in the shape every regression record has.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from bathtub import inference
from bathtub.regression import design, flexible
from bathtub.regression.models import cox_ph_test
from bathtub.regression.record_parts import (
    Rows,
    check_time,
    coefficient_rows,
    fit_tests,
    unit_design_row,
    validation_block,
)
from bathtub.validate import check_integer

MODELS = flexible.MODELS
KIND = {"hazard": "hazard ratio", "odds": "odds ratio"}
SCALE_NAME = {"hazard": "log cumulative hazard", "odds": "log cumulative odds of failure"}
BASELINE = {"hazard": "Weibull", "odds": "log-logistic"}
INFINITE = ("infinite at t = 0: the spline's slope in log t (gamma1) is below 1, so the hazard falls from "
            "infinity at the start")


def _params(fit: flexible.SplineFit, confidence: float) -> list[dict[str, Any]]:
    """The spline coefficients γ (log t basis), and for a straight line (no interior knots) the Weibull or
    log-logistic alpha and beta it is, with delta-method standard errors; all at every covariate 0."""
    zq = inference.z(confidence)
    m = fit.gamma.size
    cov = fit.cov[:m, :m]
    out = []
    for j in range(m):
        g, se = float(fit.gamma[j]), math.sqrt(cov[j, j])
        out.append(inference.row(f"gamma{j}", g, se, zq=zq))
    if m == 2:
        g0, g1 = float(fit.gamma[0]), float(fit.gamma[1])
        alpha = math.exp(-g0 / g1)
        grad = np.array([-1 / g1, g0 / g1**2])  # ∂ log α / ∂(γ0, γ1)
        se_log_alpha = math.sqrt(float(grad @ cov @ grad))
        se_log_beta = math.sqrt(cov[1, 1]) / g1
        out += [inference.row("alpha", alpha, se_log_alpha, scale="log", zq=zq),
                inference.row("beta", g1, se_log_beta, scale="log", zq=zq)]
    for prm in out:
        prm["at"] = "every covariate 0"
    return out


def spline_record(distribution: str, d: design.Design, rows: Rows, confidence: float, transform: str,
                  formula: bool, knots: Any = None) -> dict[str, Any]:
    field = "formula" if formula else "covariates"
    fit = flexible.fit_spline(distribution, d.x, rows.stop, rows.event, rows.start, knots, field, d.names)
    m, p = fit.gamma.size, fit.beta.size
    var = fit.cov[m:, m:]
    coefficients = coefficient_rows(d.names, fit.beta, var, None, confidence, KIND[fit.scale])
    if fit.scale == "odds":
        for c in coefficients:
            c["reading"] = (f"each unit of {c['name']} multiplies the odds of failure by any age by "
                            f"{c['exp_coef']:.4g}")
    xb = d.x @ fit.beta
    interior = fit.knots[1:-1]
    given = knots is not None or flexible.DEFAULT_KNOTS[distribution] is not None
    spline = {"scale": SCALE_NAME[fit.scale],
              "knots": {"log_time": fit.knots.tolist(), "time": np.exp(fit.knots).tolist(),
                        "interior": int(interior.size),
                        "placement": "boundary knots at the first and last failure times; " + (
                            "no interior knots" if interior.size == 0 else
                            "interior knots at the times given" if isinstance(knots, list) else
                            "interior knots at centiles of the log failure times")},
              "chosen_by": "options.knots" if knots is not None else (
                  "the model's default" if given else
                  f"AIC over {flexible.AUTO_KNOTS[0]}..{flexible.AUTO_KNOTS[-1]} interior knots"),
              "gamma": fit.gamma.tolist(),
              "basis": "Royston–Parmar natural cubic spline in log t, linear beyond the boundary knots"}
    if fit.selection:
        spline["selection"] = fit.selection
    if interior.size == 0:
        spline["reading"] = (f"no interior knots: the baseline is {BASELINE[fit.scale]} (alpha, beta in params)")
    if fit.scale == "hazard":
        ph = cox_ph_test(d, rows, transform, field, "the Royston–Parmar model")
    else:
        ph = {"available": False, "reason": "a proportional-odds model does not assume proportional hazards: its "
                                            "hazard ratios drift to 1 with age, while the odds ratio of failure "
                                            "by any age stays fixed"}
    strata = np.zeros(fit.n, dtype=np.int64)
    return {"kind": "regression", "distribution": distribution, "n": fit.n, "n_events": fit.n_events,
            "params": _params(fit, confidence), "coefficients": coefficients, "metrics": None,
            "gof": fit_tests(fit.loglik, fit.loglik0, m + p, fit.n, fit.beta, var, None, partial=False),
            "validation": validation_block(xb, rows, strata, lambda keep, t: flexible.survival(
                fit.scale, fit.gamma, fit.knots, xb[keep], t)),
            "diagnostics": {"ph_test": ph}, "design": d.spec, "spline": spline, "beta": fit.beta.tolist(),
            # the joint covariance of (spline gamma, beta), the inverse observed information: what an
            # outer Monte Carlo loop draws them from (bathtub.models.draws)
            "covariance": {"names": [*(f"spline_gamma_{j}" for j in range(m)), *d.names],
                           "matrix": fit.cov.tolist() if bool(np.all(np.isfinite(fit.cov))) else None},
            "iterations": fit.iterations, "counting_process": rows.start is not None}


def _unit_curves(record: Mapping[str, Any], covariates: Mapping[str, Any] | None,
                 ) -> tuple[str, np.ndarray, np.ndarray, float]:
    xrow, _ = unit_design_row(record, covariates)
    spline = record["spline"]
    scale = "hazard" if spline["scale"] == SCALE_NAME["hazard"] else "odds"
    return scale, np.asarray(spline["gamma"]), np.asarray(spline["knots"]["log_time"]), float(
        xrow @ np.asarray(record["beta"]))


def evaluate_at(record: Mapping[str, Any], t: Any, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """{t, reliability, failure, hazard, cumulative_hazard, density} for one unit."""
    t = check_time(t)
    scale, gamma, knots, xb = _unit_curves(record, covariates)
    c = flexible.curves(scale, gamma, knots, xb, np.array([t]))
    s = float(c["sf"][0])
    hazard, density = (float(c["hf"][0]), float(c["df"][0])) if t > 0 else (flexible.hazard_at_zero(gamma, xb),) * 2
    out = {"t": t, "reliability": s, "failure": 1.0 - s, "hazard": _finite(hazard),
           "cumulative_hazard": float(c["Hf"][0]), "density": _finite(density)}
    nulls = {k: INFINITE for k in ("hazard", "density") if out[k] is None}
    if nulls:
        out["null_reason"] = nulls
    return out


def _finite(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


def evaluate_curves(record: Mapping[str, Any], points: int, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """Whole curves {x, sf, ff, hf, Hf, df} for one unit, from 0 to its 99.9% failure time."""
    points = check_integer(points, "points", 2, 10_000)
    scale, gamma, knots, xb = _unit_curves(record, covariates)
    x = np.linspace(0.0, flexible.quantile_time(scale, gamma, knots, xb, 0.999), points)
    c = flexible.curves(scale, gamma, knots, xb, x)
    c["hf"][0] = c["df"][0] = flexible.hazard_at_zero(gamma, xb)  # x[0] = 0: the limit from the right
    out = {"x": x.tolist(), "sf": c["sf"].tolist(), "ff": (1 - c["sf"]).tolist(),
           "hf": [_finite(v) for v in c["hf"]], "Hf": c["Hf"].tolist(), "df": [_finite(v) for v in c["df"]]}
    nulls = {k: INFINITE for k in ("hf", "df") if None in out[k]}
    if nulls:
        out["null_reason"] = nulls
    return out
