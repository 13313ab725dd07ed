"""Declarations of the stored diagram's sub-objects (Preventive, ProofTest, schedules, ...).

A checker is `check(value, field) -> cleaned value` and raises `InputError(field, rule)`
naming the dotted path; each carries the JSON Schema of what it accepts (`check.schema`),
built by the same declaration, so the published schema and the check cannot drift. The
toolkit is the library's one (`bathtub.validate`, re-exported here for the rbd modules); the
sub-objects the engine simulates are declared with the engine's lowering
(`bathtub.engine.schema`) and re-exported here, so a stored diagram and a run check them with
the same declaration. What stays here is the stored form's own: covariate schedules, a
block's covariates, a joint unit. Rules between fields that JSON Schema cannot say are stated
in the object's description.
"""

from __future__ import annotations

import itertools
from typing import Any

from bathtub.engine.schema import (
    BLOCK_COSTS,
    CAPACITY,
    CCF_GROUP,
    COST,
    COST_RANGE,
    DIAGRAM_COSTS,
    MAINTENANCE_GROUP,
    MAX_UNITS,
    NETWORK,
    NODE_SCALARS,
    NONNEG,
    PHASES,
    PREVENTIVE,
    PRODUCTION,
    PROOF_TEST,
    REPAIR_QUALITY,
    SWITCH,
    ccf_rules,
)
from bathtub.errors import InputError
from bathtub.rbd.schedules import compile_expression
from bathtub.validate import Check, Schema, array, boolean, enum, integer, mapping, number, obj, one_of, text

__all__ = [
    "BLOCK_COSTS",
    "BLOCK_COVARIATES",
    "CAPACITY",
    "CCF_GROUP",
    "COST",
    "COST_RANGE",
    "COVARIATE_SCHEDULES",
    "DIAGRAM_COSTS",
    "JOINT_UNIT",
    "MAINTENANCE_GROUP",
    "MAX_UNITS",
    "NETWORK",
    "NODE_SCALARS",
    "NONNEG",
    "PARAMS_ARRAY",
    "PHASES",
    "PREVENTIVE",
    "PRODUCTION",
    "PROOF_TEST",
    "REPAIR_QUALITY",
    "SCHEDULE",
    "SWITCH",
    "Check",
    "Schema",
    "array",
    "boolean",
    "ccf_rules",
    "enum",
    "integer",
    "mapping",
    "number",
    "obj",
    "one_of",
    "text",
]

# Parameters as the library reads them anywhere: numbers in the family's order, or {name, value}.
PARAMS_ARRAY: Schema = {"type": "array", "maxItems": 100, "items": {"anyOf": [
    {"type": "number"},
    {"type": "object", "required": ["name", "value"], "additionalProperties": False,
     "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 200}, "value": {"type": "number"}}}]}}


# ---------------------------------------------------------------------------------------
# The stored form's own sub-objects.


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
# A block's fixed covariate values (with a saved regression model or a power law fitted with
# covariates): numbers, or levels.
BLOCK_COVARIATES = mapping(_PHASE_VALUE, 100)

JOINT_UNIT = obj(
    {
        "id": text(200, 1),
        "age": NONNEG,
        "readings": array(array(number(), 2, 2), 0, 2000),
        "covariates": mapping(number()),
    }
)

