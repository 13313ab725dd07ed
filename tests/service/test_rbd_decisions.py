"""rbd_analysis what_to_improve and interval_search over HTTP:
queued as jobs, results against closed forms, refusals at the door naming the field (and
queueing nothing)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from bathtub.strategy.replacement import optimal_replacement
from bathtub_api.cli import user_plan
from bathtub_api.config import Config
from tests.conftest import Api
from tests.service.test_job_control import poll as poll_until
from tests.service.test_rbd_service import poll

Z = 4.0


def exp_model(rate: float) -> dict[str, Any]:
    return {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": rate}]}


def series_ab() -> dict[str, Any]:
    blocks = [{"id": "a", "type": "component", "model": exp_model(1e-3), "repair": exp_model(1 / 10.0),
               "costs": {"repair": 20.0}},
              {"id": "b", "type": "component", "model": exp_model(2e-3), "repair": exp_model(1 / 50.0),
               "costs": {"repair": 5.0}}]
    nodes = [{"id": "in", "type": "input"}, *blocks, {"id": "out", "type": "output"}]
    edges = [{"source": "in", "target": "a"}, {"source": "a", "target": "b"}, {"source": "b", "target": "out"}]
    return {"name": "two in series", "unit": "hours", "repairable": True, "nodes": nodes, "edges": edges}


def age_replaced() -> dict[str, Any]:
    params = [{"name": "alpha", "value": 1000.0}, {"name": "beta", "value": 3.0}]
    life = {"distribution_id": "weibull", "params": params}
    p = {"id": "p", "type": "component", "model": life, "instant_repair": True,
         "preventive": {"policy": "age", "interval": 500.0, "cost": 100.0}, "costs": {"replace": 1000.0}}
    nodes = [{"id": "in", "type": "input"}, p, {"id": "out", "type": "output"}]
    edges = [{"source": "in", "target": "p"}, {"source": "p", "target": "out"}]
    return {"name": "age replaced", "unit": "hours", "repairable": True, "nodes": nodes, "edges": edges}


async def created(api: Api, diagram: dict[str, Any]) -> str:
    status, body = await api.post("rbd/create", diagram)
    assert status == 200, body
    return body["id"]


@pytest.mark.one_store  # results against closed forms, refusals at the door: no store-specific behaviour
async def test_what_to_improve_job_ranks_blocks_against_the_closed_form(api: Api) -> None:
    rbd_id = await created(api, series_ab())
    status, queued = await api.post("rbd_analysis/what_to_improve",
                                    {"id": rbd_id, "horizon": 5000.0, "replications": 1000, "seed": 4})
    assert status == 200, queued
    assert queued["status"] == "queued" and queued["quote"]["seconds"] > 0
    job = await poll(api, queued["job_id"])
    assert job["status"] == "done", job
    res = job["result"]
    assert res["rbd_id"] == rbd_id and res["objective"] == "availability"
    # Each block's steady availability mu/(lam+mu); the series' is their product, and
    # Birnbaum of one block is the other's availability.
    a, b = 1000 / 1010, 500 / 550
    assert abs(res["base"]["value"] - a * b) <= Z * res["base"]["std_error"] + 1e-3  # started new: small transient
    by_id = {blk["id"]: blk for blk in res["blocks"]}
    assert abs(by_id["a"]["birnbaum"] - b) <= Z * by_id["a"]["birnbaum_std_error"] + 1e-3
    assert abs(by_id["b"]["birnbaum"] - a) <= Z * by_id["b"]["birnbaum_std_error"] + 1e-3
    # b causes most downtime and gains most; its MTBF doubled: availability 1000/1010 * 1000/1050.
    assert [blk["id"] for blk in res["blocks"]] == ["b", "a"]
    w = by_id["b"]["what_if"]["mtbf_doubled"]
    exact = a * 1000 / 1050 - a * b
    assert abs(w["difference"] - exact) <= Z * w["std_error"] + 1e-3
    assert w["variance_ratio"] > 1.0
    assert by_id["b"]["share_of_downtime"] > 0.8
    assert math.isclose(by_id["a"]["share_of_cost"] + by_id["b"]["share_of_cost"], 1.0)
    assert len(res["top"]) == 3 and "b" in res["top"][0]


@pytest.mark.one_store  # results against closed forms, refusals at the door: no store-specific behaviour
async def test_interval_search_job_finds_the_age_replacement_optimum(api: Api) -> None:
    rbd_id = await created(api, age_replaced())
    status, queued = await api.post("rbd_analysis/interval_search", {
        "id": rbd_id, "blocks": ["p"], "knob": "preventive", "low": 250.0, "high": 650.0, "points": 9,
        "horizon": 50_000.0, "replications": 300, "seed": 2})
    assert status == 200, queued
    job = await poll(api, queued["job_id"])
    assert job["status"] == "done", job
    res = job["result"]
    ref = optimal_replacement("weibull", {"alpha": 1000.0, "beta": 3.0}, planned_cost=100.0, unplanned_cost=1000.0)
    lo, hi = res["optimum"]["range"]
    assert lo <= ref["optimal_time"] <= hi, (ref["optimal_time"], res["optimum"])
    assert len(res["curve"]) == 9 and res["objective"] == "cost_rate"


@pytest.mark.one_store  # results against closed forms, refusals at the door: no store-specific behaviour
async def test_refusals_name_the_field_and_queue_nothing(api: Api) -> None:
    rbd_id = await created(api, series_ab())
    age_id = await created(api, age_replaced())
    cases = [
        ("rbd_analysis/what_to_improve", {"id": rbd_id}, "horizon:"),
        ("rbd_analysis/what_to_improve", {"id": rbd_id, "mission_time": 10.0}, "mission_time:"),
        ("rbd_analysis/what_to_improve", {"id": rbd_id, "horizon": 10.0, "objective": "reliability"}, "objective:"),
        ("rbd_analysis/what_to_improve", {"id": rbd_id, "horizon": 10.0, "replications": 5}, "replications:"),
        ("rbd_analysis/what_to_improve", {"id": rbd_id, "horizon": 10.0, "blocks": ["a", "zz"]}, "blocks[1]:"),
        ("rbd_analysis/interval_search", {"id": age_id, "blocks": ["nope"], "knob": "preventive", "low": 1.0,
                                          "high": 2.0, "horizon": 10.0}, "blocks[0]:"),
        ("rbd_analysis/interval_search", {"id": age_id, "blocks": ["p"], "knob": "proof_test", "low": 1.0,
                                          "high": 2.0, "horizon": 10.0}, "blocks[0]:"),
        ("rbd_analysis/interval_search", {"id": age_id, "blocks": ["p"], "knob": "preventive", "low": 2.0,
                                          "high": 1.0, "horizon": 10.0}, "high:"),
        ("rbd_analysis/interval_search", {"id": age_id, "blocks": ["p"], "knob": "preventive", "low": 1.0,
                                          "high": 2.0, "horizon": 10.0, "target": 0.9}, "target:"),
    ]
    status, before = await api.post("list/job", {})
    assert status == 200, before
    for path, body, field in cases:
        status, refused = await api.post(path, body)
        assert 400 <= status < 500 and refused["detail"].startswith(field), (path, body, refused)
    status, after = await api.post("list/job", {})
    assert after["items"] == before["items"]


async def test_an_engine_refusal_is_a_422_naming_the_field(api: Api) -> None:
    # Python's checks accept a cost_rate objective; the engine refuses it on a diagram without
    # costs, and its error's path (not its message) puts the refusal under `objective`.
    bare = series_ab()
    for node in bare["nodes"]:
        node.pop("costs", None)
    rbd_id = await created(api, bare)
    status, refused = await api.post("rbd_analysis/what_to_improve",
                                     {"id": rbd_id, "horizon": 100.0, "objective": "cost_rate"})
    assert status == 422, refused
    assert refused["detail"] == "objective: cost_rate: the diagram has no costs (set block or diagram costs)"


async def test_a_decision_job_shows_progress_and_cancels(api: Api, config: Config) -> None:
    # A long job (quoted at minutes, every design counted): past the free plan's CPU-seconds, so the
    # owner is on the pro plan, whose limit is the service-wide one.
    await user_plan(config, "alice", "pro")
    rbd_id = await created(api, series_ab())
    status, queued = await api.post("rbd_analysis/what_to_improve",
                                    {"id": rbd_id, "horizon": 1e5, "replications": 1_000_000})
    assert status == 200, queued
    job = await poll_until(api, queued["job_id"], ("running",), lambda j: j["progress"] > 0)
    assert 0 < job["progress"] < 1
    status, out = await api.post("jobs/cancel", {"id": queued["job_id"]})
    assert status == 200 and out["status"] == "cancelled", out
    # Over the per-job limit: refused at the door, naming what to lower.
    status, refused = await api.post("rbd_analysis/what_to_improve",
                                     {"id": rbd_id, "horizon": 1e9, "replications": 1_000_000})
    assert status == 422 and refused["detail"].startswith("replications:") and "CPU-minutes" in refused["detail"]


async def test_a_decision_job_past_the_plan_is_402_and_queues_nothing(api: Api) -> None:
    rbd_id = await created(api, series_ab())
    body = {"id": rbd_id, "horizon": 1e5, "replications": 1_000_000}  # every design counted in the quote
    status, refused = await api.post("rbd_analysis/what_to_improve", body)
    assert status == 402 and refused["detail"].startswith("plan.job_cpu_seconds:"), refused
    status, jobs = await api.post("list/job", {})
    assert status == 200 and jobs["items"] == []
