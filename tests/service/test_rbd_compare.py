"""`rbd_analysis compare` over HTTP: two stored runs mapped onto `bathtub.rbd.compare_runs` (whose
numerics tests/rbd/test_compare.py checks), and its refusals: another user's or an unknown run is
404, the same run twice, runs of different kinds or a bad confidence 422 naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from bathtub import rbd
from tests.conftest import Api
from tests.service.test_rbd_service import poll, two_of_three

# Mapping and refusals: the store only holds the runs (tests/conftest.py's one_store rule).
pytestmark = pytest.mark.one_store


async def _run(api: Api, rbd_id: str, **options: Any) -> str:
    status, queued = await api.post("rbd_analysis/analyze", {"id": rbd_id, **options})
    assert status == 200, queued
    if queued["status"] != "done":
        job = await poll(api, queued["job_id"])
        assert job["status"] == "done", job
    return str(queued["run_id"])


async def test_two_seeds_then_recompute_on_a_changed_repair(api: Api) -> None:
    status, created = await api.post("rbd/create", two_of_three())
    assert status == 200, created
    rbd_id = created["id"]
    opts = {"horizon": 500.0, "replications": 4000, "grid": 11}
    first = await _run(api, rbd_id, seed=1, **opts)
    second = await _run(api, rbd_id, seed=2, **opts)
    status, out = await api.post("rbd_analysis/compare", {"run_ids": [first, second]})
    assert status == 200, out
    assert out["run_ids"] == [first, second] and out["rbd_ids"] == [rbd_id, rbd_id]
    assert out["verdict"] == "same" and out["kind"] == "availability" and out["correction"] == "holm"
    assert out["inputs"]["differ"] == ["options.seed"] and out["inputs"]["settings_only"] is True
    assert out["engines"]["a"]["engine"] == out["engines"]["b"]["engine"]
    assert out["speed"]["ratio"] is not None and out["speed"]["ratio"] > 0
    # The answer is the library's on the two stored run bodies, nothing of the service's own.
    _, run_a = await api.post("get/rbd_run", {"id": first})
    _, run_b = await api.post("get/rbd_run", {"id": second})
    lib = rbd.compare_runs(run_a, run_b)
    assert [f["figure"] for f in out["figures"]] == [f["figure"] for f in lib["figures"]]
    assert [f["verdict"] for f in out["figures"]] == [f["verdict"] for f in lib["figures"]]

    # Every pump's repair twice as long: the same seed, recomputed on the edited diagram.
    ops = [{"op": "update_node", "ids": ["p1", "p2", "p3"], "repair": {"distribution_id": "exponential",
                                                                        "params": [0.05]}}]
    status, edited = await api.post("rbd/edit", {"id": rbd_id, "ops": ops})
    assert status == 200, edited
    third = await _run(api, rbd_id, seed=1, recompute=True, **opts)
    status, out = await api.post("rbd_analysis/compare", {"run_ids": [first, third], "confidence": 0.99})
    assert status == 200, out
    rows = {f["figure"]: f for f in out["figures"]}
    assert out["verdict"] == "changed" and rows["mean_availability"]["verdict"] == "changed"
    assert rows["mean_availability"]["difference"] < 0 and out["confidence"] == 0.99
    assert "diagram.nodes.p1.repair.params.failure_rate.value" in out["inputs"]["differ"]
    assert out["inputs"]["settings_only"] is False
    assert any("same seed" in n for n in out["notes"])


async def test_refusals(api: Api, other_api: Api) -> None:
    _, repairable = await api.post("rbd/create", two_of_three())
    _, mission = await api.post("rbd/create", {**two_of_three(repairable=False), "name": "non-repairable"})
    avail = await _run(api, repairable["id"], horizon=100.0, replications=200, seed=1)
    exact = await _run(api, mission["id"], mission_time=50.0)
    status, out = await api.post("rbd_analysis/compare", {"run_ids": [avail, exact]})
    assert status == 422 and "run_ids" in out["detail"] and "different kinds" in out["detail"], out
    status, out = await api.post("rbd_analysis/compare", {"run_ids": [avail, avail]})
    assert status == 422 and "run_ids" in out["detail"] and "same run twice" in out["detail"], out
    status, out = await api.post("rbd_analysis/compare", {"run_ids": [avail]})
    assert status == 422 and "run_ids" in out["detail"], out
    status, out = await api.post("rbd_analysis/compare", {"run_ids": [avail, exact], "confidence": 1.0})
    assert status == 422 and "confidence" in out["detail"], out
    status, out = await api.post("rbd_analysis/compare", {"run_ids": [avail, "run_nosuch"]})
    assert status == 404, out
    # Another user's runs are "no such run" to the caller, whichever side they are on.
    _, theirs = await other_api.post("rbd/create", two_of_three())
    their_run = await _run(other_api, theirs["id"], horizon=100.0, replications=200, seed=2)
    status, out = await api.post("rbd_analysis/compare", {"run_ids": [avail, their_run]})
    assert status == 404, out
    status, out = await other_api.post("rbd_analysis/compare", {"run_ids": [their_run, avail]})
    assert status == 404, out
