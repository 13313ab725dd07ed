"""rbd_analysis analyze with variance_reduction over HTTP: the run record says the method and the
factor achieved, the reduced interval holds the closed form, and the option is refused (422 naming
it) where it does not apply."""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from scipy import integrate

from tests.conftest import Api
from tests.service.test_rbd_service import poll

LAM, MU, HORIZON = 0.01, 0.2, 500.0


def exp_model(rate: float) -> dict[str, Any]:
    return {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": rate}]}


def two_trains(repairable: bool = True) -> dict[str, Any]:
    nodes: list[dict[str, Any]] = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}]
    edges = []
    for t in "ab":
        prev = "in"
        for i in range(2):
            nid = f"{t}{i}"
            nodes.append({"id": nid, "type": "component", "model": exp_model(LAM),
                          **({"repair": exp_model(MU)} if repairable else {})})
            edges.append({"source": prev, "target": nid})
            prev = nid
        edges.append({"source": prev, "target": "out"})
    return {"name": "two trains", "unit": "hours", "repairable": repairable, "nodes": nodes, "edges": edges}


def exact_mean() -> float:
    s = LAM + MU
    point = lambda t: 1.0 - (1.0 - (MU / s + LAM / s * np.exp(-s * t)) ** 2) ** 2  # noqa: E731
    return integrate.quad(point, 0.0, HORIZON)[0] / HORIZON


async def test_a_reduced_run_records_its_method_and_factor(api: Api) -> None:
    status, created = await api.post("rbd/create", two_trains())
    assert status == 200, created
    ask = {"id": created["id"], "horizon": HORIZON, "replications": 2000, "seed": 3, "grid": 11}
    status, plain_q = await api.post("rbd_analysis/analyze", ask)
    assert status == 200, plain_q
    status, red_q = await api.post("rbd_analysis/analyze", {**ask, "variance_reduction": "auto"})
    assert status == 200, red_q
    # Another option, another run (not the plain run's cache); "none" is the plain run itself.
    assert red_q["cached"] is False and red_q["run_id"] != plain_q["run_id"]
    runs = []
    for q in (plain_q, red_q):
        job = await poll(api, q["job_id"])
        assert job["status"] == "done", job
        status, run = await api.post("get/rbd_run", {"id": q["run_id"]})
        assert status == 200, run
        runs.append(run)
    plain, red = (r["results"] for r in runs)
    vr = red["variance_reduction"]
    assert "variance_reduction" not in plain
    assert vr["method"] == "conditional+control" and vr["factor"] > 5 and vr["fallback"] is None
    assert vr["plain_mean_availability"] == plain["mean_availability"]
    for res in (plain, red):
        lo, hi = res["mean_availability_interval"]
        assert lo <= exact_mean() <= hi
    assert runs[1]["inputs"]["options"]["variance_reduction"] == "auto"
    assert "variance_reduction" not in runs[0]["inputs"]["options"]
    status, same = await api.post("rbd_analysis/analyze", {**ask, "variance_reduction": "none"})
    assert status == 200 and same["cached"] is True and same["run_id"] == plain_q["run_id"]


async def test_variance_reduction_is_refused_where_it_does_not_apply(api: Api) -> None:
    status, created = await api.post("rbd/create", two_trains(repairable=False))
    assert status == 200, created
    status, body = await api.post("rbd_analysis/analyze", {"id": created["id"], "mission_time": 100.0,
                                                           "variance_reduction": "auto"})
    assert status == 422 and "variance_reduction" in str(body["detail"]), body
    status, created = await api.post("rbd/create", two_trains())
    status, body = await api.post("rbd_analysis/analyze", {"id": created["id"], "method": "failure_biasing",
                                                           "variance_reduction": "control"})
    assert status == 422 and "variance_reduction" in str(body["detail"]), body
    status, body = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": 100.0,
                                                           "variance_reduction": "importance"})
    assert status == 422 and "variance_reduction" in str(body["detail"]), body


async def test_the_run_page_shows_the_reduction_and_the_cpu_time(api: Api) -> None:
    status, created = await api.post("rbd/create", two_trains())
    assert status == 200, created
    status, q = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": HORIZON,
                                                        "replications": 1000, "seed": 5, "variance_reduction": "auto"})
    assert status == 200, q
    assert (await poll(api, q["job_id"]))["status"] == "done"
    status, link = await api.post("sharing/create_link", {"kind": "rbd_run", "id": q["run_id"]})
    assert status == 200, link
    async with api.client.get(urlsplit(link["url"]).path) as resp:
        assert resp.status == 200
        page = html.unescape(re.sub(r"<[^>]+>", " ", await resp.text()))
    assert "Variance reduction" in page and "conditional+control, factor" in page
    assert "CPU-s of the engine's threads" in page and "None" not in page


async def paired_run(api: Api, method: str, replications: int) -> dict[str, Any]:
    """The saved run of two trains analysed with `method` (seed 3), once its job is done."""
    status, created = await api.post("rbd/create", two_trains())
    assert status == 200, created
    ask = {"id": created["id"], "horizon": HORIZON, "replications": replications, "seed": 3, "grid": 11,
           "variance_reduction": method}
    status, q = await api.post("rbd_analysis/analyze", ask)
    assert status == 200, q
    assert (await poll(api, q["job_id"]))["status"] == "done"
    status, run = await api.post("get/rbd_run", {"id": q["run_id"]})
    assert status == 200, run
    return run


async def test_an_antithetic_run_records_its_pairs_and_factor(api: Api) -> None:
    run = await paired_run(api, "antithetic", 2000)
    res = run["results"]
    vr = res["variance_reduction"]
    assert vr["requested"] == "antithetic" and vr["method"] == "antithetic"
    assert vr["pairs"] == 1000 and vr["degrees_of_freedom"] == 999
    # Efficiency = factor / 1.2 (a pair member's CPU over a plain replication's); pairs that do not pay are said.
    assert abs(vr["efficiency"] - vr["factor"] / 1.2) < 1e-12
    assert (vr["fallback"] is None) == (vr["efficiency"] > 1)
    # factor = per-replication variance / (2 x variance of pair means), both from the run.
    per_rep = vr["plain_std_error"] ** 2 * 2000
    pair_var = res["mean_availability_std_error"] ** 2 * 1000
    assert abs(vr["factor"] / (per_rep / (2 * pair_var)) - 1) < 1e-9
    lo, hi = res["mean_availability_interval"]
    assert lo <= exact_mean() <= hi
    assert run["inputs"]["options"]["variance_reduction"] == "antithetic"


async def test_a_stratified_run_records_its_sets_and_factor(api: Api) -> None:
    run = await paired_run(api, "stratified", 1600)
    res = run["results"]
    vr = res["variance_reduction"]
    assert vr["requested"] == "stratified" and vr["method"] == "stratified"
    assert vr["sets"] == 100 and vr["degrees_of_freedom"] == 99 and "pairs" not in vr
    # factor = per-replication variance / (16 x variance of set means), both from the run.
    per_rep = vr["plain_std_error"] ** 2 * 1600
    set_var = res["mean_availability_std_error"] ** 2 * 100
    assert abs(vr["factor"] / (per_rep / (16 * set_var)) - 1) < 1e-9
    lo, hi = res["mean_availability_interval"]
    assert lo <= exact_mean() <= hi
