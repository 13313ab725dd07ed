"""Strategy calculators through HTTP: spec fields, independent values, saved analyses, refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from tests.conftest import Api
from tests.service.test_errors import assert_refusal

# Calculators against closed forms: the store only saves the analysis (see tests/conftest.py).
pytestmark = pytest.mark.one_store

WEIBULL = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": 1000.0}, {"name": "beta", "value": 2.5}]}


async def test_optimal_replacement_matches_renewal_reward_minimum(api: Api) -> None:
    status, out = await api.post("/api/v1/strategy/optimal-replacement",
                                 {**WEIBULL, "planned_cost": 100.0, "unplanned_cost": 1000.0, "unit": "h"})
    assert status == 200, out
    assert {"distribution", "unit", "mttf", "beneficial", "optimal_time", "optimal_cost_rate", "planned_cost",
            "unplanned_cost"} <= set(out)
    life = stats.weibull_min(2.5, scale=1000.0)

    def rate(t: float) -> float:  # [Cp R(T) + Cu F(T)] / ∫0^T R, by scipy quadrature
        return (100.0 * life.sf(t) + 1000.0 * life.cdf(t)) / integrate.quad(life.sf, 0, t)[0]

    best = optimize.minimize_scalar(rate, bounds=(50, 3000), method="bounded", options={"xatol": 1e-6})
    assert out["beneficial"] is True and out["unit"] == "h"
    assert math.isclose(out["optimal_time"], best.x, rel_tol=1e-4)
    assert math.isclose(out["optimal_cost_rate"], best.fun, rel_tol=1e-7)
    assert math.isclose(out["mttf"], life.mean(), rel_tol=1e-10)


async def test_failure_finding_exponential_closed_form(api: Api) -> None:
    body = {"distribution_id": "exponential", "params": [0.001], "target_availability": 0.99}
    status, out = await api.post("strategy/failure_finding", body)
    assert status == 200, out
    lam, t = 0.001, out["interval"]
    assert math.isclose(1 - (1 - math.exp(-lam * t)) / (lam * t), 0.01, rel_tol=1e-8)
    assert out["method"] and out["note"]


async def test_demonstration_zero_failure_units(api: Api) -> None:
    status, out = await api.post("/api/v1/strategy/demonstration-test", {"reliability": 0.9, "confidence": 0.9})
    assert status == 200, out
    assert out["units"] == math.ceil(math.log(1 - 0.9) / math.log(0.9))  # 22, the success-run formula
    assert {"method", "solve_for", "units", "test_time_per_unit", "total_test_time", "failures",
            "demonstrated_reliability", "consumer_risk", "summary", "assumptions", "tradeoff"} <= set(out)


async def test_saved_analysis_and_saved_model(api: Api, other_api: Api) -> None:
    status, out = await api.post("strategy/optimal_replacement",
                                 {**WEIBULL, "planned_cost": 1.0, "unplanned_cost": 10.0, "save": True,
                                  "name": "pump bearing"})
    assert status == 200 and out["analysis_id"].startswith("sa_")
    status, saved = await api.post("get/strategy_analysis", {"id": out["analysis_id"]})
    assert status == 200 and saved["calculator"] == "optimal_replacement" and saved["name"] == "pump bearing"
    assert saved["result"]["optimal_time"] == out["optimal_time"]
    assert (await other_api.post("get/strategy_analysis", {"id": out["analysis_id"]}))[0] == 404
    status, listing = await api.post("list/strategy_analysis")
    assert [i["id"] for i in listing["items"]] == [out["analysis_id"]]
    # A saved life model stands in for inline params.
    status, imported = await api.post("/api/import/models", {"name": "bearing", "distribution": "weibull",
                                                             "params": WEIBULL["params"], "unit": "h"})
    assert status == 200, imported
    status, via_model = await api.post("strategy/optimal_replacement", {"saved_model_id": imported["id"],
                                                                        "planned_cost": 1.0, "unplanned_cost": 10.0})
    assert status == 200 and via_model["optimal_time"] == out["optimal_time"] and via_model["unit"] == "h"
    stolen = {"saved_model_id": imported["id"], "planned_cost": 1.0, "unplanned_cost": 10.0}
    assert (await other_api.post("strategy/optimal_replacement", stolen))[0] == 404


async def test_strategy_refusals_name_the_field_and_save_nothing(api: Api) -> None:
    cases = [
        ("/api/v1/strategy/optimal-replacement",
         {**WEIBULL, "planned_cost": -1.0, "unplanned_cost": 10.0, "save": True}, "planned_cost"),
        ("/api/v1/strategy/optimal-replacement", {"distribution_id": "weibul", "params": [1.0, 2.0],
                                                  "planned_cost": 1.0, "unplanned_cost": 2.0}, "distribution"),
        ("/api/v1/strategy/failure-finding", {**WEIBULL, "target_availability": 1.5}, "target_availability"),
        ("/api/v1/strategy/demonstration-test", {"reliability": 0.9, "confidence": 1.0}, "confidence"),
        ("strategy/shut_plan", {**WEIBULL, "current_age": 0.0, "usage_rate": 24.0, "horizon_days": 365.0,
                                "failure_cost": 1000.0, "shuts": [{"name": "spring", "cost": 10.0}]}, "shuts"),
    ]
    for path, body, field in cases:
        status, out = await api.post(path, body)
        assert_refusal(status, out, 422, field)
    assert (await api.post("list/strategy_analysis"))[1]["items"] == []


async def test_shut_plan_picks_shuts(api: Api) -> None:
    body = {**WEIBULL, "current_age": 500.0, "usage_rate": 24.0, "horizon_days": 730.0, "failure_cost": 5000.0,
            "today": "2026-01-01", "shuts": [{"name": "quarterly", "cost": 200.0, "every": 3, "every_unit": "months",
                                              "start": "2026-03-01"}]}
    status, out = await api.post("strategy/shut_plan", body)
    assert status == 200, out
    assert out["plan"] and all(p["shut"] == "quarterly" for p in out["plan"])
    assert out["expected_cost"] < out["run_to_failure"]["expected_cost"]
    assert np.isfinite(out["expected_failures"])


async def test_demonstration_test_solves_every_way_round_over_http(api: Api) -> None:
    """The route takes a test length and solves what it shows, what confidence, how many failures; plans
    meeting both risks; sequential tests. Values against scipy's χ² and Poisson laws (spec response shape)."""
    route = "/api/v1/strategy/demonstration-test"
    status, shown = await api.post(route, {"total_test_time": 5000.0, "failures": 2, "confidence": 0.9, "unit": "h"})
    assert status == 200, shown
    assert shown["solve_for"] == "mtbf"
    assert math.isclose(shown["demonstrated_mtbf"], 10000.0 / stats.chi2.ppf(0.9, 6), rel_tol=1e-12)
    status, conf = await api.post(route, {"mtbf": 1000.0, "total_test_time": 5000.0, "failures": 2,
                                          "solve_for": "confidence"})
    assert status == 200 and math.isclose(conf["confidence"], 1 - stats.poisson.cdf(2, 5.0), rel_tol=1e-12)
    status, plan = await api.post(route, {"mtbf": 500.0, "design_mtbf": 1000.0, "consumer_risk": 0.1,
                                          "producer_risk": 0.1})
    assert status == 200 and plan["solve_for"] == "plan" and plan["failures"] == 14
    assert plan["producer_risk"] <= 0.1 and plan["consumer_risk"] <= 0.1 + 1e-12
    assert plan["operating_characteristic"]["true_mtbf"] and plan["tradeoff"]["rows"]
    status, seq = await api.post(route, {"method": "sequential", "mtbf": 500.0, "discrimination_ratio": 2.0,
                                         "confidence": 0.9, "producer_risk": 0.1})
    assert status == 200 and seq["method"] == "sequential"
    assert seq["sequential"]["expected_test_time"]["at_design"] < plan["total_test_time"]


async def test_demonstration_test_refusals_name_the_field(api: Api) -> None:
    route = "/api/v1/strategy/demonstration-test"
    for body, field in [({"mtbf": 100.0, "design_mtbf": 200.0, "producer_risk": 0.0}, "producer_risk"),
                        ({"mtbf": 100.0, "discrimination_ratio": 1.0, "producer_risk": 0.1}, "discrimination_ratio"),
                        ({"mtbf": 100.0, "total_test_time": 50.0, "solve_for": "failures"}, "total_test_time"),
                        ({"mtbf": 100.0, "total_test_time": 500.0}, "solve_for"),
                        ({"mtbf": 100.0, "sided": "both"}, "sided")]:
        status, out = await api.post(route, body)
        assert status == 422, (body, out)
        assert out["detail"].startswith(field), (body, out)
