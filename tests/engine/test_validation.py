"""Invalid diagrams and options are refused with a message naming the node or field."""

from __future__ import annotations

import copy

import pytest

from bathtub import EngineError
from bathtub.engine import compile_diagram, simulate_availability, simulate_mission
from bathtub.errors import InputError

from .engine_diagrams import block, bridge, exp_model, parallel, series


def good():
    return bridge(*(block(k, exp_model(0.01), exp_model(0.1)) for k in "ABCDE"))


def test_bathtub_engine_error_is_a_value_error():
    assert issubclass(EngineError, ValueError)
    assert compile_diagram(good()) == ["A", "B", "C", "D", "E"]


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d["edges"].append({"source": "C", "target": "A"}), "cycle"),
        (lambda d: d["edges"].append({"source": "A", "target": "ghost"}), "ghost"),
        (lambda d: d["nodes"].append({"id": "in2", "type": "input"}), "exactly one input"),
        (lambda d: d["nodes"].append(block("F", exp_model(0.1))), '"F"'),
        (lambda d: d["edges"].append({"source": "in", "target": "out"}), "every block failed"),
        (lambda d: d["nodes"].append(copy.deepcopy(d["nodes"][1])), "twice"),
    ],
)
def test_bad_shapes_are_refused(mutate, needle):
    d = good()
    mutate(d)
    with pytest.raises(EngineError, match=needle):
        compile_diagram(d)


def test_output_unreachable_names_the_node():
    d = good()
    d["edges"] = [e for e in d["edges"] if e["target"] != "out"]
    with pytest.raises(EngineError, match=r'"(out|C|D)"'):
        compile_diagram(d)


def test_knode_needing_more_than_its_inputs():
    d = parallel(block("A", exp_model(1.0)), block("B", exp_model(1.0)), need=3)
    d["nodes"][-1].pop("k")
    with pytest.raises(EngineError, match=r'"vote".*only 2'):
        compile_diagram(d)


def test_missing_model_and_repair_name_the_node():
    d = good()
    del d["nodes"][3]["model"]
    with pytest.raises(EngineError, match=r'"C".*life model'):
        compile_diagram(d)
    d = good()
    del d["nodes"][2]["repair"]
    with pytest.raises(EngineError, match=r'"B".*repair'):
        simulate_availability(d, horizon=10.0, replications=5)
    simulate_mission(d, mission_time=10.0, replications=5)  # a mission needs no repair model


def test_bad_params_name_the_field():
    d = good()
    d["nodes"][1]["model"] = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": 10.0},
                                                                       {"name": "beta", "value": -2.0}]}
    with pytest.raises(InputError, match=r"diagram\.nodes\.A\.model\.params\.beta"):
        compile_diagram(d)
    d["nodes"][1]["model"] = {"distribution_id": "weibull", "mean": 100.0, "given": {"beta": 2.0}}
    compile_diagram(d)
    d["nodes"][1]["maintenance_group"] = "crew-a"
    with pytest.raises(InputError, match="maintenance_group"):
        compile_diagram(d)
    d = series({"id": "S", "type": "standby", "k": 2, "spares": 1, "dormancy": 0.5, "model": exp_model(1.0)})
    with pytest.raises(EngineError, match=r'"S".*warm'):
        compile_diagram(d)


def test_bad_options():
    with pytest.raises(InputError, match="horizon"):
        simulate_availability(good(), horizon=-1.0, replications=5)
    with pytest.raises(InputError, match="replications"):
        simulate_availability(good(), horizon=1.0, replications=5, target_half_width=0.1)
    with pytest.raises(InputError, match="seed"):
        simulate_availability(good(), horizon=1.0, replications=5, seed=-1)
