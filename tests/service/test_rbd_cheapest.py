"""rbd_analysis cheapest_design over HTTP: the exhaustive answer
on a small space against one computed here independently, a heuristic on a larger space,
refusals at the door naming the field (queueing nothing), progress and cancel."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest
from scipy import integrate, stats

from bathtub_api.cli import user_plan
from bathtub_api.config import Config
from tests.conftest import Api
from tests.service.test_job_control import poll as poll_until
from tests.service.test_rbd_decisions import created, exp_model
from tests.service.test_rbd_service import poll

HORIZON = 20_000.0
# Three repairable blocks in series: (failure rate, repair rate).
RATES = {"a": (1e-3, 0.1), "b": (2e-3, 0.05), "c": (5e-4, 0.02)}
# Per block: one unit, 1-of-2 active, 2-of-3 active, with capital costs per block.
ARRANGEMENTS = [(1, 1), (2, 1), (3, 2)]
COSTS = {"a": [10.0, 22.0, 30.0], "b": [8.0, 15.0, 21.0], "c": [12.0, 20.0, 33.0]}


def series(rates: dict[str, tuple[float, float]]) -> dict[str, Any]:
    blocks = [{"id": b, "type": "component", "model": exp_model(lam), "repair": exp_model(mu)}
              for b, (lam, mu) in rates.items()]
    ids = ["in", *rates, "out"]
    return {"name": "series", "unit": "hours", "repairable": True,
            "nodes": [{"id": "in", "type": "input"}, *blocks, {"id": "out", "type": "output"}],
            "edges": [{"source": s, "target": t} for s, t in itertools.pairwise(ids)]}


def options(costs: dict[str, list[float]]) -> dict[str, list[dict[str, Any]]]:
    return {b: [{"name": f"{k}oo{n}", "cost": c, "units": n, "required": k}
                for (n, k), c in zip(ARRANGEMENTS, cs, strict=True)] for b, cs in costs.items()}


def time_average(design: tuple[int, ...]) -> float:
    """Independent: each unit A(t) = mu/(l+mu) + l/(l+mu) exp(-(l+mu) t) (two-state Markov
    unit started up), k of n units by the binomial tail, blocks in series; averaged over the
    horizon by adaptive quadrature."""

    def system(t: float) -> float:
        out = 1.0
        for (lam, mu), i in zip(RATES.values(), design, strict=True):
            n, k = ARRANGEMENTS[i]
            a = mu / (lam + mu) + lam / (lam + mu) * math.exp(-(lam + mu) * t)
            out *= float(stats.binom.sf(k - 1, n, a))
        return out

    value, _ = integrate.quad(system, 0.0, HORIZON, limit=500, points=[10.0, 100.0, 1000.0])
    return value / HORIZON


@pytest.mark.one_store  # results against closed forms, refusals at the door: no store-specific behaviour
async def test_the_exhaustive_answer_on_a_small_space_matches_an_independent_one(api: Api) -> None:
    rbd_id = await created(api, series(RATES))
    target = 0.996  # four designs meet it; the next best, 0.99499, clearly misses
    status, queued = await api.post("rbd_analysis/cheapest_design", {
        "id": rbd_id, "options": options(COSTS), "target": {"figure": "availability", "value": target},
        "horizon": HORIZON, "replications": 1000, "seed": 5})
    assert status == 200, queued
    assert queued["status"] == "queued" and queued["quote"]["search"]["method"] == "exact"
    job = await poll(api, queued["job_id"])
    assert job["status"] == "done", job
    res = job["result"]
    # Every one of the 27 designs here: the cheapest whose availability meets the target.
    designs = list(itertools.product(range(3), repeat=3))
    value = {d: time_average(d) for d in designs}
    cost = {d: sum(COSTS[b][i] for b, i in zip(RATES, d, strict=True)) for d in designs}
    meeting = sorted((d for d in designs if value[d] >= target), key=lambda d: (cost[d], -value[d]))
    best = meeting[0]
    assert len(meeting) == 4
    assert res["method"] == "exact" and res["space"] == {"designs": 27, "enumerated": 27, "pruned": 23,
                                                         "simulated": 4}
    win = res["winner"]
    assert tuple(c["option"] for c in win["choices"]) == best and win["cost"] == cost[best]
    assert [tuple(c["option"] for c in d["choices"]) for d in res["designs"]] == meeting[:5]
    for d in res["designs"]:
        key = tuple(c["option"] for c in d["choices"])
        assert math.isclose(d["closed_form"], value[key], rel_tol=0, abs_tol=1e-9)
    lo, hi = win["interval"]
    assert lo <= value[best] <= hi, (win, value[best])
    assert win["meets_target"] is (win["value"] >= target)
    assert res["designs"][1]["versus_winner"]["variance_ratio"] > 1.0


@pytest.mark.one_store  # results against closed forms, refusals at the door: no store-specific behaviour
async def test_a_heuristic_on_a_larger_space_meets_the_target_and_says_so(api: Api, monkeypatch: Any) -> None:
    from bathtub.rbd import cheapest

    monkeypatch.setattr(cheapest, "EXACT_BUDGET", 1000)  # 6^3 designs x 152 quadrature nodes: over it
    rbd_id = await created(api, series(RATES))
    opts = {b: [{"cost": 10.0 * n + 2.0 * k, "units": n, "required": k} for n in (1, 2, 3) for k in range(1, n + 1)]
            for b in RATES}
    status, queued = await api.post("rbd_analysis/cheapest_design", {
        "id": rbd_id, "options": opts, "target": {"figure": "availability", "value": 0.999}, "horizon": HORIZON,
        "replications": 500, "seed": 2, "top": 3})
    assert status == 200, queued
    job = await poll(api, queued["job_id"])
    assert job["status"] == "done", job
    res = job["result"]
    assert res["method"] == "heuristic" and "heuristic" in res["method_description"]
    win = res["winner"]
    assert win["closed_form"] >= 0.999 and win["meets_target_with_confidence"], win
    assert res["space"]["designs"] == 216 and res["space"]["enumerated"] < 216


@pytest.mark.one_store  # results against closed forms, refusals at the door: no store-specific behaviour
async def test_refusals_name_the_field_and_queue_nothing(api: Api) -> None:
    rbd_id = await created(api, series(RATES))
    ok = {"id": rbd_id, "options": options(COSTS), "target": {"figure": "availability", "value": 0.99},
          "horizon": HORIZON}
    cases = [
        ({**ok, "options": {"zz": [{"cost": 1.0}]}}, "options.zz:"),
        ({**ok, "options": {"in": [{"cost": 1.0}]}}, "options.in[0]:"),
        ({**ok, "options": {"a": [{"cost": 1.0, "units": 2, "required": 3}]}}, "options.a[0].required:"),
        ({**ok, "options": {"a": [{"cost": 1.0, "units": 2, "spares": 1}]}}, "options.a[0].units:"),
        ({**ok, "options": {"a": [{"cost": 1.0, "dormancy": 0.5}]}}, "options.a[0].dormancy:"),
        ({**ok, "options": {"a": [{"cost": 1.0, "model": {"distribution_id": "weibull", "params": [1.0]}}]}},
         "options.a[0].model"),
        ({**ok, "options": {"a": [{"cost": 1.0, "model": {"saved_model_id": "mdl_nope"}}]}},
         "options.a[0].model.saved_model_id:"),
        ({**ok, "options": {"a": [{"cost": 1.0}, {"cost": 2.0, "name": "x"}, {"cost": 3.0, "name": "x"}]}},
         "options.a[2].name:"),
        ({**ok, "target": {"figure": "reliability", "value": 0.9}}, "target.figure:"),
        ({**ok, "target": {"figure": "sil", "value": 2}}, "target.figure:"),
        ({**ok, "target": {"figure": "availability", "value": 1.5}}, "target.value:"),
        ({**ok, "horizon": None, "mission_time": 10.0}, "mission_time:"),
        ({**ok, "options": {"a": [{"cost": -1.0}]}}, "options.a.0.cost"),
    ]
    status, before = await api.post("list/job", {})
    assert status == 200, before
    for body, field in cases:
        status, refused = await api.post("rbd_analysis/cheapest_design", body)
        assert 400 <= status < 500 and refused["detail"].startswith(field), (body, refused)
    status, after = await api.post("list/job", {})
    assert after["items"] == before["items"]


@pytest.mark.one_store  # results against closed forms, refusals at the door: no store-specific behaviour
async def test_a_space_too_large_for_the_quote_is_refused_naming_options(api: Api) -> None:
    # Weibull lives under repair: no closed form, and 20^3 designs: the greedy search by
    # simulation may run thousands of designs, each within the limit alone.
    diagram = series(RATES)
    for node in diagram["nodes"]:
        if "model" in node:
            node["model"] = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": 900.0},
                                                                      {"name": "beta", "value": 2.0}]}
    rbd_id = await created(api, diagram)
    opts = {b: [{"cost": float(i), "name": f"o{i}", "model": {"distribution_id": "weibull", "params": [
        {"name": "alpha", "value": 900.0 + 100.0 * i}, {"name": "beta", "value": 2.0}]}} for i in range(20)]
        for b in RATES}
    status, before = await api.post("list/job", {})
    status, refused = await api.post("rbd_analysis/cheapest_design", {
        "id": rbd_id, "options": opts, "target": {"figure": "availability", "value": 0.99}, "horizon": 1e5})
    assert status == 422 and refused["detail"].startswith("options:"), refused
    assert "8,000 designs" in refused["detail"] and "heuristic" in refused["detail"]
    status, after = await api.post("list/job", {})
    assert after["items"] == before["items"]


async def test_a_cheapest_design_job_shows_progress_and_cancels(api: Api, config: Config) -> None:
    await user_plan(config, "alice", "pro")
    rbd_id = await created(api, series(RATES))
    status, queued = await api.post("rbd_analysis/cheapest_design", {
        "id": rbd_id, "options": options(COSTS), "target": {"figure": "availability", "value": 0.99},
        "horizon": 1e5, "replications": 100_000})
    assert status == 200, queued
    job = await poll_until(api, queued["job_id"], ("running",), lambda j: j["progress"] > 0)
    assert 0 < job["progress"] < 1
    status, out = await api.post("jobs/cancel", {"id": queued["job_id"]})
    assert status == 200 and out["status"] == "cancelled", out
    # Over the per-job limit: refused at the door, naming what to lower.
    status, refused = await api.post("rbd_analysis/cheapest_design", {
        "id": rbd_id, "options": options(COSTS), "target": {"figure": "availability", "value": 0.99},
        "horizon": 1e9, "replications": 1_000_000})
    assert status == 422 and refused["detail"].startswith("replications:") and "CPU-minutes" in refused["detail"]

