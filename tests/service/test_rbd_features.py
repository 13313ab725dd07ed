"""Engine features (issue 4) through the diagram service: a proof-tested safety function and
a common-cause pair, each against its closed form within the run's own interval."""

from __future__ import annotations

import math
from typing import Any

import pytest
from scipy import integrate

from tests.conftest import Api
from tests.service.test_rbd_service import poll

# Simulation results against closed forms: the store only saves the run (see tests/conftest.py).
pytestmark = pytest.mark.one_store

LAM, T = 2e-5, 8760.0  # failures per hour; proof-test interval (a year)


def valve(node_id: str) -> dict[str, Any]:
    return {"id": node_id, "type": "component", "instant_repair": True, "inspection": {"interval": T},
            "model": {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": LAM}]}}


async def run_of(api: Api, diagram: dict[str, Any], ops: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    status, made = await api.post("rbd/create", diagram)
    assert status == 200, made
    status, edited = await api.post("rbd/edit", {"id": made["id"], "ops": ops})
    assert status == 200, edited
    status, queued = await api.post("rbd_analysis/analyze", {"id": made["id"], **options})
    assert status == 200 and queued["status"] == "queued", queued
    job = await poll(api, queued["job_id"])
    assert job["status"] == "done", job
    status, run = await api.post("get/rbd_run", {"id": queued["run_id"]})
    assert status == 200, run
    return run


async def test_proof_tested_valve_pfd_avg(api: Api) -> None:
    diagram = {"name": "ESD valve", "unit": "hours", "repairable": True,
               "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}, valve("v")],
               "edges": [{"source": "in", "target": "v"}, {"source": "v", "target": "out"}]}
    ops = [{"op": "set", "safety_function": True, "target_sil": 2}]
    run = await run_of(api, diagram, ops, horizon=10 * T, replications=20_000, seed=11)
    safety = run["results"]["safety"]
    exact = 1 - (1 - math.exp(-LAM * T)) / (LAM * T)  # PFDavg of a proof-tested exponential block
    lo, hi = safety["pfd_avg_interval"]
    assert lo <= exact <= hi, (lo, exact, hi)
    assert safety["sil"] == 1 and safety["target_met"] is False  # 0.085 is in the SIL 1 band [1e-2, 1e-1)


async def test_beta_factor_pair(api: Api) -> None:
    beta = 0.1
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}, valve("a"), valve("b"),
             {"id": "vote", "type": "knode", "n": 1, "k": 2}]
    edges = [{"source": "in", "target": "a"}, {"source": "in", "target": "b"}, {"source": "a", "target": "vote"},
             {"source": "b", "target": "vote"}, {"source": "vote", "target": "out"}]
    diagram = {"name": "1oo2", "unit": "hours", "repairable": True, "nodes": nodes, "edges": edges}
    ops = [{"op": "set", "safety_function": True}, {"op": "add_ccf", "members": ["a", "b"], "beta": beta}]
    run = await run_of(api, diagram, ops, horizon=10 * T, replications=40_000, seed=5)
    # Exact for this model: the pair is down at t (since the last test) if the common cause struck
    # (rate βλ) or both units failed independently (rate (1-β)λ each); averaged over [0, T].
    def pfd(t: float) -> float:
        q = 1 - math.exp(-(1 - beta) * LAM * t)
        return 1 - math.exp(-beta * LAM * t) * (1 - q * q)

    exact = integrate.quad(pfd, 0, T)[0] / T
    lo, hi = run["results"]["safety"]["pfd_avg_interval"]
    assert lo <= exact <= hi, (lo, exact, hi)
    lt = LAM * T  # the textbook small-λT form, ((1-β)λT)²/3 + βλT/2, is 4% high at λT = 0.18
    assert exact < ((1 - beta) * lt) ** 2 / 3 + beta * lt / 2


async def test_pfd_max_is_the_peak_before_each_test(api: Api) -> None:
    """PFD(t) read just before each yearly test: pfd_max ~ 1 - exp(-lam T), not ~0."""
    diagram = {"name": "ESD valve", "unit": "hours", "repairable": True,
               "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}, valve("v")],
               "edges": [{"source": "in", "target": "v"}, {"source": "v", "target": "out"}]}
    run = await run_of(api, diagram, [{"op": "set", "safety_function": True}], horizon=5 * T,
                       replications=10_000, seed=12, grid=11)
    peak = 1 - math.exp(-LAM * T)
    sd = math.sqrt(peak * (1 - peak) / 10_000)
    results = run["results"]
    assert peak - 2.58 * sd <= results["safety"]["pfd_max"] <= peak + 3.5 * sd
    assert results["expected_proof_tests"] == 5.0 and results["blocks"][0]["proof_tests"] == 5.0
    assert results["expected_failures"] == results["blocks"][0]["failures"] > 0


async def test_a_phased_mission_is_its_phases(api: Api) -> None:
    """mission_time other than the phases' total is refused (nothing stored); omitted, it is
    the total, and the per-phase table ends at the mission's reliability."""
    rate = {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": 2e-3}]}
    blocks = [{"id": b, "type": "component", "model": rate} for b in ("a", "b", "c")]
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
             {"id": "vote", "type": "knode", "n": 2, "k": 3}, *blocks]
    edges = [{"source": "in", "target": b} for b in "abc"] + [{"source": b, "target": "vote"} for b in "abc"]
    edges.append({"source": "vote", "target": "out"})
    diagram = {"name": "phased 2oo3", "unit": "hours", "repairable": False, "nodes": nodes, "edges": edges}
    phases = [{"name": "start", "duration": 100.0, "votes": {"vote": 1}},
              {"name": "climb", "duration": 150.0, "not_needed": ["a"], "votes": {"vote": 2}}]
    status, made = await api.post("rbd/create", diagram)
    assert status == 200, made
    status, edited = await api.post("rbd/edit", {"id": made["id"], "ops": [{"op": "set", "phases": phases}]})
    assert status == 200, edited
    status, body = await api.post("rbd_analysis/analyze", {"id": made["id"], "mission_time": 300.0})
    assert status == 422 and body["detail"].startswith("mission_time: must equal the phases' total duration 250")
    assert (await api.post("list/rbd_run", {"rbd_id": made["id"]}))[1]["items"] == []
    status, queued = await api.post("rbd_analysis/analyze", {"id": made["id"], "replications": 4000, "seed": 3})
    assert status == 200 and queued["status"] == "queued", queued
    assert (await poll(api, queued["job_id"]))["status"] == "done"
    _, run = await api.post("get/rbd_run", {"id": queued["run_id"]})
    results = run["results"]
    assert results["mission_time"] == 250.0
    assert results["phases"][-1]["reliability"] == results["reliability"]
