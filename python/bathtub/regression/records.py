"""Regression life models from a dataset's columns: the saved model record, and its use.

`fit_regression` is `POST /api/v1/fit` with `covariates` or `formula`: it reads the mapping
(x, c; i with xl/xr start/stop rows, or i with x as successive stop times), builds the design,
fits `cox`, `weibull_ph`, `lognormal_aft`, `loglogistic_aft`, `royston_parmar`, `proportional_odds`,
`additive_hazards` or `fine_gray` (competing modes: `fine_gray_records`) (or ranks the
full-likelihood ones by AIC for `best`), or the shared-frailty and
Buckley–James models of `frailty_aft_records` (role `group`), and returns the record: coefficients,
gof, validation and diagnostics. `evaluate_at` and `evaluate_curves` answer
`POST /api/v1/models/{id}/reliability` with `covariates`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bathtub.censoring import censoring_codes
from bathtub.errors import InputError
from bathtub.life.data import number_column
from bathtub.regression import (
    cox,
    design,
    fine_gray_records,
    flexible,
    flexible_models,
    frailty_aft_records,
    models,
    parametric,
    zph,
)
from bathtub.regression.design import check_roles
from bathtub.regression.models import additive_record, cox_record, parametric_record
from bathtub.regression.record_parts import Rows
from bathtub.validate import check_number

MODELS = ("cox", *parametric.FAMILIES, *flexible.MODELS, "additive_hazards", *frailty_aft_records.MODELS,
          fine_gray_records.MODEL)
# Models with a full likelihood on the same rows, so AIC ranks them for `best` (Cox's partial likelihood
# and the additive model's estimating equations are not comparable).
RANKED = (*parametric.FAMILIES, *flexible.MODELS)
ROLES = ("x", "c", "i", "xl", "xr", "group")
COX_OPTIONS = ("tie_method", "strata_column", "cluster_column")
OPTIONS = ("reference", "confidence", "ph_transform", "knots", "bootstrap")


def read_rows(columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str]) -> Rows:
    if not isinstance(mapping, Mapping) or not mapping:
        raise InputError("mapping", "must map roles (x, c; i with xl/xr) to column names")
    check_roles(columns, mapping, ROLES, "a regression model")
    fields = {r: f"mapping.{r}" for r in ROLES}
    n = len(next(iter(columns.values())))
    if "c" in mapping:
        codes = censoring_codes(list(columns[mapping["c"]]), "mapping.c")
        if np.any(codes < 0):
            raise InputError("mapping.c", f"row {int(np.argmax(codes < 0)) + 1}: left-censored rows cannot enter a "
                                          "regression model; use 0 (failure) or 1 (right-censored)")
        event = codes == 0
    else:
        event = np.ones(n, dtype=bool)
    item = None
    if "i" in mapping:
        item = np.array([str(v) for v in columns[mapping["i"]]], dtype=object)
    if "xl" in mapping or "xr" in mapping:
        if "xl" not in mapping or "xr" not in mapping or item is None:
            raise InputError("mapping.xl", "start/stop rows need xl (start), xr (stop) and the item column i")
        if "x" in mapping:
            raise InputError("mapping.x", "give x or xl/xr, not both")
        start = number_column(list(columns[mapping["xl"]]), "mapping.xl", allow_missing=False)
        stop = number_column(list(columns[mapping["xr"]]), "mapping.xr", allow_missing=False)
        fields["time"] = "mapping.xr"
        bad = np.flatnonzero(~(start < stop))
        if bad.size:
            k = int(bad[0])
            raise InputError("mapping.xl", f"row {k + 1}: start {start[k]:g} must be below stop {stop[k]:g}")
        if np.any(start < 0):
            raise InputError("mapping.xl", f"row {int(np.argmax(start < 0)) + 1}: times must be >= 0")
        _check_overlap(item, start, stop)
        return Rows(start, stop, event, item, fields)
    if "x" not in mapping:
        raise InputError("mapping.x", "required: the time column (or xl/xr with i for start/stop rows)")
    x = number_column(list(columns[mapping["x"]]), "mapping.x", allow_missing=False)
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        raise InputError("mapping.x", f"row {int(np.argmax(~np.isfinite(x) | (x < 0))) + 1}: times must be finite "
                                      "and >= 0")
    fields["time"] = "mapping.x"
    if item is None:
        return Rows(None, x, event, None, fields)
    # i with x: each item's rows are successive stop times; a row starts where the previous one stopped
    order = np.lexsort((x, item))
    start = np.zeros(n)
    prev_same = item[order][1:] == item[order][:-1]
    start[order[1:]] = np.where(prev_same, x[order][:-1], 0.0)
    bad = np.flatnonzero(~(start < x))
    if bad.size:
        k = int(bad[0])
        raise InputError("mapping.x", f"row {k + 1}: item {item[k]!r} has two rows at time {x[k]:g} (stop times of "
                                      "one item must increase)")
    dead_before = np.zeros(n, dtype=bool)
    dead_before[order[1:]] = prev_same & event[order][:-1]
    if dead_before.any():
        k = int(np.argmax(dead_before))
        raise InputError("mapping.c", f"row {k + 1}: item {item[k]!r} has a row after its failure")
    return Rows(start, x, event, item, fields)


def _check_overlap(item: np.ndarray, start: np.ndarray, stop: np.ndarray) -> None:
    order = np.lexsort((start, item))
    same = item[order][1:] == item[order][:-1]
    overlap = same & (start[order][1:] < stop[order][:-1])
    if overlap.any():
        k = int(order[1:][np.argmax(overlap)])
        raise InputError("mapping.xl", f"row {k + 1}: item {item[k]!r} has overlapping (start, stop] intervals")


def fit_regression(
    columns: Mapping[str, Sequence[Any]],
    mapping: Mapping[str, str],
    distribution: str,
    covariates: Sequence[str] | None = None,
    formula: str | None = None,
    cox_options: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The saved record of a regression life model fitted to a dataset's columns."""
    if distribution == fine_gray_records.MODEL:  # competing modes: its own roles and options
        return fine_gray_records.fit_record(columns, mapping, covariates, formula, cox_options, options)
    if distribution not in (*MODELS, "best"):
        raise InputError("distribution", f"with covariates or a formula, use one of {', '.join(MODELS)} or best")
    options = dict(options or {})
    for k in options:
        if k not in OPTIONS:
            raise InputError(f"options.{k}", f"unknown option for a regression model; known: {', '.join(OPTIONS)}")
    confidence = options.get("confidence", 0.95)
    confidence = check_number(confidence, "options.confidence", 0.5, 1.0, hi_open=True)
    transform = options.get("ph_transform", "km")
    if transform not in zph.TRANSFORMS:
        raise InputError("options.ph_transform", f"must be one of {', '.join(zph.TRANSFORMS)}")
    cox_options = dict(cox_options or {})
    for k in cox_options:
        if k not in COX_OPTIONS:
            raise InputError(f"cox_options.{k}", f"unknown; known: {', '.join(COX_OPTIONS)}")
    frailty_aft_records.check_request(distribution, mapping if isinstance(mapping, Mapping) else {}, cox_options,
                                      options)
    knots = options.get("knots")
    if knots is not None and distribution not in flexible.MODELS:
        raise InputError("options.knots", f"apply to {' and '.join(flexible.MODELS)} only")
    reference = options.get("reference")
    if reference is not None and not isinstance(reference, Mapping):
        raise InputError("options.reference", "must map a categorical covariate to its reference level")
    rows = read_rows(columns, mapping)
    d = design.design(columns, covariates, formula, reference)
    if formula is not None:
        design.check_rebuild(d, columns)
    if distribution == "cox":
        ties = cox_options.get("tie_method", "efron")
        strata = cluster = None
        if cox_options.get("strata_column") is not None:
            strata = [design.level_label(v) for v in design.column_values(columns, cox_options["strata_column"],
                                                         "cox_options.strata_column")]
            used = d.spec.get("covariates") or [*d.spec.get("numeric", []), *d.spec.get("categorical", {})]
            if cox_options["strata_column"] in used:
                raise InputError("cox_options.strata_column", "is also a covariate; a stratum gets its own "
                                                              "baseline and no coefficient")
        if cox_options.get("cluster_column") is not None:
            cluster = design.column_values(columns, cox_options["cluster_column"], "cox_options.cluster_column")
            if ties not in ("efron", "breslow"):
                raise InputError("cox_options.cluster_column", "robust standard errors are computed for efron and "
                                                               "breslow ties (R's coxph refuses them for exact ties)")
        field = "covariates" if covariates is not None else "formula"
        fit = cox.fit_cox(d.x, d.names, rows.stop, rows.event, start=rows.start, strata=strata,
                          cluster=cluster if cluster is not None else (rows.item if ties in ("efron", "breslow")
                                                                       else None),
                          ties=ties, field_names={"design": field, "time": rows.fields["time"], "event": "mapping.c"})
        return cox_record(fit, d, rows, confidence, transform,
                          {"tie_method": ties, "strata_column": cox_options.get("strata_column"),
                           "cluster_column": cox_options.get("cluster_column")})
    if distribution in frailty_aft_records.MODELS:
        return frailty_aft_records.fit_record(distribution, columns, mapping, d, rows, confidence, formula is not None,
                                              cox_options, options)
    if distribution == "best":
        candidates = []
        refusals = {}
        for name in RANKED:
            try:
                candidates.append(flexible_models.spline_record(name, d, rows, confidence, transform,
                                                                covariates is None) if name in flexible.MODELS
                                  else parametric_record(name, d, rows, confidence, transform, covariates is None))
            except InputError as exc:
                refusals[name] = exc.rule
        if not candidates:
            raise InputError("distribution", "no parametric regression model could be fitted: "
                                             + "; ".join(f"{k}: {v}" for k, v in refusals.items()))
        candidates.sort(key=lambda r: _gof(r, "aic"))
        best = candidates[0]
        best["ranking"] = [{"distribution": r["distribution"], "aic": _gof(r, "aic"),
                            "log_likelihood": _gof(r, "log_likelihood"), "parameters": _n_params(r)}
                           for r in candidates]
        best["ranking_note"] = ("parametric regression models ranked by AIC on the same rows (the same "
                                "likelihood of the times, so comparable); cox and additive_hazards are not "
                                "ranked: Cox's partial likelihood and the additive model's estimating equations "
                                "are not likelihoods of the times, so no AIC compares them; fit them by name")
        if refusals:
            best["ranking_refused"] = refusals
        return best
    if distribution == "additive_hazards":
        return additive_record(d, rows, confidence, covariates is None)
    if distribution in flexible.MODELS:
        return flexible_models.spline_record(distribution, d, rows, confidence, transform, covariates is None, knots)
    return parametric_record(distribution, d, rows, confidence, transform, covariates is None)


