"""The saved record of a Fine–Gray model (`distribution: fine_gray`), from a dataset's columns,
and a unit's cumulative incidence from it.

`fit_record` is `POST /api/v1/fit` with `covariates` or `formula`, `mapping` {x, c, mode,
group?} and `options.failure_mode` (the mode whose incidence is regressed; the others compete).
The record carries the coefficients with crr's robust standard errors (and the naive ones),
exp(coef) as subdistribution hazard ratios, the pseudo log-likelihood and the robust Wald test,
the non-parametric cumulative incidence of every mode (with `group`: per group, and Gray's test
per mode), and the Breslow baseline that predicts a unit's cumulative incidence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

from bathtub.censoring import FAILURE, RIGHT, censoring_codes
from bathtub.errors import InputError
from bathtub.inference import z as z_of
from bathtub.life.cumulative_incidence import VARIANCES, incidence_block, label
from bathtub.life.data import number_column
from bathtub.regression import design, fine_gray
from bathtub.regression.record_parts import check_time, chi2_test, thin_baseline
from bathtub.validate import check_number

MODEL = "fine_gray"
ROLES = ("x", "c", "mode", "group")
OPTIONS = ("failure_mode", "confidence", "reference", "cif_variance")
EXP_KIND = "subdistribution hazard ratio"


def _rows(columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str]
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Times, failed flags and mode labels ("" on censored rows), each row checked."""
    if not isinstance(mapping, Mapping):
        raise InputError("mapping", "must map roles (x, c, mode, group) to column names")
    design.check_roles(columns, mapping, ROLES, "fine_gray")
    for role in ("x", "mode"):
        if role not in mapping:
            raise InputError(f"mapping.{role}", "required for fine_gray: the time (x) and each failure's mode (mode)")
    x = number_column(list(columns[mapping["x"]]), "mapping.x", allow_missing=False)
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        raise InputError("mapping.x", f"row {int(np.argmax(~np.isfinite(x) | (x < 0))) + 1}: times must be finite "
                                      "and >= 0")
    codes = censoring_codes(list(columns[mapping["c"]]), "mapping.c") if "c" in mapping else \
        np.full(x.size, FAILURE)
    bad = (codes != FAILURE) & (codes != RIGHT)
    if bad.any():
        raise InputError("mapping.c", f"row {int(np.argmax(bad)) + 1}: competing risks take failures (0) and "
                                      "right-censored rows (1)")
    failed = codes == FAILURE
    modes = np.array([label(v) for v in columns[mapping["mode"]]], dtype=object)
    missing = failed & (modes == "")
    if missing.any():
        raise InputError("mapping.mode", f"row {int(np.argmax(missing)) + 1}: a failure needs its mode")
    stray = ~failed & (modes != "")
    if stray.any():
        raise InputError("mapping.mode", f"row {int(np.argmax(stray)) + 1}: a censored row has no failure mode "
                                         f"(it holds {modes[int(np.argmax(stray))]!r}); leave it empty or code the "
                                         "row as a failure")
    return x, failed, modes


def fit_record(columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str], covariates: Sequence[str] | None,
               formula: str | None, cox_options: Mapping[str, Any] | None = None,
               options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The saved record of a Fine–Gray model fitted to a dataset's columns."""
    if cox_options:
        raise InputError("cox_options", "apply to cox; fine_gray takes options.failure_mode")
    options = dict(options or {})
    for k in options:
        if k not in OPTIONS:
            raise InputError(f"options.{k}", f"unknown option for fine_gray; known: {', '.join(OPTIONS)}")
    confidence = check_number(options.get("confidence", 0.95), "options.confidence", 0.5, 1.0, hi_open=True)
    cif_variance = options.get("cif_variance", "aalen")
    if cif_variance not in VARIANCES:
        raise InputError("options.cif_variance", f"must be one of {', '.join(VARIANCES)}")
    reference = options.get("reference")
    if reference is not None and not isinstance(reference, Mapping):
        raise InputError("options.reference", "must map a categorical covariate to its reference level")
    x, failed, modes = _rows(columns, mapping)
    names = sorted(set(modes[failed]))
    wanted = options.get("failure_mode")
    if wanted is None:
        raise InputError("options.failure_mode", f"required: the mode whose incidence is regressed (modes in the "
                                                 f"data: {', '.join(names)})")
    target = label(wanted)
    if target not in names:
        raise InputError("options.failure_mode", f"{wanted!r} is not a failure mode of the data (modes: "
                                                 f"{', '.join(names)})")
    if len(names) < 2:
        raise InputError("mapping.mode", "one failure mode only: nothing competes; fit cox or weibull_ph")
    d = design.design(columns, covariates, formula, reference)
    if formula is not None:
        design.check_rebuild(d, columns)
    status = np.where(~failed, 0, np.where(modes == target, 1, 2))
    field = "formula" if formula is not None else "covariates"
    fit = fine_gray.fit(d.x, x, status, field)
    groups = list(columns[mapping["group"]]) if "group" in mapping else None
    cif = incidence_block(x, failed, list(modes), confidence, groups, variance=cif_variance)
    time, cumhaz, thinned = thin_baseline(fit.times.tolist(), fit.cumhaz.tolist())
    baseline: dict[str, Any] = {"time": time, "cumhaz": cumhaz, "at": "every covariate 0"}
    if thinned:
        baseline["thinned_from"] = thinned
    p = fit.beta.size
    wald = float(fit.beta @ np.linalg.solve(fit.var, fit.beta))
    return {
        "kind": "regression", "distribution": MODEL, "n": fit.n, "n_events": fit.n_events,
        "failure_mode": target, "mode_names": names,
        "counts": {"failures_of_mode": fit.n_events, "competing_failures": fit.n_competing,
                   "censored": fit.n_censored},
        "params": [], "coefficients": coefficient_rows(d.names, fit, confidence), "metrics": None,
        "gof": [{"id": "log_likelihood", "label": "Log pseudo partial likelihood (weighted risk sets)",
                 "value": fit.loglik},
                chi2_test("wald_test", "Robust Wald test (all coefficients 0)", wald, p)],
        "cumulative_incidence": cif,
        "baseline": baseline, "design": d.spec, "confidence": confidence, "iterations": fit.iterations,
        "diagnostics": {
            "robust": {"available": True, "method": "sandwich I⁻¹(Σ(η_i+ψ_i)(η_i+ψ_i)ᵀ)I⁻¹ with the censoring "
                                                     "distribution's term ψ, as cmprsk::crr"},
            "ties": {"method": "breslow", "tied_event_times": fit.tied_times},
            "weights": "other modes' failures stay in the risk set weighted G(t-)/G(t_j-), G the censoring "
                       "Kaplan–Meier"},
        "reading": (f"exp(coef) multiplies the subdistribution hazard of {target!r}: above 1 the covariate raises "
                    f"the chance of failing by {target!r} (with the other modes competing), below 1 lowers it"),
    }


