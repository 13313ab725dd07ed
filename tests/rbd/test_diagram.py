"""Diagram validation (errors name node and field), the stages form, BlockModel forms,
resolution refusals, and the run-time quote against the engine's own event count."""

from __future__ import annotations

import math
from typing import Any

import jsonschema
import pytest

from bathtub import engine, rbd
from bathtub.errors import InputError
from bathtub.rbd.blocks import check_model, model_schema
from bathtub.rbd.quote import OVERHEAD_S, events_per_replication, quote
from tests.rbd.helpers import FULL_REPAIRABLE, block, diagram, exp_model, series


def refused(d: dict[str, Any]) -> InputError:
    with pytest.raises(InputError) as e:
        rbd.check_diagram(d)
    return e.value


def test_graph_rules_name_the_node() -> None:
    d = series(exp_model(0.1), exp_model(0.2))
    d["nodes"].append({"id": "in", "type": "input"})
    assert refused(d).field == "nodes[4].id"
    d = series(exp_model(0.1))
    d["nodes"].append({"id": "x", "type": "input"})
    assert "exactly one input" in refused(d).rule
    d = series(exp_model(0.1), exp_model(0.2))
    d["edges"].append({"source": "b1", "target": "b0"})
    e = refused(d)
    assert e.field in ("nodes.b0", "nodes.b1") and "cycle" in e.rule
    d = series(exp_model(0.1))
    d["nodes"].append(block("lost", exp_model(0.1)))
    e = refused(d)
    assert (e.field, e.rule) == ("nodes.lost", "not reached from the input node: connect it with edges")
    d = series(exp_model(0.1))
    d["edges"].append({"source": "b0", "target": "ghost"})
    assert (refused(d).field, refused(d).rule) == ("edges[2].target", "no node 'ghost'")
    d = diagram([block("a", exp_model(1)), block("b", exp_model(1)), {"id": "g", "type": "knode", "n": 2, "k": 3}],
                [("in", "a"), ("in", "b"), ("a", "g"), ("b", "g"), ("g", "out")])
    assert (refused(d).field, refused(d).rule) == ("nodes.g.k", "is 3 but 2 branches feed the gate")


def test_field_rules_name_the_node_and_field() -> None:
    cases = [
        (block("a", exp_model(0.1), n=2), "nodes.a.n", "not a field of a component node"),
        (block("a", exp_model(0.1), wobble=1), "nodes.a.wobble", "unknown field"),
        ({"id": "a", "type": "component"}, "nodes.a.model", None),
        (block("a", {"distribution_id": "weibull", "params": [{"name": "alpha", "value": 1}]}),
         "nodes.a.model.params.beta", "required for weibull"),
        (block("a", {"distribution_id": "exponential", "params": [], "saved_model_id": "m"}), "nodes.a.model", None),
        (block("a", exp_model(0.1), "standby"), "nodes.a.spares", None),
        (block("a", exp_model(0.1), "standby", spares=1, k=2, dormancy=0.5), "nodes.a.k", None),
        (block("a", exp_model(0.1), capacity=[{"value": 1, "probability": 0.5}]), "nodes.a.capacity", None),
        (block("a", exp_model(0.1), covariate_schedules={"temp": {"table": [{"t": 5, "value": 1}]}}),
         "nodes.a.covariate_schedules.temp.table[0].t", None),
        (block("a", exp_model(0.1), crew_priority=1), "nodes.a.crew_priority", "only in a repairable diagram"),
        (block("a", exp_model(0.1), covariate_schedules={"temp": {"expression": "t // 10"}}),
         "nodes.a.covariate_schedules", "needs a saved covariate model (model.saved_model_id)"),
        (block("a", exp_model(0.1), repair=exp_model(1), preventive={"interval": 10, "opportunity": 5}),
         "nodes.a.preventive.opportunity", "needs the block in a maintenance_group"),
    ]
    for node, field, rule in cases:
        e = refused(diagram([node], [("in", "a"), ("a", "out")]))
        assert e.field == field, (node, e)
        if rule:
            assert e.rule == rule


def test_repairable_diagrams_take_component_standby_knode() -> None:
    d = diagram([block("a", exp_model(0.1), "series", n=2)], [("in", "a"), ("a", "out")], repairable=True)
    e = refused(d)
    assert e.field == "nodes.a.type" and "repairable" in e.rule


