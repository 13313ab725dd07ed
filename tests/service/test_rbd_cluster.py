"""BATHTUB_DASK_SCHEDULER: the service runs its simulation jobs on a real dask.distributed
LocalCluster (worker processes), both stores, and stores the numbers the local run gives."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bathtub.rbd import analyze
from bathtub_api.config import Config
from tests.conftest import Api
from tests.service.test_rbd_service import poll, two_of_three

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def config(database_url: str, tmp_path: Any, scheduler: str) -> Config:
    return Config(database_url=database_url, rate_limit_per_minute=10_000, job_concurrency=2, cpu_workers=1,
                  token_cache_seconds=0.0, data_dir=str(tmp_path / "files"), dask_scheduler=scheduler)


@pytest.mark.slow  # a dask LocalCluster of worker processes
async def test_a_simulation_job_runs_on_the_cluster_with_the_local_numbers(api: Api) -> None:
    diagram = two_of_three()
    status, created = await api.post("rbd/create", diagram)
    assert status == 200, created
    options = {"horizon": 200.0, "replications": 20_000, "seed": 7, "grid": 21}
    status, queued = await api.post("rbd_analysis/analyze", {"id": created["id"], **options})
    assert status == 200, queued
    job = await poll(api, queued["job_id"])
    assert job["status"] == "done" and job["progress"] == 1.0, str(job)[:3000]
    status, run = await api.post("get/rbd_run", {"id": queued["run_id"], "include_curve": True})
    assert status == 200, run
    local = analyze(diagram, threads=1, **options)
    assert run["results"]["mean_availability"] == local["results"]["mean_availability"]
    assert run["results"]["blocks"] == local["results"]["blocks"] and run["curve"] == local["curve"]


def test_the_scheduler_setting_is_checked_at_start() -> None:
    with pytest.raises(ValueError, match="BATHTUB_DASK_SCHEDULER must be a scheduler address"):
        Config(dask_scheduler="localhost")
