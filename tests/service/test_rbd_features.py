"""Engine features (issue 4) through the diagram service: a proof-tested safety function and
a common-cause pair, each against its closed form within the run's own interval."""

from __future__ import annotations

import math
from typing import Any

from scipy import integrate

from tests.conftest import Api
from tests.service.test_rbd_service import poll

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