def _gof(record: Mapping[str, Any], key: str) -> float:
    return float(next(g["value"] for g in record["gof"] if g["id"] == key))


def _n_params(record: Mapping[str, Any]) -> int:
    """The parameters AIC counted: coefficients plus the baseline's (μ, σ; or the spline's γ)."""
    spline = record.get("spline")
    return len(record["coefficients"]) + (len(spline["gamma"]) if spline else 2)


def evaluate_at(record: Mapping[str, Any], t: Any, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """{t, reliability, failure, hazard, cumulative_hazard, density} of a regression record for one unit."""
    if record["distribution"] == fine_gray_records.MODEL:
        return fine_gray_records.evaluate_at(record, t, covariates)
    if record["distribution"] in flexible.MODELS:
        return flexible_models.evaluate_at(record, t, covariates)
    if record["distribution"] in frailty_aft_records.MODELS:
        return frailty_aft_records.evaluate_at(record, t, covariates)
    return models.evaluate_at(record, t, covariates)


def evaluate_curves(record: Mapping[str, Any], points: int, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """Whole curves {x, sf, ff, hf, Hf, df} of a regression record for one unit."""
    if record["distribution"] == fine_gray_records.MODEL:
        return fine_gray_records.evaluate_curves(record, points, covariates)
    if record["distribution"] in flexible.MODELS:
        return flexible_models.evaluate_curves(record, points, covariates)
    if record["distribution"] in frailty_aft_records.MODELS:
        return frailty_aft_records.evaluate_curves(record, points, covariates)
    return models.evaluate_curves(record, points, covariates)
