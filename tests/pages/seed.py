"""One item of every shareable kind, made through the API (the same calls a user makes), for the
page tests. `post(path, body) -> (status, json)` is any client bound to a read-write token."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

Post = Callable[[str, Any], Awaitable[tuple[int, Any]]]

# Bearing lives (hours), two suspensions: the life model's data.
# 339.25: a stored value the dataset page must show whole (4 significant digits would read 339.2)
LIVES = [16.0, 34.0, 53.0, 75.0, 93.0, 120.0, 150.0, 191.0, 240.0, 339.25]
CENSORED = [0, 0, 0, 0, 0, 0, 1, 0, 1, 0]
LAM, MU = 1e-3, 0.05  # pump failure and repair rates (per hour) of the 2-of-3 diagram
# Crow-AMSAA data (reliability's system_growth(): MIL-HDBK-189C's example).
GROWTH = [2.7, 10.3, 12.5, 30.6, 57.0, 61.3, 80.0, 109.5, 125.0, 128.6, 143.8, 167.9, 229.2, 296.7, 320.6, 328.2,
          366.2, 396.7, 421.1, 438.2, 501.2, 620.0]
CRACK_SLOPES = [0.10, 0.13, 0.16, 0.19, 0.22]
CRACK_TIMES = [0.0, 50.0, 100.0, 150.0, 200.0, 250.0]
# Tracked items' crack lengths (item, hours, length): T1 and T2 each on a path of its own, T3 once.
TRACKED = [("T1", 0.0, 1.0), ("T1", 100.0, 14.0), ("T1", 200.0, 27.5), ("T2", 0.0, 1.2), ("T2", 100.0, 21.0),
           ("T2", 200.0, 40.0), ("T3", 120.0, 16.0)]


async def ok(post: Post, path: str, body: Any) -> dict[str, Any]:
    status, out = await post(path, body)
    assert status == 200, (path, out)
    return out


def exp_block(rate: float) -> dict[str, Any]:
    return {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": rate}]}


def two_of_three() -> dict[str, Any]:
    blocks = [{"id": f"p{i}", "type": "component", "label": f"Pump {i}", "model": exp_block(LAM),
               "repair": exp_block(MU)} for i in (1, 2, 3)]
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
             {"id": "vote", "type": "knode", "n": 2, "k": 3}, *blocks]
    edges = [{"source": "in", "target": b["id"]} for b in blocks]
    edges += [{"source": b["id"], "target": "vote"} for b in blocks] + [{"source": "vote", "target": "out"}]
    return {"name": "2oo3 pumps", "unit": "hours", "repairable": True, "nodes": nodes, "edges": edges}


async def finished(post: Post, job_id: str) -> dict[str, Any]:
    """The job once it has run (asserted done), polled every 50 ms for up to 2 minutes."""
    for _ in range(2400):
        job = await ok(post, "/api/v1/get/job", {"id": job_id})
        if job["status"] in ("done", "failed"):
            break
        await asyncio.sleep(0.05)
    assert job["status"] == "done", job
    return job


async def seed(post: Post) -> dict[str, str]:
    """Kind -> id of one item each (recurrent_model is a model of kind recurrent)."""
    ids: dict[str, str] = {}
    ds = await ok(post, "/api/v1/datasets/create", {"name": "bearing lives", "notes": "test rig B, 2026",
                                                     "data": {"hours": LIVES, "censored": CENSORED}})
    ids["dataset"] = ds["id"]
    fit = await ok(post, "/api/v1/fit", {"name": "bearing life", "dataset_id": ds["id"], "distribution": "weibull",
                                         "mapping": {"x": "hours", "c": "censored"}, "unit": "hours"})
    ids["model"] = fit["id"]
    growth = await ok(post, "/api/v1/datasets/create", {"name": "prototype failures", "data": {"t": GROWTH}})
    rec = await ok(post, "/api/v1/fit", {"name": "prototype growth", "dataset_id": growth["id"],
                                         "distribution": "crow_amsaa", "mapping": {"t": "t"}, "unit": "hours"})
    ids["recurrent_model"] = rec["id"]
    cols: dict[str, list[Any]] = {"unit": [], "hours": [], "crack": []}
    for k, b in enumerate(CRACK_SLOPES):
        for j, t in enumerate(CRACK_TIMES):
            cols["unit"].append(f"U{k}")
            cols["hours"].append(t)
            cols["crack"].append(1.0 + b * t + 0.2 * ((j * 7 + k * 3) % 5 - 2))
    cracks = await ok(post, "/api/v1/datasets/create", {"name": "crack lengths", "data": cols})
    deg = await ok(post, "/api/v1/degradation/create", {
        "name": "crack growth", "dataset_id": cracks["id"], "mapping": {"i": "unit", "x": "hours", "y": "crack"},
        "path": "linear", "threshold": 50.0, "direction": "up", "model": "pseudo_failure",
        "life_distribution": "lognormal", "unit": "hours"})
    ids["degradation_model"] = deg["id"]
    # a tracked fleet on that model: two items with paths of their own, one with one measurement
    # (the population's life), one not measured yet
    tracked = await ok(post, "/api/v1/tracked_fleets/create", {
        "name": "crack watch", "model_id": deg["id"], "items": [{"name": n} for n in ("T1", "T2", "T3", "T4")]})
    await ok(post, f"/api/ingest/tracking/{tracked['id']}/measurements", {"measurements": [
        {"item": item, "time": t, "value": v} for item, t, v in TRACKED]})
    ids["tracked_fleet"] = tracked["id"]
    # the same bearing lives, all failures: a complete sample, so the fit carries the
    # Anderson–Darling test with its p-value
    exact = await ok(post, "/api/v1/datasets/create", {"name": "bearing lives, run to failure",
                                                        "data": {"hours": LIVES}})
    ids["model_exact"] = (await ok(post, "/api/v1/fit", {
        "name": "bearing life (complete)", "dataset_id": exact["id"], "distribution": "lognormal",
        "mapping": {"x": "hours"}, "unit": "hours"}))["id"]
    sa = await ok(post, "/api/v1/strategy/optimal_replacement", {
        "distribution_id": "weibull", "params": [{"name": "alpha", "value": 1000.0}, {"name": "beta", "value": 2.5}],
        "planned_cost": 1.0, "unplanned_cost": 10.0, "currency": "EUR", "unit": "hours", "save": True,
        "name": "pump bearing replacement"})
    ids["strategy_analysis"] = sa["analysis_id"]
    rbd = await ok(post, "/api/v1/rbd/create", two_of_three())
    ids["rbd"] = rbd["id"]
    queued = await ok(post, "/api/v1/rbd_analysis/analyze", {"id": rbd["id"], "horizon": 200.0,
                                                              "replications": 20_000, "seed": 7, "grid": 21})
    await finished(post, queued["job_id"])
    ids["rbd_run"] = queued["run_id"]
    life = await ok(post, "/api/import/models", {"name": "pump life", "distribution": "exponential", "unit": "hours",
                                                 "params": [{"name": "failure_rate", "value": 1e-3}]})
    fleet = await ok(post, "/api/v1/fleets/create", {
        "name": "pumps", "model_id": life["id"], "period_label": "months", "periods": 6, "default_rate": 50.0,
        "items": [{"name": f"P{i}", "current_use": 100.0 * i, "rate": 100.0} for i in range(1, 11)]})
    ids["fleet"] = fleet["id"]
    study = await ok(post, "/api/v1/rcm/create", {"name": "cooling water pumps", "functions": [{
        "text": "Deliver 200 m3/h of cooling water", "standard": "at least 200 m3/h at 4 bar",
        "failures": [{"text": "No flow", "modes": [
            {"text": "Bearing seizes", "effects": "pump stops; standby starts", "consequence": "operational",
             "decision": {"outcome": "fixed_interval", "task": "replace bearing", "interval": 360,
                          "interval_unit": "hours", "evidence": {"type": "strategy_analysis",
                                                                 "id": sa["analysis_id"]}}},
            {"text": "Impeller <cracks>", "consequence": "non_operational",
             "decision": {"outcome": "rtf", "rtf_basis": "random", "evidence": {"type": "model", "id": fit["id"]}}},
        ]}]}]})
    ids["rcm_study"] = study["id"]
    return ids


# ---- the rest of an engineer's kinds (issue 28): Cox on Rossi, ALT, growth on three systems,
# failure finding, a 2-of-3 with preventive maintenance and costs and its run -------------------
ROSSI_COLS = ["fin", "age", "race", "wexp", "mar", "paro", "prio"]
# Three systems' failure times (hours) and where each stopped being observed.
SYSTEMS = {"S1": ([35.0, 110.0, 230.0, 410.0, 640.0], 700.0), "S2": ([60.0, 150.0, 320.0, 560.0], 650.0),
           "S3": ([20.0, 90.0, 200.0, 380.0, 520.0, 690.0], 720.0)}


def pm_two_of_three(life_id: str) -> dict[str, Any]:
    """The 2-of-3 pumps with a block PM every 100 h lasting 4 h on each, and costs; pump 1's life is
    the saved model `life_id` (its page must name it, not show its id)."""
    d = two_of_three()
    d["name"] = "2oo3 pumps with PM"
    d["currency"] = "EUR"
    for n in d["nodes"]:
        if n["id"] == "p1":
            n["model"] = {"saved_model_id": life_id}
        if n["type"] == "component":
            n["preventive"] = {"policy": "block", "interval": 100.0, "duration": 4.0, "cost": 50.0}
            n["costs"] = {"repair": 200.0}
    return d


async def seed_more(post: Post) -> dict[str, str]:
    """Kind-like name -> (share kind, id) of the items seed() lacks."""
    from lifelines.datasets import load_rossi
    from reliability.Datasets import ALT_temperature

    out: dict[str, str] = {}
    rossi = load_rossi()
    data = {k: rossi[k].tolist() for k in rossi.columns}
    data["state"] = ["F" if a == 1 else "S" for a in data["arrest"]]
    ds = await ok(post, "/api/v1/datasets/create", {"name": "rossi", "data": data})
    cox = await ok(post, "/api/v1/fit", {"name": "rossi cox", "dataset_id": ds["id"], "distribution": "cox",
                                         "mapping": {"x": "week", "c": "state"}, "covariates": ROSSI_COLS,
                                         "unit": "weeks"})
    out["cox"] = cox["id"]
    alt = ALT_temperature()
    rows = [(t, "F", s) for t, s in zip(alt.failures, alt.failure_stresses)] + \
           [(t, "S", s) for t, s in zip(alt.right_censored, alt.right_censored_stresses)]
    ds = await ok(post, "/api/v1/datasets/create", {"name": "alt temperature", "data": {
        "time": [r[0] for r in rows], "state": [r[1] for r in rows], "temp": [r[2] for r in rows]}})
    fit = await ok(post, "/api/v1/fit", {"name": "capacitor ALT", "dataset_id": ds["id"],
                                         "distribution": "weibull_arrhenius", "unit": "hours",
                                         "mapping": {"x": "time", "c": "state", "stress": "temp"},
                                         "options": {"use_stress": 30.0}})
    out["alt"] = fit["id"]
    cols: dict[str, list[Any]] = {"t": [], "unit": [], "end": []}
    for name, (times, end) in SYSTEMS.items():
        for t in times:
            cols["t"].append(t)
            cols["unit"].append(name)
            cols["end"].append(end)
    ds = await ok(post, "/api/v1/datasets/create", {"name": "three systems", "data": cols})
    growth = await ok(post, "/api/v1/fit", {"name": "three-system growth", "dataset_id": ds["id"],
                                            "distribution": "crow_amsaa", "unit": "hours",
                                            "mapping": {"t": "t", "system": "unit", "end": "end"}})
    out["growth3"] = growth["id"]
    ff = await ok(post, "/api/v1/strategy/failure_finding", {
        "distribution_id": "exponential", "params": [{"name": "failure_rate", "value": 1e-4}],
        "target_availability": 0.99, "unit": "hours", "save": True, "name": "relief valve proof test"})
    out["failure_finding"] = ff["analysis_id"]
    life = await ok(post, "/api/import/models", {"name": "pump 1 life (vendor data)", "distribution": "exponential",
                                                 "unit": "hours", "params": [{"name": "failure_rate", "value": 1e-3}]})
    rbd = await ok(post, "/api/v1/rbd/create", pm_two_of_three(life["id"]))
    out["rbd_pm"] = rbd["id"]
    queued = await ok(post, "/api/v1/rbd_analysis/analyze", {"id": rbd["id"], "horizon": 1000.0,
                                                              "replications": 4000, "seed": 11, "grid": 41})
    await finished(post, queued["job_id"])
    out["rbd_pm_run"] = queued["run_id"]
    # a pump whose life was fitted from eight failures: the run carries the fit's uncertainty
    ds = await ok(post, "/api/v1/datasets/create", {"name": "pump lives", "data": {
        "t": [120.0, 340, 560, 700, 910, 1300, 1500, 1720]}})
    fitted = await ok(post, "/api/v1/fit/life", {"name": "pump life (eight failures)", "dataset_id": ds["id"],
                                                 "distribution": "weibull", "mapping": {"x": "t"}, "unit": "hours"})
    d = two_of_three()
    d["name"] = "3oo3 pumps, fitted"
    d["nodes"][2]["n"] = 3  # all three needed: pump 1's life moves the availability
    d["nodes"][3]["model"] = {"saved_model_id": fitted["id"]}
    rbd = await ok(post, "/api/v1/rbd/create", d)
    queued = await ok(post, "/api/v1/rbd_analysis/analyze", {"id": rbd["id"], "horizon": 1000.0, "replications": 1000,
                                                              "seed": 5, "grid": 21, "uncertainty": "parameters",
                                                              "draws": 30, "replications_per_draw": 200})
    await finished(post, queued["job_id"])
    out["rbd_unc_run"] = queued["run_id"]
    return out
