"""Same seed, same numbers on any thread count; chunk runs merge exactly; precision mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from bathtub import engine
from bathtub.engine import simulate_availability, simulate_mission

from .engine_diagrams import block, exp_model, parallel, series


def plant():
    trains = [series(*(block(f"{t}{i}", exp_model(1e-3), exp_model(0.1)) for i in range(3))) for t in "ab"]
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}]
    edges = []
    for t, tr in zip("ab", trains, strict=True):
        nodes.append({"id": t, "type": "subsystem", "diagram": tr})
        edges += [{"source": "in", "target": t}, {"source": t, "target": "out"}]
    return {"nodes": nodes, "edges": edges}


def test_thread_count_does_not_change_numbers():
    one = simulate_availability(plant(), horizon=5000.0, replications=600, seed=9, threads=1)
    two = simulate_availability(plant(), horizon=5000.0, replications=600, seed=9, threads=2)
    assert one.state == two.state
    assert one.to_dict() == two.to_dict()
    m1 = simulate_mission(plant(), mission_time=1000.0, replications=600, seed=9, threads=1)
    m2 = simulate_mission(plant(), mission_time=1000.0, replications=600, seed=9, threads=2)
    assert m1.state == m2.state


SCRIPT = """
import json, sys
from bathtub.engine import simulate_availability
print(simulate_availability(json.loads(sys.argv[1]), horizon=3000.0, replications=400, seed=3).state)
"""


@pytest.mark.slow  # ~6 s: two Python processes, each importing the engine and running the plant
def test_rayon_num_threads_env_does_not_change_numbers():
    outs = []
    for n in ("1", "2"):
        env = {**os.environ, "RAYON_NUM_THREADS": n}
        run = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(plant())], env=env, capture_output=True,
                             text=True, check=True, timeout=120)
        outs.append(run.stdout)
    assert outs[0] == outs[1] and len(outs[0]) > 100


def test_merge_of_chunks_equals_whole_run():
    kw = dict(horizon=4000.0, seed=21, grid=11, crews=1)
    whole = simulate_availability(plant(), replications=500, **kw)
    a = simulate_availability(plant(), replications=180, **kw)
    b = simulate_availability(plant(), replications=320, replication_start=180, **kw)
    merged = engine.merge(b, a)
    assert merged.state == whole.state
    assert merged.to_dict() == whole.to_dict()
    mw = simulate_mission(plant(), mission_time=900.0, replications=300, seed=4)
    ma = simulate_mission(plant(), mission_time=900.0, replications=100, seed=4)
    mb = simulate_mission(plant(), mission_time=900.0, replications=200, seed=4, replication_start=100)
    assert engine.merge(ma, mb).state == mw.state


def test_merge_refuses_gaps_and_different_runs():
    a = simulate_availability(plant(), horizon=100.0, replications=10, seed=1)
    c = simulate_availability(plant(), horizon=100.0, replications=10, seed=1, replication_start=20)
    with pytest.raises(engine.EngineError, match="adjacent"):
        engine.merge(a, c)
    d = simulate_availability(plant(), horizon=100.0, replications=10, seed=2, replication_start=10)
    with pytest.raises(engine.EngineError, match="differ"):
        engine.merge(a, d)


def test_target_precision_is_reached_and_reproducible():
    d = parallel(block("A", exp_model(0.01), exp_model(0.1)), block("B", exp_model(0.01), exp_model(0.1)))
    res = simulate_availability(d, horizon=1000.0, target_half_width=0.05, max_replications=200_000, seed=5, grid=0)
    assert res.target_reached and res.relative_half_width <= 0.05
    assert res.replications > 200  # needed more than the first batch
    again = simulate_availability(d, horizon=1000.0, replications=res.replications, seed=5, grid=0)
    assert again.state == res.state
    capped = simulate_availability(d, horizon=1000.0, target_half_width=0.001, max_replications=300, seed=5, grid=0)
    assert capped.replications == 300 and capped.target_reached is False


def test_results_are_json_ready_and_carry_the_engine_version():
    res = simulate_availability(plant(), horizon=500.0, replications=50, seed=1, grid=5)
    d = json.loads(json.dumps(res.to_dict()))
    assert d["engine_version"] == engine.engine_version and len(d["curve"]["t"]) == 5
    assert [b["id"] for b in d["blocks"]] == [f"{t}/{t}{i}" for t in "ab" for i in range(3)]
    m = simulate_mission(plant(), mission_time=500.0, replications=50, seed=1, grid=5)
    assert json.loads(json.dumps(m.to_dict()))["engine_version"] == engine.engine_version


@pytest.mark.parametrize("method", ["control", "auto"])
def test_thread_count_does_not_change_numbers_with_variance_reduction(method):
    kw = dict(horizon=5000.0, replications=600, seed=9, variance_reduction=method)
    one = simulate_availability(plant(), threads=1, **kw)
    two = simulate_availability(plant(), threads=2, **kw)
    assert one.state == two.state
    assert one.to_dict() == two.to_dict()
    assert one.variance_reduction["method"] != "none"
    # The same replications as the plain run: its figures are the plain estimate beside the reduced one.
    plain = simulate_availability(plant(), threads=2, horizon=5000.0, replications=600, seed=9)
    assert one.variance_reduction["plain_mean_availability"] == plain.mean_availability
    assert (one.availability == plain.availability).all()
    # Chunks merge exactly with the reduction too.
    a = simulate_availability(plant(), threads=2, **{**kw, "replications": 250})
    b = simulate_availability(plant(), threads=1, replication_start=250, **{**kw, "replications": 350})
    assert engine.merge(a, b).state == one.state
