"""Small declarative checkers for the spec's RBD sub-objects (Preventive, ProofTest, ...).

A checker is `check(value, field) -> cleaned value` and raises `InputError(field, rule)`
naming the dotted path. Objects refuse unknown keys, as the spec's schemas do
("no additional properties"). Declared as data so one table drives the rules, and each
checker carries the JSON Schema of what it accepts (`check.schema`), built by the same
declaration: the service publishes it, so the published schema and the check cannot drift.
Rules between fields that JSON Schema cannot say are stated in the object's description.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bathtub.errors import InputError
from bathtub.rbd.schedules import compile_expression

Schema = dict[str, Any]


class Check:
    """A checker with the JSON Schema of the values it accepts."""

    def __init__(self, fn: Callable[[Any, str], Any], schema: Schema) -> None:
        self.fn = fn
        self.schema = schema

    def __call__(self, v: Any, field: str) -> Any:
        return self.fn(v, field)


# Parameters as the library reads them anywhere: numbers in the family's order, or {name, value}.
PARAMS_ARRAY: Schema = {"type": "array", "maxItems": 100, "items": {"anyOf": [
    {"type": "number"},
    {"type": "object", "required": ["name", "value"], "additionalProperties": False,
     "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 200}, "value": {"type": "number"}}}]}}


def _bounds(lo: float, hi: float, lo_open: bool, hi_open: bool) -> Schema:
    out: Schema = {}
    if math.isfinite(lo):
        out["exclusiveMinimum" if lo_open else "minimum"] = lo
    if math.isfinite(hi):
        out["exclusiveMaximum" if hi_open else "maximum"] = hi
    return out


def number(lo: float = -math.inf, hi: float = math.inf, *, lo_open: bool = False, hi_open: bool = False) -> Check:
    """A finite number in [lo, hi] (open ends where asked)."""

    def check(v: Any, field: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise InputError(field, "must be a finite number")
        if v < lo or (lo_open and v == lo) or v > hi or (hi_open and v == hi):
            if math.isinf(hi):
                raise InputError(field, f"must be {'>' if lo_open else '>='} {lo:g}")
            if math.isinf(lo):
                raise InputError(field, f"must be {'<' if hi_open else '<='} {hi:g}")
            left = "(" if lo_open else "["
            right = ")" if hi_open else "]"
            raise InputError(field, f"must be in {left}{lo:g}, {hi:g}{right}")
        return float(v)

    return Check(check, {"type": "number", **_bounds(lo, hi, lo_open, hi_open)})


def integer(lo: int, hi: int) -> Check:
    def check(v: Any, field: str) -> int:
        if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, float) and v.is_integer())):
            raise InputError(field, "must be an integer")
        if not lo <= v <= hi:
            raise InputError(field, f"must be an integer from {lo} to {hi}")
        return int(v)

    return Check(check, {"type": "integer", "minimum": lo, "maximum": hi})


def _boolean(v: Any, field: str) -> bool:
    if not isinstance(v, bool):
        raise InputError(field, "must be true or false")
    return v


boolean = Check(_boolean, {"type": "boolean"})


def text(max_len: int, min_len: int = 0) -> Check:
    def check(v: Any, field: str) -> str:
        if not isinstance(v, str):
            raise InputError(field, "must be a string")
        if not min_len <= len(v) <= max_len:
            raise InputError(field, f"must be {min_len} to {max_len} characters")
        return v

    return Check(check, {"type": "string", "minLength": min_len, "maxLength": max_len})


def enum(*values: str) -> Check:
    def check(v: Any, field: str) -> str:
        if v not in values:
            raise InputError(field, f"must be one of {', '.join(values)}")
        return str(v)

    return Check(check, {"enum": list(values)})


def array(item: Check, min_len: int = 0, max_len: int = 100_000) -> Check:
    def check(v: Any, field: str) -> list[Any]:
        if not isinstance(v, Sequence) or isinstance(v, (str, bytes)):
            raise InputError(field, "must be an array")
        if not min_len <= len(v) <= max_len:
            raise InputError(field, f"must have {min_len} to {max_len} items")
        return [item(x, f"{field}[{i}]") for i, x in enumerate(v)]

    return Check(check, {"type": "array", "items": _schema_of(item), "minItems": min_len, "maxItems": max_len})


def _schema_of(c: Any) -> Schema:
    """A checker's schema; a plain function (a pass-through) accepts anything."""
    return c.schema if isinstance(c, Check) else {}


