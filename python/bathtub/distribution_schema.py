"""JSON Schema rules for a family's parameters, from the declarations in `bathtub.distributions`
(scipy's `_new_distributions` idea: one declaration drives validation, documentation and the
schema): positional numbers in order or {name, value} objects, each name once, within bounds,
mixtures by whole numbered modes, and the `mean` + `given` conversion's rule."""

from __future__ import annotations

import math
from typing import Any

from bathtub.distributions import (
    FAMILIES,
    LOCATION,
    MAX_MIXTURE_MODES,
    MEAN_GIVEN,
    MIXTURE,
    MIXTURE_RULE,
    REAL_LINE_LOCATION,
    WEIGHT,
    Family,
    Param,
)


def _param_schema(p: Param) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "number"}
    if math.isfinite(p.low):
        out["minimum" if p.low_inclusive else "exclusiveMinimum"] = p.low
    if math.isfinite(p.high):
        out["maximum"] = p.high
    return out


def _named_item(name: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": ["name", "value"], "additionalProperties": False,
            "properties": {"name": {"const": name}, "value": value}}


def _once(name: str, required: bool = True) -> dict[str, Any]:
    """An array holding the {name, value} object of `name` exactly once (at most once if optional)."""
    return {"contains": {"properties": {"name": {"const": name}}}, "maxContains": 1,
            **({} if required else {"minContains": 0})}


def _family_params(fam: Family, lifetime: bool = False) -> dict[str, Any]:
    named = [*fam.params, *((LOCATION,) if fam.location else ())]
    if lifetime and fam.id in REAL_LINE_LOCATION:
        named = [Param(p.name, p.meaning, 0.0) if p.name == REAL_LINE_LOCATION[fam.id] else p for p in named]
    objects = {"type": "array", "minItems": len(fam.params), "maxItems": len(named),
               "items": {"oneOf": [_named_item(p.name, _param_schema(p)) for p in named]},
               "allOf": [_once(p.name, p is not LOCATION) for p in named]}
    positional = {"type": "array", "prefixItems": [_param_schema(p) for p in named[:len(fam.params)]],
                  "minItems": len(fam.params), "maxItems": len(fam.params)}
    # the title names the schema where the service publishes it once and refers to it
    return {"title": f"params: {', '.join(p.name for p in named)}", "anyOf": [positional, objects, {"type": "null"}]}


def _mixture_params(fam: Family) -> dict[str, Any]:
    """A `fam` mixture's params: 2..MAX_MIXTURE_MODES whole modes, numbered from 1 (alpha1, beta1,
    weight1, alpha2, ...), as positional numbers in that order or {name, value} objects."""
    per_mode = [*fam.params, WEIGHT]
    modes = range(1, MAX_MIXTURE_MODES + 1)
    numbered = [(f"{p.name}{i}", _param_schema(p)) for i in modes for p in per_mode]
    positional = {"type": "array", "prefixItems": [schema for _, schema in numbered], "items": False,
                  "anyOf": [{"minItems": k * len(per_mode), "maxItems": k * len(per_mode)} for k in modes[1:]]}
    # a mode is whole or absent, and mode i needs modes 1..i-1 (names are counted from 1)
    whole = [{"if": {"contains": {"properties": {"name": {"enum": [f"{p.name}{i}" for p in per_mode]}}}},
              "then": {"allOf": [_once(f"{p.name}{j}") for j in range(1, i + 1) for p in per_mode]}}
             for i in modes[2:]]
    objects = {"type": "array", "minItems": 2 * len(per_mode), "maxItems": len(numbered),
               "items": {"oneOf": [_named_item(name, schema) for name, schema in numbered]},
               "allOf": [*(_once(f"{p.name}{i}") for i in (1, 2) for p in per_mode),
                         *(_once(name, False) for name, _ in numbered), *whole]}
    return {"title": f"mixture params: {', '.join(p.name for p in per_mode)} per mode", "anyOf": [positional, objects]}


def params_rules(id_field: str = "distribution_id", params_field: str = "params",
                 base_field: str | None = None, mean: bool = False,
                 lifetime: bool = False) -> list[dict[str, Any]]:
    """JSON Schema rules for an object naming its family in `id_field`: the family's parameters
    in `params_field`, from this declaration, as positional numbers in order or {name, value}
    objects, each name once (a location family also takes `gamma`), within bounds. With
    `base_field`, a mixture needs its base family there (not null) and its numbered modes'
    parameters. With `mean`, a `mean` goes only with the families of MEAN_GIVEN, each with
    exactly its known shape in `given`. With `lifetime`, the model must be a life distribution:
    a family over the whole real line needs its location above 0 (the rest of "almost no lives
    below 0" is a rule between values). That the weights add to 1 and a uniform's b exceeds its a
    are rules between values JSON Schema cannot state (`cross_field_rules`).

    One `anyOf` with a branch per family (and per mixture base), never one if/then per family:
    independent conditionals multiply into more cases than schema tools (the fuzz's generator)
    will combine."""
    null: dict[str, Any] = {"type": "null"}
    covered = [*FAMILIES, *((MIXTURE,) if base_field else ())]
    other: dict[str, Any] = {"properties": {id_field: {"not": {"enum": covered}}}}
    branches = [other]
    for fid, fam in FAMILIES.items():
        props: dict[str, Any] = {id_field: {"const": fid}, params_field: _family_params(fam, lifetime)}
        branch: dict[str, Any] = {"required": [id_field], "properties": props}
        if base_field:
            props[base_field] = null
        if mean:  # its `mean`/`given` properties join the family's; the rest (dependentRequired) the branch
            given = _mean_given(fid, fam)
            props.update(given.pop("properties"))
            branch.update(given)
        branches.append(branch)
    if base_field:
        # one branch for mixtures (a mixture is one choice among the families), split by base inside
        by_base = [{"title": f"{fid} mixture", "properties": {base_field: {"const": fid},
                                                               params_field: _mixture_params(fam)}}
                   for fid, fam in FAMILIES.items()]
        branches.append({"required": [id_field, base_field], "anyOf": by_base,
                         "properties": {id_field: {"const": MIXTURE}, base_field: {"enum": list(FAMILIES)},
                                        **({"mean": null} if mean else {})}})
    return [{"title": f"{params_field} of the family in {id_field}", "anyOf": branches}]


def _mean_given(fid: str, fam: Family) -> dict[str, Any]:
    """A family's part of the `mean` + `given` rule (merged into its branch of `params_rules`)."""
    null: dict[str, Any] = {"type": "null"}
    if fid not in MEAN_GIVEN:
        return {"properties": {"mean": null}}
    needed = MEAN_GIVEN[fid]
    bounds = {p.name: _param_schema(p) for p in fam.params if p.name in needed}
    if fid == "loglogistic":  # its mean exists only for beta > 1
        bounds["beta"] = {"type": "number", "exclusiveMinimum": 1.0}
    for name, bound in bounds.items():
        bound["description"] = f"{fid}'s {name}, held as given while the mean sets the other parameters"
    given = {"type": "object", "required": list(needed), "additionalProperties": False, "properties": bounds}
    return {"properties": {"given": {"anyOf": [null, given]}},
            **({"dependentRequired": {"mean": ["given"]}} if needed else {})}


def cross_field_rules(params_field: str = "params", mixture: bool = False) -> list[str]:
    """The rules between parameter values that `params_rules` cannot state, as `field: rule`
    (the refusal's own words), for the published schema's description."""
    out = [f"{params_field}.b: must be greater than a"]
    if mixture:
        out.append(f"{params_field}.weight: {MIXTURE_RULE}")
    return out
