"""Bounded jobs, on both stores: a run quoted over the per-job limit is refused before
anything is queued; a running simulation reports progress and an ETA and stops when its
owner cancels it; cancelling follows the job's state."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from bathtub import rbd
from bathtub.rbd.quote import quote
from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.keys import JOBS
from bathtub_api.store import open_store
from tests.conftest import Api

LAM, MU = 1e-2, 1.0


def exp_model(rate: float) -> dict[str, Any]:
    return {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": rate}]}


def forty_in_series(repairable: bool = True) -> dict[str, Any]:
    """Forty repairable blocks in series: about 80,000 events per replication over 1e5 h."""
    blocks = [{"id": f"b{i}", "type": "component", "model": exp_model(LAM),
               **({"repair": exp_model(MU)} if repairable else {})} for i in range(40)]
    ids = ["in", *(b["id"] for b in blocks), "out"]
    return {"name": "line", "unit": "hours", "repairable": repairable,
            "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}, *blocks],
            "edges": [{"source": s, "target": t} for s, t in itertools.pairwise(ids)]}


def quoted_seconds(diagram: dict[str, Any], replications: int, horizon: float | None) -> float:
    """The library's quote for the diagram (what the refusal must cite)."""
    body = rbd.check_diagram(diagram)
    return quote(rbd.engine_form(body, {}, {}), replications=replications, horizon=horizon).seconds


@pytest.fixture
def config(database_url: str) -> Config:
    # Room for long runs, the free plan's too (the refusal tests build their own app with the default limit).
    return Config(database_url=database_url, rate_limit_per_minute=10_000, job_concurrency=2, cpu_workers=1,
                  token_cache_seconds=0.0, job_cpu_limit_seconds=1e9, free_job_cpu_seconds=1e9)


async def count_jobs(database_url: str) -> int:
    store = await open_store(database_url)
    try:
        row = await store.db.fetchrow("SELECT COUNT(*) AS n FROM jobs")
        return int(row["n"])
    finally:
        await store.close()


async def test_a_run_over_the_default_limit_is_refused_before_queueing(aiohttp_client: Any, database_url: str) -> None:
    config = Config(database_url=database_url, cpu_workers=1)
    assert config.job_cpu_limit_seconds == 600.0  # the default: 10 CPU-minutes per job
    api = Api(await aiohttp_client(create_app(config)), await token_create(config, "alice", ["read", "write"]))
    diagram = forty_in_series()
    _, created = await api.post("rbd/create", diagram)
    seconds = quoted_seconds(diagram, 100_000, 1e5)
    assert seconds > 600.0
    status, out = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": 1e5,
                                                          "replications": 100_000})
    assert status == 422 and list(out) == ["detail"]
    assert out["detail"].startswith("replications: this run is quoted at ")
    assert f"{seconds / 60:,.1f} CPU-minutes ({seconds:,.0f} s on one core" in out["detail"]
    assert "limit of 10 CPU-minutes per job; lower replications or horizon" in out["detail"]
    # Precision mode is quoted at its cap, so the cap is the field to lower.
    status, out = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": 1e5, "precision": 1e-4,
                                                          "max_replications": 100_000})
    assert status == 422 and out["detail"].startswith("max_replications: this run is quoted at ")
    # Nothing was queued or stored; a run under the limit still goes through.
    assert await count_jobs(database_url) == 0
    assert (await api.post("list/rbd_run"))[1]["items"] == []
    status, out = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": 1e5, "replications": 5})
    assert status == 200 and out["status"] == "queued"


async def test_the_limit_is_configured_and_names_mission_time(aiohttp_client: Any, database_url: str) -> None:
    config = Config(database_url=database_url, cpu_workers=1, job_cpu_limit_seconds=5.0)
    api = Api(await aiohttp_client(create_app(config)), await token_create(config, "alice", ["read", "write"]))
    diagram = forty_in_series(repairable=False)
    _, created = await api.post("rbd/create", diagram)
    seconds = quoted_seconds(diagram, 10_000_000, None)
    assert seconds > 5.0
    status, out = await api.post("rbd_analysis/analyze", {"id": created["id"], "mission_time": 100.0,
                                                          "method": "simulation", "replications": 10_000_000})
    assert status == 422
    assert out["detail"].startswith(f"replications: this run is quoted at {seconds / 60:,.1f} CPU-minutes")
    assert out["detail"].endswith("over the limit of 0.0833333 CPU-minutes per job; lower replications or mission_time")
    assert await count_jobs(database_url) == 0


