"""The diagram's sub-objects, declared once: each declaration is the check, its messages and
the published JSON Schema (`bathtub.validate`).

The engine's lowering (`bathtub.engine.fields`) applies them to a diagram before a run; the
stored diagram (`bathtub.rbd.schema` re-exports them, `bathtub.rbd.blocks` and
`bathtub.rbd.diagram` use them) checks the same values with the same words, and the service
publishes their schemas. Rules between a sub-object's own fields live in its `then` and are
stated in its `rules`; rules that need the node or diagram around it (a proof test only on a
component, a phase's votes naming knodes) are the lowering's.

Declared here, in the engine package, not in `bathtub.rbd`: the engine is the layer below
the stored diagram, and `bathtub.rbd` imports the engine, so the engine reading them from
there would be an import circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bathtub.errors import InputError
from bathtub.validate import Check, array, boolean, enum, integer, is_number, mapping, number, obj, text

__all__ = [
    "BLOCK_COSTS",
    "CAPACITY",
    "CCF_BASES",
    "CCF_GROUP",
    "COST",
    "COST_RANGE",
    "DIAGRAM_COSTS",
    "MAINTENANCE_GROUP",
    "MAX_UNITS",
    "NETWORK",
    "NODE_SCALARS",
    "NONNEG",
    "PHASES",
    "PREVENTIVE",
    "PRODUCTION",
    "PROOF_TEST",
    "REPAIR_QUALITY",
    "SWITCH",
    "ccf_rules",
]

MAX_UNITS = 100_000  # units of a parallel block, a k-of-n gate or a standby group

# Rules between fields, in their refusals' words (the lowering and the stored diagram say the
# same; `bathtub.rbd.blocks` lists them for the published schema's `x-cross-field`).
BELOW_INTERVAL = "must be below the interval"
WHOLE_MULTIPLE = "must be a whole multiple of the interval"
ONLY_CONDITION = "only with policy condition"


def _range_order(v: dict[str, Any], field: str) -> None:
    if v["min"] > v["max"]:
        raise InputError(f"{field}.max", "must be at least min")


NONNEG = number(0.0)
COST_RANGE = obj({"min": NONNEG, "max": NONNEG}, required=("min", "max"), then=_range_order,
                 rules="A cost range: max at least min.")


def _cost(v: Any, field: str) -> Any:
    # Dispatched on the value's shape, not tried in turn: a range's own refusal (its `max`
    # missing) then names the range's field, not only "a number or a range".
    if isinstance(v, Mapping):
        return COST_RANGE(v, field)
    if is_number(v):
        return NONNEG(v, field)
    raise InputError(field, "must be a number >= 0 or {min, max}")


COST = Check(_cost, {"anyOf": [NONNEG.schema, COST_RANGE.schema]})

BLOCK_COSTS = obj({"repair": COST, "replace": COST, "downtime": NONNEG, "acquisition": NONNEG})


def _preventive_rules(v: dict[str, Any], field: str) -> None:
    policy = v.get("policy", "age")
    if policy == "condition" and "threshold" not in v:
        raise InputError(f"{field}.threshold", "required for policy condition")
    for key in ("threshold", "inspection_cost"):
        if key in v and policy != "condition":
            raise InputError(f"{field}.{key}", ONLY_CONDITION)
    if "opportunity" in v:
        if policy != "age":
            raise InputError(f"{field}.opportunity", "only with policy age")
        if v["opportunity"] > v["interval"]:
            raise InputError(f"{field}.opportunity", "must be at most the interval")
    if policy == "block" and v.get("duration", 0.0) >= v["interval"]:
        raise InputError(f"{field}.duration", f"{BELOW_INTERVAL} with policy block")


PREVENTIVE = obj(
    {
        "policy": enum("age", "block", "condition"),
        "interval": number(0.0, lo_open=True),
        "duration": NONNEG,
        "cost": COST,
        "threshold": number(0.0, 1.0),
        "inspection_cost": COST,
        "opportunity": NONNEG,
    },
    required=("interval",),
    then=_preventive_rules,
    rules="policy condition requires threshold; threshold and inspection_cost only with policy condition; "
          "opportunity only with policy age, at most interval; with policy block, duration below interval.",
)


def _proof_rules(v: dict[str, Any], field: str) -> None:
    for key in ("duration", "offset"):
        if key in v and not v[key] < v["interval"]:
            raise InputError(f"{field}.{key}", BELOW_INTERVAL)
    if "full_test" in v:
        ratio = v["full_test"] / v["interval"]
        if abs(ratio - round(ratio)) > 1e-9 or round(ratio) < 1:
            raise InputError(f"{field}.full_test", WHOLE_MULTIPLE)
    elif v.get("coverage", 1.0) < 1.0:
        raise InputError(f"{field}.full_test", "required when coverage is below 1")


PROOF_TEST = obj(
    {
        "interval": number(0.0, lo_open=True),
        "duration": NONNEG,
        "cost": COST,
        "offset": NONNEG,
        "coverage": number(0.0, 1.0),
        "full_test": number(0.0, lo_open=True),
    },
    required=("interval",),
    then=_proof_rules,
    rules="duration and offset below interval; full_test a whole multiple of interval; coverage below 1 "
          "requires full_test.",
)


def _quality_rules(v: dict[str, Any], field: str) -> None:
    if v["model"] == "perfect" and v.get("q", 0.0) != 0.0:
        raise InputError(f"{field}.q", "only with kijima1 or kijima2")
    if "replace_after" in v and not v.get("q", 0.0) > 0.0:
        raise InputError(f"{field}.replace_after", "needs q > 0 (q = 0 renews at every repair)")


REPAIR_QUALITY = obj(
    {"model": enum("perfect", "kijima1", "kijima2"), "q": number(0.0, 1.0), "replace_after": integer(1, 1000)},
    required=("model",),
    then=_quality_rules,
    rules="q only for kijima1 or kijima2 (0 with perfect); replace_after needs q > 0.",
)


def _life_object(v: Any, field: str) -> dict[str, Any]:
    # The BlockModel itself is checked where models are (the stored form, the lowering).
    if not isinstance(v, Mapping):
        raise InputError(field, "must be an object (a BlockModel)")
    return dict(v)


SWITCH_RULES = ("A standby group's switch: it fails on demand with chance p_fail (then the spare stays idle), "
                "cannot switch once its own life is over (a failed switch cannot switch), and takes switchover "
                "time to start a spare. A failed switch stays failed; in a repairable run it is repaired with "
                "its group (when a repair brings the group back to k running units). Not with switch_back.")
SWITCH = obj(
    {"p_fail": number(0.0, 1.0), "life": Check(_life_object, {"type": "object"}), "switchover": NONNEG},
    required=("p_fail",),
    rules=SWITCH_RULES,
)


def _levels_sum(v: list[dict[str, Any]], field: str) -> list[dict[str, Any]]:
    total = sum(x["probability"] for x in v)
    if abs(total - 1.0) > 1e-9:
        raise InputError(field, f"probabilities must add to 1 (they add to {total:.10g})")
    return v


_LEVEL = obj({"value": number(0.0, lo_open=True), "probability": number(0.0, 1.0, lo_open=True)},
             required=("value", "probability"))
_LEVELS = array(_LEVEL, 1, 100)
_POSITIVE = number(0.0, lo_open=True)


def _capacity(v: Any, field: str) -> Any:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return _POSITIVE(v, field)
    return _levels_sum(_LEVELS(v, field), field)


CAPACITY = Check(_capacity, {"anyOf": [
    {"type": "number", "exclusiveMinimum": 0.0},
    {"type": "array", "items": _LEVEL.schema, "minItems": 1, "maxItems": 100,
     "description": "Capacity levels {value, probability}; the probabilities add to 1."}]})

MAINTENANCE_GROUP = obj({"setup_cost": NONNEG, "system_down": boolean})
MAINTENANCE_GROUPS = mapping(MAINTENANCE_GROUP, 500)
DIAGRAM_COSTS = obj({"downtime_rate": NONNEG, "horizon": NONNEG, "discount_rate": number(0.0, 100.0)})
PRODUCTION = obj({"demand": NONNEG, "unit": text(20), "period": NONNEG})


_PHASE = obj(
    {
        "name": text(200, 1),
        "duration": NONNEG,
        "not_needed": array(text(200, 1)),
        "votes": mapping(integer(0, 100_000)),
    },
    required=("name", "duration"),
)
_PHASE_LIST = array(_PHASE, 0, 50)


def _phases(v: Any, field: str) -> list[dict[str, Any]]:
    out = _PHASE_LIST(v, field)
    names = [p["name"] for p in out]
    for i, n in enumerate(names):
        if n in names[:i]:
            raise InputError(f"{field}[{i}].name", f"{n!r} used twice; phase names must be distinct")
    return out


PHASES = Check(_phases, {**_PHASE_LIST.schema, "description": "Phase names are distinct; not_needed names "
                                                              "blocks and votes names knodes of the diagram."})


_NETWORK_ENDS = obj({"source": text(200, 1), "target": text(200, 1)}, rules="Node ids of the diagram.")


def _network(v: Any, field: str) -> Any:
    if isinstance(v, bool):
        return v
    return _NETWORK_ENDS(v, field)


NETWORK = Check(_network, {"anyOf": [{"type": "boolean"}, _NETWORK_ENDS.schema]})


CCF_BASES = ("rate", "probability")


def ccf_rules(v: dict[str, Any], field: str) -> None:
    """A checked CCF_GROUP's rules between its fields. Not the declaration's `then`: the stored
    diagram names a group by its id (`ccf.<id>`) once the id is known, the lowering by position."""
    members = v["members"]
    if len(set(members)) != len(members):
        raise InputError(f"{field}.members", "a block is listed twice")
    if "mgl" in v and (len(members) not in (3, 4) or len(v["mgl"]) != len(members) - 2):
        raise InputError(f"{field}.mgl", "[gamma] for 3 members, [gamma, delta] for 4; omit for a beta factor")


CCF_GROUP = obj(
    {
        "id": text(64, 1),
        "members": array(text(64, 1), 2, 1000),
        "beta": number(0.0, 1.0, lo_open=True, hi_open=True),
        "basis": enum(*CCF_BASES),
        "mgl": array(number(0.0, 1.0), 1, 2),
    },
    required=("id", "members", "beta"),
    rules="Group ids distinct; members are distinct blocks with a life model, each in one group at most; mgl is "
          "[gamma] for 3 members, [gamma, delta] for 4.",
)


# A node's scalar fields (its sub-objects are declared above).
NODE_SCALARS: dict[str, Check] = {
    "n": integer(1, MAX_UNITS),
    "k": integer(1, MAX_UNITS),
    "spares": integer(0, MAX_UNITS),
    "cold": boolean,
    "dormancy": number(0.0, 1.0),
    "instant_repair": boolean,
    "crew_priority": number(),
    "repair_one_at_a_time": boolean,
    "switch_back": boolean,
}
