"""One node of a diagram: the spec's RbdNode and BlockModel, checked field by field.

Every field the spec names is stored (so a diagram round-trips, including the maintenance
fields the engine does not simulate yet); analyses refuse those (`bathtub.rbd.resolve`,
`bathtub.rbd.check_runnable`), and the service runs the same checks before storing.
Errors name the node: `nodes.pump-a.model.params.beta: must be > 0`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bathtub.distribution_schema import cross_field_rules, params_rules
from bathtub.distributions import FAMILIES, MIXTURE, params_from_mean, parse_params
from bathtub.errors import InputError, prefixed
from bathtub.rbd import schema as s
from bathtub.rbd.schema import PARAMS_ARRAY

NODE_TYPES = ("input", "output", "component", "series", "parallel", "knode", "standby", "subsystem")
BLOCK_TYPES = ("component", "series", "parallel", "standby", "subsystem")
LIFE_TYPES = ("component", "series", "parallel", "standby")
REPAIRABLE_TYPES = ("input", "output", "component", "standby", "knode")
MAX_ID = 64
MAX_UNITS = s.MAX_UNITS

# Which node types may carry each field (the spec's RbdNode table).
FIELD_TYPES: dict[str, tuple[str, ...]] = {
    "label": NODE_TYPES,
    "model": LIFE_TYPES,
    "repair": ("component", "standby"),
    "n": ("series", "parallel", "knode"),
    "k": ("knode", "standby"),
    "spares": ("standby",),
    "cold": ("standby",),
    "dormancy": ("standby",),
    "subsystem_rbd_id": ("subsystem",),
    "instant_repair": ("component",),
    "costs": ("component", "standby"),
    "preventive": ("component",),
    "inspection": ("component",),
    "maintenance_group": ("component", "standby"),
    "crew_priority": ("component", "standby"),
    "repair_one_at_a_time": ("standby",),
    "repair_quality": ("component",),
    "capacity": LIFE_TYPES,
    "covariate_schedules": ("component", "series", "parallel"),
    "units": ("standby",),
    "switch_back": ("standby",),
    "switch": ("standby",),
}
# Fields that only mean something in a repairable diagram.
REPAIRABLE_ONLY = ("repair", "instant_repair", "costs", "preventive", "inspection", "maintenance_group",
                   "crew_priority", "repair_one_at_a_time", "repair_quality", "switch_back")
# Fields `update_node` may `clear` (`repair` too: a diagram made non-repairable must drop its
# repair models, which analyses refuse there).
CLEARABLE = ("repair", "costs", "preventive", "inspection", "maintenance_group", "crew_priority", "instant_repair",
             "repair_one_at_a_time", "repair_quality", "capacity", "covariate_schedules", "switch_back", "switch")

FIELD_CHECKS: dict[str, s.Check] = {
    "label": s.text(200),
    **{k: s.NODE_SCALARS[k] for k in ("n", "k", "spares", "cold", "dormancy")},
    "subsystem_rbd_id": s.text(200, 1),
    "instant_repair": s.NODE_SCALARS["instant_repair"],
    "costs": s.BLOCK_COSTS,
    "preventive": s.PREVENTIVE,
    "inspection": s.PROOF_TEST,
    "maintenance_group": s.text(200, 1),
    "crew_priority": s.NODE_SCALARS["crew_priority"],
    "repair_one_at_a_time": s.NODE_SCALARS["repair_one_at_a_time"],
    "switch_back": s.NODE_SCALARS["switch_back"],
    "repair_quality": s.REPAIR_QUALITY,
    "capacity": s.CAPACITY,
    "covariate_schedules": s.COVARIATE_SCHEDULES,
}

MAX_STANDBY_UNITS = 1000
UNIT_KEYS = ("model", "repair", "dormancy", "capacity")
UNIT_RULES = ("Non-identical standby units, in order of preference (the first k run, a failed running unit is "
              "replaced by the first idle one): each its own life model, repair model (repairable diagrams: "
              "every unit), dormancy (default the node's cold/dormancy) and capacity (every unit or none). "
              "Instead of the node's model, repair and spares. With switch_back (repairable), a repaired unit takes "
              "over from a less preferred running one, which goes back on the shelf.")

MODEL_KEYS = ("distribution_id", "base_distribution_id", "params", "mean", "given", "saved_model_id",
              "placeholder", "joint_unit", "covariates")


def check_model(model: Any, field: str) -> dict[str, Any]:
    """A BlockModel in stored form: `distribution_id` + `params` as [{name, value}] (a `mean`
    with `given` shape is converted to params), or `saved_model_id`; `placeholder` kept."""
    if not isinstance(model, Mapping):
        raise InputError(field, "must be an object (BlockModel)")
    for k in model:
        if k not in MODEL_KEYS:
            raise InputError(f"{field}.{k}", f"unknown field; known: {', '.join(MODEL_KEYS)}")
    m = {k: v for k, v in model.items() if v is not None}
    out: dict[str, Any] = {}
    if ("distribution_id" in m) == ("saved_model_id" in m):
        raise InputError(field, "give distribution_id or saved_model_id (exactly one)")
    if "saved_model_id" in m:
        for k in ("params", "mean", "given", "base_distribution_id"):
            if k in m:
                raise InputError(f"{field}.{k}", "not with saved_model_id (the saved model holds its parameters)")
        out["saved_model_id"] = s.text(200, 1)(m["saved_model_id"], f"{field}.saved_model_id")
        if "covariates" in m:
            if "joint_unit" in m:
                raise InputError(f"{field}.covariates", "not with joint_unit (its covariates are in joint_unit)")
            out["covariates"] = s.BLOCK_COVARIATES(m["covariates"], f"{field}.covariates")
        if "joint_unit" in m:
            out["joint_unit"] = s.JOINT_UNIT(m["joint_unit"], f"{field}.joint_unit")
    else:
        if "joint_unit" in m:
            raise InputError(f"{field}.joint_unit", "only with a saved condition-based (joint) model")
        if "covariates" in m:
            raise InputError(f"{field}.covariates", "only with a saved regression model (saved_model_id)")
        dist = m["distribution_id"]
        if not isinstance(dist, str):
            raise InputError(f"{field}.distribution_id", "must be a string")
        try:
            if "mean" in m:
                if "params" in m:
                    raise InputError("mean", "give params or mean, not both")
                if "base_distribution_id" in m:
                    raise InputError("base_distribution_id", "not with mean")
                values = params_from_mean(dist, m["mean"], _given(m.get("given")))
            else:
                if "given" in m:
                    raise InputError("given", "only with mean")
                if "params" not in m:
                    raise InputError("params", "required (or mean with given)")
                base = m.get("base_distribution_id")
                if base is not None and dist != MIXTURE:
                    raise InputError("base_distribution_id", "only with distribution_id mixture")
                values = parse_params(dist, m["params"], base_distribution_id=base)
        except InputError as e:
            raise prefixed(field, e) from None
        out["distribution_id"] = dist
        if dist == MIXTURE:
            out["base_distribution_id"] = m["base_distribution_id"]
        out["params"] = [{"name": k, "value": v} for k, v in values.items()]
    if "placeholder" in m:
        if s.boolean(m["placeholder"], f"{field}.placeholder"):
            out["placeholder"] = True
    return out


def _check_units(v: Any, field: str) -> list[dict[str, Any]]:
    """A standby group's non-identical units, each {model, repair?, dormancy?, capacity?}."""
    if not isinstance(v, list) or not 1 <= len(v) <= MAX_STANDBY_UNITS:
        raise InputError(field, f"must be an array of 1 to {MAX_STANDBY_UNITS} units")
    out = []
    for i, u in enumerate(v):
        f = f"{field}[{i}]"
        if not isinstance(u, Mapping):
            raise InputError(f, "must be an object {model, repair, dormancy, capacity}")
        for k in u:
            if k not in UNIT_KEYS:
                raise InputError(f"{f}.{k}", f"unknown field; known: {', '.join(UNIT_KEYS)}")
        if u.get("model") is None:
            raise InputError(f"{f}.model", "required: the unit's life model")
        unit: dict[str, Any] = {}
        for key in ("model", "repair"):
            if u.get(key) is not None:
                unit[key] = check_model(u[key], f"{f}.{key}")
                if "joint_unit" in unit[key]:
                    raise InputError(f"{f}.{key}.joint_unit", "a joint unit is simulated on a component block only")
        if u.get("dormancy") is not None:
            unit["dormancy"] = s.number(0.0, 1.0)(u["dormancy"], f"{f}.dormancy")
        if u.get("capacity") is not None:
            unit["capacity"] = s.number(0.0, lo_open=True)(u["capacity"], f"{f}.capacity")
        out.append(unit)
    return out


