"""Saved life models (a life distribution, non-parametric, competing risks), from a dataset's
columns and back to numbers.

`fit_columns` is the registry's fit of those kinds (`bathtub.models.fit`): by the `distribution`
and the `mapping` it fits a parametric model (`records.fit_dataset`), a non-parametric one (`kaplan_meier`,
`turnbull`) or competing risks (a `mode` role). `evaluate_at` / `evaluate_curves` answer
`POST /api/v1/models/{id}/reliability` for any of those records.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bathtub import steps
from bathtub.censoring import FAILURE, censoring_codes
from bathtub.errors import InputError, RowError
from bathtub.life.competing import fit_competing_risks
from bathtub.life.cumulative_incidence import VARIANCES, label
from bathtub.life.data import ROLES, LifeData, check_rows
from bathtub.life.evaluate import reliability_at, reliability_curves
from bathtub.life.nonparametric import NO_DENSITY, kaplan_meier, turnbull
from bathtub.life.records import fit_dataset
from bathtub.validate import check_number

NONPARAMETRIC = ("kaplan_meier", "turnbull")
MODE_ROLE = "mode"
GROUP_ROLE = "group"  # with a mode column: per-group cumulative incidence and Gray's test
CURVE_POINTS_MAX = 5000  # a stored step curve is thinned to at most this many steps


def _check_mapping(columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str]) -> None:
    if not isinstance(mapping, Mapping) or not mapping:
        raise InputError("mapping", "must map roles (x, c, n, xl, xr, mode) to column names")
    for role, column in mapping.items():
        if role not in (*ROLES, MODE_ROLE, GROUP_ROLE):
            raise InputError(f"mapping.{role}", f"unknown role; roles are {', '.join((*ROLES, MODE_ROLE, GROUP_ROLE))}")
        if role == GROUP_ROLE and MODE_ROLE not in mapping:
            raise InputError("mapping.group", "groups are compared by failure mode: map `mode` too (or fit a "
                                              "regression model for a shared frailty group)")
        if column not in columns:
            known = ", ".join(map(str, columns))
            raise InputError(f"mapping.{role}", f"column {column!r} not in the dataset (columns: {known})")


def check_model_rows(columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str]) -> None:
    """Check rows, one by one, against what a model fitted with `mapping` reads from them:
    life data's row rules (`data.check_rows`) and, with a failure-mode column, a mode on every
    failure. Raises RowError naming the column and row; whole-data rules are the fit's."""
    check_rows(columns, mapping)
    mode_col = mapping.get(MODE_ROLE)
    if mode_col is None or mode_col not in columns:
        return
    modes = columns[mode_col]
    c_col = mapping.get("c")
    codes = censoring_codes(columns[c_col], c_col) if c_col in columns else np.zeros(len(modes), int)
    for i, (code, mode) in enumerate(zip(codes, modes)):
        if code == FAILURE and label(mode) == "":
            raise RowError(mode_col, i, "every failure needs a mode")
        if code != FAILURE and label(mode) != "":
            raise RowError(mode_col, i, "a censored row has no failure mode")


