"""Strategy calculators through HTTP at the audit's extremes (issue 26, items 5 and 9): an answer
beyond floating point is a 422 naming a field by a rule the schema states (never null where a
number is published), a plan no finite test meets is refused at once, and every calculation runs
under the service's CPU budget (`strategy_cpu_limit_seconds`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.registry import Registry
from tests.conftest import Api
from tests.service.test_errors import assert_refusal
from tests.service.test_schemathesis import DESCRIBED, category, stated_rules

# Calculators at their extremes and under the CPU budget: no store is involved (see tests/conftest.py).
pytestmark = pytest.mark.one_store

DEMONSTRATION_ROUTES = ("/api/v1/strategy/demonstration-test", "strategy/demonstration_test")
OVERFLOW = {"reliability": 5e-324, "mission_time": 1.737784883802288e308,
            "discrimination_ratio": 2.1950569344829018e307}
TINY_PRODUCER_RISK = {"producer_risk": 1e-323, "method": "binomial", "reliability": 0.4335, "consumer_risk": 0.1447,
                      "design_reliability": 0.4974}
DEGENERATE_EXPO_WEIBULL = {"distribution_id": "expo_weibull",
                           "params": [{"name": "alpha", "value": 1.0}, {"name": "beta", "value": 5.0},
                                      {"name": "theta", "value": 1e-6}],
                           "target_availability": 1e-6}


async def _stated(api: Api, path: str, detail: str) -> bool:
    """Whether the served schema of `path`'s request states the refusal's rule (as the fuzz judges)."""
    status, doc = await api.get("/api/v1/openapi.json")
    assert status == 200
    body = doc["paths"][path]["post"].get("requestBody", {})
    return category(detail, stated_rules(doc, body)) == DESCRIBED


@pytest.fixture
async def frugal_api(aiohttp_client: Any, config: Config, registry: Registry) -> Api:
    """A service whose strategy budget is 0 CPU-seconds: every calculation stops at its first checkpoint."""
    cfg = dataclasses.replace(config, strategy_cpu_limit_seconds=0.0)
    client = await aiohttp_client(create_app(cfg, registry))
    return Api(client, await token_create(cfg, "alice", ["read", "write"]))


async def test_overflow_and_impossible_plans_are_stated_refusals_on_both_routes(api: Api) -> None:
    """One app for both (a service test's cost is mostly starting the app's worker process)."""
    for route in DEMONSTRATION_ROUTES:
        status, out = await api.post(route, OVERFLOW)  # was 200 with operating_characteristic null
        assert_refusal(status, out, 422, "discrimination_ratio: gives the design MTBF")
        assert await _stated(api, "/api/v1/strategy/demonstration-test", out["detail"])
        status, out = await api.post(route, TINY_PRODUCER_RISK)  # was 7-18 CPU-s of scanning
        assert_refusal(status, out, 422, "design_reliability: too close to reliability: more than 1000 failures")
        assert await _stated(api, "/api/v1/strategy/demonstration-test", out["detail"])


async def test_a_spent_budget_is_a_stated_422_naming_the_inputs(frugal_api: Api) -> None:
    status, out = await frugal_api.post("/api/v1/strategy/failure-finding", DEGENERATE_EXPO_WEIBULL)
    assert_refusal(status, out, 422, "params.theta: needs more computing time than allowed (0 CPU-seconds",
                   "target_availability 1e-06")
    assert await _stated(frugal_api, "/api/v1/strategy/failure-finding", out["detail"])
    status, out = await frugal_api.post("strategy/demonstration_test", {**TINY_PRODUCER_RISK, "producer_risk": 0.05})
    assert_refusal(status, out, 422, "needs more computing time than allowed")
    assert await _stated(frugal_api, "/api/v1/strategy/demonstration-test", out["detail"])


async def test_the_default_budget_leaves_ordinary_requests_alone(api: Api) -> None:
    status, out = await api.post("strategy/failure_finding", {**DEGENERATE_EXPO_WEIBULL, "params": [
        {"name": "alpha", "value": 100.0}, {"name": "beta", "value": 2.0}, {"name": "theta", "value": 1.5}],
        "target_availability": 0.99})
    assert status == 200 and out["interval"] > 0, out


def test_budget_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Config().strategy_cpu_limit_seconds == 10.0
    monkeypatch.setenv("BATHTUB_STRATEGY_CPU_LIMIT_SECONDS", "2.5")
    assert Config.from_env().strategy_cpu_limit_seconds == 2.5
    with pytest.raises(ValueError, match="BATHTUB_STRATEGY_CPU_LIMIT_SECONDS"):
        Config(strategy_cpu_limit_seconds=-1.0)
