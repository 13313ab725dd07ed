"""`rbd_analysis analyze` with method failure_biasing over HTTP (SQLite only):
a queued run whose steady-state unavailability (~1e-6) holds the exact Markov value in its
95% interval, documented in the OpenAPI field; refusals at the door naming the field and
the rule, storing nothing and queueing nothing."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Api
from tests.service.test_rbd_service import poll

# Simulation results against the exact value, refusals at the door: no store is involved (see tests/conftest.py).
pytestmark = pytest.mark.one_store

LAM, MU = 1e-3, 1.0  # per hour: each pump down about 1e-3 of the time


def exp_model(rate: float) -> dict[str, Any]:
    return {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": rate}]}


def pumps(crews: int | None = 1, life: dict[str, Any] | None = None) -> dict[str, Any]:
    blocks = [{"id": f"p{i}", "type": "component", "model": life or exp_model(LAM), "repair": exp_model(MU)}
              for i in (1, 2)]
    out: dict[str, Any] = {
        "name": "duty and standby pumps", "unit": "hours", "repairable": True,
        "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}, *blocks],
        "edges": [{"source": a, "target": b} for i in (1, 2) for a, b in (("in", f"p{i}"), (f"p{i}", "out"))],
    }
    if crews is not None:
        out["repair_crews"] = crews
    return out


async def _counts(api: Api) -> tuple[int, int]:
    _, runs = await api.post("list/rbd_run", {})
    _, jobs = await api.post("list/job", {})
    return len(runs["items"]), len(jobs["items"])


async def test_failure_biasing_run_holds_the_exact_value(api: Api) -> None:
    status, created = await api.post("rbd/create", pumps(crews=1))
    assert status == 200, created
    status, queued = await api.post("rbd_analysis/analyze", {"id": created["id"], "method": "failure_biasing",
                                                             "precision": 0.05, "seed": 3})
    assert status == 200, queued
    assert queued["method"] == "failure_biasing" and queued["quote"]["seconds"] > 0
    job = await poll(api, queued["job_id"])
    assert job["status"] == "done", job
    status, run = await api.post("get/rbd_run", {"id": queued["run_id"], "include_curve": True})
    assert status == 200, run
    res = run["results"]
    # One crew, two identical units: birth-death chain, U = 2 rho^2 / (1 + 2 rho + 2 rho^2).
    rho = LAM / MU
    exact = 2 * rho**2 / (1 + 2 * rho + 2 * rho**2)
    lo, hi = res["unavailability_interval"]
    assert lo <= exact <= hi, (lo, exact, hi)
    assert run["precision"]["relative_half_width"] <= 0.05 and run["precision"]["target_reached"] is True
    assert res["method"] == "failure_biasing" and res["crews"] == 1 and run["curve"] == {}
    assert run["method"] == "failure_biasing" and run["inputs"]["options"]["method"] == "failure_biasing"
    # Same inputs: the stored run answers.
    status, again = await api.post("rbd_analysis/analyze", {"id": created["id"], "method": "failure_biasing",
                                                            "precision": 0.05, "seed": 3})
    assert status == 200 and again["cached"] is True and again["run_id"] == queued["run_id"]


async def test_refused_at_the_door_naming_the_field(api: Api) -> None:
    weibull = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": 1000.0},
                                                         {"name": "beta", "value": 2.0}]}
    status, worn = await api.post("rbd/create", pumps(life=weibull))
    assert status == 200, worn
    status, fine = await api.post("rbd/create", pumps())
    assert status == 200, fine
    non_rep = {**pumps(crews=None), "repairable": False}
    for n in non_rep["nodes"]:
        n.pop("repair", None)
    status, mission = await api.post("rbd/create", non_rep)
    assert status == 200, mission
    before = await _counts(api)
    cases = [
        ({"id": worn["id"]}, 'method: failure_biasing needs every block Markovian (exponential life and repair) and '
                             'none of the features it does not simulate: node "p1": the life must be exponential'),
        ({"id": fine["id"], "horizon": 1000.0}, "horizon: failure_biasing estimates the long-run (steady-state)"),
        ({"id": fine["id"], "grid": 11}, "grid: failure_biasing estimates the long-run"),
        ({"id": mission["id"]}, "method: failure_biasing estimates a repairable diagram's steady-state"),
        ({"id": fine["id"], "replications": 10, "precision": 0.1}, "precision: give replications or precision"),
    ]
    for body, detail in cases:
        status, out = await api.post("rbd_analysis/analyze", {"method": "failure_biasing", **body})
        assert status == 422 and out["detail"].startswith(detail), (body, out)
    status, out = await api.post("rbd_analysis/analyze", {"id": fine["id"], "method": "importance"})
    assert status == 422 and out["detail"].startswith("method:"), out
    assert await _counts(api) == before


def _methods(x: Any) -> list[dict[str, Any]]:
    """Every schema of a property named `method` in the document."""
    found = []
    if isinstance(x, dict):
        m = (x.get("properties") or {}).get("method")
        if isinstance(m, dict):
            found.append(m)
        for v in x.values():
            found += _methods(v)
    elif isinstance(x, list):
        for v in x:
            found += _methods(v)
    return found


async def test_openapi_documents_the_method(api: Api) -> None:
    status, spec = await api.get("/api/v1/openapi.json")
    assert status == 200
    ours = [m for m in _methods(spec) if "failure_biasing" in m.get("enum", [])]
    assert ours and all("balanced failure biasing" in m["description"] and "`method`" in m["description"]
                        for m in ours), ours
