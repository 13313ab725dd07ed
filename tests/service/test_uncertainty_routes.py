"""Parameter uncertainty through HTTP: fleet forecasts (a fleet setting and a per-forecast override on
get fleet and the forecast route) and the optimal-replacement and failure-finding calculators on a
saved model, with the refusals naming the field. The numbers themselves are checked against closed
forms and brute force in tests/fleet/test_forecast_parameters.py and
tests/strategy/test_strategy_uncertain.py; here the answers must equal the library's on the same
record, seed and draws."""

from __future__ import annotations

import numpy as np
import pytest

from bathtub import models
from bathtub.fleet.plan import fleet_forecast
from bathtub.strategy.uncertain import failure_finding_uncertain, optimal_replacement_uncertain
from tests.conftest import Api
from tests.service.test_errors import assert_refusal

# Numerics are the library's; mapping and refusals need no second store.
pytestmark = pytest.mark.one_store

TIMES = (np.random.default_rng(21).weibull(2.2, 30) * 800.0).round(3)
CSV = "time\n" + "\n".join(str(t) for t in TIMES)


async def fitted(api: Api) -> tuple[str, dict]:
    status, ds = await api.post("/api/v1/datasets", {"name": "pumps", "csv": CSV})
    assert status == 200, ds
    status, fit = await api.post("/api/v1/fit", {"name": "pump life", "dataset_id": ds["id"],
                                                 "distribution": "weibull", "mapping": {"x": "time"}, "unit": "h"})
    assert status == 200, fit
    status, record = await api.post("get/model", {"id": fit["id"]})
    assert status == 200, record
    return fit["id"], record


@pytest.mark.slow  # ~5 s: strategy calculators over parameter draws, saved and plain
async def test_strategy_calculators_with_parameter_uncertainty(api: Api) -> None:
    model_id, record = await fitted(api)
    life = models.from_record(record).lifetime(model_id)
    body = {"saved_model_id": model_id, "planned_cost": 100.0, "unplanned_cost": 900.0, "uncertainty": "parameters",
            "draws": 10, "seed": 4, "save": True, "name": "pump replacement"}
    status, out = await api.post("strategy/optimal_replacement", body)
    assert status == 200, out
    want = optimal_replacement_uncertain(record, 10, 4, model_id=model_id, lifetime=life, planned_cost=100.0,
                                         unplanned_cost=900.0, policy="age", curve_points=200, unit="h")
    assert out["parameter_uncertainty"] == want["parameter_uncertainty"]
    assert out["optimal_time"] == pytest.approx(want["optimal_time"], rel=1e-12)
    status, saved = await api.post("get/strategy_analysis", {"id": out["analysis_id"]})
    assert saved["inputs"]["uncertainty"] == "parameters" and saved["result"]["parameter_uncertainty"]["draws"] == 10
    # without uncertainty the answer is the point estimate's, with no parameter block
    status, plain = await api.post("strategy/optimal_replacement", {**body, "uncertainty": "none", "save": False})
    assert status == 200 and "parameter_uncertainty" not in plain
    assert plain["optimal_time"] == out["optimal_time"]
    ff = {"saved_model_id": model_id, "target_availability": 0.98, "uncertainty": "parameters", "draws": 10,
          "seed": 4}
    status, got = await api.post("/api/v1/strategy/failure-finding", ff)
    assert status == 200, got
    want = failure_finding_uncertain(record, 10, 4, model_id=model_id, lifetime=life, target_availability=0.98,
                                     unit="h")
    assert got["parameter_uncertainty"] == want["parameter_uncertainty"]


async def test_strategy_uncertainty_refusals_name_the_field(api: Api) -> None:
    inline = {"distribution_id": "weibull", "params": [1000.0, 2.0], "planned_cost": 1.0, "unplanned_cost": 9.0,
              "uncertainty": "parameters"}
    assert_refusal(*await api.post("strategy/optimal_replacement", inline), 422, "uncertainty", "saved_model_id")
    status, imported = await api.post("/api/import/models", {"name": "guess", "distribution": "weibull",
                                                             "params": [{"name": "alpha", "value": 1000.0},
                                                                        {"name": "beta", "value": 2.0}]})
    assert status == 200, imported
    assert_refusal(*await api.post("strategy/failure_finding", {
        "saved_model_id": imported["id"], "target_availability": 0.99, "uncertainty": "parameters"}), 422,
        "uncertainty")
    model_id, _ = await fitted(api)
    assert_refusal(*await api.post("strategy/failure_finding", {
        "saved_model_id": model_id, "target_availability": 0.99, "uncertainty": "parameters", "draws": 5}), 422,
        "draws")


async def test_fleet_forecast_with_parameter_uncertainty(api: Api) -> None:
    model_id, record = await fitted(api)
    items = [{"name": f"P{i}", "current_use": 50.0 * i, "rate": 60.0} for i in range(1, 21)]
    status, fleet = await api.post("fleets/create", {"name": "pumps", "model_id": model_id, "periods": 4,
                                                     "items": items, "uncertainty": "parameters", "draws": 40,
                                                     "seed": 3})
    assert status == 200, fleet
    assert (fleet["uncertainty"], fleet["draws"], fleet["seed"]) == ("parameters", 40, 3)
    status, out = await api.get(f"/api/v1/fleets/{fleet['id']}/forecast")
    assert status == 200, out
    body = {"model_id": model_id, "items": items, "rate_source": "manual", "periods": 4, "replace_failed": False,
            "confidence": 0.9, "period_label": "months", "uncertainty": "parameters", "draws": 40, "seed": 3}
    want, _ = fleet_forecast(models.from_record(record).fleet_life(model_id), body, record)
    assert out["forecast"]["parameter_uncertainty"] == want["parameter_uncertainty"]
    assert out["forecast"]["interval"]["basis"] == "point model"
    # a forecast may ask for other settings without changing the fleet's
    status, other = await api.get(f"/api/v1/fleets/{fleet['id']}/forecast", params={"seed": "5", "draws": "20"})
    assert status == 200 and other["forecast"]["parameter_uncertainty"]["draws"] == 20
    status, none = await api.post("get/fleet", {"id": fleet["id"], "uncertainty": "none"})
    assert status == 200 and "parameter_uncertainty" not in none["forecast"] and none["uncertainty"] == "parameters"
    assert_refusal(*await api.get(f"/api/v1/fleets/{fleet['id']}/forecast", params={"draws": "5"}), 422, "draws")
    assert_refusal(*await api.get(f"/api/v1/fleets/{fleet['id']}/forecast", params={"uncertainty": "some"}), 422,
                   "uncertainty")
    status, imported = await api.post("/api/import/models", {"name": "guess", "distribution": "exponential",
                                                             "params": [{"name": "failure_rate", "value": 1e-3}]})
    assert_refusal(*await api.post("fleets/update", {"id": fleet["id"], "model_id": imported["id"]}), 422,
                   "uncertainty")
    many = [{"name": f"Q{i}", "current_use": 1.0} for i in range(120)]  # 2000 draws × 140 items × 240 periods
    assert_refusal(*await api.post("fleets/update", {"id": fleet["id"], "draws": 2000, "periods": 240,
                                                     "items": many}), 422, "draws")
