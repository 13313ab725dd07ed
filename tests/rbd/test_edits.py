"""Every edit op of the spec's table, and atomicity: a bad op leaves the diagram untouched."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from bathtub import rbd
from bathtub.errors import InputError
from tests.rbd.helpers import block, diagram, exp_model


def base(repairable: bool = False) -> dict[str, Any]:
    extra = {"repair": exp_model(0.1)} if repairable else {}
    return rbd.check_diagram(diagram([block("a", exp_model(0.01), **extra), block("b", exp_model(0.02), **extra)],
                                     [("in", "a"), ("a", "b"), ("b", "out")], repairable=repairable))


def edges(d: dict[str, Any]) -> set[tuple[str, str]]:
    return {(e["source"], e["target"]) for e in d["edges"]}


NEW = {"id": "c", "type": "component", "model": exp_model(0.03)}


@pytest.mark.parametrize(("position", "expected"), [
    ({"between": ["a", "b"]}, {("in", "a"), ("a", "c"), ("c", "b"), ("b", "out")}),
    ({"after": "a"}, {("in", "a"), ("a", "c"), ("c", "b"), ("b", "out")}),
    ({"before": "a"}, {("in", "c"), ("c", "a"), ("a", "b"), ("b", "out")}),
    ({"parallel_to": "b"}, {("in", "a"), ("a", "b"), ("a", "c"), ("b", "out"), ("c", "out")}),
])
def test_add_node_positions(position: dict[str, Any], expected: set[tuple[str, str]]) -> None:
    d = rbd.apply_edits(base(), [{"op": "add_node", "node": NEW, **position}])
    assert edges(d) == expected and d["nodes"][-1]["id"] == "c"


def test_add_node_unplaced_then_wired_in_one_list() -> None:
    d = rbd.apply_edits(base(), [{"op": "add_node", "node": NEW}, {"op": "add_edge", "source": "in", "target": "c"},
                                 {"op": "add_edge", "source": "c", "target": "out"}])
    assert ("in", "c") in edges(d) and ("c", "out") in edges(d)
    with pytest.raises(InputError) as e:
        rbd.apply_edits(base(), [{"op": "add_node", "node": NEW}])
    assert e.value.field == "nodes.c" and "not reached from the input" in e.value.rule


def test_add_node_refusals() -> None:
    with pytest.raises(InputError, match=r"ops\[0\].between: no edge a -> out"):
        rbd.apply_edits(base(), [{"op": "add_node", "node": NEW, "between": ["a", "out"]}])
    with pytest.raises(InputError, match=r"ops\[0\].before: give at most one position"):
        rbd.apply_edits(base(), [{"op": "add_node", "node": NEW, "before": "a", "after": "a"}])
    with pytest.raises(InputError, match=r"ops\[0\].node.id: must be a new node id"):
        rbd.apply_edits(base(), [{"op": "add_node", "node": {**NEW, "id": "a"}, "after": "a"}])
    with pytest.raises(InputError, match=r"nodes.c.model.params.failure_rate"):
        rbd.apply_edits(base(), [{"op": "add_node", "node": {**NEW, "model": exp_model(-1)}, "after": "a"}])


def test_add_and_remove_edge() -> None:
    d = rbd.apply_edits(base(), [{"op": "add_edge", "source": "in", "target": "b"}])
    assert ("in", "b") in edges(d)
    d = rbd.apply_edits(d, [{"op": "remove_edge", "source": "in", "target": "b"}])
    assert edges(d) == edges(base())
    with pytest.raises(InputError, match=r"ops\[0\]: edge a -> b already exists"):
        rbd.apply_edits(base(), [{"op": "add_edge", "source": "a", "target": "b"}])
    with pytest.raises(InputError, match=r"ops\[0\]: no edge in -> b"):
        rbd.apply_edits(base(), [{"op": "remove_edge", "source": "in", "target": "b"}])
    with pytest.raises(InputError, match="lies on a cycle"):
        rbd.apply_edits(base(), [{"op": "add_edge", "source": "b", "target": "a"}])


def test_remove_node_reconnects_or_not() -> None:
    d = rbd.apply_edits(base(), [{"op": "remove_node", "id": "a"}])
    assert edges(d) == {("in", "b"), ("b", "out")}
    d = rbd.apply_edits(base(), [{"op": "remove_node", "id": "a", "reconnect": "none"},
                                 {"op": "add_edge", "source": "in", "target": "b"}])
    assert edges(d) == {("in", "b"), ("b", "out")}
    with pytest.raises(InputError, match=r"nodes\.b: not reached from the input"):
        rbd.apply_edits(base(), [{"op": "remove_node", "id": "a", "reconnect": "none"}])
    with pytest.raises(InputError, match=r"ops\[0\].id: the input node cannot be removed"):
        rbd.apply_edits(base(), [{"op": "remove_node", "id": "in"}])


def test_ccf_groups() -> None:
    d = rbd.apply_edits(base(), [{"op": "add_ccf", "members": ["a", "b"], "beta": 0.1}])
    assert d["ccf"] == [{"id": "ccf-1", "members": ["a", "b"], "beta": 0.1, "basis": "rate"}]
    with pytest.raises(InputError, match="'a' is already in common-cause group 'ccf-1'"):
        rbd.apply_edits(d, [{"op": "add_ccf", "members": ["a", "b"], "beta": 0.2, "id": "x"}])
    with pytest.raises(InputError, match=r"ccf.x.mgl: \[gamma\] for 3 members"):
        rbd.apply_edits(base(), [{"op": "add_ccf", "members": ["a", "b"], "beta": 0.2, "id": "x", "mgl": [0.5]}])
    with pytest.raises(InputError, match=r"ccf\[0\].beta: must be in \(0, 1\)"):
        rbd.apply_edits(base(), [{"op": "add_ccf", "members": ["a", "b"], "beta": 1.0}])
    assert rbd.apply_edits(d, [{"op": "remove_ccf", "id": "ccf-1"}])["ccf"] == []
    with pytest.raises(InputError, match=r"ops\[0\].id: no common-cause group 'nope'"):
        rbd.apply_edits(d, [{"op": "remove_ccf", "id": "nope"}])
    # Removing a member drops a two-member group with it.
    assert rbd.apply_edits(d, [{"op": "remove_node", "id": "a"}])["ccf"] == []


def test_set_every_field_and_clears() -> None:
    d = rbd.apply_edits(base(True), [{
        "op": "set", "name": "n2", "unit": "days", "repair_crews": 2,
        "maintenance_groups": {"g": {"setup_cost": 100, "system_down": True}}, "safety_function": True,
        "target_sil": 2, "costs": {"downtime_rate": 50, "horizon": 0}, "production": {"demand": 10, "unit": "t"},
        "phases": [{"name": "climb", "duration": 2, "not_needed": ["a"]}], "network": {"source": "in"},
    }])
    assert (d["name"], d["unit"], d["repair_crews"], d["target_sil"]) == ("n2", "days", 2, 2)
    assert d["costs"] == {"downtime_rate": 50.0} and d["network"] == {"source": "in"}
    assert d["maintenance_groups"] == {"g": {"setup_cost": 100.0, "system_down": True}}
    cleared = rbd.apply_edits(d, [{"op": "set", "maintenance_groups": {}, "target_sil": 0, "phases": [],
                                   "network": False, "costs": {"downtime_rate": 0}, "safety_function": False}])
    for key in ("maintenance_groups", "target_sil", "phases", "network", "costs", "safety_function"):
        assert key not in cleared
    with pytest.raises(InputError, match=r"phases\[0\].not_needed: no block 'zz'"):
        rbd.apply_edits(d, [{"op": "set", "phases": [{"name": "x", "duration": 1, "not_needed": ["zz"]}]}])
    with pytest.raises(InputError, match=r"^costs.discount_rate: needs a calendar time unit"):
        rbd.apply_edits(d, [{"op": "set", "unit": "cycles", "costs": {"discount_rate": 5}}])
    assert rbd.apply_edits(d, [{"op": "set", "costs": {"discount_rate": 5}}])["costs"] == {"discount_rate": 5.0}
    with pytest.raises(InputError, match=r"ops\[0\].target_sil: must be an integer from 0 to 4"):
        rbd.apply_edits(d, [{"op": "set", "target_sil": 5}])


def test_set_repairable_needs_repair_models() -> None:
    with pytest.raises(InputError, match=r"nodes\.a\.repair: required in a repairable diagram"):
        rbd.apply_edits(base(), [{"op": "set", "repairable": True}])
    repair = {"distribution_id": "lognormal", "mean": 8, "given": {"sigma": 0.5}}
    d = rbd.apply_edits(base(), [{"op": "set", "repairable": True},
                                 {"op": "update_node", "ids": ["a", "b"], "repair": repair}])
    assert d["repairable"] and d["nodes"][2]["repair"]["distribution_id"] == "lognormal"


def test_update_node_fields_clear_and_exclusions() -> None:
    d = rbd.apply_edits(base(True), [{"op": "update_node", "id": "a", "label": "Pump", "crew_priority": 3,
                                      "costs": {"repair": {"min": 1, "max": 5}, "downtime": 2},
                                      "inspection": {"interval": 100, "coverage": 0.9, "full_test": 300}}])
    a = d["nodes"][2]
    assert a["label"] == "Pump" and a["crew_priority"] == 3.0 and a["inspection"]["full_test"] == 300.0
    d = rbd.apply_edits(d, [{"op": "update_node", "id": "a", "preventive": {"interval": 50}}])
    assert "inspection" not in d["nodes"][2] and d["nodes"][2]["preventive"] == {"interval": 50.0}
    d = rbd.apply_edits(d, [{"op": "update_node", "id": "a", "clear": ["preventive", "costs", "crew_priority"]}])
    assert set(d["nodes"][2]) == {"id", "type", "label", "model", "repair"}
    with pytest.raises(InputError, match=r"nodes.a.inspection.full_test: must be a whole multiple of the interval"):
        rbd.apply_edits(d, [{"op": "update_node", "id": "a", "inspection": {"interval": 100, "coverage": 0.5,
                                                                             "full_test": 250}}])
    with pytest.raises(InputError, match=r"ops\[0\]: give id or ids"):
        rbd.apply_edits(d, [{"op": "update_node", "id": "a", "ids": ["b"], "label": "x"}])
    with pytest.raises(InputError, match=r"ops\[0\].ids\[1\]: no node 'zz'"):
        rbd.apply_edits(d, [{"op": "update_node", "ids": ["a", "zz"], "label": "x"}])
    with pytest.raises(InputError, match=r"nodes.a.n: not a field of a component node"):
        rbd.apply_edits(d, [{"op": "update_node", "id": "a", "n": 2}])


def test_a_bad_op_in_the_middle_changes_nothing() -> None:
    d = base()
    before = copy.deepcopy(d)
    ops = [{"op": "set", "name": "x"}, {"op": "update_node", "id": "a", "label": "y"},
           {"op": "frobnicate"}, {"op": "remove_node", "id": "b"}]
    with pytest.raises(InputError, match=r"ops\[2\].op: must be one of"):
        rbd.apply_edits(d, ops)
    assert d == before


def test_unknown_op_fields_are_refused() -> None:
    with pytest.raises(InputError, match=r"ops\[0\].target: unknown field of op remove_node"):
        rbd.apply_edits(base(), [{"op": "remove_node", "id": "a", "target": "b"}])
