"""Network mode (undirected two-terminal): a bridge gives the block diagram's bridge, bit
for bit, and the textbook bridge formula; edge directions do not matter; refusals."""

from __future__ import annotations

import numpy as np
import pytest

from bathtub.engine import simulate_availability, simulate_mission
from bathtub.errors import InputError

from .engine_diagrams import block, bridge, exp_model

RATES = {"A": 0.01, "B": 0.02, "C": 0.015, "D": 0.01, "E": 0.03}


def blocks(repair: bool = False) -> list[dict]:
    return [block(k, exp_model(v), exp_model(0.2) if repair else None) for k, v in RATES.items()]


def bridge_formula(t: np.ndarray) -> np.ndarray:
    """Pivot on E: E up -> (A or B) and (C or D); E down -> AC or BD."""
    r = {k: np.exp(-v * t) for k, v in RATES.items()}
    up = (1 - (1 - r["A"]) * (1 - r["B"])) * (1 - (1 - r["C"]) * (1 - r["D"]))
    down = 1 - (1 - r["A"] * r["C"]) * (1 - r["B"] * r["D"])
    return r["E"] * up + (1 - r["E"]) * down


def test_network_bridge_is_the_block_diagram_bridge():
    dag = bridge(*blocks(repair=True))
    net = dag | {"network": True}
    kw = {"horizon": 300.0, "replications": 500, "seed": 81, "grid": 11}
    assert simulate_availability(net, **kw).state == simulate_availability(dag, **kw).state
    kw = {"mission_time": 100.0, "replications": 2000, "seed": 82, "grid": 11}
    assert simulate_mission(net, **kw).state == simulate_mission(dag, **kw).state


def test_edge_directions_do_not_matter_and_the_formula_holds():
    d = bridge(*blocks())
    # Draw some links backwards (a block diagram would read a different, broken system).
    for e in d["edges"]:
        if (e["source"], e["target"]) in (("A", "C"), ("E", "D"), ("in", "B")):
            e["source"], e["target"] = e["target"], e["source"]
    n = 20_000
    res = simulate_mission(d | {"network": {"source": "in", "target": "out"}}, mission_time=60.0, replications=n,
                           seed=83, grid=7)
    exact = bridge_formula(res.t)
    se = np.sqrt(exact * (1 - exact) / n)
    assert np.all(np.abs(res.reliability - exact) <= 3.29 * se + 2.0 / n)


def test_terminals_can_be_any_nodes():
    """Between A and D (terminal blocks must work too): A-E-D, A-C-out-D or A-in-B-D, so
    R = rA rD (1 - (1 - rE)(1 - rC)(1 - rB))."""
    n = 20_000
    d = bridge(*blocks()) | {"network": {"source": "A", "target": "D"}}
    res = simulate_mission(d, mission_time=60.0, replications=n, seed=84, grid=7)
    r = {k: np.exp(-v * res.t) for k, v in RATES.items()}
    exact = r["A"] * r["D"] * (1 - (1 - r["E"]) * (1 - r["C"]) * (1 - r["B"]))
    se = np.sqrt(exact * (1 - exact) / n)
    assert np.all(np.abs(res.reliability - exact) <= 3.29 * se + 2.0 / n)


@pytest.mark.parametrize("network,field", [
    ({"source": "Z"}, "network.source"),
    ({"target": 3}, "network.target"),
    ({"sink": "out"}, "network.sink"),
])
def test_refusals_name_the_field(network, field):
    with pytest.raises(InputError) as e:
        simulate_mission(bridge(*blocks()) | {"network": network}, mission_time=10.0, replications=10)
    assert e.value.field == f"diagram.{field}"


def test_knodes_capacity_and_equal_terminals_refused():
    d = bridge(*blocks())
    with pytest.raises(ValueError, match="differ"):
        simulate_mission(d | {"network": {"source": "A", "target": "A"}}, mission_time=10.0, replications=10)
    k = {"nodes": [{"id": "in", "type": "input"}, *blocks()[:2], {"id": "K", "type": "knode", "n": 1},
                   {"id": "out", "type": "output"}],
         "edges": [{"source": "in", "target": "A"}, {"source": "in", "target": "B"}, {"source": "A", "target": "K"},
                   {"source": "B", "target": "K"}, {"source": "K", "target": "out"}], "network": True}
    with pytest.raises(ValueError, match="network"):
        simulate_mission(k, mission_time=10.0, replications=10)