def _intervals(data: LifeData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Any life data as Turnbull's (xl, xr] sets with counts."""
    xl = np.concatenate([data.f, data.r, np.zeros(data.lt.size), data.il])
    xr = np.concatenate([data.f, np.full(data.r.size, math.inf), data.lt, data.ir])
    n = np.concatenate([data.fn, data.rn, data.ln, data.inn])
    return xl, xr, n


def _nonparametric(data: LifeData, method: str, options: Mapping[str, Any]) -> dict[str, Any]:
    known = {"confidence", "ci", "bootstrap", "seed"}
    for k in options:
        if k not in known:
            raise InputError(f"options.{k}", f"unknown option for {method}; known: {', '.join(sorted(known))}")
    confidence = options.get("confidence", 0.95)
    if method == "kaplan_meier":
        if data.lt.size or data.il.size:
            raise InputError("distribution", "kaplan_meier takes failures and right-censored times; "
                                             "use turnbull for left- or interval-censored data")
        x = np.concatenate([data.f, data.r])
        c = np.concatenate([np.zeros(data.f.size, int), np.ones(data.r.size, int)])
        n = np.concatenate([data.fn, data.rn])
        record = kaplan_meier(x, c, n, confidence=confidence, ci=options.get("ci", "log-log")).to_record()
    else:
        xl, xr, n = _intervals(data)
        record = turnbull(xl, xr, n, confidence=confidence, bootstrap=options.get("bootstrap", 200),
                          seed=options.get("seed", 0)).to_record()
    return _thin(record)


def _thin(record: dict[str, Any]) -> dict[str, Any]:
    """Keep a stored step curve to CURVE_POINTS_MAX steps (every k-th step and the last), so a
    10^6-row Kaplan–Meier does not store 10^6 rows; metrics were computed on the full curve."""
    curve = record.get("curve") or {}
    thinned = steps.thin(curve, CURVE_POINTS_MAX)
    if thinned is curve:
        return record
    size = thinned.pop("thinned_from")  # a life record marks it beside the curve
    return {**record, "curve": thinned, "curve_thinned_from": size}


def fit_columns(
    columns: Mapping[str, Sequence[Any]],
    mapping: Mapping[str, str],
    distribution: str,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The saved-model record of `distribution` (a life family, mixture, best, kaplan_meier or turnbull;
    competing risks with a `mode` role) fitted to a dataset's columns. Which kind a fit makes (ALT,
    recurrent, regression or these) is the registry's choice (`bathtub.models.fit`), made once."""
    if distribution == "fine_gray":
        raise InputError("covariates", "fine_gray is a regression on failure modes: give covariates or formula, "
                                       "mapping.mode and options.failure_mode")
    _check_mapping(columns, mapping)
    options = dict(options or {})
    if MODE_ROLE in mapping:
        if distribution in NONPARAMETRIC or distribution in ("best", "mixture"):
            raise InputError("distribution", "competing risks fit one parametric distribution per mode")
        x = columns[mapping["x"]] if "x" in mapping else None
        if x is None:
            raise InputError("mapping.x", "competing risks need times in x")
        c = columns[mapping["c"]] if "c" in mapping else None
        confidence = check_number(options.pop("confidence", 0.95), "options.confidence", 0.5, 1.0, hi_open=True)
        cif_variance = options.pop("cif_variance", "aalen")
        if cif_variance not in VARIANCES:
            raise InputError("options.cif_variance", f"must be one of {', '.join(VARIANCES)}")
        groups = columns[mapping[GROUP_ROLE]] if GROUP_ROLE in mapping else None
        result = fit_competing_risks(x, c, columns[mapping[MODE_ROLE]], distribution, options=options, groups=groups,
                                     confidence=confidence, cif_variance=cif_variance, field="mapping.mode")
        return {**result, "kind": "competing_risks", "distribution": distribution,
                "params": [], "coefficients": [], "metrics": None, "gof": result.get("gof", [])}
    if distribution in NONPARAMETRIC:
        data = LifeData.from_columns(columns, mapping)
        return _nonparametric(data, distribution, options)
    return fit_dataset(columns, mapping, distribution, options)


def _step_sf(record: Mapping[str, Any], t: np.ndarray) -> np.ndarray:
    curve = record["curve"]
    time = np.asarray(curve["time"], dtype=float)
    sf = np.asarray(curve["sf"], dtype=float)
    idx = np.searchsorted(time, t, side="right") - 1
    return np.where(idx >= 0, sf[np.maximum(idx, 0)], 1.0)


def _competing_at(record: Mapping[str, Any], t: float) -> dict[str, Any]:
    """Competing modes act in series: R = prod R_m, h = sum h_m, H = sum H_m, f = R h."""
    parts = [reliability_at(m["model"], t) for m in record["modes"]]
    sf = math.prod(p["reliability"] for p in parts)
    hazard = sum(p["hazard"] for p in parts) if all(p["hazard"] is not None for p in parts) else None
    cum = sum(p["cumulative_hazard"] for p in parts) if all(p["cumulative_hazard"] is not None for p in parts) \
        else None
    return {"t": float(t), "reliability": sf, "failure": 1.0 - sf, "hazard": hazard, "cumulative_hazard": cum,
            "density": None if hazard is None else sf * hazard}


def evaluate_at(record: Mapping[str, Any], t: float) -> dict[str, Any]:
    """{t, reliability, failure, hazard, cumulative_hazard, density} of a saved record at t."""
    kind = record.get("kind")
    if kind == "competing_risks":
        return _competing_at(record, t)
    if kind == "nonparametric":
        t = check_number(t, "t", 0.0)
        s = float(_step_sf(record, np.array([float(t)]))[0])
        return {"t": float(t), "reliability": s, "failure": 1.0 - s, "hazard": None,
                "cumulative_hazard": -math.log(s) + 0.0 if s > 0 else None, "density": None,
                "null_reason": {"hazard": NO_DENSITY, "density": NO_DENSITY}}
    if kind not in (None, "distribution"):
        raise InputError("id", f"a {kind} model has no single reliability function")
    return reliability_at(record, t)


def evaluate_curves(record: Mapping[str, Any], points: int = 200) -> dict[str, Any]:
    """Whole curves {x, sf, ff, hf, Hf, df} of a saved record (step curves for non-parametric)."""
    kind = record.get("kind")
    if kind == "nonparametric":
        curve = record["curve"]
        x = [0.0, *curve["time"]] if not curve["time"] or curve["time"][0] > 0 else list(curve["time"])
        s = np.asarray(_step_sf(record, np.asarray(x, dtype=float)), dtype=float)
        with np.errstate(divide="ignore"):
            hf = -np.log(s) + 0.0
        nulls = [None] * len(x)
        return {"step": "post", "x": x, "sf": s.tolist(), "ff": (1.0 - s).tolist(), "hf": nulls,
                "Hf": [float(h) if math.isfinite(h) else None for h in hf], "df": nulls,
                "null_reason": {"hf": NO_DENSITY, "df": NO_DENSITY}}
    if kind == "competing_risks":
        x = reliability_curves(record["pooled_fit"], points)["x"]
        rows = [_competing_at(record, float(t)) for t in x]
        return {"x": x, "sf": [r["reliability"] for r in rows], "ff": [r["failure"] for r in rows],
                "hf": [r["hazard"] for r in rows], "Hf": [r["cumulative_hazard"] for r in rows],
                "df": [r["density"] for r in rows]}
    if kind not in (None, "distribution"):
        raise InputError("id", f"a {kind} model has no single reliability function")
    return reliability_curves(record, points)
