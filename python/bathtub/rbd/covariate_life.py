"""A block on a saved regression model: its life for the unit's covariates, fixed
(`model.covariates`) or following `covariate_schedules` over the block's age t.

Fixed values give the model's own life at those covariates (`bathtub.regression.lives`).
Schedules give the engine a covariate path: the reference life and, per segment (u_k, u_{k+1}],
the factor e^{x_k b} on its hazard (proportional-hazards models: H(t) = Σ H0(segment)·e^{x_k b})
or e^{−x_k γ} on its clock (AFT models); the engine samples by inverting that cumulative
hazard (`PathLife`). Phase tables that all repeat with one period stay periodic; anything else
is unrolled up to the age past which fewer than 1e-15 of lives survive (the last value holds
beyond). Numeric values outside the range the model was fitted on are clipped to it, with a
warning; a categorical level the fit never saw is refused.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from bathtub.errors import InputError
from bathtub.rbd.schedules import MAX_STEPS, Schedule, parse_schedule
from bathtub.regression import lives
from bathtub.units import units_clash
from bathtub.validate import is_number

TAIL = 1e-15  # unrolled paths reach the age where the survival falls below this


def _clip(name: str, info: Mapping[str, Any], values: list[Any], field: str, warnings: list[str]) -> list[Any]:
    """Numeric values clipped to the fitted range (one warning per covariate); levels checked."""
    if info["kind"] != "numeric":
        levels = [str(v) for v in info["levels"]]
        for v in values:
            if isinstance(v, bool) or (str(v).strip() not in levels and not (
                    isinstance(v, (int, float)) and float(v).is_integer() and str(int(v)) in levels)):
                raise InputError(field, f"level {v!r} of {name!r} was not seen in the fit (levels: {levels})")
        return values
    for v in values:
        if not is_number(v) or not math.isfinite(v):
            raise InputError(field, f"{name!r} is numeric: values must be finite numbers (got {v!r})")
    rng = info.get("range")
    if rng is None:
        warnings.append(f"{field}: the model does not record the range {name!r} was fitted on; values used as "
                        "given (an extrapolation may mislead)")
        return [float(v) for v in values]
    lo, hi = float(rng[0]), float(rng[1])
    out = [min(max(float(v), lo), hi) for v in values]
    below = [float(v) for v in values if v < lo]
    above = [float(v) for v in values if v > hi]
    if below or above:
        seen = ", ".join(([f"down to {min(below):g}"] if below else []) + ([f"up to {max(above):g}"] if above else []))
        warnings.append(f"{field}: {name!r} goes {seen}, outside the fitted range [{lo:g}, {hi:g}]; simulated "
                        "clipped to that range")
    return out


def _base_cumhaz(base: Mapping[str, Any]) -> Any:
    """H0(t) of the reference life, vectorised (for the unrolling horizon only)."""
    if base["distribution_id"] == "steps":
        times = np.array([k[0] for k in base["table"]])
        cum = -np.log1p(-np.array([k[1] for k in base["table"]]))

        def h0(t: np.ndarray) -> np.ndarray:
            i = np.searchsorted(times, t, side="right") - 1
            return np.where(i >= 0, cum[np.maximum(i, 0)], 0.0)

        return h0
    from bathtub.engine import EngineLifetime

    d = EngineLifetime.from_input(base["distribution_id"], base["params"])
    return d.cumulative_hazard


def block_life(
    record: Mapping[str, Any],
    model_id: str,
    fixed: Mapping[str, Any] | None,
    schedules: Mapping[str, Any] | None,
    field: str,
    unit: str | None,
    warnings: list[str],
) -> dict[str, Any]:
    """The engine BlockModel of a block on saved regression `record`. `field` is the node's
    path (`nodes.pump`); refusals name `field.model.covariates.x` or `field.covariate_schedules.x`."""
    lives.check_life_model(record, model_id, f"{field}.model.saved_model_id")
    if units_clash(record.get("unit"), unit):
        raise InputError(f"{field}.model.saved_model_id", f"model {model_id} is in {record.get('unit')!r} but the "
                                                          f"diagram is in {unit!r}")
    fixed, schedules = dict(fixed or {}), dict(schedules or {})
    need = lives.variables(record)
    fpath, spath = f"{field}.model.covariates", f"{field}.covariate_schedules"
    for name in fixed:
        if name not in need:
            raise InputError(f"{fpath}.{name}", f"not a covariate of model {model_id} (covariates: {', '.join(need)})")
    for name in schedules:
        if name not in need:
            raise InputError(f"{spath}.{name}", f"not a covariate of model {model_id} (covariates: {', '.join(need)})")
        if name in fixed:
            raise InputError(f"{spath}.{name}", "also fixed in model.covariates: give it one way")
        if need[name]["kind"] == "stratum":
            raise InputError(f"{spath}.{name}", "is the model's stratum (it picks the baseline): fix it in "
                                                "model.covariates; it cannot change over time")
        if need[name]["kind"] == "categorical" and "expression" in schedules[name]:
            raise InputError(f"{spath}.{name}.expression", f"{name!r} is categorical: give a table of its levels")
    missing = [n for n in need if n not in fixed and n not in schedules]
    if missing:
        raise InputError(f"{fpath}.{missing[0]}", f"required: model {model_id} needs every covariate "
                                                  f"({', '.join(need)}) in model.covariates or covariate_schedules")
    for name, v in fixed.items():
        if need[name]["kind"] != "stratum":
            fixed[name] = _clip(name, need[name], [v], f"{fpath}.{name}", warnings)[0]
        elif v is None or isinstance(v, (bool, dict, list)):
            raise InputError(f"{fpath}.{name}", "must be a stratum level (a number or a string)")
    stratum = lives.stratum_of(record, fixed, fpath)
    if not schedules:
        return lives.life_at(record, lives.linear_predictor(record, fixed, fpath), stratum)
    parsed = {name: parse_schedule(s, f"{spath}.{name}") for name, s in schedules.items()}
    for name, sch in parsed.items():
        if sch.expression is None:
            _clip(name, need[name], sch.values, f"{spath}.{name}.table", [])  # levels checked up front
    base = lives.life_at(record, 0.0, stratum)
    periods = {s.period for s in parsed.values()}
    if (len(periods) == 1 and None not in periods) or all(s.period is None and s.expression is None
                                                        for s in parsed.values()):
        period = next(iter(periods))
        starts, columns = _tables(parsed)
    else:
        period = None
        starts, columns = _unrolled(parsed, base, record, fixed, spath, need)
    for name in list(columns):
        columns[name] = _clip(name, need[name], columns[name], f"{spath}.{name}", warnings)
    factors = _factors(record, fixed, columns, len(starts), spath)
    keep = np.concatenate([[True], factors[1:] != factors[:-1]])  # merge equal neighbours
    if period is not None and keep.sum() == 1:
        period = None
    path: dict[str, Any] = {"starts": starts[keep].tolist(), "factors": factors[keep].tolist(),
                            "scale": lives.SCALE[record["distribution"]]}
    if period is not None:
        path["period"] = period
    return {**base, "path": path}


def _tables(parsed: Mapping[str, Schedule]) -> tuple[np.ndarray, dict[str, list[Any]]]:
    """Phase tables sharing one period (or none): the union of their phase starts."""
    starts = np.unique(np.concatenate([s.starts for s in parsed.values()]))
    columns = {}
    for name, s in parsed.items():
        idx = np.searchsorted(s.starts, starts, side="right") - 1
        columns[name] = [s.values[i] for i in idx]
    return starts, columns


def _unrolled(parsed: Mapping[str, Schedule], base: Mapping[str, Any], record: Mapping[str, Any],
              fixed: Mapping[str, Any], spath: str, need: Mapping[str, Any]) -> tuple[np.ndarray, dict[str, list[Any]]]:
    """Expressions and differing periods: every change up to the age where the survival along
    the path falls below TAIL (or a Cox baseline's last step, past which nothing fails)."""
    h0 = _base_cumhaz(base)
    hazard = lives.SCALE[record["distribution"]] == "hazard"
    if base["distribution_id"] == "steps":
        horizon = float(base["table"][-1][0]) * (1 + 1e-12) + 1e-300
        rounds = 1
    else:
        from bathtub.engine import EngineLifetime

        horizon = float(EngineLifetime.from_input(base["distribution_id"], base["params"]).isf(TAIL))
        rounds = 60
    for _ in range(rounds):
        starts, columns = _segments(parsed, horizon, spath)
        clipped = {n: _clip(n, need[n], v, f"{spath}.{n}", []) for n, v in columns.items()}
        f = _factors(record, fixed, clipped, len(starts), spath)
        ends = np.concatenate([starts[1:], [horizon]])
        if hazard:
            total = float(np.sum(f * (h0(ends) - h0(starts))))
        else:
            total = float(h0(np.array([float(np.sum(f * (ends - starts)))]))[0])
        if math.exp(-total) < TAIL or rounds == 1:
            return starts, columns
        horizon *= 4
    raise InputError(spath, "the path keeps the block alive implausibly long (survival above 1e-15 after "
                            f"{horizon:g}): check the covariate values")


def _segments(parsed: Mapping[str, Schedule], horizon: float, spath: str) -> tuple[np.ndarray, dict[str, list[Any]]]:
    per = {name: s.on(horizon, f"{spath}.{name}") for name, s in parsed.items()}
    starts = np.unique(np.concatenate([b for b, _ in per.values()]))
    if starts.size > MAX_STEPS:
        raise InputError(spath, f"the covariates change more than {MAX_STEPS} times before age {horizon:g} (where "
                                "fewer than 1e-15 of lives survive): make the steps coarser, or use phase tables "
                                "with one period")
    columns = {}
    for name, (b, v) in per.items():
        idx = np.searchsorted(b, starts, side="right") - 1
        columns[name] = [v[i] for i in idx]
    return starts, columns


def _factors(record: Mapping[str, Any], fixed: Mapping[str, Any], columns: Mapping[str, list[Any]], n: int,
             spath: str) -> np.ndarray:
    """The path factor of each segment (one design row per distinct combination of values)."""
    cache: dict[tuple[Any, ...], float] = {}
    out = np.empty(n)
    names = list(columns)
    for k in range(n):
        key = tuple(columns[name][k] for name in names)
        if key not in cache:
            values = {**fixed, **dict(zip(names, key))}
            cache[key] = lives.path_factor(record, lives.linear_predictor(record, values, spath))
        out[k] = cache[key]
    return out
