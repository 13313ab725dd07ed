"""`rbd_analysis analyze` with `uncertainty: parameters` over HTTP (both stores): a job whose
stored run carries the library's two-level numbers to the bit, and refusals (422) naming the
field or the block."""

from __future__ import annotations

from typing import Any

import pytest

from bathtub import models
from bathtub.rbd import uncertainty
from bathtub_api.auth import hash_token
from bathtub_api.keys import STORE
from tests.conftest import Api
from tests.service.loads import pump_loads
from tests.service.test_rbd_service import exp_model, poll

TIMES = [120.0, 340, 560, 700, 910, 1300, 1500, 1720]


async def saved_weibull(api: Api) -> tuple[str, dict[str, Any]]:
    _, ds = await api.post("datasets/create", {"name": "lives", "data": {"t": TIMES}})
    status, model = await api.post("fit/life", {"name": "w", "dataset_id": ds["id"], "distribution": "weibull",
                                                "mapping": {"x": "t"}, "unit": "hours"})
    assert status == 200, model
    return model["id"], models.fit("weibull", {"t": TIMES}, {"x": "t"})


def pump_and_valve(model_id: str) -> dict[str, Any]:
    blocks = [{"id": "pump", "type": "component", "model": {"saved_model_id": model_id}, "repair": exp_model(0.1)},
              {"id": "valve", "type": "component", "model": exp_model(1e-4), "repair": exp_model(0.2)}]
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}, *blocks]
    edges = [{"source": "in", "target": "pump"}, {"source": "pump", "target": "valve"},
             {"source": "valve", "target": "out"}]
    return {"name": "line", "unit": "hours", "repairable": True, "nodes": nodes, "edges": edges}


async def test_a_parameter_uncertainty_run_stores_the_librarys_numbers(api: Api) -> None:
    model_id, record = await saved_weibull(api)
    diagram = pump_and_valve(model_id)
    status, created = await api.post("rbd/create", diagram)
    assert status == 200, created
    options = {"horizon": 5000.0, "replications": 300, "seed": 11, "grid": 11}
    status, queued = await api.post("rbd_analysis/analyze", {"id": created["id"], **options,
                                                             "uncertainty": "parameters", "draws": 20,
                                                             "replications_per_draw": 100})
    assert status == 200 and queued["status"] == "queued", queued
    assert queued["quote"]["replications"] == 300 + 20 * 100  # the point run and every draw's replications
    job = await poll(api, queued["job_id"])
    assert job["status"] == "done" and job["progress"] == 1.0, job
    status, run = await api.post("get/rbd_run", {"id": queued["run_id"]})
    assert status == 200, run
    local = uncertainty.analyze(diagram, models={model_id: record}, **options, uncertainty="parameters", draws=20,
                                replications_per_draw=100)
    assert run["results"]["mean_availability"] == local["results"]["mean_availability"]
    assert run["uncertainty"]["figures"] == local["uncertainty"]["figures"]
    fig = run["uncertainty"]["figures"]["mean_availability"]
    assert fig["unit"] == "fraction" and fig["monte_carlo_interval"] == run["results"]["mean_availability_interval"]
    assert run["uncertainty"]["sources"][0]["blocks"] == ["nodes.pump.model"]
    assert job["result"]["uncertainty"]["draws"] == 20
    # the same request again finds the stored run; without uncertainty it is another run
    status, again = await api.post("rbd_analysis/analyze", {"id": created["id"], **options,
                                                            "uncertainty": "parameters", "draws": 20,
                                                            "replications_per_draw": 100})
    assert status == 200 and again["cached"] is True and again["run_id"] == queued["run_id"]
    status, plain = await api.post("rbd_analysis/analyze", {"id": created["id"], **options})
    assert status == 200 and plain.get("cached") is False and "uncertainty" not in plain


async def test_parameter_uncertainty_refusals_are_422_naming_the_field(api: Api) -> None:
    model_id, _ = await saved_weibull(api)
    _, made = await api.post("rbd/create", pump_and_valve(model_id))
    inline = pump_and_valve(model_id)
    inline["nodes"][2]["model"] = exp_model(1e-3)
    _, fixed = await api.post("rbd/create", inline)
    for rbd_id, body, detail in [
        (made["id"], {"draws": 10}, "draws: only with uncertainty: parameters"),
        (made["id"], {"uncertainty": "parameters", "precision": 0.1},
         "precision: not with uncertainty: parameters (each parameter draw runs `replications_per_draw` "
         "replications: give replications and replications_per_draw)"),
        (made["id"], {"uncertainty": "parameters", "draws": 5000, "replications_per_draw": 100_000},
         "replications_per_draw: draws x replications_per_draw must be at most 100000000 replications (got 500000000)"),
        (fixed["id"], {"uncertainty": "parameters"},
         "uncertainty: no block's life or repair is a saved fitted model: there is no parameter uncertainty to "
         "carry (save a fit and name it by saved_model_id)"),
    ]:
        status, out = await api.post("rbd_analysis/analyze", {"id": rbd_id, "horizon": 100.0, **body})
        assert status == 422 and out["detail"] == detail, out


