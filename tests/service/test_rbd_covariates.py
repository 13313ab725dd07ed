"""RBD blocks on saved regression models through the service (SQLite only): fixed covariates,
a covariate schedule simulated by the engine (closed form within the run's interval), the
clipping warning in the run's answer, and refusals at create/edit that name the field and
store nothing."""

from __future__ import annotations

import math

import pytest

from tests.conftest import Api
from tests.service.loads import pump_loads
from tests.service.test_errors import assert_refusal
from tests.service.test_rbd_service import poll

# Simulation results against closed forms, refusals at the door (see tests/conftest.py).
pytestmark = pytest.mark.one_store


async def _weibull_ph(api: Api) -> tuple[str, dict]:
    status, ds = await api.post("/api/v1/datasets", {"name": "loads", "data": pump_loads(5, 300)})
    assert status == 200, ds
    status, fitted = await api.post("/api/v1/fit", {"name": "wph", "dataset_id": ds["id"], "distribution": "weibull_ph",
                                                    "mapping": {"x": "t", "c": "c"}, "covariates": ["load"],
                                                    "unit": "hours"})
    assert status == 200, fitted
    status, record = await api.get(f"/api/v1/models/{fitted['id']}")
    assert status == 200, record
    return fitted["id"], record


def _diagram(model: dict, schedules: dict | None = None) -> dict:
    b = {"id": "pump", "type": "component", "model": model}
    if schedules is not None:
        b["covariate_schedules"] = schedules
    return {"name": "cov", "unit": "hours", "repairable": False,
            "nodes": [{"id": "in", "type": "input"}, b, {"id": "out", "type": "output"}],
            "edges": [{"source": "in", "target": "pump"}, {"source": "pump", "target": "out"}]}


async def _analyze(api: Api, rbd_id: str, mission: float) -> dict:
    status, queued = await api.post("rbd_analysis/analyze", {"id": rbd_id, "mission_time": mission,
                                                            "replications": 40_000, "seed": 3})
    assert status == 200, queued
    if queued.get("job_id"):
        assert (await poll(api, queued["job_id"]))["status"] == "done"
    status, run = await api.post("get/rbd_run", {"id": queued["run_id"]})
    assert status == 200, run
    return run


async def test_fixed_and_scheduled_covariates(api: Api) -> None:
    mid, record = await _weibull_ph(api)
    alpha, beta = (p["value"] for p in record["params"])  # at every covariate 0
    b = record["coefficients"][0]["value"]
    hi = max(v for v in (record["design"]["terms"][0]["max"],))

    def h0(t: float) -> float:
        return (t / alpha) ** beta

    # fixed: a Weibull with the hazard scaled by e^{1.2 b}: exact, in closed form
    status, made = await api.post("rbd/create", _diagram({"saved_model_id": mid, "covariates": {"load": 1.2}}))
    assert status == 200, made
    run = await _analyze(api, made["id"], 60.0)
    assert run["method"] == "closed_form"
    assert math.isclose(run["results"]["reliability"], math.exp(-h0(60.0) * math.exp(1.2 * b)), rel_tol=1e-9)
    status, at = await api.post(f"/api/v1/models/{mid}/reliability", {"t": 60.0, "covariates": {"load": 1.2}})
    assert status == 200 and math.isclose(at["at"]["reliability"], run["results"]["reliability"], rel_tol=1e-9)

    # scheduled: 0.3 until 50 h, then 5 (above the fitted range: clipped to its top, with a warning)
    sched = {"load": {"expression": "0.3 + 4.7*(t >= 50)"}}
    status, made = await api.post("rbd/create", _diagram({"saved_model_id": mid}, sched))
    assert status == 200, made
    run = await _analyze(api, made["id"], 90.0)
    assert run["method"] == "simulation"
    want = math.exp(-(h0(50.0) * math.exp(0.3 * b) + (h0(90.0) - h0(50.0)) * math.exp(hi * b)))
    lo, up = run["results"]["reliability_interval"]
    assert lo <= want <= up, (lo, want, up)
    assert len(run["warnings"]) == 1 and "nodes.pump.covariate_schedules.load" in run["warnings"][0]

    # edit: a periodic duty cycle replaces the schedule
    cycle = {"load": {"table": [{"t": 0, "value": 0.2}, {"t": 6, "value": 1.6}], "period": 24}}
    status, edited = await api.post("rbd/edit", {"id": made["id"], "ops": [
        {"op": "update_node", "id": "pump", "covariate_schedules": cycle}]})
    assert status == 200, edited
    run = await _analyze(api, made["id"], 80.0)
    h = 0.0
    for k in range(4):  # (24k, 24k+6] at 0.2, (24k+6, 24k+24] at 1.6, up to 80
        a, m, e = 24.0 * k, 24.0 * k + 6, min(24.0 * k + 24, 80.0)
        h += (h0(min(m, 80.0)) - h0(a)) * math.exp(0.2 * b) + (h0(e) - h0(m)) * math.exp(1.6 * b) * (e > m)
    lo, up = run["results"]["reliability_interval"]
    assert lo <= math.exp(-h) <= up, (lo, math.exp(-h), up)
    assert run["warnings"] == []