def mapping(value: Check, max_len: int = 1000) -> Check:
    def check(v: Any, field: str) -> dict[str, Any]:
        if not isinstance(v, Mapping):
            raise InputError(field, "must be an object")
        if len(v) > max_len:
            raise InputError(field, f"at most {max_len} entries")
        return {str(k): value(x, f"{field}.{k}") for k, x in v.items()}

    return Check(check, {"type": "object", "additionalProperties": value.schema, "maxProperties": max_len})


def obj(
    fields: Mapping[str, Check],
    required: Sequence[str] = (),
    then: Callable[[dict[str, Any], str], None] | None = None,
    rules: str = "",
) -> Check:
    """An object with only `fields` (nulls dropped), `required` present; `then` checks the
    relations between fields, which `rules` states for the schema."""

    def check(v: Any, field: str) -> dict[str, Any]:
        if not isinstance(v, Mapping):
            raise InputError(field, "must be an object")
        for k in v:
            if k not in fields:
                raise InputError(f"{field}.{k}", f"unknown field; known: {', '.join(fields)}")
        for k in required:
            if v.get(k) is None:
                raise InputError(f"{field}.{k}", "required")
        out = {k: fields[k](x, f"{field}.{k}") for k, x in v.items() if x is not None}
        if then is not None:
            then(out, field)
        return out

    schema: Schema = {"type": "object", "properties": {k: c.schema for k, c in fields.items()},
                      "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    if rules:
        schema["description"] = rules
    return Check(check, schema)


def one_of(*checks: Check, rule: str) -> Check:
    """The first checker that accepts the value; otherwise `rule`."""

    def check(v: Any, field: str) -> Any:
        for c in checks:
            try:
                return c(v, field)
            except InputError:
                continue
        raise InputError(field, rule)

    return Check(check, {"anyOf": [c.schema for c in checks]})


# ---------------------------------------------------------------------------------------
# The spec's sub-objects.


def _range_order(v: dict[str, Any], field: str) -> None:
    if v["min"] > v["max"]:
        raise InputError(f"{field}.max", "must be at least min")


NONNEG = number(0.0)
COST_RANGE = obj({"min": NONNEG, "max": NONNEG}, required=("min", "max"), then=_range_order,
                 rules="A cost range: max at least min.")
COST = one_of(NONNEG, COST_RANGE, rule="must be a number >= 0 or {min, max}")

BLOCK_COSTS = obj({"repair": COST, "replace": COST, "downtime": NONNEG, "acquisition": NONNEG})


def _preventive_rules(v: dict[str, Any], field: str) -> None:
    policy = v.get("policy", "age")
    if policy == "condition" and "threshold" not in v:
        raise InputError(f"{field}.threshold", "required for policy condition")
    if "inspection_cost" in v and policy != "condition":
        raise InputError(f"{field}.inspection_cost", "only with policy condition")
    if "opportunity" in v:
        if policy != "age":
            raise InputError(f"{field}.opportunity", "only with policy age")
        if v["opportunity"] > v["interval"]:
            raise InputError(f"{field}.opportunity", "must not exceed interval")


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
    rules="policy condition requires threshold; inspection_cost only with policy condition; opportunity only "
          "with policy age, at most interval.",
)