async def test_a_cox_block_at_covariates_runs_under_parameter_uncertainty(api: Api) -> None:
    """A saved Cox model (coefficients and Breslow baseline drawn) as a block's life at fixed covariates:
    the stored run carries the library's two-level numbers to the bit."""
    _, ds = await api.post("datasets/create", {"name": "loads", "data": pump_loads(8, 200)})
    status, fitted = await api.post("/api/v1/fit", {"name": "cx", "dataset_id": ds["id"], "distribution": "cox",
                                                    "mapping": {"x": "t", "c": "c"}, "covariates": ["load"],
                                                    "unit": "hours"})
    assert status == 200, fitted
    status, record = await api.get(f"/api/v1/models/{fitted['id']}")
    assert status == 200 and record["covariance"]["names"] == ["load"] and "breslow_terms" in record, sorted(record)
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
             {"id": "pump", "type": "component", "model": {"saved_model_id": fitted["id"],
                                                           "covariates": {"load": 1.2}}}]
    diagram = {"name": "cox", "unit": "hours", "repairable": False, "nodes": nodes,
               "edges": [{"source": "in", "target": "pump"}, {"source": "pump", "target": "out"}]}
    _, made = await api.post("rbd/create", diagram)
    options = {"mission_time": 60.0, "replications": 2000, "seed": 5}
    status, queued = await api.post("rbd_analysis/analyze", {"id": made["id"], **options, "uncertainty": "parameters",
                                                             "draws": 20, "replications_per_draw": 200})
    assert status == 200, queued
    if queued.get("job_id"):
        job = await poll(api, queued["job_id"])
        assert job["status"] == "done", str(job)[:3000]
    status, run = await api.post("get/rbd_run", {"id": queued["run_id"]})
    assert status == 200, run
    local = uncertainty.analyze(diagram, models={fitted["id"]: record}, **options, uncertainty="parameters", draws=20,
                                replications_per_draw=200)
    assert run["uncertainty"]["figures"] == local["uncertainty"]["figures"]
    assert run["uncertainty"]["sources"][0]["law"] == "cox"
    lo, hi = run["uncertainty"]["figures"]["reliability"]["interval"]
    assert lo < run["results"]["reliability"] < hi


@pytest.mark.one_store  # a stored body read back: no store-specific behaviour
async def test_a_regression_record_saved_without_its_covariance_is_refused_saying_refit(api: Api, client: Any) -> None:
    """A weibull_ph record as releases before this one stored it (no `covariance`) is still a block's life,
    but under uncertainty: parameters the analyze request is refused at the door with 422 saying to refit."""
    _, ds = await api.post("datasets/create", {"name": "loads", "data": pump_loads(6, 150, censor_at=None)})
    status, fitted = await api.post("/api/v1/fit", {"name": "w", "dataset_id": ds["id"], "distribution": "weibull_ph",
                                                    "mapping": {"x": "t"}, "covariates": ["load"], "unit": "hours"})
    assert status == 200, fitted
    store = client.app[STORE]
    owner = (await store.token_owner(hash_token(api.token)))["user_id"]
    item = await store.get_item(owner, "model", fitted["id"])
    old = {k: v for k, v in item["body"].items() if k != "covariance"}
    await store.insert_item(owner, "model", "model_old_wph", "old wph", old)
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
             {"id": "pump", "type": "component", "model": {"saved_model_id": "model_old_wph",
                                                           "covariates": {"load": 1.0}}}]
    _, made = await api.post("rbd/create", {"name": "old", "unit": "hours", "repairable": False, "nodes": nodes,
                                            "edges": [{"source": "in", "target": "pump"},
                                                      {"source": "pump", "target": "out"}]})
    status, plain = await api.post("rbd_analysis/analyze", {"id": made["id"], "mission_time": 50.0})
    assert status == 200, plain  # without uncertainty the old record still runs
    status, out = await api.post("rbd_analysis/analyze", {"id": made["id"], "mission_time": 50.0,
                                                          "uncertainty": "parameters"})
    assert status == 422 and out["detail"] == (
        "nodes.pump.model.saved_model_id: this weibull_ph model was saved before its fit stored the joint "
        "covariance of (mu, log sigma, gamma): refit it and save the new fit to draw its parameters"), out
