"""The rbd and rbd_analysis tools end to end over HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import numpy as np
from scipy import integrate

from tests.conftest import Api
from tests.rbd.helpers import FULL_REPAIRABLE

LAM, MU = 0.01, 0.1  # failures and repairs per hour


def exp_model(rate: float, **extra: Any) -> dict[str, Any]:
    return {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": rate}], **extra}


def two_of_three(repairable: bool = True) -> dict[str, Any]:
    blocks = [{"id": f"p{i}", "type": "component", "label": f"Pump {i}", "model": exp_model(LAM),
               **({"repair": exp_model(MU)} if repairable else {})} for i in (1, 2, 3)]
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
             {"id": "vote", "type": "knode", "n": 2, "k": 3}, *blocks]
    edges = [{"source": "in", "target": b["id"]} for b in blocks]
    edges += [{"source": b["id"], "target": "vote"} for b in blocks] + [{"source": "vote", "target": "out"}]
    return {"name": "2oo3 pumps", "unit": "hours", "repairable": repairable, "nodes": nodes, "edges": edges}


def a_2oo3(t: np.ndarray | float) -> np.ndarray:
    """Closed form: each unit an alternating renewal process started new, units independent;
    a(t) = mu/(lam+mu) + lam/(lam+mu) exp(-(lam+mu) t), and 2-of-3 works w.p. 3a^2 - 2a^3."""
    a = MU / (LAM + MU) + LAM / (LAM + MU) * np.exp(-(LAM + MU) * np.asarray(t, dtype=float))
    return 3 * a**2 - 2 * a**3


async def poll(api: Api, job_id: str) -> dict[str, Any]:
    for _ in range(1200):
        status, job = await api.post("get/job", {"id": job_id})
        assert status == 200, job
        if job["status"] in ("done", "failed"):
            return job
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


async def test_create_edit_analyze_poll_run_with_curve(api: Api) -> None:
    diagram = two_of_three()
    # Built as a 1-of-2 first, then edited to the 2-of-3: the edit path is part of the trip.
    diagram["nodes"] = [n for n in diagram["nodes"] if n["id"] != "p3"]
    diagram["nodes"][2] = {"id": "vote", "type": "knode", "n": 1}
    diagram["edges"] = [e for e in diagram["edges"] if "p3" not in e.values()]
    status, created = await api.post("rbd/create", diagram)
    assert status == 200, created
    rbd_id = created["id"]
    assert rbd_id.startswith("rbd_") and created["block_count"] == 2
    p3 = {"id": "p3", "type": "component", "label": "Pump 3", "model": exp_model(LAM), "repair": exp_model(MU)}
    status, edited = await api.post("rbd/edit", {"id": rbd_id, "ops": [
        {"op": "add_node", "node": p3, "parallel_to": "p2"},
        {"op": "update_node", "id": "vote", "n": 2},
    ]})
    assert status == 200, edited
    assert {"source": "in", "target": "p3"} in edited["edges"] and {"source": "p3", "target": "vote"} in edited["edges"]

    horizon = 200.0
    status, queued = await api.post("rbd_analysis/analyze", {"id": rbd_id, "horizon": horizon,
                                                             "replications": 20_000, "seed": 7, "grid": 21})
    assert status == 200, queued
    assert queued["status"] == "queued" and queued["quote"]["seconds"] > 0 and queued["run_id"].startswith("run_")
    job = await poll(api, queued["job_id"])
    assert job["status"] == "done", job
    assert job["result"]["run_id"] == queued["run_id"]

    status, run = await api.post("get/rbd_run", {"id": queued["run_id"], "include_curve": True})
    assert status == 200, run
    res = run["results"]
    lo, hi = res["mean_availability_interval"]
    # Time-average of the closed form over [0, horizon] (scipy quadrature): inside the run's own 95% interval.
    exact_mean = integrate.quad(lambda x: float(a_2oo3(x)), 0, horizon)[0] / horizon
    assert lo <= exact_mean <= hi, (lo, exact_mean, hi)
    assert hi - lo < 0.002
    curve = run["curve"]
    assert set(curve) == {"t", "availability", "lower", "upper", "interval_mean"} and len(curve["t"]) == 21
    t = np.asarray(curve["t"])
    inside = (np.asarray(curve["lower"]) <= a_2oo3(t) + 1e-12) & (a_2oo3(t) - 1e-12 <= np.asarray(curve["upper"]))
    assert inside.mean() >= 0.85, inside  # pointwise 95% bands: a few misses are expected
    # each interval's mean availability against the closed form's mean over that interval (quadrature)
    means = curve["interval_mean"]
    exact = np.array([integrate.quad(lambda x: float(a_2oo3(x)), a, b)[0] / (b - a)
                      for a, b in zip(means["start"], means["end"], strict=True)])
    inside = (np.asarray(means["lower"]) <= exact + 1e-12) & (exact - 1e-12 <= np.asarray(means["upper"]))
    assert inside.mean() >= 0.85, inside
    assert run["diagram_changed"] is False and run["inputs_changed"] is False
    assert run["inputs"]["options"]["seed"] == 7 and run["precision"]["replications"] == 20_000
    assert run["engine_version"]["engine"] and run["quote"]["replications"] == 20_000
    assert run["method"] == "simulation" and run["duration_s"] > 0
    # CPU time of the engine's threads beside wall time: some, and at most every core's for the wall time.
    assert 0 < run["cpu_s"] <= run["duration_s"] * (os.cpu_count() or 1) + 0.05

    # The same inputs answer from the stored run; recompute runs again, to the same numbers (same seed).
    status, again = await api.post("rbd_analysis/analyze", {"id": rbd_id, "horizon": horizon,
                                                            "replications": 20_000, "seed": 7, "grid": 21})
    assert status == 200 and again["cached"] is True and again["run_id"] == queued["run_id"]
    status, rerun = await api.post("rbd_analysis/analyze", {"id": rbd_id, "horizon": horizon, "replications": 20_000,
                                                            "seed": 7, "grid": 21, "recompute": True})
    assert status == 200 and rerun["cached"] is False and rerun["run_id"] != queued["run_id"]
    job2 = await poll(api, rerun["job_id"])
    assert job2["result"]["results"]["mean_availability"] == res["mean_availability"]

    # An edit after the run: the run says its diagram changed.
    await api.post("rbd/edit", {"id": rbd_id, "ops": [{"op": "update_node", "id": "p1", "repair": exp_model(0.2)}]})
    _, later = await api.post("get/rbd_run", {"id": queued["run_id"]})
    assert later["diagram_changed"] is True and later["inputs_changed"] is True and "curve" not in later

    status, runs = await api.post("list/rbd_run", {"rbd_id": rbd_id})
    assert status == 200 and [r["id"] for r in runs["items"]] == [queued["run_id"], rerun["run_id"]]
    status, listed = await api.post("list/rbd", {})
    assert status == 200 and [i["id"] for i in listed["items"]] == [rbd_id]


async def test_exact_non_repairable_answers_at_once(api: Api) -> None:
    status, created = await api.post("rbd/create", two_of_three(repairable=False))
    assert status == 200, created
    status, run = await api.post("rbd_analysis/analyze", {"id": created["id"], "mission_time": 100.0})
    assert status == 200, run
    assert run["status"] == "done" and run["method"] == "closed_form" and "job_id" not in run
    r = float(np.exp(-LAM * 100.0))
    assert abs(run["results"]["reliability"] - (3 * r**2 - 2 * r**3)) < 1e-12
    # MTTF of 2-of-3 exponential: 1/(3 lam) + 1/(2 lam) (textbook closed form).
    assert abs(run["results"]["mttf"] - (1 / (3 * LAM) + 1 / (2 * LAM))) < 1e-6 * (1 / LAM)
    status, full = await api.post("get/rbd_run", {"id": run["run_id"], "include_curve": True})
    assert status == 200 and full["curve"]["reliability"][0] == 1.0


async def test_users_cannot_see_or_run_each_others_diagrams(api: Api, other_api: Api) -> None:
    _, created = await api.post("rbd/create", two_of_three(repairable=False))
    _, run = await api.post("rbd_analysis/analyze", {"id": created["id"], "mission_time": 10.0})
    rbd_id, run_id = created["id"], run["run_id"]
    for path, body in [("get/rbd", {"id": rbd_id}),
                       ("rbd/edit", {"id": rbd_id, "ops": [{"op": "set", "name": "mine"}]}),
                       ("rbd_analysis/analyze", {"id": rbd_id, "mission_time": 10.0}),
                       ("get/rbd_run", {"id": run_id}),
                       ("list/rbd_run", {"rbd_id": rbd_id})]:
        status, body = await other_api.post(path, body)
        assert status == 404 and list(body) == ["detail"], (path, body)
    assert (await other_api.post("list/rbd", {}))[1]["items"] == []
    assert (await other_api.post("list/rbd_run", {}))[1]["items"] == []
    # Nor embed it as a subsystem of their own diagram.
    mine = {"name": "wrapper", "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
                                         {"id": "s", "type": "subsystem", "subsystem_rbd_id": rbd_id}],
            "edges": [{"source": "in", "target": "s"}, {"source": "s", "target": "out"}]}
    status, body = await other_api.post("rbd/create", mine)
    assert status == 422 and body["detail"].startswith("nodes.s.subsystem_rbd_id: no rbd with id")
    status, _ = await api.post("get/rbd", {"id": rbd_id})
    assert status == 200


async def test_edits_are_atomic(api: Api) -> None:
    _, created = await api.post("rbd/create", two_of_three())
    rbd_id = created["id"]
    _, before = await api.post("get/rbd", {"id": rbd_id})
    ops = [
        {"op": "set", "name": "renamed", "repair_crews": 1},
        {"op": "update_node", "ids": ["p1", "p2"], "label": "changed"},
        {"op": "remove_edge", "source": "p3", "target": "nowhere"},
        {"op": "update_node", "id": "p3", "label": "never"},
    ]
    status, body = await api.post("rbd/edit", {"id": rbd_id, "ops": ops})
    assert status == 422 and body["detail"] == "ops[2].target: no node 'nowhere'"
    _, after = await api.post("get/rbd", {"id": rbd_id})
    assert after == before
    # An edit made against a copy read before another edit is refused, and changes nothing.
    ok = {"id": rbd_id, "ops": [{"op": "set", "name": "first"}], "revision": before["revision"]}
    assert (await api.post("rbd/edit", ok))[0] == 200
    stale = {"id": rbd_id, "ops": [{"op": "update_node", "id": "p1", "model": exp_model(0.5)}],
             "revision": before["revision"]}
    status, body = await api.post("rbd/edit", stale)
    assert status == 422 and body["detail"].startswith("revision: the diagram changed since you read it")
    _, now = await api.post("get/rbd", {"id": rbd_id})
    assert now["name"] == "first" and now["nodes"][3]["model"] == before["nodes"][3]["model"]


async def test_bad_diagrams_are_refused_naming_node_and_field(api: Api) -> None:
    bad = two_of_three()
    bad["nodes"][3]["model"] = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": 100},
                                                                        {"name": "beta", "value": -1}]}
    status, body = await api.post("rbd/create", bad)
    assert status == 422 and body["detail"].startswith("nodes.p1.model.params.beta:"), body
    bad = two_of_three()
    del bad["nodes"][4]["repair"]
    status, body = await api.post("rbd/create", bad)
    assert status == 422 and body["detail"].startswith("nodes.p2.repair: required"), body
    bad = two_of_three()
    bad["nodes"][2]["n"] = 4
    status, body = await api.post("rbd/create", bad)
    assert status == 422 and body["detail"].startswith("nodes.vote.n:"), body
    # Maintenance fields reach the engine, which checks them too, naming node and field.
    _, created = await api.post("rbd/create", two_of_three())
    status, _ = await api.post("rbd/edit", {"id": created["id"], "ops": [
        {"op": "update_node", "id": "p2", "preventive": {"policy": "age", "interval": 500}}]})
    assert status == 200
    status, body = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": 10.0})
    assert status == 200 and body["status"] == "queued", body
    _, got = await api.post("get/rbd", {"id": created["id"]})
    assert got["nodes"][4]["preventive"] == {"policy": "age", "interval": 500.0}


async def test_saved_models_and_placeholders(api: Api) -> None:
    _, ds = await api.post("datasets/create", {"name": "lives", "data": {"t": [120.0, 340, 560, 700, 910, 1300]}})
    _, model = await api.post("fit/life", {"name": "w", "dataset_id": ds["id"], "distribution": "weibull",
                                           "mapping": {"x": "t"}, "unit": "hours"})
    _, km = await api.post("fit/life", {"name": "km", "dataset_id": ds["id"], "distribution": "kaplan_meier",
                                        "mapping": {"x": "t"}})
    _, record = await api.post("get/model", {"id": model["id"]})
    params = {p["name"]: p["value"] for p in record["params"]}
    stages = [{"label": "Drive", "components": [{"label": "Motor", "model_id": model["id"]}]},
              {"label": "Seal", "components": [{"label": "Seal", "distribution": "exponential",
                                                "params": [{"name": "failure_rate", "value": 0.001}],
                                                "placeholder": True}]}]
    status, created = await api.post("rbd/create", {"name": "drive", "unit": "hours", "stages": stages})
    assert status == 200, created
    assert created["placeholders"] == ["seal"] and created["nodes"][-1]["placeholder"] is True
    status, run = await api.post("rbd_analysis/analyze", {"id": created["id"], "mission_time": 500.0})
    assert status == 200 and run["method"] == "closed_form" and run["placeholders"] == ["seal"]
    expected = np.exp(-((500.0 / params["alpha"]) ** params["beta"])) * np.exp(-0.5)
    assert abs(run["results"]["reliability"] - expected) < 1e-12
    stages[0]["components"][0]["model_id"] = km["id"]
    status, body = await api.post("rbd/create", {"name": "np", "stages": stages})
    assert status == 422 and "nodes.motor.model.saved_model_id" in body["detail"] and "non-parametric" in body["detail"]


async def test_subsystems_embed_saved_diagrams_and_cycles_are_refused(api: Api) -> None:
    inner = two_of_three(repairable=False)
    _, made = await api.post("rbd/create", {**inner, "name": "pumps"})
    outer = {"name": "plant", "unit": "hours",
             "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
                       {"id": "pumps", "type": "subsystem", "subsystem_rbd_id": made["id"]},
                       {"id": "valve", "type": "component", "model": exp_model(0.002)}],
             "edges": [{"source": "in", "target": "pumps"}, {"source": "pumps", "target": "valve"},
                       {"source": "valve", "target": "out"}]}
    status, plant = await api.post("rbd/create", outer)
    assert status == 200, plant
    _, got = await api.post("get/rbd", {"id": plant["id"]})
    assert got["nodes"][2]["subsystem_name"] == "pumps"
    status, run = await api.post("rbd_analysis/analyze", {"id": plant["id"], "mission_time": 50.0})
    assert status == 200 and run["method"] == "closed_form"
    r = float(np.exp(-LAM * 50.0))
    assert abs(run["results"]["reliability"] - (3 * r**2 - 2 * r**3) * np.exp(-0.002 * 50.0)) < 1e-12
    # The inner diagram may not embed the plant that embeds it.
    status, body = await api.post("rbd/edit", {"id": made["id"], "ops": [
        {"op": "add_node", "node": {"id": "loop", "type": "subsystem", "subsystem_rbd_id": plant["id"]},
         "between": ["vote", "out"]}]})
    assert status == 422 and body["detail"].startswith(
        "nodes.loop.subsystem.nodes.pumps.subsystem_rbd_id: embeds a cycle of diagrams"), body
    _, still = await api.post("get/rbd", {"id": made["id"]})
    assert [n["id"] for n in still["nodes"]] == [n["id"] for n in inner["nodes"]]
    # Editing the inner diagram changes the plant's inputs, not the plant's own body.
    await api.post("rbd/edit", {"id": made["id"], "ops": [{"op": "update_node", "id": "p1",
                                                          "model": exp_model(0.02)}]})
    _, old = await api.post("get/rbd_run", {"id": run["run_id"]})
    assert old["diagram_changed"] is False and old["inputs_changed"] is True


async def test_analysis_refusals_and_options(api: Api) -> None:
    _, made = await api.post("rbd/create", two_of_three())
    for body, detail in [
        ({"mission_time": 5.0}, "mission_time: a repairable diagram is analysed over a horizon: give horizon"),
        ({}, "horizon: required for a repairable diagram (time span in the diagram unit)"),
        ({"horizon": 10.0, "replications": 10, "precision": 0.1},
         "precision: give replications or precision, not both"),
        ({"horizon": -1.0}, "horizon: must be > 0"),
    ]:
        status, out = await api.post("rbd_analysis/analyze", {"id": made["id"], **body})
        assert status == 422 and out["detail"] == detail, out
    await api.post("rbd/edit", {"id": made["id"], "ops": [{"op": "set", "safety_function": True, "target_sil": 2}]})
    status, out = await api.post("rbd_analysis/analyze", {"id": made["id"], "horizon": 10.0})
    assert status == 200 and out["status"] == "queued", out  # safety functions are simulated (PFD, SIL)
    await api.post("rbd/edit", {"id": made["id"], "ops": [{"op": "set", "safety_function": False, "target_sil": 0}]})
    # Precision mode: runs until the relative half-width of unavailability is reached.
    status, queued = await api.post("rbd_analysis/analyze", {"id": made["id"], "horizon": 100, "precision": 0.1,
                                                             "max_replications": 200_000})
    assert status == 200 and queued["quote"]["replications"] == 200_000
    job = await poll(api, queued["job_id"])
    precision = job["result"]["precision"]
    assert precision["target"] == 0.1 and precision["target_reached"] is True
    assert precision["relative_half_width"] <= 0.1


async def test_lists_page_oldest_first(api: Api) -> None:
    ids = [(await api.post("rbd/create", {**two_of_three(), "name": f"d{i}"}))[1]["id"] for i in range(3)]
    status, first = await api.post("list/rbd", {"limit": 2})
    assert status == 200 and [i["id"] for i in first["items"]] == ids[:2] and first["next_offset"] == 2
    _, rest = await api.post("list/rbd", {"limit": 2, "offset": 2})
    assert [i["id"] for i in rest["items"]] == ids[2:] and rest["next_offset"] is None
    assert first["items"][0]["block_count"] == 3 and first["items"][0]["repairable"] is True


async def test_tool_protocol_builds_and_refuses_like_rest(api: Api) -> None:
    async def rpc(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        status, body = await api.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                               "params": {"name": name, "arguments": arguments}})
        assert status == 200 and "result" in body, body
        return body["result"]

    made = await rpc("rbd", {"action": "create", **two_of_three(repairable=False)})
    assert made["isError"] is False
    rbd_id = made["structuredContent"]["id"]
    rest = (await api.post("get/rbd", {"id": rbd_id}))[1]
    got = await rpc("get", {"kind": "rbd", "id": rbd_id})
    assert got["structuredContent"] == rest
    bad_ops = [{"op": "remove_node", "id": "in"}]
    refused = await rpc("rbd", {"action": "edit", "id": rbd_id, "ops": bad_ops})
    status, body = await api.post("rbd/edit", {"id": rbd_id, "ops": bad_ops})
    assert refused["isError"] is True and refused["structuredContent"] == {"detail": body["detail"], "status": status}
    assert body["detail"] == "ops[0].id: the input node cannot be removed"


async def test_every_spec_field_round_trips_through_create_edit_get(api: Api) -> None:
    # Every field of the full diagram, in the combinations the engine runs (a stored diagram
    # must analyse): common cause on two components, a capacity on every path; phases and the
    # network mode in a non-repairable diagram of their own.
    full = {k: v for k, v in FULL_REPAIRABLE.items() if k not in ("phases", "network")}
    full["ccf"] = [{"id": "pumps", "members": ["a", "b"], "beta": 0.1, "basis": "probability"}]
    full["nodes"] = [{**n, "capacity": 60.0} if n["id"] == "s" else n for n in full["nodes"]]
    phased = {"name": "phased", "unit": "hours", "repairable": False, "nodes": [
        {"id": "in", "type": "input"}, {"id": "out", "type": "output"},
        *({"id": x, "type": "component", "model": exp_model(0.01)} for x in "abc")],
        "edges": [{"source": s, "target": t} for s, t in (("in", "a"), ("a", "b"), ("a", "c"), ("b", "out"),
                                                          ("c", "out"))],
        "ccf": [],
        "phases": [{"name": "start", "duration": 10.0, "not_needed": ["b"]}, {"name": "run", "duration": 1000.0}],
        "network": {"source": "in", "target": "out"}}
    settings = ("maintenance_groups", "safety_function", "target_sil", "costs", "production", "phases", "network")
    for d, run in ((full, {"horizon": 87600.0, "replications": 20}), (phased, {"mission_time": 1010.0})):
        status, made = await api.post("rbd/create", d)
        assert status == 200, made
        status, edited = await api.post("rbd/edit", {"id": made["id"], "ops": [
            {"op": "set", **{k: d[k] for k in settings if k in d}},
            *({"op": "remove_ccf", "id": g["id"]} for g in d["ccf"]),
            *({"op": "add_ccf", **g} for g in d["ccf"]),
        ]})
        assert status == 200, edited
        _, got = await api.post("get/rbd", {"id": made["id"]})
        for key, value in d.items():
            assert got[key] == value, key
        status, body = await api.post("rbd_analysis/analyze", {"id": made["id"], **run})
        assert status == 200, body
