"""A joint (condition-based) unit in a non-repairable diagram: the engine simulates its
tabulated conditional life; R at the mission end within the run's interval of the closed form."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import norm

from bathtub import engine
from bathtub.degradation import conditional_life, life_table
from bathtub.errors import InputError
from bathtub.rbd import check_diagram, engine_form

A, D, MU_B, SD_B, SIGMA = 5.0, 30.0, 2.0, 0.4, 0.5
RECORD = {"kind": "degradation", "model": "random_effects", "path": "linear", "threshold": D, "direction": "up",
          "unit": "hours", "random_effects": {"params": [{"name": k, "value": v} for k, v in
                                                         (("mu_a", A), ("mu_b", MU_B), ("sd_b", SD_B),
                                                          ("sigma", SIGMA))]}}


def _sf(t: float) -> float:
    """The population life's closed form: y = a + b t, b ~ N(mu_b, sd_b^2), T = (D - a)/b."""
    return float(norm.cdf((D - A) / t, MU_B, SD_B))


def _diagram(joint_unit: dict, *, extra: list[dict] | None = None) -> dict:
    blocks = [{"id": "j", "type": "component", "model": {"saved_model_id": "deg_x", "joint_unit": joint_unit}},
              *(extra or [])]
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}, *blocks]
    chain = ["in", *[b["id"] for b in blocks], "out"]
    edges = [{"source": a, "target": b} for a, b in itertools.pairwise(chain)]
    return {"name": "joint", "unit": "hours", "repairable": False, "nodes": nodes, "edges": edges}


def _run(d: dict, mission: float, seed: int = 5) -> engine.MissionResult:
    form = engine_form(check_diagram(d), {"deg_x": RECORD}, {})
    return engine.simulate_mission(form, mission_time=mission, replications=40_000, seed=seed)


def test_no_readings_is_the_population_life_conditioned_on_age() -> None:
    age, mission = 9.0, 4.0
    m = _run(_diagram({"id": "pump 7", "age": age}), mission)
    want = _sf(age + mission) / _sf(age)
    lo, hi = (1.0 - x for x in reversed(m.probability_of_failure_interval))
    assert lo <= want <= hi, (lo, want, hi)
    assert hi - lo < 0.02
    # the whole curve: every grid point's band holds the closed form
    t = np.asarray(m.t)
    exact = np.array([_sf(age + x) / _sf(age) for x in t])
    assert np.mean((np.asarray(m.lower) <= exact + 1e-12) & (exact - 1e-12 <= np.asarray(m.upper))) > 0.9


def test_readings_and_a_series_block() -> None:
    readings = [[2.0, 9.9], [4.0, 14.2], [6.0, 18.8]]
    lam, mission = 0.01, 5.0
    exp_block = {"id": "e", "type": "component",
                 "model": {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": lam}]}}
    m = _run(_diagram({"age": 6.0, "readings": readings}, extra=[exp_block]), mission, seed=9)
    want = float(conditional_life(RECORD, 6.0, readings).sf(mission)) * math.exp(-lam * mission)
    lo, hi = (1.0 - x for x in reversed(m.probability_of_failure_interval))
    assert lo <= want <= hi, (lo, want, hi)


def test_table_is_the_conditional_life_at_its_knots() -> None:
    life = conditional_life(RECORD, 9.0, [])
    tab = np.array(life_table(life))
    assert tab[0, 0] == 0.0 and tab[0, 1] == 0.0 and np.all(np.diff(tab[:, 0]) > 0)
    exact = 1 - np.array([_sf(9.0 + x) for x in tab[1:200, 0]]) / _sf(9.0)
    assert tab[1:200, 1] == pytest.approx(exact, abs=1e-13)
    x = np.linspace(0.0, 40.0, 4001)
    between = np.interp(x, tab[:, 0], tab[:, 1])
    assert np.max(np.abs(between - (1 - np.array([_sf(9.0 + v) for v in x]) / _sf(9.0)))) < 2e-6
    # the mass past the last knot is the share that never fails plus the table's tail
    assert 1 - tab[-1, 1] == pytest.approx(life.p_never + 1e-9, rel=1e-6)


def test_refusals_name_the_node_and_field() -> None:
    with pytest.raises(InputError) as e:
        _run(_diagram({"age": 3.0, "readings": [[5.0, 9.0]]}), 1.0)
    assert e.value.field == "nodes.j.model.joint_unit.readings.0"
    with pytest.raises(InputError) as e:
        engine_form(check_diagram(_diagram({"age": 1.0})), {"deg_x": {**RECORD, "model": "pseudo_failure"}}, {})
    assert e.value.field == "nodes.j.model.saved_model_id"
    with pytest.raises(InputError) as e:
        _run(_diagram({"age": 1.0, "covariates": {"temp": 3.0}}), 1.0)
    assert e.value.field == "nodes.j.model.joint_unit.covariates"
    d = _diagram({"age": 1.0})
    d["nodes"][2]["state"] = {"age": 4.0}
    with pytest.raises(InputError) as e:
        engine_form(check_diagram(d), {"deg_x": RECORD}, {})
    assert e.value.field == "nodes.j.state"
    d = _diagram({"age": 1.0})
    d["nodes"][2] = {**d["nodes"][2], "type": "parallel", "n": 2}
    with pytest.raises(InputError) as e:
        engine_form(check_diagram(d), {"deg_x": RECORD}, {})
    assert e.value.field == "nodes.j.model.joint_unit"


def test_a_life_that_may_never_end_gives_an_infinite_mttf() -> None:
    # F reaches 0.6 at t = 10 and stays: 40% of units never fail
    d = {"nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
                   {"id": "b", "type": "component", "model": {"distribution_id": "table",
                                                               "table": [[0.0, 0.0], [10.0, 0.6]]}}],
         "edges": [{"source": "in", "target": "b"}, {"source": "b", "target": "out"}]}
    m = engine.simulate_mission(d, mission_time=20.0, replications=20_000, seed=2)
    assert math.isinf(m.mttf)
    lo, hi = (1.0 - x for x in reversed(m.probability_of_failure_interval))
    assert lo <= 0.4 <= hi
    # R(5) = 0.7 on the curve's band (F linear between knots)
    i = int(np.argmin(np.abs(np.asarray(m.t) - 5.0)))
    assert m.t[i] == 5.0 and m.lower[i] <= 0.7 <= m.upper[i]
    with pytest.raises(engine.EngineError) as e:
        engine.simulate_mission({**d, "nodes": [*d["nodes"][:2], {**d["nodes"][2], "model": {
            "distribution_id": "table", "table": [[0.0, 0.5], [1.0, 0.2]]}}]}, mission_time=1.0, replications=10)
    assert "node \"b\": model: table: knot 1" in str(e.value)
