"""Phased missions against the analytic product over phases (non-repairable, exponential
blocks): a block not needed still ages and fails and fails the system when a later phase
needs it; knode votes change by phase; per-phase and whole-mission reliability."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bathtub.engine import simulate_availability, simulate_mission
from bathtub.errors import InputError

from .engine_diagrams import block, exp_model, parallel, series

Z99 = 2.5758293035489
N = 20_000


def near(p: float, exact: float, n: int = N, z: float = Z99) -> None:
    assert abs(p - exact) <= z * math.sqrt(exact * (1 - exact) / n) + 1.0 / n, (p, exact)


RATES = {"A": 1e-3, "B": 2e-3, "C": 3e-3}


def chain() -> dict:
    return series(*(block(k, exp_model(v)) for k, v in RATES.items()))


def test_series_phases_are_the_product_over_blocks_of_their_last_needed_time():
    t1, t2, t3 = 100.0, 150.0, 200.0
    d = chain() | {"phases": [{"name": "take-off", "duration": t1},
                              {"name": "cruise", "duration": t2, "not_needed": ["C"]},
                              {"name": "landing", "duration": t3, "not_needed": ["B", "C"]}]}
    res = simulate_mission(d, mission_time=t1 + t2 + t3, replications=N, seed=41, grid=0)
    a, b, c = RATES.values()
    e1, e2, e3 = t1, t1 + t2, t1 + t2 + t3
    expect = [math.exp(-(a + b + c) * e1), math.exp(-(a + b) * e2 - c * e1), math.exp(-a * e3 - b * e2 - c * e1)]
    assert [p["name"] for p in res.phases] == ["take-off", "cruise", "landing"]
    assert [p["end"] for p in res.phases] == [e1, e2, e3]
    for p, x in zip(res.phases, expect, strict=True):
        near(p["reliability"], x)
    near(1 - res.probability_of_failure, expect[-1])
    assert res.phases[1]["conditional"] == pytest.approx(res.phases[1]["reliability"] / res.phases[0]["reliability"])
    assert res.to_dict()["phases"][2]["name"] == "landing"


def test_a_block_failed_while_not_needed_fails_the_next_phase_at_its_start():
    t1, t2 = 300.0, 200.0
    d = chain() | {"phases": [{"name": "one", "duration": t1, "not_needed": ["B", "C"]},
                              {"name": "two", "duration": t2}]}
    grid = 11
    res = simulate_mission(d, mission_time=t1 + t2, replications=N, seed=42, grid=grid)
    a, total = RATES["A"], sum(RATES.values())
    for t, r in zip(res.t, res.reliability, strict=True):
        # 11 points of one curve: a 99.9% band each keeps the family near 99%.
        near(r, math.exp(-a * t) if t < t1 else math.exp(-total * t), z=3.29)
    near(res.phases[0]["reliability"], math.exp(-a * t1))


def alive_patterns(lam: float, t1: float, t2: float):
    """Per block: (alive at t1, alive at t2) with its probability."""
    s1, s2 = math.exp(-lam * t1), math.exp(-lam * (t1 + t2))
    return [((True, True), s2), ((True, False), s1 - s2), ((False, False), 1 - s1)]


@pytest.mark.parametrize("votes", [(2, 1), (1, 2), (3, 2)])
def test_knode_votes_by_phase(votes):
    lam, t1, t2 = 2e-3, 150.0, 250.0
    d = parallel(*(block(f"U{i}", exp_model(lam)) for i in range(3)), need=2)
    d["phases"] = [{"name": "p1", "duration": t1, "votes": {"vote": votes[0]}},
                   {"name": "p2", "duration": t2, "votes": {"vote": votes[1]}}]
    res = simulate_mission(d, mission_time=t1 + t2, replications=N, seed=43, grid=0)
    p1 = p2 = 0.0
    for combo in itertools.product(alive_patterns(lam, t1, t2), repeat=3):
        prob = math.prod(c[1] for c in combo)
        at1 = sum(c[0][0] for c in combo)
        at2 = sum(c[0][1] for c in combo)
        if at1 >= votes[0]:
            p1 += prob
            if at2 >= votes[1]:
                p2 += prob
    near(res.phases[0]["reliability"], p1)
    near(res.phases[1]["reliability"], p2)


def test_a_subsystem_id_stands_for_its_blocks():
    inner = chain()
    d = series(block("X", exp_model(1e-3)), {"id": "S", "type": "subsystem", "diagram": inner})
    d["phases"] = [{"name": "p1", "duration": 200.0, "not_needed": ["S"]}, {"name": "p2", "duration": 0.0}]
    res = simulate_mission(d, mission_time=200.0, replications=N, seed=44, grid=0)
    near(res.phases[0]["reliability"], math.exp(-1e-3 * 200.0))
    near(res.phases[1]["reliability"], math.exp(-(1e-3 + sum(RATES.values())) * 200.0))
    assert np.isclose(res.phases[1]["end"], 200.0)


@pytest.mark.parametrize("phases,field", [
    ([{"duration": 1.0}], "phases[0].name"),
    ([{"name": "a", "duration": 1.0}, {"name": "a", "duration": 1.0}], "phases[1].name"),
    ([{"name": "a", "duration": -1.0}], "phases[0].duration"),
    ([{"name": "a", "duration": 1.0, "not_needed": ["Z"]}], "phases[0].not_needed[0]"),
    ([{"name": "a", "duration": 1.0, "votes": {"A": 1}}], "phases[0].votes.A"),
    ([{"name": "a", "duration": 1.0, "extra": 1}], "phases[0].extra"),
])
def test_refusals_name_the_field(phases, field):
    with pytest.raises(InputError) as e:
        simulate_mission(chain() | {"phases": phases}, mission_time=10.0, replications=10)
    assert e.value.field == f"diagram.{field}"


def test_votes_out_of_range_and_repairable_runs_refused():
    d = parallel(*(block(f"U{i}", exp_model(1e-3), exp_model(0.1)) for i in range(3)), need=2)
    with pytest.raises(InputError) as e:
        simulate_mission(d | {"phases": [{"name": "a", "duration": 1.0, "votes": {"vote": 4}}]},
                         mission_time=10.0, replications=10)
    assert e.value.field == "diagram.phases[0].votes.vote"
    with pytest.raises(InputError, match="simulate_mission"):
        simulate_availability(d | {"phases": [{"name": "a", "duration": 1.0}]}, horizon=10.0, replications=10)


def phased_k_of_n(rates: dict[str, float], phases: list[dict]) -> list[float]:
    """Exact reliability through each phase's end of a phased knode `vote` over
    non-repairable exponential blocks, by enumeration: each block fails in one of the phases
    or after the last (independently); blocks never come back, so a coherent phase holds
    throughout iff it holds at its end, where a block not needed counts as working."""
    ends = list(itertools.accumulate(p["duration"] for p in phases))
    edges = [0.0, *ends, math.inf]
    ids = list(rates)
    out = [0.0] * len(phases)
    for cells in itertools.product(range(len(edges) - 1), repeat=len(ids)):
        prob = 1.0
        for b, c in zip(ids, cells, strict=True):
            prob *= math.exp(-rates[b] * edges[c]) - math.exp(-rates[b] * edges[c + 1])  # exp(-inf) = 0
        for i, p in enumerate(phases):
            working = sum(1 for b, c in zip(ids, cells, strict=True) if c > i or b in p.get("not_needed", []))
            if working < p["votes"]["vote"]:
                break
            out[i] += prob
    return out


def test_phased_k_of_n_table_and_mission_agree_with_enumeration():
    """2-of-3 voting whose votes and needed blocks change by phase: the per-phase table and
    the mission's reliability are one run's figures and match the exact enumeration."""
    rates = {"A": 2e-3, "B": 1e-3, "C": 3e-3}
    phases = [{"name": "start", "duration": 100.0, "votes": {"vote": 1}},
              {"name": "climb", "duration": 150.0, "not_needed": ["A"], "votes": {"vote": 2}},
              {"name": "hold", "duration": 120.0, "votes": {"vote": 2}},
              {"name": "land", "duration": 50.0, "not_needed": ["C"], "votes": {"vote": 3}}]
    d = parallel(*(block(k, exp_model(v)) for k, v in rates.items()), need=2) | {"phases": phases}
    res = simulate_mission(d, mission_time=420.0, replications=N, seed=45, grid=0)
    exact = phased_k_of_n(rates, phases)
    for p, x in zip(res.phases, exact, strict=True):
        near(p["reliability"], x, z=3.29)
    assert res.phases[-1]["reliability"] == 1 - res.probability_of_failure
    near(1 - res.probability_of_failure, exact[-1])


@pytest.mark.parametrize("mission_time", [400.0, 500.0, 420.0 + 1e-9])
def test_a_mission_time_other_than_the_phases_total_is_refused(mission_time):
    d = chain() | {"phases": [{"name": "a", "duration": 300.0}, {"name": "b", "duration": 120.0}]}
    with pytest.raises(InputError) as e:
        simulate_mission(d, mission_time=mission_time, replications=10)
    assert e.value.field == "mission_time" and "420" in str(e.value)
