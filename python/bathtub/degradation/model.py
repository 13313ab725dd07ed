"""A saved degradation model's record: from a dataset's columns to pseudo-failure or
random-effects results, with the life they imply."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bathtub.degradation.paths import Path, check_direction, readings_from_columns, unit_lines
from bathtub.degradation.pf_interval import check_potential_failure, pf_pseudo, pf_random_effects
from bathtub.degradation.pseudo import DEFAULT_EXTRAPOLATION, crossing_times, fit_pseudo_failures
from bathtub.degradation.random_effects import fit_random_effects, population_life
from bathtub.errors import InputError
from bathtub.validate import check_number, is_number

MODELS = ("pseudo_failure", "random_effects")
LIFE_POINTS = (0.01, 0.05, 0.1, 0.5, 0.9, 0.95)


def _num(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def build_model(
    columns: Mapping[str, Sequence[Any]],
    mapping: Mapping[str, str],
    *,
    path: str | Mapping[str, str],
    threshold: float,
    direction: str,
    model: str,
    life_distribution: str = "weibull",
    options: Mapping[str, Any] | None = None,
    potential_failure: float | None = None,
) -> dict[str, Any]:
    """The record of a degradation model fitted to readings (roles i unit, x time, y value).

    `potential_failure`: the level P (in the threshold's measurement unit) at which a defect
    can be seen; the record then carries `pf_interval`, the time from crossing P to crossing
    the threshold (`bathtub.degradation.pf_interval`).

    `options`: extrapolation (a multiple of each unit's last reading time, default 3: a
    pseudo-failure beyond it is censored; some unit must reach the threshold within it),
    random_intercept and method ml|reml (random_effects)."""
    if model not in MODELS:
        raise InputError("model", f"must be one of {', '.join(MODELS)}")
    p = Path.parse(path)
    check_direction(direction)
    threshold = check_number(threshold, "threshold")
    pl = None if potential_failure is None else check_potential_failure(potential_failure, threshold, direction, p)
    opts = dict(options or {})
    known = {"extrapolation"} | ({"random_intercept", "method"} if model == "random_effects" else set())
    for k in opts:
        if k not in known:
            raise InputError(f"options.{k}", f"unknown option for {model}; known: {', '.join(sorted(known))}")
    if model == "random_effects" and not p.time_linear:
        raise InputError("path", "a random-effects model needs time untransformed (linear or exponential path); "
                                 "fit power or logarithmic paths with model pseudo_failure")
    readings = readings_from_columns(columns, mapping)
    fields = (mapping["x"], mapping["y"])
    if p.y != "identity" and threshold <= 0:
        raise InputError("threshold", f"must be > 0 (the path takes the {p.y} of values)")
    base = {"kind": "degradation", "model": model, "path": p.to_record(), "threshold": float(threshold),
            "direction": direction, "n": len(readings.units), "readings": int(readings.t.size)}
    extrapolation = opts.get("extrapolation", DEFAULT_EXTRAPOLATION)
    if not is_number(extrapolation) or not (math.isfinite(extrapolation) and extrapolation >= 1):
        raise InputError("options.extrapolation", "must be a finite number >= 1 (a multiple of each unit's last "
                                                  "reading time)")
    if model == "pseudo_failure":
        out = fit_pseudo_failures(p, readings, threshold, direction, life_distribution,
                                  extrapolation=float(extrapolation), fields=fields)
        record = {**base, "distribution": out["life"]["distribution"], **out}
        if pl is not None:
            record["potential_failure"] = pl
            record["pf_interval"] = pf_pseudo(p, unit_lines(p, readings, fields=fields), pl, threshold, direction)
        return record
    ri = opts.get("random_intercept", False)
    if not isinstance(ri, bool):
        raise InputError("options.random_intercept", "must be true or false")
    method = opts.get("method", "reml")
    if method not in ("ml", "reml"):
        raise InputError("options.method", "must be ml or reml")
    lines = unit_lines(p, readings, fields=fields)
    # the same door as pseudo-failure times: some unit's own line must reach the threshold
    # within the extrapolation limit, else the data say nothing about crossing it
    last = readings.t[readings.start[1:] - 1]
    if not np.any(crossing_times(p, lines, threshold, direction) <= extrapolation * last):
        raise InputError("threshold", f"no unit's fitted path reaches {threshold:g} ({direction}) within "
                                      f"{extrapolation:g} × its last reading time")
    re = fit_random_effects(p, readings, random_intercept=ri, method=method, fields=fields)
    record = {**base, "distribution": "random_effects", "random_effects": re, "extrapolation": float(extrapolation)}
    life = population_life(p, re, threshold, direction)
    qs = life.quantile(np.array(LIFE_POINTS))
    if not np.isfinite(qs[LIFE_POINTS.index(0.5)]):
        raise InputError("threshold", f"fewer than half the units would ever reach {threshold:g} ({direction}) "
                                      "under the fitted slopes")
    record["life"] = {"quantiles": [{"p": q, "t": _num(t)} for q, t in zip(LIFE_POINTS, qs)],
                      "median": _num(qs[LIFE_POINTS.index(0.5)]), "p_never": life.p_never,
                      "mean": _num(life.mean())}
    record["units"] = [{"id": u, "intercept": float(lines[k, 0]), "slope": float(lines[k, 1]),
                        "readings": int(lines[k, 3])} for k, u in enumerate(readings.units)]
    if pl is not None:
        record["potential_failure"] = pl
        record["pf_interval"] = pf_random_effects(p, re, pl, threshold, direction)
    return record
