"""Every new statistic stays exactly mergeable and thread-count independent: a plant using
most features at once, run whole, on 1 and 2 threads, and as two merged halves."""

from __future__ import annotations

from bathtub.engine import merge, simulate_availability, simulate_mission

from .engine_diagrams import block, exp_model, parallel

WEIBULL = {"distribution_id": "weibull", "params": {"alpha": 200.0, "beta": 2.0}}


def plant() -> dict:
    d = parallel(
        block("A", WEIBULL, exp_model(0.1), capacity=4.0, maintenance_group="g",
              preventive={"interval": 150.0, "duration": 2.0, "cost": {"min": 1.0, "max": 3.0}, "opportunity": 60.0},
              costs={"repair": {"min": 10.0, "max": 30.0}, "downtime": 2.0}),
        block("B", WEIBULL, exp_model(0.1), capacity=[{"value": 2.0, "probability": 0.3},
                                                      {"value": 5.0, "probability": 0.7}],
              maintenance_group="g", repair_quality={"model": "kijima2", "q": 0.4, "replace_after": 3},
              costs={"repair": 5.0, "replace": 50.0}),
        block("C", exp_model(0.004), exp_model(0.05), capacity=3.0,
              inspection={"interval": 50.0, "coverage": 0.7, "full_test": 150.0, "duration": 1.0, "cost": 2.0}),
        block("D", exp_model(0.004), exp_model(0.05), capacity=3.0, state={"down": True, "since": 4.0}),
        block("E", WEIBULL, exp_model(0.2), capacity=1.0, state={"age": 80.0}),
    )
    return d | {"ccf": [{"members": ["C", "D"], "beta": 0.2}], "unit": "days",
                "maintenance_groups": {"g": {"setup_cost": 7.0, "system_down": True}},
                "costs": {"downtime_rate": 20.0, "discount_rate": 4.0}, "production": {"demand": 6.0, "period": 500.0},
                "safety_function": True}


def test_availability_with_features_merges_exactly():
    kw = {"horizon": 900.0, "seed": 9, "grid": 7}
    whole = simulate_availability(plant(), replications=240, threads=1, **kw)
    assert simulate_availability(plant(), replications=240, threads=2, **kw).state == whole.state
    a = simulate_availability(plant(), replications=101, **kw)
    b = simulate_availability(plant(), replications=139, replication_start=101, **kw)
    m = merge(b, a)
    assert m.state == whole.state
    assert (m.costs, m.production, m.preventive, m.safety) == (whole.costs, whole.production, whole.preventive,
                                                                whole.safety)
    assert whole.costs["by_kind"]["set_up"]["mean"] > 0 and whole.preventive["A"] > 0


def test_mission_with_features_merges_exactly():
    d = parallel(block("A", WEIBULL, capacity=2.0), block("B", exp_model(0.004), capacity=3.0),
                 block("C", exp_model(0.004), capacity=1.0, state={"age": 10.0}), need=2)
    d |= {"ccf": [{"members": ["A", "B", "C"], "beta": 0.1, "mgl": [0.5], "basis": "probability"}],
          "phases": [{"name": "p1", "duration": 50.0, "votes": {"vote": 1}}, {"name": "p2", "duration": 150.0}],
          "production": {"demand": 4.0, "period": 60.0}}
    kw = {"mission_time": 200.0, "seed": 10, "grid": 5}
    whole = simulate_mission(d, replications=500, threads=1, **kw)
    assert simulate_mission(d, replications=500, threads=2, **kw).state == whole.state
    a = simulate_mission(d, replications=200, **kw)
    b = simulate_mission(d, replications=300, replication_start=200, **kw)
    m = merge(a, b)
    assert m.state == whole.state and m.phases == whole.phases and m.production == whole.production
