"""The strategy calculators on a saved regression model at a unit's covariates and on a saved
repairable-system process, through HTTP, with and without parameter uncertainty: answers equal the
library's on the same record (whose numbers tests/strategy/test_strategy_saved_models.py checks
against lifelines and the closed forms), refusals name the field and the rule."""

from __future__ import annotations

import numpy as np
import pytest

from bathtub import strategy
from bathtub.strategy.saved_life import saved_life
from bathtub.strategy.uncertain import optimal_replacement_uncertain
from tests.conftest import Api
from tests.service.loads import pump_loads
from tests.service.test_errors import assert_refusal

# Numerics are the library's; mapping and refusals need no second store.
pytestmark = pytest.mark.one_store


async def _fit(api: Api, data: dict, **fit: object) -> tuple[str, dict]:
    status, ds = await api.post("/api/v1/datasets", {"name": "data", "data": data})
    assert status == 200, ds
    status, fitted = await api.post("/api/v1/fit", {"name": "m", "dataset_id": ds["id"], "unit": "hours", **fit})
    assert status == 200, fitted
    status, record = await api.post("get/model", {"id": fitted["id"]})
    assert status == 200, record
    return fitted["id"], record


async def _weibull_ph(api: Api) -> tuple[str, dict]:
    return await _fit(api, pump_loads(5, 200), distribution="weibull_ph", mapping={"x": "t", "c": "c"},
                      covariates=["load"])


def _process(n: int, beta: float, seed: int) -> list[float]:
    gam = np.cumsum(np.random.default_rng(seed).exponential(1.0, n))
    return (100.0 * gam ** (1 / beta)).tolist()


async def test_a_regression_at_covariates_with_and_without_uncertainty(api: Api) -> None:
    model_id, record = await _weibull_ph(api)
    body = {"saved_model_id": model_id, "covariates": {"load": 1.2}, "planned_cost": 100.0, "unplanned_cost": 900.0,
            "policy": "minimal_repair"}
    status, plain = await api.post("strategy/optimal_replacement", body)
    assert status == 200, plain
    life = saved_life(record, model_id, covariates={"load": 1.2})
    want = strategy.optimal_replacement(lifetime=life, planned_cost=100.0, unplanned_cost=900.0,
                                        policy="minimal_repair", unit="hours")
    assert plain["optimal_time"] == pytest.approx(want["optimal_time"], rel=1e-12) and plain["unit"] == "hours"
    status, out = await api.post("strategy/optimal_replacement", {**body, "uncertainty": "parameters", "draws": 10,
                                                                  "seed": 2, "save": True})
    assert status == 200, out
    want = optimal_replacement_uncertain(record, 10, 2, model_id=model_id, covariates={"load": 1.2}, lifetime=life,
                                         planned_cost=100.0, unplanned_cost=900.0, policy="minimal_repair",
                                         curve_points=200, unit="hours")
    assert out["parameter_uncertainty"] == want["parameter_uncertainty"]
    status, saved = await api.post("get/strategy_analysis", {"id": out["analysis_id"]})
    assert saved["inputs"]["covariates"] == {"load": 1.2}
    status, ff = await api.post("/api/v1/strategy/failure-finding", {
        "saved_model_id": model_id, "covariates": {"load": 0.3}, "target_availability": 0.99})
    assert status == 200 and ff["interval"] == pytest.approx(strategy.failure_finding_interval(
        lifetime=saved_life(record, model_id, covariates={"load": 0.3}), target_availability=0.99)["interval"])


async def test_a_power_law_process_and_its_refusals(api: Api) -> None:
    model_id, record = await _fit(api, {"t": _process(20, 1.8, 3)}, distribution="crow_amsaa", mapping={"t": "t"})
    body = {"saved_model_id": model_id, "planned_cost": 100.0, "unplanned_cost": 900.0, "policy": "minimal_repair",
            "uncertainty": "parameters", "draws": 10, "seed": 1}
    status, out = await api.post("strategy/optimal_replacement", body)
    assert status == 200, out
    life = saved_life(record, model_id)
    want = optimal_replacement_uncertain(record, 10, 1, model_id=model_id, lifetime=life, planned_cost=100.0,
                                         unplanned_cost=900.0, policy="minimal_repair", curve_points=200, unit="hours")
    assert out["parameter_uncertainty"] == want["parameter_uncertainty"]
    kid, _ = await _fit(api, {"t": _process(25, 2.0, 2)}, distribution="kijima2", mapping={"t": "t"})
    assert_refusal(*await api.post("strategy/optimal_replacement", {**body, "saved_model_id": kid}), 422, "policy",
                   "restore part of the age")
    assert_refusal(*await api.post("strategy/optimal_replacement", {**body, "covariates": {"z": 1.0}}), 422,
                   "covariates", "has no covariates")
    wph, _ = await _weibull_ph(api)
    assert_refusal(*await api.post("strategy/optimal_replacement", {**body, "saved_model_id": wph}), 422,
                   "covariates.load", "required")
    inline = {"distribution_id": "weibull", "params": [1000.0, 2.0], "covariates": {"load": 1.0},
              "target_availability": 0.99}
    assert_refusal(*await api.post("strategy/failure_finding", inline), 422, "covariates", "saved_model_id")
    mcf, _ = await _fit(api, {"t": _process(12, 1.5, 4)}, distribution="mcf", mapping={"t": "t"})
    assert_refusal(*await api.post("strategy/failure_finding", {"saved_model_id": mcf, "target_availability": 0.99}),
                   422, "saved_model_id")