def test_mean_with_given_is_converted_to_params() -> None:
    m = check_model({"distribution_id": "weibull", "mean": 1000.0, "given": {"beta": 2.0}}, "model")
    alpha = {p["name"]: p["value"] for p in m["params"]}["alpha"]
    assert alpha == pytest.approx(1000.0 / math.gamma(1.5), rel=1e-15)
    m = check_model({"distribution_id": "exponential", "mean": 250.0, "placeholder": True}, "repair")
    assert m == {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": 0.004}],
                 "placeholder": True}
    with pytest.raises(InputError, match=r"^model.given.sigma: required with mean for lognormal"):
        check_model({"distribution_id": "lognormal", "mean": 3.0}, "model")
    mix = check_model({"distribution_id": "mixture", "base_distribution_id": "weibull",
                       "params": {"alpha1": 10, "beta1": 1, "weight1": 0.3, "alpha2": 50, "beta2": 3,
                                  "weight2": 0.7}}, "model")
    assert mix["base_distribution_id"] == "weibull" and len(mix["params"]) == 6


def test_stages_become_nodes_gates_and_ccf_groups() -> None:
    comp = {"distribution": "exponential", "params": [{"name": "failure_rate", "value": 0.01}],
            "repair_distribution": "exponential", "repair_params": [{"name": "failure_rate", "value": 0.5}]}
    st = [{"label": "Feed pumps", "k_of_n": 2, "common_cause_beta": 0.05,
           "components": [{"label": "Pump", **comp}, {"label": "Pump", **comp}, {"label": "Pump", **comp}]},
          {"components": [{"label": "Valve", **comp}]}]
    g = rbd.stages_to_diagram(st, repairable=True)
    d = rbd.check_diagram({"name": "s", "repairable": True, **g})
    ids = [n["id"] for n in d["nodes"]]
    assert ids == ["input", "output", "pump", "pump-2", "pump-3", "feed-pumps-vote", "valve"]
    gate = d["nodes"][5]
    assert (gate["type"], gate["n"], gate["k"]) == ("knode", 2, 3)
    assert d["ccf"] == [{"id": "ccf-1", "members": ["pump", "pump-2", "pump-3"], "beta": 0.05, "basis": "rate"}]
    with pytest.raises(InputError, match=r"stages\[0\].k_of_n: must be an integer from 1 to 3"):
        rbd.stages_to_diagram([{**st[0], "k_of_n": 4}])
    with pytest.raises(InputError, match=r"stages\[0\].components\[0\].repair_distribution: repair models only"):
        rbd.stages_to_diagram(st, repairable=False)


def test_view_marks_placeholder_blocks() -> None:
    d = rbd.check_diagram(diagram([block("a", {**exp_model(0.1), "placeholder": True}), block("b", exp_model(0.1))],
                                  [("in", "a"), ("a", "b"), ("b", "out")]))
    v = rbd.view(d)
    assert v["placeholders"] == ["a"] and v["nodes"][2]["placeholder"] is True and "placeholder" not in v["nodes"][3]
    assert v["block_count"] == 2
    assert rbd.content_hash(d) == rbd.content_hash({**d, "name": "other"})
    assert rbd.content_hash(d) != rbd.content_hash({**d, "unit": "days"})


def test_resolution_passes_simulated_fields_and_refuses_the_rest() -> None:
    d = rbd.check_diagram(diagram([block("a", exp_model(0.1), repair=exp_model(1), costs={"downtime": 3})],
                                  [("in", "a"), ("a", "out")], repairable=True))
    form = rbd.engine_form(d, {}, {})
    assert next(n for n in form["nodes"] if n["id"] == "a")["costs"] == {"downtime": 3}
    d = rbd.apply_edits(d, [{"op": "set", "phases": [{"name": "p", "duration": 1}]}])
    assert rbd.engine_form(d, {}, {})["phases"] == [{"name": "p", "duration": 1}]
    # covariate schedules are simulated on a saved regression model only
    d["nodes"] = [{**n, "covariate_schedules": {"x": {"expression": "1"}}} if n["id"] == "a" else n
                  for n in d["nodes"]]
    with pytest.raises(InputError, match=r"^nodes.a.covariate_schedules: needs a saved regression model"):
        rbd.engine_form(d, {}, {})
    with pytest.raises(InputError, match=r"^diagram.nodes.a.covariate_schedules: resolve it"):
        engine.normalize_diagram(d)
    e = rbd.check_diagram(diagram([block("a", {"saved_model_id": "mdl_x"})], [("in", "a"), ("a", "out")],
                                  unit="hours"))
    with pytest.raises(InputError, match=r"^nodes.a.model.saved_model_id: no model with id 'mdl_x'"):
        rbd.engine_form(e, {}, {})
    km = {"kind": "distribution", "distribution": "kaplan_meier", "params": []}
    with pytest.raises(InputError, match="non-parametric"):
        rbd.engine_form(e, {"mdl_x": km}, {})
    w = {"kind": "distribution", "distribution": "weibull", "unit": "days",
         "params": [{"name": "alpha", "value": 5.0}, {"name": "beta", "value": 2.0}]}
    with pytest.raises(InputError, match="in 'days' but the diagram is in 'hours'"):
        rbd.engine_form(e, {"mdl_x": w}, {})
    out = rbd.engine_form(e, {"mdl_x": {**w, "unit": "hours"}}, {})
    assert out["nodes"][2]["model"] == {"distribution_id": "weibull", "params": w["params"]}


