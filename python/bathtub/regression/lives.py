"""A saved regression model as one unit's life distribution, for given covariates.

- `weibull_ph`: h(t|x) = h0(t)·e^{xb}: a Weibull with the shape β and scale α·e^{-xb/β}
  (= e^{μ + xγ}, the same model read as log-time location).
- `lognormal_aft`, `loglogistic_aft`: log T = μ + xγ + σε: the family with location μ + xγ
  (lognormal μ; loglogistic scale e^{μ + xγ}).
- `cox`: the Breslow step survival of the unit's stratum, exp(−H0(t)·e^{(x − x̄)β}), as a step
  table (the baseline is stored at the covariate means x̄).

For a covariate path (`path_factor`), the reference life (linear predictor 0) and the factor of
each segment: e^{xb} on the hazard (proportional hazards) or e^{−xγ} on the clock (AFT: the age
runs that much faster).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bathtub.errors import InputError
from bathtub.regression import design, kinds

LIFE_MODELS = kinds.LIFE_MODELS
SCALE = {k: kinds.KINDS[k].clock for k in LIFE_MODELS}


# why a kind without a block life has none, where the general reason would mislead
NO_LIFE = {"additive_hazards": "its cumulative hazard can decrease for some covariates (an additive effect is not "
                               "a life distribution)"}


def check_life_model(record: Mapping[str, Any], model_id: str, field: str) -> None:
    dist = record.get("distribution")
    if dist not in LIFE_MODELS:
        why = NO_LIFE.get(dist, "block lives are offered for the models whose life under a changing covariate the "
                                "engine simulates (proportional hazards or accelerated time)")
        raise InputError(field, f"model {model_id} is a {dist!r} regression model: {why}; a block's life can be "
                                f"a saved {', '.join(LIFE_MODELS)} model")


def variables(record: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The values a unit needs, by column: {kind: numeric, range: [lo, hi] or None} or
    {kind: categorical | stratum, levels}."""
    spec = record["design"]
    out: dict[str, dict[str, Any]] = {}
    if "terms" in spec:
        for t in spec["terms"]:
            if t["kind"] == "numeric":
                out[t["column"]] = {"kind": "numeric", "range": [t["min"], t["max"]] if "min" in t else None}
            else:
                out[t["column"]] = {"kind": "categorical", "levels": list(t["levels"])}
    else:
        ranges = spec.get("ranges", {})
        for k in spec.get("numeric", []):
            out[k] = {"kind": "numeric", "range": ranges.get(k)}
        for k, levels in spec.get("categorical", {}).items():
            out[k] = {"kind": "categorical", "levels": list(levels)}
    if record.get("strata_column"):
        out[record["strata_column"]] = {"kind": "stratum", "levels": [b["stratum"] for b in record["baseline"]]}
    return out


def _stratum(record: Mapping[str, Any], values: Mapping[str, Any], field: str) -> tuple[dict[str, Any], int]:
    values = dict(values)
    col = record.get("strata_column")
    if not col:
        return values, 0
    level = design.level_label(values.pop(col))
    levels = [b["stratum"] for b in record["baseline"]]
    if level not in levels:
        raise InputError(f"{field}.{col}", f"stratum {level!r} not in the fit (strata: {levels})")
    return values, levels.index(level)


def linear_predictor(record: Mapping[str, Any], values: Mapping[str, Any], field: str) -> float:
    """x·β of a unit (Cox: relative to the covariate means, where its baseline is stored); for an
    AFT model x·γ on log time."""
    values, _ = _stratum(record, values, field)
    x = design.row(record["design"], values, field)
    predictor = kinds.KINDS[record["distribution"]].predictor
    assert predictor is not None  # check_life_model refused a kind without a block life
    return predictor(record, x)


def path_factor(record: Mapping[str, Any], lp: float) -> float:
    """The segment factor of a linear predictor: e^{xb} on the hazard, e^{−xγ} on the clock."""
    return math.exp(lp) if kinds.KINDS[record["distribution"]].clock == "hazard" else math.exp(-lp)


def life_at(record: Mapping[str, Any], lp: float, stratum: int = 0) -> dict[str, Any]:
    """The unit's life at linear predictor `lp` (from `linear_predictor`), as an engine BlockModel."""
    life = kinds.KINDS[record["distribution"]].life
    assert life is not None  # check_life_model refused a kind without a block life
    return life(record, lp, stratum)


def stratum_of(record: Mapping[str, Any], values: Mapping[str, Any], field: str) -> int:
    return _stratum(record, values, field)[1]