UNITS = s.Check(_check_units, {"type": "array", "minItems": 1, "maxItems": MAX_STANDBY_UNITS, "description": UNIT_RULES,
                               "items": {"type": "object", "additionalProperties": False, "required": ["model"],
                                         "properties": {"model": {"type": "object"},  # BlockModel: node_models_schema
                                                        "repair": {"type": "object"},
                                                        "dormancy": {"type": "number", "minimum": 0.0,
                                                                     "maximum": 1.0},
                                                        "capacity": {"type": "number", "exclusiveMinimum": 0.0}}}})


FIELD_CHECKS["units"] = UNITS


def _check_switch(v: Any, field: str) -> dict[str, Any]:
    """A standby group's switch (SWITCH), its own life a BlockModel in stored form."""
    out: dict[str, Any] = s.SWITCH(v, field)
    if "life" in out:
        out["life"] = check_model(out["life"], f"{field}.life")
        for key in ("joint_unit", "covariates"):
            if key in out["life"]:
                raise InputError(f"{field}.life.{key}", "a switch's life is a plain life model")
    return out


FIELD_CHECKS["switch"] = s.Check(_check_switch, s.SWITCH.schema)


def node_models(node: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """Every BlockModel of a node with its field under the node: `model`, `repair`, and a
    standby group's `units[i].model` / `units[i].repair`."""
    out = [(key, node[key]) for key in ("model", "repair") if isinstance(node.get(key), Mapping)]
    for i, u in enumerate(node.get("units") or []):
        out += [(f"units[{i}].{key}", u[key]) for key in ("model", "repair") if isinstance(u.get(key), Mapping)]
    life = (node.get("switch") or {}).get("life") if isinstance(node.get("switch"), Mapping) else None
    if isinstance(life, Mapping):
        out.append(("switch.life", life))
    return out


def _given(given: Any) -> dict[str, float] | None:
    if given is None:
        return None
    return s.mapping(s.number())(given, "given")


def node_field(node: Mapping[str, Any], index: int) -> str:
    nid = node.get("id") if isinstance(node, Mapping) else None
    return f"nodes.{nid}" if isinstance(nid, str) and nid else f"nodes[{index}]"


def check_node(node: Any, field: str, *, repairable: bool) -> dict[str, Any]:
    """One RbdNode in stored form (nulls dropped), its fields allowed for its type."""
    if not isinstance(node, Mapping):
        raise InputError(field, "must be an object (RbdNode)")
    nid = node.get("id")
    if not isinstance(nid, str) or not 1 <= len(nid) <= MAX_ID or nid != nid.strip() or "/" in nid:
        raise InputError(f"{field}.id", f"required: 1 to {MAX_ID} characters, no '/' and no surrounding spaces")
    kind = node.get("type")
    if kind not in NODE_TYPES:
        raise InputError(f"{field}.type", f"required, one of {', '.join(NODE_TYPES)}")
    if repairable and kind not in REPAIRABLE_TYPES:
        raise InputError(f"{field}.type", f"a repairable diagram takes component, standby and knode blocks, not {kind}")
    out: dict[str, Any] = {"id": nid, "type": kind}
    for key, value in node.items():
        if key in ("id", "type") or value is None:
            continue
        if key not in FIELD_TYPES and key not in ("model", "repair"):
            raise InputError(f"{field}.{key}", "unknown field")
        if kind not in FIELD_TYPES[key]:
            raise InputError(f"{field}.{key}", f"not a field of a {kind} node")
        if key in ("model", "repair"):
            out[key] = check_model(value, f"{field}.{key}")
        else:
            out[key] = FIELD_CHECKS[key](value, f"{field}.{key}")
    _node_rules(out, field, repairable)
    return out


def _node_rules(n: dict[str, Any], field: str, repairable: bool) -> None:
    kind = n["type"]
    if "switch" in n and n.get("switch_back"):
        raise InputError(f"{field}.switch", "not with switch_back (a unit back from repair takes over without the "
                                            "switch)")
    # one chain: a group of units carries its lives in `units`, every other life type in `model`
    if "units" in n:
        _units_rules(n, field, repairable)
    elif n.get("switch_back"):
        raise InputError(f"{field}.switch_back", "is for standby groups of non-identical units (units)")
    elif kind in LIFE_TYPES and "model" not in n:
        raise InputError(f"{field}.model", f"required for a {kind} block (use placeholder: true for a guess)")
    if kind == "knode" and "n" not in n:
        raise InputError(f"{field}.n", "required: the number of branches that must work")
    if kind == "knode" and "k" in n and n["n"] > n["k"]:
        raise InputError(f"{field}.n", f"must not exceed k = {n['k']} (the branches feeding the gate)")
    if kind == "subsystem" and "subsystem_rbd_id" not in n:
        raise InputError(f"{field}.subsystem_rbd_id", "required: the saved diagram this block embeds")
    if kind == "standby" and "units" not in n:
        if "spares" not in n:
            raise InputError(f"{field}.spares", "required: the number of spares")
        dormancy = n.get("dormancy", 0.0 if n.get("cold", True) else 1.0)
        if 0.0 < dormancy < 1.0 and n.get("k", 1) != 1:
            raise InputError(f"{field}.k", "warm spares (0 < dormancy < 1) need k = 1")
    if "preventive" in n and "inspection" in n:
        raise InputError(f"{field}.inspection", "not together with preventive")
    if "repair_one_at_a_time" in n and n["repair_one_at_a_time"] and "costs" in n:
        raise InputError(f"{field}.costs", "no costs on a group repaired one at a time")
    if "repair_quality" in n and n["repair_quality"].get("model") != "perfect":
        if n.get("model", {}).get("distribution_id") == MIXTURE:
            raise InputError(f"{field}.repair_quality", "refused with a mixture life")
    if n.get("repair_quality", {}).get("model", "perfect") != "perfect" and \
            n.get("preventive", {}).get("policy") == "condition":
        raise InputError(f"{field}.repair_quality", "not on a condition-replaced block (preventive policy condition)")
    if "opportunity" in n.get("preventive", {}) and "maintenance_group" not in n:
        raise InputError(f"{field}.preventive.opportunity", "needs the block in a maintenance_group")
    if "covariate_schedules" in n and "saved_model_id" not in n.get("model", {}):
        raise InputError(f"{field}.covariate_schedules", "needs a saved covariate model (model.saved_model_id)")
    if repairable and "joint_unit" in n.get("model", {}):
        raise InputError(f"{field}.model.joint_unit", "only in a non-repairable diagram")
    if repairable:
        if "covariate_schedules" in n:
            raise InputError(f"{field}.covariate_schedules", "only in a non-repairable diagram")
        if kind in ("component", "standby") and "repair" not in n and "units" not in n and \
                not n.get("instant_repair"):
            raise InputError(f"{field}.repair", "required in a repairable diagram (or instant_repair: true)")
        if n.get("instant_repair") and "repair" in n:
            raise InputError(f"{field}.instant_repair", "an instant repair needs no repair model; give one of them")
    else:
        for key in REPAIRABLE_ONLY:
            if key in n and key != "repair":
                raise InputError(f"{field}.{key}", "only in a repairable diagram")


def _units_rules(n: dict[str, Any], field: str, repairable: bool) -> None:
    units = n["units"]
    for key in ("model", "repair", "spares"):
        if key in n:
            raise InputError(f"{field}.{key}", "not with units (each unit has its own model and repair; the units "
                                               "beyond k are the spares)")
    k = n.get("k", 1)
    if len(units) < k:
        raise InputError(f"{field}.units", f"at least k = {k} units (the running ones), then the spares")
    default = n.get("dormancy", 0.0 if n.get("cold", True) else 1.0)
    for i, u in enumerate(units):
        if 0.0 < u.get("dormancy", default) < 1.0 and k != 1:
            raise InputError(f"{field}.units[{i}].dormancy", "warm spares (0 < dormancy < 1) need k = 1")
        if repairable and "repair" not in u:
            raise InputError(f"{field}.units[{i}].repair", "required in a repairable diagram")
    caps = [i for i, u in enumerate(units) if "capacity" in u]
    if caps and "capacity" in n:
        raise InputError(f"{field}.units[{caps[0]}].capacity", "not with the node's capacity (that is each unit's "
                                                               "when the units give none)")
    if caps and len(caps) < len(units):
        missing = next(i for i in range(len(units)) if i not in caps)
        raise InputError(f"{field}.units[{missing}].capacity", "give every unit a capacity, or none")


def on_placeholder(node: Mapping[str, Any]) -> bool:
    return any(bool(m.get("placeholder")) for _, m in node_models(node))


# ---------------------------------------------------------------------------------------
# The JSON Schema of a node, from the same tables the checks read (published by the service).

ID_SCHEMA: s.Schema = {"type": "string", "minLength": 1, "maxLength": MAX_ID,
                       "pattern": r"^[^/\s\u0000\u001c-\u001f\u0085](?:[^/\u0000]*[^/\s\u0000\u001c-\u001f\u0085])?$",
                       "description": "No '/' and no surrounding spaces; unique in the diagram"}
_NULL: s.Schema = {"type": "null"}


def model_schema() -> s.Schema:
    """BlockModel: `distribution_id` with `params` (or a `mean` with `given` parameters), or a
    `saved_model_id` (with `joint_unit` for a condition-based model)."""
    inline = {"required": ["distribution_id"], "properties": {"saved_model_id": _NULL, "joint_unit": _NULL},
              "oneOf": [{"required": ["params"], "properties": {"mean": _NULL, "given": _NULL}},
                        {"required": ["mean"], "properties": {"params": _NULL, "base_distribution_id": _NULL}}]}
    saved = {"required": ["saved_model_id"], "properties": {k: _NULL for k in
                                                            ("distribution_id", "params", "mean", "given",
                                                             "base_distribution_id")}}
    return {
        "title": "BlockModel",  # the name the service's schemas refer to it by
        "type": "object",
        "description": "BlockModel. A mixture's params are alpha1, beta1, weight1, alpha2, ... (2 to 5 modes, "
                       "weights adding to 1); mean with given sets the family's other parameters (the guide's "
                       "rbds topic lists which); a saved model must be yours and parametric.",
        "properties": {
            "distribution_id": {"enum": [*FAMILIES, MIXTURE]},
            "base_distribution_id": {"enum": list(FAMILIES)},
            "params": PARAMS_ARRAY,
            "mean": {"type": "number", "exclusiveMinimum": 0.0},
            "given": {"type": "object", "additionalProperties": {"type": "number"}},
            "saved_model_id": {"type": "string", "minLength": 1, "maxLength": 200},
            "placeholder": {"type": "boolean"},
            "joint_unit": s.JOINT_UNIT.schema,
        },
        "additionalProperties": False,
        "oneOf": [inline, saved],
        "allOf": params_rules(base_field="base_distribution_id", mean=True),
        # a saved model named must exist and be the caller's (checked against the store)
        "x-cross-field": [*cross_field_rules(mixture=True), "saved_model_id: no model with id"],
    }


_REQUIRED_BY_TYPE = {"component": ("model",), "series": ("model",), "parallel": ("model",),
                     "knode": ("n",), "subsystem": ("subsystem_rbd_id",)}
NODE_RULES = ("Rules between fields: preventive and inspection not together; a knode's n is at most its k and "
              "at most the branches feeding it; warm spares (0 < dormancy < 1) need k = 1; a standby group gives "
              "model and spares, or units (each with its own model, and its repair model in a repairable "
              "diagram; capacities on every unit or none); a block repaired one at a time has no costs; a "
              "mixture life takes no imperfect repair_quality, nor a condition-replaced block; "
              "preventive.opportunity needs a maintenance_group; covariate_schedules need a saved covariate "
              "model; joint_unit only in a non-repairable diagram; a standby switch not with switch_back.")
# The rules of NODE_RULES that JSON Schema cannot state, as `field: rule` (the refusal's words).
NODE_CROSS_FIELD = ("nodes.*.n: must not exceed k", "nodes.*.costs: no costs on a group repaired one at a time",
                    "nodes.*.repair_quality: refused with a mixture life",
                    "nodes.*.repair_quality: not on a condition-replaced block",
                    "nodes.*.preventive.opportunity: needs the block in a maintenance_group",
                    "nodes.*.covariate_schedules: needs a saved covariate model",
                    # one node schema serves both kinds of diagram (the fuzz found these refused unsaid)
                    "nodes.*.covariate_schedules: only in a non-repairable diagram",
                    "nodes.*.model.joint_unit: only in a non-repairable diagram",
                    "nodes.*.units.*.capacity: give every unit a capacity, or none",
                    "nodes.*.switch: not with switch_back",
                    "nodes.*.capacity: probabilities must add to 1",
                    "nodes.*.preventive.inspection_cost: only with policy condition",
                    "nodes.*.preventive.threshold: only with policy condition",
                    "nodes.*.preventive.opportunity: must be at most the interval",
                    "nodes.*.preventive.duration: must be below the interval with policy block",
                    # PROOF_TEST's rules between its values (the fuzz found offset >= interval refused unsaid)
                    "nodes.*.inspection.offset: must be below the interval",
                    "nodes.*.inspection.duration: must be below the interval",
                    "nodes.*.inspection.full_test: required when coverage is below 1",
                    "nodes.*.inspection.full_test: must be a whole multiple of the interval",
                    # SCHEDULE's rules between its values (stated in its description only; the fuzz
                    # found a table starting after 0 refused unsaid)
                    "nodes.*.covariate_schedules.*: give expression or table",
                    "nodes.*.covariate_schedules.*.period: only with table",
                    "nodes.*.covariate_schedules.*.table[].t: the first phase starts at 0",
                    "nodes.*.covariate_schedules.*.table: phase start times must increase",
                    "nodes.*.covariate_schedules.*.period: must be beyond the last phase start")


def node_schema(repairable: bool) -> s.Schema:
    """RbdNode in a repairable or non-repairable diagram: one variant per node type, each with
    the fields that type takes (`FIELD_TYPES`), their checks' schemas and what it requires. The
    BlockModel of `model` and `repair` is `node_models_schema` (given once, beside this)."""
    model: s.Schema = {"type": "object"}
    variants = []
    for kind in REPAIRABLE_TYPES if repairable else NODE_TYPES:
        props: s.Schema = {"id": ID_SCHEMA, "type": {"const": kind}}
        for key, types in FIELD_TYPES.items():
            if kind in types and (repairable or key not in REPAIRABLE_ONLY):
                props[key] = model if key in ("model", "repair") else FIELD_CHECKS[key].schema
        variant: s.Schema = {"type": "object", "properties": props, "additionalProperties": False,
                             "required": ["id", "type", *_REQUIRED_BY_TYPE.get(kind, ())]}
        if "preventive" in props and "inspection" in props:
            variant["not"] = {"required": ["preventive", "inspection"]}
        if kind == "standby" and "dormancy" in props and "k" in props:  # warm spares: one unit at a time
            variant["if"] = {"required": ["dormancy"],
                             "properties": {"dormancy": {"exclusiveMinimum": 0.0, "exclusiveMaximum": 1.0}}}
            variant["then"] = {"properties": {"k": {"const": 1}}}
        if repairable and kind == "component":
            # a repair model, or instant_repair: true (not both)
            variant["oneOf"] = [{"required": ["repair"], "properties": {"instant_repair": {"const": False}}},
                                {"required": ["instant_repair"], "properties": {"instant_repair": {"const": True},
                                                                                 "repair": _NULL}}]
        if kind == "standby":
            # identical units (model, spares; a repair model when repairable), or non-identical `units`
            same = ["model", "spares", *(["repair"] if repairable else [])]
            variant["oneOf"] = [{"required": same, "properties": {"units": _NULL}},
                                {"required": ["units"],
                                 "properties": {k: _NULL for k in ("model", "repair", "spares")}}]
        variants.append(variant)
    return {"title": "RbdNode in a repairable diagram" if repairable else "RbdNode", "oneOf": variants,
            "description": NODE_RULES, "x-cross-field": list(NODE_CROSS_FIELD)}


def node_models_schema() -> s.Schema:
    """What `model` and `repair` hold in any node (a BlockModel), for every node variant."""
    model = model_schema()
    return {"properties": {"model": model, "repair": model,
                           "units": {"items": {"properties": {"model": model, "repair": model}}},
                           "switch": {"properties": {"life": model}}}}