def _proof_rules(v: dict[str, Any], field: str) -> None:
    if "offset" in v and not v["offset"] < v["interval"]:
        raise InputError(f"{field}.offset", "must be below interval")
    if v.get("coverage", 1.0) < 1.0:
        if "full_test" not in v:
            raise InputError(f"{field}.full_test", "required when coverage is below 1")
        ratio = v["full_test"] / v["interval"]
        if abs(ratio - round(ratio)) > 1e-9 or round(ratio) < 1:
            raise InputError(f"{field}.full_test", "must be a whole multiple of interval")


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
    rules="offset below interval; coverage below 1 requires full_test, a whole multiple of interval.",
)


def _quality_rules(v: dict[str, Any], field: str) -> None:
    if v["model"] == "perfect" and v.get("q", 0.0) != 0.0:
        raise InputError(f"{field}.q", "only for kijima1 or kijima2")
    if "replace_after" in v and not v.get("q", 0.0) > 0.0:
        raise InputError(f"{field}.replace_after", "needs q > 0")


REPAIR_QUALITY = obj(
    {"model": enum("perfect", "kijima1", "kijima2"), "q": number(0.0, 1.0), "replace_after": integer(1, 1000)},
    required=("model",),
    then=_quality_rules,
    rules="q only for kijima1 or kijima2 (0 with perfect); replace_after needs q > 0.",
)


def _levels_sum(v: list[dict[str, Any]], field: str) -> list[dict[str, Any]]:
    total = sum(x["probability"] for x in v)
    if abs(total - 1.0) > 1e-9:
        raise InputError(field, f"probabilities must add to 1 (they add to {total:.10g})")
    return v


_LEVEL = obj({"value": number(0.0, lo_open=True), "probability": number(0.0, 1.0, lo_open=True)},
             required=("value", "probability"))


def _capacity(v: Any, field: str) -> Any:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return number(0.0, lo_open=True)(v, field)
    return _levels_sum(array(_LEVEL, 1, 100)(v, field), field)


CAPACITY = Check(_capacity, {"anyOf": [
    {"type": "number", "exclusiveMinimum": 0.0},
    {"type": "array", "items": _LEVEL.schema, "minItems": 1, "maxItems": 100,
     "description": "Capacity levels {value, probability}; the probabilities add to 1."}]})


def _schedule_rules(v: dict[str, Any], field: str) -> None:
    if ("expression" in v) == ("table" in v):
        raise InputError(field, "give expression or table")
    if "period" in v and "table" not in v:
        raise InputError(f"{field}.period", "only with table")
    if "expression" in v:
        compile_expression(v["expression"], f"{field}.expression")
    if "table" in v:
        times = [p["t"] for p in v["table"]]
        if times[0] != 0:
            raise InputError(f"{field}.table[0].t", "the first phase starts at 0")
        if any(b <= a for a, b in itertools.pairwise(times)):
            raise InputError(f"{field}.table", "phase start times must increase")
        if "period" in v and times[-1] >= v["period"]:
            raise InputError(f"{field}.period", f"must be beyond the last phase start ({times[-1]:g})")


_PHASE_VALUE = one_of(number(), text(200), rule="must be a number or a string")
SCHEDULE = obj(
    {
        "expression": text(400, 1),
        "table": array(obj({"t": NONNEG, "value": _PHASE_VALUE}, required=("t", "value")), 1, 50),
        "period": number(0.0, lo_open=True),
    },
    then=_schedule_rules,
    rules="Exactly one of expression or table; period only with table; the table's first t is 0 and its t "
          "increase.",
)
COVARIATE_SCHEDULES = mapping(SCHEDULE, 100)
# A block's fixed covariate values (with a saved regression model): numbers, or levels.
BLOCK_COVARIATES = mapping(_PHASE_VALUE, 100)

JOINT_UNIT = obj(
    {
        "id": text(200, 1),
        "age": NONNEG,
        "readings": array(array(number(), 2, 2), 0, 2000),
        "covariates": mapping(number()),
    }
)

MAINTENANCE_GROUP = obj({"setup_cost": NONNEG, "system_down": boolean})
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
