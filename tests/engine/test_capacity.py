"""Capacity and production against closed forms (repairable exponential blocks, each run's
own 99% interval): parallel capacity's expected throughput is sum(capacity * A), a series
carries the least, levels are drawn per replication, production over a period and the time
below demand; refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from bathtub.engine import simulate_availability, simulate_mission
from bathtub.errors import InputError

from .engine_diagrams import block, exp_model, parallel, series

Z99 = 2.5758293035489
H = 400.0


def avail(lam: float, mu: float):
    """Point availability of an exponential block starting new."""
    return lambda t: mu / (lam + mu) + lam / (lam + mu) * np.exp(-(lam + mu) * t)


def mean_over(f, end: float) -> float:
    return integrate.quad(f, 0, end, limit=200)[0] / end


def check(res, expected: float) -> None:
    p = res.production
    assert abs(p["mean_throughput"] - expected) <= Z99 * p["mean_throughput_std_error"], (p, expected)


A1, A2 = (0.01, 0.1), (0.02, 0.05)


def test_parallel_throughput_is_the_sum_of_capacity_times_availability():
    d = parallel(block("P1", exp_model(A1[0]), exp_model(A1[1]), capacity=5.0),
                 block("P2", exp_model(A2[0]), exp_model(A2[1]), capacity=3.0))
    res = simulate_availability(d, horizon=H, replications=10_000, seed=51, grid=0)
    check(res, 5.0 * mean_over(avail(*A1), H) + 3.0 * mean_over(avail(*A2), H))
    assert res.production["period"] == H and res.to_dict()["production"]["demand"] == 0.0


def test_series_carries_the_least():
    d = series(block("S1", exp_model(A1[0]), exp_model(A1[1]), capacity=10.0),
               block("S2", exp_model(A2[0]), exp_model(A2[1]), capacity=4.0))
    res = simulate_availability(d, horizon=H, replications=10_000, seed=52, grid=0)
    a1, a2 = avail(*A1), avail(*A2)
    check(res, 4.0 * mean_over(lambda t: a1(t) * a2(t), H))


def test_levels_and_parallel_units():
    """Levels 2 or 6 (even odds) on one block: E = 4 A; a parallel node of 3 units of 2
    each carries 2 per unit up: E = 6 A."""
    d = series(block("L", exp_model(A1[0]), exp_model(A1[1]),
                     capacity=[{"value": 2.0, "probability": 0.5}, {"value": 6.0, "probability": 0.5}]))
    res = simulate_availability(d, horizon=H, replications=10_000, seed=53, grid=0)
    check(res, 4.0 * mean_over(avail(*A1), H))
    d = series({"id": "U", "type": "parallel", "n": 3, "model": exp_model(A2[0]), "repair": exp_model(A2[1]),
                "capacity": 2.0})
    res = simulate_availability(d, horizon=H, replications=10_000, seed=54, grid=0)
    check(res, 6.0 * mean_over(avail(*A2), H))


def test_production_over_a_period_and_time_below_demand():
    period = H / 2
    d = parallel(block("P1", exp_model(A1[0]), exp_model(A1[1]), capacity=5.0),
                 block("P2", exp_model(A2[0]), exp_model(A2[1]), capacity=3.0))
    d["production"] = {"demand": 6.0, "unit": "t", "period": period}
    res = simulate_availability(d, horizon=H, replications=10_000, seed=55, grid=0)
    a1, a2 = avail(*A1), avail(*A2)
    p = res.production
    made = integrate.quad(lambda t: 5.0 * a1(t) + 3.0 * a2(t), 0, period)[0]
    assert abs(p["production"] - made) <= Z99 * p["production_std_error"]
    lo, hi = p["production_interval"]
    assert lo < p["production"] < hi
    # Below 6 unless both run (5 + 3).
    below = 1 - mean_over(lambda t: a1(t) * a2(t), period)
    assert abs(p["fraction_below_demand"] - below) <= Z99 * p["fraction_below_demand_std_error"]
    assert p["time_below_demand"] == pytest.approx(p["fraction_below_demand"] * period)


@pytest.mark.parametrize("cap,field", [
    (0.0, "nodes.B.capacity"),
    ([], "nodes.B.capacity"),
    ([{"value": 1.0, "probability": 0.5}], "nodes.B.capacity"),
    ([{"value": -1.0, "probability": 1.0}], "nodes.B.capacity[0].value"),
    ([{"value": 1.0}], "nodes.B.capacity[0].probability"),
])
def test_refusals_name_the_field(cap, field):
    d = series(block("B", exp_model(1e-3), instant_repair=True, capacity=cap))
    with pytest.raises(InputError) as e:
        simulate_availability(d, horizon=10.0, replications=10)
    assert e.value.field == f"diagram.{field}"


def test_a_limited_flow_may_not_split():
    """A (capacity 4) feeding B and C in parallel: min(4, B + C), not 4 twice; refused."""
    nodes = [{"id": "in", "type": "input"}, block("A", exp_model(1e-3), instant_repair=True, capacity=4.0),
             block("B", exp_model(1e-3), instant_repair=True, capacity=3.0),
             block("C", exp_model(1e-3), instant_repair=True, capacity=3.0), {"id": "out", "type": "output"}]
    pairs = [("in", "A"), ("A", "B"), ("A", "C"), ("B", "out"), ("C", "out")]
    d = {"nodes": nodes, "edges": [{"source": a, "target": b} for a, b in pairs]}
    with pytest.raises(ValueError, match='"A" feeds several nodes'):
        simulate_availability(d, horizon=10.0, replications=10)


def test_unlimited_paths_production_without_capacity_and_missions_refused():
    d = parallel(block("A", exp_model(1e-3), instant_repair=True, capacity=2.0),
                 block("B", exp_model(1e-3), instant_repair=True))
    with pytest.raises(ValueError, match="unlimited"):
        simulate_availability(d, horizon=10.0, replications=10)
    d = series(block("A", exp_model(1e-3), instant_repair=True))
    with pytest.raises(InputError) as e:
        simulate_availability(d | {"production": {"demand": 3.0}}, horizon=10.0, replications=10)
    assert e.value.field == "diagram.production"


def test_non_repairable_capacity_is_read_at_the_period():
    """5 l1 and 3 l2 in parallel, never repaired, read at P: E = 5 e^(-l1 P) + 3 e^(-l2 P);
    below a demand of 6 unless both survive."""
    (l1, l2), period, n = (0.01, 0.02), 40.0, 20_000
    d = parallel(block("P1", exp_model(l1), capacity=5.0), block("P2", exp_model(l2), capacity=3.0))
    d["production"] = {"demand": 6.0, "period": period}
    res = simulate_mission(d, mission_time=100.0, replications=n, seed=56, grid=0)
    p = res.production
    exact = 5 * np.exp(-l1 * period) + 3 * np.exp(-l2 * period)
    assert abs(p["expected_capacity"] - exact) <= Z99 * p["expected_capacity_std_error"]
    below = 1 - np.exp(-(l1 + l2) * period)
    assert abs(p["probability_below_demand"] - below) <= Z99 * np.sqrt(below * (1 - below) / n)
    assert p["read_at"] == period and res.to_dict()["production"]["demand"] == 6.0
