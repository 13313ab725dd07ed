"""A block's life or repair model lowered to the engine's form: a BlockModel resolved to
validated params (`bathtub.distributions`), a knot table, or a model along a covariate path;
refusals name the field's path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bathtub.distributions import MIXTURE, params_from_mean, parse_params
from bathtub.engine import binding
from bathtub.errors import EngineError, InputError, prefixed
from bathtub.validate import check_array, check_enum, check_keys, check_number, is_number

__all__ = ["PATH_MAX_SEGMENTS", "PATH_SCALES", "STEPS", "TABLE", "TABLE_MAX_KNOTS", "lower_model"]

TABLE = "table"  # a life as [t, F] knots (a joint unit's conditional life); the engine checks the knots
STEPS = "steps"  # the same knots read as a step distribution function (a Cox model's Breslow survival)
TABLE_MAX_KNOTS = 100_000
PATH_SCALES = ("hazard", "time")
PATH_MAX_SEGMENTS = 100_000


def lower_model(model: Any, field: str) -> dict[str, Any]:
    """A BlockModel as the engine samples it: {distribution_id, params, base_distribution_id?},
    knots under `table`, or a covariate `path`. Saved models must be resolved first."""
    if not isinstance(model, Mapping):
        raise InputError(field, "must be an object (BlockModel)")
    if model.get("saved_model_id") is not None:
        raise InputError(f"{field}.saved_model_id", "resolve saved models to distribution_id + params first")
    if model.get("path") is not None:
        base = lower_model({k: v for k, v in model.items() if k != "path"}, field)
        return {**base, "path": _path(model["path"], f"{field}.path")}
    dist_id = model.get("distribution_id")
    if not isinstance(dist_id, str):
        raise InputError(f"{field}.distribution_id", "required (a distribution id)")
    if dist_id in (TABLE, STEPS):
        return _table(model, field)
    base = model.get("base_distribution_id")
    try:
        if model.get("mean") is not None:
            if model.get("params") is not None:
                raise InputError("mean", "give params or mean, not both")
            params = params_from_mean(dist_id, model["mean"], model.get("given"))
            base = None
        else:
            if "params" not in model:
                raise InputError("params", "required (or mean + given)")
            params = parse_params(dist_id, model["params"], base_distribution_id=base)
    except InputError as e:
        raise prefixed(field, e) from None
    try:
        # Built as the simulator will build it: a family the library knows but the engine
        # does not sample is refused here, naming the field, not deep in the compile.
        binding.dist_eval(dist_id, params, "sf", [], base if dist_id == MIXTURE else None)
    except EngineError as e:
        which = "base_distribution_id" if dist_id == MIXTURE else "distribution_id"
        raise InputError(f"{field}.{which}", f"not simulated by engine {binding.ENGINE_VERSION} ({e})") from None
    out: dict[str, Any] = {"distribution_id": dist_id, "params": params}
    if dist_id == MIXTURE:
        out["base_distribution_id"] = base
    return out


def _path(path: Any, field: str) -> dict[str, Any]:
    """A covariate path (`bathtub.rbd.covariate_life` makes it from covariate_schedules): segment
    starts, a factor per segment, optional period, scale hazard | time; the engine checks the rest."""
    check_keys(path, ("starts", "factors", "period", "scale"), field)
    out: dict[str, Any] = {}
    for key in ("starts", "factors"):
        v = path.get(key)
        if v is None:
            raise InputError(f"{field}.{key}", "required")
        out[key] = [check_number(x, f"{field}.{key}")
                    for x in check_array(v, f"{field}.{key}", 1, PATH_MAX_SEGMENTS)]
    out["scale"] = check_enum(path.get("scale"), f"{field}.scale", PATH_SCALES)
    if path.get("period") is not None:
        out["period"] = check_number(path["period"], f"{field}.period")
    return out


def _table(model: Mapping[str, Any], field: str) -> dict[str, Any]:
    dist_id = model["distribution_id"]
    for k in model:
        if k not in ("distribution_id", "table"):
            raise InputError(f"{field}.{k}", f"not with the {dist_id} distribution (its knots are in table)")
    knots = model.get("table")
    least = 1 if dist_id == STEPS else 2
    if not isinstance(knots, list) or not least <= len(knots) <= TABLE_MAX_KNOTS:
        raise InputError(f"{field}.table", f"{least} to {TABLE_MAX_KNOTS} [t, F] knots")
    for i, k in enumerate(knots):
        if not isinstance(k, (list, tuple)) or len(k) != 2 or not all(is_number(v) for v in k):
            raise InputError(f"{field}.table.{i}", "must be a [t, F] pair of numbers")
    return {"distribution_id": dist_id, "params": {}, "table": [[float(a), float(b)] for a, b in knots]}
