"""Initial block states per analysis (`initial_states`), standby groups of non-identical
units (`units`), and the interval search's maintenance-group and SIL targets, over HTTP (SQLite
only): results against closed forms and Markov chains within the run's own
interval, refusals at the door naming the field (nothing queued, nothing stored)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from tests.conftest import Api
from tests.engine.test_standby_units import pair_chain, pair_mean_availability
from tests.service.test_rbd_decisions import created, exp_model
from tests.service.test_rbd_service import poll

# Simulation results against chains, refusals at the door: the store only saves the run (see tests/conftest.py).
pytestmark = pytest.mark.one_store


def one_block(node: dict[str, Any], repairable: bool, name: str = "one block") -> dict[str, Any]:
    nodes = [{"id": "in", "type": "input"}, node, {"id": "out", "type": "output"}]
    edges = [{"source": "in", "target": node["id"]}, {"source": node["id"], "target": "out"}]
    return {"name": name, "unit": "hours", "repairable": repairable, "nodes": nodes, "edges": edges}


def weibull(alpha: float, beta: float) -> dict[str, Any]:
    return {"distribution_id": "weibull", "params": [{"name": "alpha", "value": alpha},
                                                      {"name": "beta", "value": beta}]}


async def run(api: Api, rbd_id: str, **options: Any) -> dict[str, Any]:
    status, queued = await api.post("rbd_analysis/analyze", {"id": rbd_id, **options})
    assert status == 200, queued
    if queued["status"] == "queued":
        job = await poll(api, queued["job_id"])
        assert job["status"] == "done", job
    status, out = await api.post("get/rbd_run", {"id": queued["run_id"], "include_curve": True})
    assert status == 200, out
    return out


async def test_an_aged_exponential_block_is_as_good_as_new(api: Api) -> None:
    lam, t = 2e-3, 400.0
    rbd_id = await created(api, one_block({"id": "A", "type": "component", "model": exp_model(lam)}, False))
    fresh = await run(api, rbd_id, mission_time=t)
    aged = await run(api, rbd_id, mission_time=t, replications=20_000, seed=3, initial_states={"A": {"age": 900.0}})
    assert fresh["method"] == "closed_form" and aged["method"] == "simulation"
    assert fresh["results"]["reliability"] == math.exp(-lam * t)
    lo, hi = aged["results"]["reliability_interval"]
    assert lo <= fresh["results"]["reliability"] <= hi, (lo, hi)
    assert aged["inputs"]["initial_states"] == {"A": {"age": 900.0}} and aged["inputs_changed"] is False


async def test_an_aged_weibull_block_has_its_conditional_reliability(api: Api) -> None:
    alpha, beta, age, t = 100.0, 2.5, 60.0, 50.0
    rbd_id = await created(api, one_block({"id": "W", "type": "component", "model": weibull(alpha, beta)}, False))
    res = await run(api, rbd_id, mission_time=t, replications=20_000, seed=4, grid=6,
                    initial_states={"W": {"age": age}})
    life = stats.weibull_min(beta, scale=alpha)
    exact = life.sf(age + t) / life.sf(age)
    lo, hi = res["results"]["reliability_interval"]
    assert lo <= exact <= hi, (lo, exact, hi)
    curve = res["curve"]
    expect = life.sf(age + np.asarray(curve["t"])) / life.sf(age)
    assert np.all((np.asarray(curve["lower"]) <= expect + 1e-12) & (expect <= np.asarray(curve["upper"]) + 1e-12))


async def test_a_block_down_now_shows_the_two_state_chain_from_down(api: Api) -> None:
    """Up at t with chance mu/(lam+mu) (1 - e^{-(lam+mu) t}) when it starts in repair (exponential
    repair: how long it has been down does not matter); its mean over [0, H] accordingly."""
    lam, mu, horizon = 0.01, 0.2, 50.0
    node = {"id": "A", "type": "component", "model": exp_model(lam), "repair": exp_model(mu)}
    rbd_id = await created(api, one_block(node, True))
    res = await run(api, rbd_id, horizon=horizon, replications=20_000, seed=5, grid=6,
                    initial_states={"A": {"down": True, "since": 3.0}})
    s = lam + mu
    mean = mu / s * (1 - (1 - math.exp(-s * horizon)) / (s * horizon))
    lo, hi = res["results"]["mean_availability_interval"]
    assert lo <= mean <= hi, (lo, mean, hi)
    steady = await run(api, rbd_id, horizon=horizon, replications=2000, seed=5)
    assert steady["results"]["mean_availability"] > res["results"]["mean_availability_interval"][1]
    curve = res["curve"]
    t, a = np.asarray(curve["t"]), np.asarray(curve["availability"])
    exact = mu / s * -np.expm1(-s * t)
    se = np.sqrt(exact * (1 - exact) / 20_000)
    assert a[0] == 0.0 and np.all(np.abs(a - exact) <= 3.29 * se + 1e-4), (a, exact)


async def test_initial_states_refused_at_the_door(api: Api) -> None:
    rep = {"id": "A", "type": "component", "model": exp_model(0.01), "repair": exp_model(0.2)}
    rep_id = await created(api, one_block(rep, True))
    pm = dict(rep, id="P", preventive={"interval": 100.0})
    pm_id = await created(api, one_block(pm, True, "planned"))
    non_id = await created(api, one_block({"id": "A", "type": "component", "model": exp_model(0.01)}, False))
    sb = {"id": "S", "type": "standby", "spares": 1, "model": exp_model(0.01), "repair": exp_model(0.2)}
    sb_id = await created(api, one_block(sb, True, "standby"))
    cases = [
        (rep_id, {"horizon": 10.0}, {"zz": {"age": 1.0}}, "initial_states.zz:"),
        (rep_id, {"horizon": 10.0}, {"A": {"failed": True}}, "initial_states.A.failed:"),
        (rep_id, {"horizon": 10.0}, {"A": {"since": 2.0}}, "initial_states.A.since:"),
        (rep_id, {"horizon": 10.0}, {"A": {"down": True, "age": 2.0}}, "initial_states.A.age:"),
        (rep_id, {"horizon": 10.0}, {"A": {"age": -1.0}}, "initial_states.A.age:"),
        (rep_id, {"horizon": 10.0}, {"A": {"asleep": True}}, "initial_states.A.asleep:"),
        (rep_id, {"horizon": 10.0}, {"in": {"age": 1.0}}, "initial_states.in:"),
        (non_id, {"mission_time": 10.0}, {"A": {"down": True}}, "initial_states.A.down:"),
        (pm_id, {"horizon": 10.0}, {"P": {"age": 5.0}}, "initial_states.P:"),
        (sb_id, {"horizon": 10.0}, {"S": {"age": 5.0}}, "initial_states.S:"),
    ]
    status, jobs_before = await api.post("list/job", {})
    status, runs_before = await api.post("list/rbd_run", {})
    for rbd_id, opts, states, field in cases:
        status, refused = await api.post("rbd_analysis/analyze", {"id": rbd_id, **opts, "initial_states": states})
        assert 400 <= status < 500 and refused["detail"].startswith(field), (states, refused)
    status, refused = await api.post("rbd_analysis/what_to_improve", {"id": rep_id, "horizon": 10.0,
                                                                      "initial_states": {"zz": {"age": 1.0}}})
    assert status == 422 and refused["detail"].startswith("initial_states.zz:"), refused
    status, jobs_after = await api.post("list/job", {})
    status, runs_after = await api.post("list/rbd_run", {})
    assert jobs_after["items"] == jobs_before["items"] and runs_after["items"] == runs_before["items"]


async def test_states_are_part_of_a_run_s_inputs(api: Api) -> None:
    rbd_id = await created(api, one_block({"id": "A", "type": "component", "model": weibull(100.0, 2.0)}, False))
    a = await run(api, rbd_id, mission_time=50.0, replications=1000, seed=1, initial_states={"A": {"age": 10.0}})
    b = await run(api, rbd_id, mission_time=50.0, replications=1000, seed=1, initial_states={"A": {"age": 40.0}})
    assert a["id"] != b["id"] and a["results"]["reliability"] > b["results"]["reliability"]
    status, again = await api.post("rbd_analysis/analyze", {"id": rbd_id, "mission_time": 50.0, "replications": 1000,
                                                            "seed": 1, "initial_states": {"A": {"age": 10.0}}})
    assert status == 200 and again["cached"] is True and again["run_id"] == a["id"]


async def test_a_standby_pair_of_different_units_against_its_chain(api: Api) -> None:
    la, ma, lb, mb, horizon = 0.02, 0.1, 0.05, 0.04, 150.0
    node = {"id": "S", "type": "standby", "cold": True, "switch_back": True,
            "units": [{"model": exp_model(la), "repair": exp_model(ma), "capacity": 100.0},
                      {"model": exp_model(lb), "repair": {"distribution_id": "exponential", "mean": 1 / mb},
                       "capacity": 60.0}]}
    rbd_id = await created(api, one_block(node, True))
    res = await run(api, rbd_id, horizon=horizon, replications=20_000, seed=6)
    mean = pair_mean_availability(pair_chain(la, ma, lb, mb, switch_back=True), horizon)
    lo, hi = res["results"]["mean_availability_interval"]
    assert lo <= mean <= hi, (lo, mean, hi)
    status, got = await api.post("get/rbd", {"id": rbd_id})
    assert got["nodes"][1]["units"][1]["repair"]["params"] == [{"name": "failure_rate", "value": mb}]


async def test_units_and_spares_forms_edit_into_each_other(api: Api) -> None:
    same = {"id": "S", "type": "standby", "spares": 1, "cold": True, "model": exp_model(0.01),
            "repair": exp_model(0.1)}
    rbd_id = await created(api, one_block(same, True))
    before = await run(api, rbd_id, horizon=200.0, replications=2000, seed=7)
    unit = {"model": exp_model(0.01), "repair": exp_model(0.1)}
    status, edited = await api.post("rbd/edit", {"id": rbd_id, "ops": [{"op": "update_node", "id": "S",
                                                                        "units": [unit, unit]}]})
    assert status == 200, edited
    node = next(n for n in edited["nodes"] if n["id"] == "S")
    assert "model" not in node and "spares" not in node and len(node["units"]) == 2
    after = await run(api, rbd_id, horizon=200.0, replications=2000, seed=7)
    # Identical units given one by one draw exactly as the spares form.
    assert after["results"]["mean_availability"] == before["results"]["mean_availability"]
    status, back = await api.post("rbd/edit", {"id": rbd_id, "ops": [{"op": "update_node", "id": "S", "spares": 1,
                                                                      "model": exp_model(0.01),
                                                                      "repair": exp_model(0.1)}]})
    assert status == 200 and "units" not in next(n for n in back["nodes"] if n["id"] == "S"), back


async def test_units_refused_at_the_door(api: Api) -> None:
    u = {"model": exp_model(0.01), "repair": exp_model(0.1)}
    cases = [
        ({"spares": 1, "units": [u, u]}, "nodes.S.spares:"),
        ({"units": [u, {"model": exp_model(0.02)}]}, "nodes.S.units[1].repair:"),
        ({"units": [dict(u, capacity=5.0), u]}, "nodes.S.units[1].capacity:"),
        ({"units": [dict(u, dormancy=2.0)]}, "nodes.S.units[0].dormancy:"),
        ({"k": 3, "units": [u, u]}, "nodes.S.units:"),
        ({"units": [dict(u, colour="red")]}, "nodes.S.units[0].colour:"),
        ({"units": [{"repair": exp_model(0.1)}]}, "nodes.S.units[0].model:"),
        ({"spares": 1, **u, "switch_back": True}, "nodes.S.switch_back:"),
    ]
    status, before = await api.post("list/rbd", {})
    for extra, field in cases:
        node = {"id": "S", "type": "standby", **extra}
        status, refused = await api.post("rbd/create", one_block(node, True))
        assert status == 422 and refused["detail"].startswith(field), (extra, refused)
    status, after = await api.post("list/rbd", {})
    assert after["items"] == before["items"]


def grouped(*ids: str) -> dict[str, Any]:
    blocks = [{"id": i, "type": "component", "model": weibull(1000.0, 3.0), "instant_repair": True,
               "maintenance_group": "g", "preventive": {"policy": "age", "interval": 500.0, "cost": 100.0},
               "costs": {"replace": 1000.0}} for i in ids]
    nodes = [{"id": "in", "type": "input"}, *blocks, {"id": "out", "type": "output"}]
    chain = ["in", *ids, "out"]
    edges = [{"source": a, "target": b} for a, b in itertools.pairwise(chain)]
    return {"name": "grouped", "unit": "hours", "repairable": True, "nodes": nodes, "edges": edges,
            "maintenance_groups": {"g": {}}}


async def test_interval_search_on_a_group_and_for_a_sil(api: Api) -> None:
    rbd_id = await created(api, grouped("p"))
    common = {"id": rbd_id, "knob": "preventive", "low": 300.0, "high": 700.0, "points": 5, "horizon": 20_000.0,
              "replications": 200, "seed": 8}
    results = []
    for pick in ({"blocks": ["p"]}, {"group": "g"}):
        status, queued = await api.post("rbd_analysis/interval_search", {**common, **pick})
        assert status == 200, queued
        job = await poll(api, queued["job_id"])
        assert job["status"] == "done", job
        results.append(job["result"])
    assert results[1]["group"] == "g" and results[1]["curve"] == results[0]["curve"]
    status, refused = await api.post("rbd_analysis/interval_search", {**common, "group": "h"})
    assert status == 422 and refused["detail"].startswith("group:"), refused
    status, refused = await api.post("rbd_analysis/interval_search", {**common, "group": "g", "blocks": ["p"]})
    assert status == 422, refused
    status, refused = await api.post("rbd_analysis/interval_search", {**common, "blocks": ["p"], "target_sil": 2})
    assert status == 422 and refused["detail"].startswith("target_sil:"), refused

    lam = 1e-5
    valve = {"id": "v", "type": "component", "model": exp_model(lam), "instant_repair": True,
             "inspection": {"interval": 1000.0}}
    sif = await created(api, one_block(valve, True, "valve") | {"safety_function": True})
    body = {"id": sif, "blocks": ["v"], "knob": "proof_test", "low": 1000.0, "high": 3000.0, "points": 5,
            "horizon": 200_000.0, "replications": 200, "seed": 9}
    out = []
    for target in ({"target_sil": 2}, {"objective": "pfd_avg", "target": 0.01}):
        status, queued = await api.post("rbd_analysis/interval_search", {**body, **target})
        assert status == 200, queued
        job = await poll(api, queued["job_id"])
        assert job["status"] == "done", job
        out.append(job["result"])
    assert out[0]["target"] == 0.01 and out[0]["target_sil"] == 2
    assert out[0]["optimum"] == out[1]["optimum"] and out[0]["interval_at_target"] == out[1]["interval_at_target"]


async def test_published_schema_takes_both_standby_forms_and_initial_states(api: Api) -> None:
    """What the service accepts, the published schema accepts; a node mixing both forms is
    refused by both."""
    from tests.service.test_openapi_constraints import _validator

    status, doc = await api.get("/api/v1/openapi.json")
    assert status == 200
    create = _validator(doc, "RbdCreate")
    u = {"model": exp_model(0.01), "repair": exp_model(0.1)}
    units = one_block({"id": "S", "type": "standby", "units": [dict(u, capacity=10.0), dict(u, capacity=4.0)]}, True)
    spares = one_block({"id": "S", "type": "standby", "spares": 1, **u}, True)
    mixed = one_block({"id": "S", "type": "standby", "spares": 1, "units": [u, u]}, True)
    for body, ok in ((units, True), (spares, True), (mixed, False)):
        assert create.is_valid(body) is ok, body
        assert ((await api.post("rbd/create", body))[0] == 200) is ok
    analyze = _validator(doc, "Analyze")
    assert analyze.is_valid({"id": "rbd_x", "horizon": 5.0, "initial_states": {"S": {"down": True, "since": 1.0}}})
    assert not analyze.is_valid({"id": "rbd_x", "horizon": 5.0, "initial_states": {"S": {"since": -1.0}}})