def coefficient_rows(names: list[str], fit: fine_gray.FineGrayFit, confidence: float) -> list[dict[str, Any]]:
    """{name, value, se (robust), ci, z, p, exp_coef, exp_ci, model_se} per coefficient."""
    zq = z_of(confidence)
    se = np.sqrt(np.diag(fit.var))
    naive = np.sqrt(np.diag(fit.model_var))
    out = []
    for j, name in enumerate(names):
        b = float(fit.beta[j])
        lo, hi = b - zq * float(se[j]), b + zq * float(se[j])
        z = b / float(se[j])
        out.append({"name": name, "value": b, "se": float(se[j]), "ci": [lo, hi], "z": z,
                    "p": float(2 * stats.norm.sf(abs(z))), "exp_coef": math.exp(b), "exp_coef_kind": EXP_KIND,
                    "exp_ci": [math.exp(lo), math.exp(hi)], "model_se": float(naive[j]), "se_kind": "robust",
                    "confidence": confidence})
    return out


def _unit(record: Mapping[str, Any], covariates: Mapping[str, Any] | None) -> float:
    """e^{xβ} of a unit from {column: value}."""
    if not covariates:
        spec = record["design"]
        names = [t["column"] for t in spec["terms"]] if "terms" in spec else \
            [*spec.get("numeric", []), *spec.get("categorical", {})]
        raise InputError("covariates", f"required for a Fine–Gray model: values for {', '.join(names)}")
    row = design.row(record["design"], dict(covariates))
    beta = np.array([c["value"] for c in record["coefficients"]])
    return math.exp(float(row @ beta))


def _cumhaz(record: Mapping[str, Any], t: np.ndarray) -> np.ndarray:
    b = record["baseline"]
    time = np.asarray(b["time"], dtype=float)
    idx = np.searchsorted(time, t, side="right") - 1
    return np.where(idx >= 0, np.asarray(b["cumhaz"], dtype=float)[np.maximum(idx, 0)], 0.0)


NO_DENSITY = "the baseline is a step function (Breslow): a Fine–Gray model has no subdistribution density"


def evaluate_at(record: Mapping[str, Any], t: Any, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """A unit's cumulative incidence of the record's mode at t, F1(t | x) = 1 - exp(-Λ10(t) e^{xβ})."""
    t = check_time(t)
    risk = _unit(record, covariates)
    lam = float(_cumhaz(record, np.array([t]))[0]) * risk
    f = -math.expm1(-lam)
    return {"t": t, "failure_mode": record["failure_mode"], "cumulative_incidence": f, "failure": f,
            "reliability": 1.0 - f, "hazard": None, "cumulative_hazard": lam, "density": None,
            "meaning": f"failure is the chance of failing by {record['failure_mode']!r} by t, the other modes "
                       "competing; reliability is its complement, not the survival from every mode",
            "null_reason": {"hazard": NO_DENSITY, "density": NO_DENSITY}}


def evaluate_curves(record: Mapping[str, Any], points: int, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """A unit's cumulative incidence as a step curve {x, ff, sf, Hf} at the baseline's steps."""
    risk = _unit(record, covariates)
    x = [0.0, *record["baseline"]["time"]]
    lam = _cumhaz(record, np.asarray(x)) * risk
    f = -np.expm1(-lam)
    nulls = [None] * len(x)
    return {"step": "post", "failure_mode": record["failure_mode"], "x": x, "ff": f.tolist(),
            "sf": (1.0 - f).tolist(), "Hf": lam.tolist(), "hf": nulls, "df": nulls,
            "null_reason": {"hf": NO_DENSITY, "df": NO_DENSITY}}
