"""The request rules of `demonstration_test` as JSON Schema, for the published schema.

A test takes one of three paths (constant rate, sequential, attribute/Weibayes), read from
`method` or, left out, from the fields given; each path has the fields it requires. One
`anyOf` with a branch per path states that: what the checks refuse for a missing field a
schema-valid request never lacks. The rules between values (a shape inside its interval, a
design value beyond the requirement, what a solve_for leaves out when it is implied) stay
checks, listed in CROSS_FIELD in the refusals' own words. So do a few that JSON Schema could
say but that would make the `anyOf` more than schema tools (the fuzz's generator) will expand
(a total_test_time beside a solve_for that solves the length).
"""

from __future__ import annotations

from typing import Any

from bathtub.strategy.guard import NON_FINITE_RULE, OVER_BUDGET_RULE
from bathtub.strategy.rate_plans import CONFIDENCE_ROUNDS_RULE, LENGTH_SOLVES

Schema = dict[str, Any]
RATE_INPUTS = ("mtbf", "design_mtbf", "total_test_time", "discrimination_ratio")
SEQUENTIAL_OUT = ("failures", "total_test_time", "units", "test_time_per_unit", "test_multiple")

CROSS_FIELD = (
    "shape_interval: lower must be below upper", "shape_interval: must contain shape",
    "consumer_risk: give confidence or consumer_risk", "b_life: give reliability or b_life, not both",
    "*: is what solve_for", "solve_for: say what to solve", "units: must exceed the failures allowed",
    "design_mtbf: must exceed the required mtbf", "design_reliability: must exceed the required mtbf",
    "design_mtbf: required for a plan meeting both risks", "producer_risk: required for a plan meeting both risks",
    "design_reliability: required for a plan meeting both risks",
    "discrimination_ratio: give design_mtbf or discrimination_ratio, not both",
    "test_time_per_unit: give total_test_time, or units with test_time_per_unit, not both",
    "test_time_per_unit: give test_multiple or test_time_per_unit, not both",
    "test_multiple: give units or test_multiple, not both", "units: required",
    "shape: required", "total_test_time: required to solve for", "mission_time: required to solve for",
    "sided: a plan meeting both risks is one-sided", "termination: a plan meeting both risks",
    "sided: the test shows", "failures: a failure-terminated test ends at a failure",
    "mission_time: with this reliability gives no finite, positive MTBF",
    # magnitudes whose plan leaves floating point: a bound on the combination, not on one field
    "test_multiple: test_multiple ** shape is beyond floating point",
    "design_mtbf: too close to the required mtbf", "design_reliability: too close to reliability",
    "reliability: required (or b_life)",
    "mission_time: is too short for this test: the units needed leave floating point",
    "reliability: too close to 1 to be demonstrated with this test length",
    "total_test_time: gives the MTBF", "mtbf: gives", "design_mtbf: gives", "discrimination_ratio: gives",
    "design_reliability: gives the design MTBF", f"confidence: {CONFIDENCE_ROUNDS_RULE}",
    # a plan meeting both risks needs more failures than a test may allow (MAX_FAILURES)
    "design_reliability: too close to reliability", "design_mtbf: too close to the required mtbf",
    # any answer beyond floating point, and any calculation past the service's CPU budget,
    # refused naming the input of most extreme magnitude (bathtub.strategy.guard)
    f"*: {NON_FINITE_RULE}", f"*: {OVER_BUDGET_RULE}",
)


def _given(*names: str) -> Schema:
    return {"required": list(names), "properties": {n: {"not": {"type": "null"}} for n in names}}


def _absent(*names: str) -> Schema:
    return {"properties": {n: {"type": "null"} for n in names}}


def _one_of_values(field: str, values: tuple[str, ...] | list[str]) -> Schema:
    return {"required": [field], "properties": {field: {"enum": list(values)}}}


def _not_values(field: str, values: tuple[str, ...] | list[str]) -> Schema:
    """`field` left out, null, or none of `values`."""
    return {"properties": {field: {"not": {"enum": list(values)}}}}


def request_rules() -> Schema:
    """The rule each path puts on which fields are given (an `anyOf` of the three paths)."""
    auto = _not_values("method", list(("binomial", "weibayes", "mtbf", "sequential")))
    reliability_known = {"anyOf": [_given("reliability"), _given("b_life")]}
    mtbf_known = {"anyOf": [_given("mtbf"), {"allOf": [reliability_known, _given("mission_time")]}]}
    rate = {"allOf": [
        {"anyOf": [_one_of_values("method", ["mtbf"]),
                   {"allOf": [auto, {"anyOf": [*(_given(n) for n in RATE_INPUTS),
                                               _one_of_values("solve_for", ["mtbf"])]}]}]},
        _absent("shape_interval"),
        # the required MTBF, unless it is what is solved (asked for, or implied by a given test length)
        {"anyOf": [mtbf_known, _one_of_values("solve_for", ["mtbf", "reliability"]),
                   {"allOf": [_absent("solve_for", "producer_risk"),
                              {"anyOf": [_given("total_test_time"), _given("test_time_per_unit")]}]}]},
        # a design reliability becomes a design MTBF over a mission (unless design_mtbf is given)
        {"anyOf": [_absent("design_reliability"), _given("mission_time"), _given("design_mtbf")]},
    ]}
    sequential = {"allOf": [
        _one_of_values("method", ["sequential"]), _absent(*SEQUENTIAL_OUT, "shape_interval"),
        _not_values("solve_for", [*LENGTH_SOLVES, "mtbf", "reliability", "confidence", "failures"]),
        {"properties": {"sided": {"const": "one"}, "termination": {"const": "time"}}},
        mtbf_known, _given("producer_risk"),
        {"anyOf": [_given("design_mtbf"), {"allOf": [_given("design_reliability"), _given("mission_time")]},
                   {"allOf": [_given("discrimination_ratio"), _absent("design_reliability")]}]},
    ]}
    attribute = {"allOf": [
        {"anyOf": [_one_of_values("method", ["binomial", "weibayes"]),
                   {"allOf": [auto, _absent(*RATE_INPUTS), _not_values("solve_for", ["mtbf"])]}]},
        _absent("design_mtbf"), _not_values("solve_for", ["mtbf", "total_test_time"]),
        {"properties": {"termination": {"const": "time"}}},
        {"anyOf": [_not_values("method", ["weibayes"]), _given("shape")]},
        # the required reliability, unless it is what is solved (asked for, or implied by units
        # and a test length with nothing else to solve)
        {"anyOf": [reliability_known, _one_of_values("solve_for", ["reliability"]),
                   {"allOf": [_absent("solve_for", "producer_risk"), _given("units"),
                              {"anyOf": [_given("test_multiple"), _given("test_time_per_unit")]}]}]},
    ]}
    return {"anyOf": [rate, sequential, attribute]}
