"""Regression life models from a dataset's columns: the saved model record, and its use.

`fit_regression` is `POST /api/v1/fit` with `covariates` or `formula`: it reads the mapping
(x, c; i with xl/xr start/stop rows, or i with x as successive stop times), builds the design,
fits `cox`, `weibull_ph`, `lognormal_aft`, `loglogistic_aft`, `royston_parmar`, `proportional_odds`,
`additive_hazards` or `fine_gray` (competing modes: `fine_gray_records`) (or ranks the
full-likelihood ones by AIC for `best`), or the shared-frailty and
Buckley–James models of `frailty_aft_records` (role `group`), and returns the record: coefficients,
gof, validation and diagnostics. `evaluate_at` and `evaluate_curves` answer
`POST /api/v1/models/{id}/reliability` with `covariates`; which kind does what is `kinds.KINDS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bathtub.censoring import censoring_codes
from bathtub.errors import InputError
from bathtub.life.data import number_column
from bathtub.regression import (
    design,
    kinds,
    zph,
)
from bathtub.regression.design import check_roles
from bathtub.regression.record_parts import Request, Rows
from bathtub.validate import check_number

MODELS = kinds.MODELS
RANKED = kinds.RANKED  # ranked by AIC for `best` (the guide lists them)
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
    model = kinds.kind(distribution)
    if model.raw_fit is not None:  # competing modes (fine_gray): its own roles and options
        return model.raw_fit(columns, mapping, covariates, formula, cox_options, options)
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
    kinds.check_request(model, mapping if isinstance(mapping, Mapping) else {}, cox_options, options)
    reference = options.get("reference")
    if reference is not None and not isinstance(reference, Mapping):
        raise InputError("options.reference", "must map a categorical covariate to its reference level")
    rows = read_rows(columns, mapping)
    d = design.design(columns, covariates, formula, reference)
    if formula is not None:
        design.check_rebuild(d, columns)
    req = Request(columns, mapping, d, rows, confidence, transform, covariates is None, cox_options, options)
    assert model.fit is not None
    return model.fit(req)
