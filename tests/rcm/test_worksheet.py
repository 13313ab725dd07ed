"""Worksheets: ids, the merge of an update, removal, JA1011 decision rules with the field named,
limits at their edges, the outline and scheduled tasks; interval units."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from bathtub.errors import InputError
from bathtub.rcm import OUTLINE_MODES, build, convert, merge, mode_count, outline, public, scheduled_tasks


def ids() -> Any:
    counter = itertools.count(1)
    return lambda level: f"{level}-{next(counter)}"


PUMP = [{"text": "Pump 100 l/min", "standard": "at 4 bar", "failures": [
    {"text": "No flow", "modes": [
        {"text": "Bearing seizes", "consequence": "operational",
         "decision": {"outcome": "fixed_interval", "interval": 2, "interval_unit": "years", "task": "replace"}},
        {"text": "Impeller wear", "consequence": "operational",
         "decision": {"outcome": "rtf", "rtf_basis": "random", "check": {"state": "supported"}}},
    ]},
    {"text": "Low pressure alarm fails", "modes": [
        {"text": "Switch stuck", "consequence": "hidden",
         "decision": {"outcome": "failure_finding", "interval": 6, "interval_unit": "months"}},
    ]},
]}]


def refuse(field: str, *words: str) -> Any:
    class Ctx:
        def __enter__(self) -> None:
            pass

        def __exit__(self, kind: Any, err: Any, tb: Any) -> bool:
            assert isinstance(err, InputError), err
            assert err.field == field, str(err)
            for w in words:
                assert w in err.rule, err.rule
            return True
    return Ctx()


def test_build_gives_every_node_an_id_and_drops_check() -> None:
    functions, written = build(PUMP, ids())
    f = functions[0]
    assert f["id"] == "function-1" and f["failures"][0]["id"] == "failure-2"
    assert [m["id"] for m in f["failures"][0]["modes"]] == ["mode-3", "mode-4"]
    assert written == {"mode-3", "mode-4", "mode-6"}
    assert "check" not in f["failures"][0]["modes"][1]["decision"]
    assert mode_count(functions) == 3
    assert public(functions, {}) == functions  # no internal fields yet; the input's shape with ids


def test_merge_updates_adds_clears_and_removes() -> None:
    stored, _ = build(PUMP, ids())
    gen = ids()
    update = [{"id": "function-1", "text": "Pump 120 l/min", "failures": [
        {"id": "failure-2", "modes": [
            {"id": "mode-3", "notes": "OEM says 2 y", "decision": None},
            {"text": "Seal leaks", "decision": {"outcome": "on_condition", "interval": 1, "interval_unit": "weeks"}},
        ]}]}]
    out, written = merge(stored, update, ["mode-4"], lambda level: "n" + gen(level))
    f = out[0]
    assert f["text"] == "Pump 120 l/min" and f["standard"] == "at 4 bar"
    modes = f["failures"][0]["modes"]
    assert [m["text"] for m in modes] == ["Bearing seizes", "Seal leaks"]
    assert "decision" not in modes[0] and modes[0]["notes"] == "OEM says 2 y"
    assert written == {modes[1]["id"]}
    assert stored[0]["text"] == "Pump 100 l/min" and mode_count(stored) == 3  # the stored worksheet untouched
    # Removing a failure takes its modes; their ids are never given out again.
    out2, _ = merge(out, [], ["failure-5"], ids())
    assert mode_count(out2) == 2 and len(out2[0]["failures"]) == 1


@pytest.mark.parametrize(("functions", "remove", "field", "words"), [
    ([{"id": "function-9"}], None, "functions.0.id", ("no function with this id",)),
    ([{"id": "function-1", "failures": [{"id": "mode-3"}]}], None, "functions.0.failures.0.id", ("no failure",)),
    ([{"id": "function-1"}, {"id": "function-1"}], None, "functions.1.id", ("twice",)),
    ([{"id": "function-1"}], ["function-1"], "functions.0.id", ("no function",)),
    ([], ["nope"], "remove.0", ("no node",)),
    ([], ["mode-3", "mode-3"], "remove.1", ("twice",)),
    ([{"standard": "x"}], None, "functions.0.text", ("required for a new function",)),
    ([{"id": "function-1", "text": None}], None, "functions.0.text", ("cannot be cleared",)),
    ([{"id": "function-1", "failures": [{"id": "failure-5", "modes": [{"id": "mode-6", "consequence": "safety"}]}]}],
     None, "functions.0.failures.0.modes.0.consequence", ("hidden failures",)),
    ([{"id": "function-1", "failures": [{"id": "failure-2", "modes": [{"id": "mode-4", "consequence": "safety"}]}]}],
     None, "functions.0.failures.0.modes.0.consequence", ("not acceptable with safety",)),
])
def test_merge_refusals_name_the_field(functions: Any, remove: Any, field: str, words: tuple[str, ...]) -> None:
    stored, _ = build(PUMP, ids())
    with refuse(field, *words):
        merge(stored, functions, remove, ids())


def mode_with(decision: dict[str, Any], consequence: str = "operational") -> list[dict[str, Any]]:
    return [{"text": "f", "failures": [{"text": "ff", "modes": [{"text": "m", "consequence": consequence,
                                                                 "decision": decision}]}]}]


D = "functions.0.failures.0.modes.0.decision"


@pytest.mark.parametrize(("decision", "consequence", "field", "words"), [
    ({"outcome": "rtf"}, "operational", f"{D}.rtf_basis", ("required when outcome is rtf",)),
    ({"outcome": "accept", "rtf_basis": "random"}, "operational", f"{D}.rtf_basis", ("only with outcome rtf",)),
    ({"outcome": "fixed_interval", "interval": 3}, "operational", f"{D}.interval_unit", ("required with an interval",)),
    ({"outcome": "fixed_interval", "interval_unit": "h"}, "operational", f"{D}.interval_unit", ("only with",)),
    ({"outcome": "redesign", "interval": 3, "interval_unit": "h"}, "operational", f"{D}.interval", ("no task",)),
    ({"outcome": "fixed_interval", "interval": 0, "interval_unit": "h"}, "operational", f"{D}.interval", ("> 0",)),
    ({"outcome": "fixed_interval", "interval": math.inf, "interval_unit": "h"}, "operational", f"{D}.interval",
     ("finite",)),
    ({"outcome": "failure_finding"}, "operational", f"{D}.outcome", ("hidden",)),
    ({"outcome": "rtf", "rtf_basis": "random"}, "safety", f"{D}.outcome", ("not acceptable with safety",)),
    ({"outcome": "rtf", "rtf_basis": "uneconomic"}, "environmental", f"{D}.outcome", ("environmental",)),
    ({"outcome": "rtf", "rtf_basis": "random", "evidence": {"type": "strategy_analysis", "id": "sa_1"}},
     "operational", f"{D}.evidence.type", ("cites model evidence",)),
    ({"outcome": "rtf", "rtf_basis": "uneconomic", "evidence": {"type": "model", "id": "m"}}, "operational",
     f"{D}.evidence.type", ("strategy_analysis",)),
    ({"outcome": "on_condition", "interval": 1, "interval_unit": "d", "evidence": {"type": "model", "id": "m"}},
     "operational", f"{D}.evidence.type", ("degradation_model",)),
    ({"outcome": "redesign", "evidence": {"type": "model", "id": "m"}}, "operational", f"{D}.evidence",
     ("cites no evidence",)),
    ({"outcome": "fixed_interval", "evidence": {"type": "strategy_analysis", "id": "sa_1"}}, "operational",
     f"{D}.interval", ("required to check the evidence",)),
    ({"outcome": "accept", "task": "x" * 2001}, "operational", f"{D}.task", ("at most 2000",)),
    ({"outcome": "fixed_interval", "interval": 1, "interval_unit": "u" * 41}, "operational", f"{D}.interval_unit",
     ("at most 40",)),
    ({"outcome": "fixed_interval", "interval": 1, "interval_unit": "h", "evidence": {"type": "strategy_analysis",
                                                                                      "id": "s" * 65}},
     "operational", f"{D}.evidence.id", ("1 to 64",)),
    ({"outcome": "sometimes"}, "operational", f"{D}.outcome", ("must be one of",)),
    ({"outcome": "accept", "colour": "red"}, "operational", f"{D}.colour", ("unknown field",)),
])
def test_decision_rules(decision: dict[str, Any], consequence: str, field: str, words: tuple[str, ...]) -> None:
    with refuse(field, *words):
        build(mode_with(decision, consequence), ids())


def test_limits_at_their_edges_pass() -> None:
    d = {"outcome": "fixed_interval", "interval": 1e-9, "interval_unit": "u" * 40, "task": "t" * 2000,
         "notes": "n" * 2000, "evidence": {"type": "strategy_analysis", "id": "s" * 64}}
    functions, _ = build([{"text": "f" * 2000, "standard": "s" * 2000, "failures": [
        {"text": "x" * 2000, "modes": [{"text": "m" * 2000, "effects": "e" * 2000, "notes": "n" * 2000,
                                        "decision": d}]}]}], ids())
    assert functions[0]["failures"][0]["modes"][0]["decision"]["interval_unit"] == "u" * 40
    with refuse("functions.0.text", "at most 2000"):
        build([{"text": "f" * 2001}], ids())
    with refuse("functions.0.id", "omit ids"):
        build([{"id": "x", "text": "f"}], ids())


def big(n_modes: int) -> list[dict[str, Any]]:
    functions = []
    for f in range(3):
        failures = [{"text": f"F{f}.{k}", "modes": []} for k in range(2)]
        functions.append({"text": f"function {f}", "failures": failures})
    for i in range(n_modes):
        decision = {"outcome": "on_condition", "interval": 1 + i, "interval_unit": "days"} if i % 2 else None
        mode = {"text": f"mode {i}", **({"decision": decision} if decision else {})}
        functions[i % 3]["failures"][i % 2]["modes"].append(mode)
    return functions


def test_outline_counts_and_scheduled_tasks() -> None:
    functions, _ = build(big(OUTLINE_MODES + 1), ids())
    assert mode_count(functions) == 301
    first = functions[0]["failures"][0]["modes"][0]["id"]
    out = outline(functions, {first: {"state": "missing", "reason": "r"}})
    assert sum(f["mode_count"] for f in out) == 301
    assert [f["mode_count"] for f in out] == [101, 100, 100]
    assert out[0]["checks"] == {"missing": 1} and out[1]["checks"] == {}
    assert sum(f["decided"] for f in out) == 150
    mode = out[1]["failures"][1]["modes"][0]
    assert set(mode) == {"id", "text", "outcome"} and mode["outcome"] == "on_condition"
    tasks = scheduled_tasks(functions)
    assert len(tasks) == 150 and tasks[0]["interval_unit"] == "days"
    assert {t["outcome"] for t in tasks} == {"on_condition"}


@pytest.mark.parametrize(("value", "a", "b", "expected"), [
    (1, "years", "hours", 365.25 * 24), (1, "months", "days", 30.44), (2, "weeks", "days", 14),
    (36, "h", "Days", 1.5), (1, "yr", "months", 365.25 / 30.44), (5, "cycles", "cycle", 5), (7, "km", "KM", 7),
])
def test_units_convert(value: float, a: str, b: str, expected: float) -> None:
    got = convert(value, a, b)
    assert got is not None and math.isclose(got, expected, rel_tol=1e-12)


@pytest.mark.parametrize(("a", "b"), [("cycles", "hours"), ("km", "cycles"), ("landings", "days"), (None, "h")])
def test_units_that_cannot_be_compared(a: str | None, b: str) -> None:
    assert convert(1.0, a, b) is None