async def test_refusals_name_the_field_and_store_nothing(api: Api) -> None:
    mid, _ = await _weibull_ph(api)
    before = (await api.post("list/rbd", {}))[1]["items"]
    cases = [
        (_diagram({"saved_model_id": mid}), "nodes.pump.model.covariates.load"),
        (_diagram({"saved_model_id": mid, "covariates": {"speed": 1}}), "nodes.pump.model.covariates.speed"),
        (_diagram({"saved_model_id": mid}, {"temp": {"expression": "t > 5"}}), "nodes.pump.covariate_schedules.temp"),
        (_diagram({"saved_model_id": mid}, {"load": {"expression": "sin(t)"}}),
         "nodes.pump.covariate_schedules.load.expression"),
        (_diagram({"saved_model_id": mid}, {"load": {"table": [{"t": 0, "value": 1}, {"t": 0, "value": 2}]}}),
         "nodes.pump.covariate_schedules.load.table"),
        (_diagram({"saved_model_id": "mdl_nope", "covariates": {"load": 1}}), "nodes.pump.model.saved_model_id"),
    ]
    for diagram, field in cases:
        assert_refusal(*await api.post("rbd/create", diagram), 422, field)
    assert (await api.post("list/rbd", {}))[1]["items"] == before
    # an edit that breaks the schedule leaves the stored diagram as it was
    status, made = await api.post("rbd/create", _diagram({"saved_model_id": mid, "covariates": {"load": 1.0}}))
    assert status == 200, made
    assert_refusal(*await api.post("rbd/edit", {"id": made["id"], "ops": [
        {"op": "update_node", "id": "pump", "covariate_schedules": {"load": {"expression": "floor(t*t)"}}}]}),
        422, "nodes.pump.covariate_schedules.load.expression")
    status, now = await api.post("get/rbd", {"id": made["id"]})
    assert status == 200 and now["revision"] == made["revision"]


async def test_a_power_law_fitted_with_covariates_lives_at_the_blocks_values(api: Api) -> None:
    ts = [[9.0, 14.0, 18.0], [7.0, 12.0, 16.0, 19.0], [5.0, 9.0, 13.0, 16.0, 18.0], [6.0, 10.0, 13.0, 15.0, 17.0]]
    z = [0.0, 0.0, 1.0, 1.0]
    data = {"t": [v for s in ts for v in s], "s": [k for k, s in enumerate(ts) for _ in s], "e": [20.0] * 17,
            "z": [z[k] for k, s in enumerate(ts) for _ in s]}
    status, ds = await api.post("/api/v1/datasets", {"name": "systems", "data": data})
    assert status == 200, ds
    status, fitted = await api.post("/api/v1/fit", {"name": "pl", "dataset_id": ds["id"], "distribution": "crow_amsaa",
                                                    "mapping": {"t": "t", "system": "s", "end": "e"},
                                                    "options": {"covariates": ["z"]}, "unit": "hours"})
    assert status == 200, fitted
    status, record = await api.get(f"/api/v1/models/{fitted['id']}")
    eff = record["covariate_effects"]
    # without the system's covariates the block has no life: refused at the door, naming the field
    assert_refusal(*await api.post("rbd/create", _diagram({"saved_model_id": fitted["id"]})), 422,
                   "nodes.pump.model.covariates", "fitted with covariates")
    status, made = await api.post("rbd/create", _diagram({"saved_model_id": fitted["id"], "covariates": {"z": 0.5}}))
    assert status == 200, made
    run = await _analyze(api, made["id"], 4.0)
    # a new system's first failure under the process at z: exp(−lambda·e^{z·gamma}·t^beta)
    lam_z = eff["lambda"] * math.exp(eff["coefficients"][0]["value"] * 0.5)
    assert math.isclose(run["results"]["reliability"], math.exp(-lam_z * 4.0 ** eff["beta"]), rel_tol=1e-9)