async def poll(api: Api, job_id: str, until: tuple[str, ...], check: Any = None) -> dict[str, Any]:
    for _ in range(1200):
        status, job = await api.post("get/job", {"id": job_id})
        assert status == 200, job
        if job["status"] in until and (check is None or check(job)):
            return job
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {job_id} never reached {until}: {job}")


async def test_progress_eta_and_cancel_of_a_running_simulation(api: Api, other_api: Api, client: Any) -> None:
    _, created = await api.post("rbd/create", forty_in_series())
    status, queued = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": 1e5,
                                                             "replications": 1_000_000})
    assert status == 200, queued
    job_id = queued["job_id"]
    job = await poll(api, job_id, ("running",), lambda j: j["progress"] > 0)
    # Hours of work if nobody stops it: a sliver done, and an ETA to match.
    assert 0 < job["progress"] < 0.01 and job["eta_s"] > 0
    again = await poll(api, job_id, ("running",), lambda j: j["progress"] > job["progress"])
    assert again["progress"] > job["progress"]

    status, out = await other_api.post("jobs/cancel", {"id": job_id})
    assert status == 404 and list(out) == ["detail"]  # another user's job does not exist for them
    status, out = await api.post("jobs/cancel", {"id": job_id})
    assert status == 200, out
    assert out["status"] == "cancelled" and out["message"] == "cancelled by its owner" and out["finished_at"]
    # The answer came once the engine had stopped: nothing of the job is running any more.
    assert job_id not in client.app[JOBS].running
    assert (await api.post("list/rbd_run"))[1]["items"] == []  # and nothing was stored
    status, out = await api.post("jobs/cancel", {"id": job_id})
    assert status == 200 and out["status"] == "cancelled"  # cancelling twice is harmless
    status, out = await api.post("get/job", {"id": job_id})
    assert out["status"] == "cancelled"


async def test_cancel_a_queued_job_and_refuse_a_finished_one(api: Api, client: Any) -> None:
    _, created = await api.post("rbd/create", forty_in_series())
    big = {"id": created["id"], "horizon": 1e5, "replications": 1_000_000}
    running = [(await api.post("rbd_analysis/analyze", {**big, "seed": s}))[1]["job_id"] for s in (1, 2)]
    _, waiting = await api.post("rbd_analysis/analyze", {**big, "seed": 3})
    for j in running:
        await poll(api, j, ("running",))
    assert (await api.post("get/job", {"id": waiting["job_id"]}))[1]["status"] == "queued"  # two at a time
    status, out = await api.post("jobs/cancel", {"id": waiting["job_id"]})
    assert status == 200 and out["status"] == "cancelled"
    for j in running:
        assert (await api.post("jobs/cancel", {"id": j}))[1]["status"] == "cancelled"
    assert client.app[JOBS].running == frozenset()
    assert (await api.post("get/job", {"id": waiting["job_id"]}))[1]["status"] == "cancelled"  # never started

    _, small = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": 100.0, "replications": 10})
    done = await poll(api, small["job_id"], ("done",))
    assert done["progress"] == 1.0
    status, out = await api.post("jobs/cancel", {"id": small["job_id"]})
    assert status == 409 and out["detail"].startswith("id: job ") and "already done" in out["detail"]
    assert (await api.post("get/job", {"id": small["job_id"]}))[1]["status"] == "done"


async def test_cancel_needs_write_scope(client: Any, config: Config) -> None:
    reader = Api(client, await token_create(config, "alice", ["read"]))
    status, out = await reader.post("jobs/cancel", {"id": "job_x"})
    assert status == 403 and list(out) == ["detail"]