def test_subsystem_cycles_are_refused() -> None:
    a = rbd.check_diagram(diagram([{"id": "s", "type": "subsystem", "subsystem_rbd_id": "rbd_b"}],
                                  [("in", "s"), ("s", "out")]))
    b = rbd.check_diagram(diagram([{"id": "t", "type": "subsystem", "subsystem_rbd_id": "rbd_a"}],
                                  [("in", "t"), ("t", "out")]))
    cycle = r"^nodes.s.subsystem.nodes.t.subsystem_rbd_id: embeds a cycle of diagrams \(rbd_a -> rbd_b -> rbd_a\)"
    with pytest.raises(InputError, match=cycle):
        rbd.check_no_cycle("rbd_a", a, {"rbd_b": b, "rbd_a": a})


def test_quote_events_match_the_engine_count() -> None:
    # The quote's event model against the engine's own event count: within 5%.
    d = rbd.engine_form(rbd.check_diagram(diagram(
        [block("a", exp_model(0.01), repair=exp_model(0.1)),
         block("b", {"distribution_id": "weibull", "params": [{"name": "alpha", "value": 80.0},
                                                              {"name": "beta", "value": 2.0}]},
               repair={"distribution_id": "lognormal", "mean": 5.0, "given": {"sigma": 0.4}})],
        [("in", "a"), ("a", "b"), ("b", "out")], repairable=True)), {}, {})
    est = events_per_replication(d, 2000.0)
    run = engine.simulate_availability(d, horizon=2000.0, replications=400, seed=2, threads=1)
    assert est == pytest.approx(run.events / run.replications, rel=0.05)
    quoted = quote(d, replications=400, horizon=2000.0)
    assert quoted.seconds > OVERHEAD_S and quoted.replications == 400


def test_every_spec_field_round_trips_and_checking_is_idempotent() -> None:
    d = rbd.check_diagram(FULL_REPAIRABLE)
    assert d == FULL_REPAIRABLE  # stored exactly as given (all values already in stored form)
    assert rbd.check_diagram(d) == d
    non_rep = {
        "name": "life", "unit": "hours",
        "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
                  {"id": "s", "type": "series", "n": 3, "model": {"saved_model_id": "mdl_cox"},
                   "covariate_schedules": {"temp": {"expression": "20 + 5 * (t // 100 % 2)"},
                                           "mode": {"table": [{"t": 0.0, "value": "idle"},
                                                              {"t": 8.0, "value": "busy"}], "period": 24.0}}},
                  {"id": "p", "type": "parallel", "n": 2, "model": {"saved_model_id": "mdl_joint",
                                                                    "joint_unit": {"id": "u7", "age": 100.0,
                                                                                   "readings": [[0.0, 1.0]],
                                                                                   "covariates": {"load": 2.0}}}},
                  {"id": "sub", "type": "subsystem", "subsystem_rbd_id": "rbd_other", "label": "embedded"}],
        "edges": [{"source": "in", "target": "s"}, {"source": "s", "target": "p"}, {"source": "p", "target": "sub"},
                  {"source": "sub", "target": "out"}],
    }
    e = rbd.check_diagram(non_rep)
    assert e == {**non_rep, "repairable": False, "ccf": []} and rbd.check_diagram(e) == e


@pytest.mark.parametrize("model,valid", [
    ({"distribution_id": "weibull", "params": [100.0, 2.0]}, True),
    ({"distribution_id": "weibull", "mean": 100.0, "given": {"beta": 2.0}}, True),
    ({"distribution_id": "mixture", "base_distribution_id": "weibull",
      "params": [100.0, 2.0, 0.4, 300.0, 1.5, 0.6]}, True),
    ({"saved_model_id": "m1"}, True),
    # each family branch states its parameters: a base family only with a mixture, the family's count
    ({"distribution_id": "lognormal", "params": [1.0, 2.0], "base_distribution_id": "loglogistic"}, False),
    ({"distribution_id": "weibull", "params": [100.0, 2.0, 3.0, 4.0]}, False),
    ({"distribution_id": "weibull", "params": [100.0, -2.0]}, False),
])
def test_the_published_block_model_schema_agrees_with_the_check(model: dict[str, Any], valid: bool) -> None:
    errors = list(jsonschema.Draft202012Validator(model_schema()).iter_errors(model))
    assert (not errors) == valid, [e.message[:200] for e in errors]
    if "saved_model_id" not in model:  # the library's own check says the same
        try:
            check_model(model, "model")
            checked = True
        except InputError:
            checked = False
        assert checked == valid
