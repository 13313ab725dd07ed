"""Pages with parameter uncertainty for the every-kind browser test: a fleet forecast, an optimal
replacement and a failure-finding interval on the seeded Weibull fit (10 bearing lives, hours), each
with `uncertainty: parameters`."""

from __future__ import annotations

from typing import Any

from tests.pages.seed import Post, ok


async def seed_uncertain(post: Post, model_id: str) -> dict[str, str]:
    fleet = await ok(post, "/api/v1/fleets/create", {
        "name": "bearings", "model_id": model_id, "period_label": "months", "periods": 6, "uncertainty": "parameters",
        "draws": 30, "items": [{"name": f"B{i}", "current_use": 10.0 * i, "rate": 15.0} for i in range(1, 13)]})
    common: dict[str, Any] = {"saved_model_id": model_id, "uncertainty": "parameters", "draws": 10, "save": True}
    replacement = await ok(post, "/api/v1/strategy/optimal_replacement", {
        **common, "planned_cost": 1.0, "unplanned_cost": 10.0, "name": "bearing replacement, data's uncertainty"})
    proof = await ok(post, "/api/v1/strategy/failure_finding", {
        **common, "target_availability": 0.95, "name": "bearing proof test, data's uncertainty"})
    return {"fleet_uncertain": fleet["id"], "replacement_uncertain": replacement["analysis_id"],
            "ff_uncertain": proof["analysis_id"]}
