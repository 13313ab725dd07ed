"""Several instances on one store (one PostgreSQL schema, one SQLite file): a running job is
leased to its instance, so another instance starting or recovering leaves it alone while
the lease is renewed, and takes it over only once the lease ran out."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.keys import JOBS
from tests.conftest import Api
from tests.service.serving import job_row
from tests.service.test_jobs import GATES, jobs_registry, poll

LEASE_S = 1.0


@pytest.mark.slow  # ~9 s: waits out job leases
async def test_instances_share_a_store_without_taking_live_jobs(aiohttp_client: Any, database_url: str) -> None:
    config = Config(database_url=database_url, cpu_workers=1, job_lease_seconds=LEASE_S,
                    job_heartbeat_seconds=LEASE_S / 4, token_cache_seconds=0.0)
    token = await token_create(config, "alice", ["read", "write"])
    gate = f"lease-{id(config)}"
    GATES[gate] = asyncio.Event()
    client_a = await aiohttp_client(create_app(config, jobs_registry()))
    a = Api(client_a, token)
    _, queued = await a.post("testing/crunch", {"n": 100, "gate": gate})
    job_id = queued["job_id"]
    await poll(a, job_id, until=("running",))
    runner_a = client_a.app[JOBS]

    # B starts while A runs the job, and lives through several lease lengths and recoveries.
    client_b = await aiohttp_client(create_app(config, jobs_registry()))
    b = Api(client_b, token)
    runner_b = client_b.app[JOBS]
    await asyncio.sleep(4 * LEASE_S)
    row = await job_row(database_url, job_id)
    assert (row["status"], row["lease_owner"], row["attempts"]) == ("running", runner_a.instance, 1)
    assert (await b.post("get/job", {"id": job_id}))[1]["status"] == "running"

    # A dies without a word (in-process stand-in for kill -9; test_serve_kill kills a
    # real server): its heartbeat stops, so its lease runs out and B takes the job over.
    for loop in runner_a._loops:
        loop.cancel()
    for _ in range(400):
        row = await job_row(database_url, job_id)
        if row["lease_owner"] == runner_b.instance:
            break
        await asyncio.sleep(0.05)
    assert (row["status"], row["attempts"]) == ("running", 2)
    # Both now compute it; only the lease holder's outcome is stored (A's write is refused).
    GATES[gate].set()
    job = await poll(b, job_id)
    assert job["status"] == "done" and job["result"] == {"sum": sum(i * i for i in range(100))}
    for _ in range(600):  # let A's stale work reach its (refused) write
        if not runner_a.running:
            break
        await asyncio.sleep(0.05)
    assert runner_a.running == frozenset() and runner_b.running == frozenset()
    row = await job_row(database_url, job_id)
    assert (row["status"], row["lease_owner"], row["result"]) == ("done", None, job["result"])
    assert (await b.post("get/job", {"id": job_id}))[1]["finished_at"] == job["finished_at"]  # A wrote nothing


async def test_a_job_cancelled_through_another_instance_stops_where_it_runs(aiohttp_client: Any,
                                                                         database_url: str) -> None:
    config = Config(database_url=database_url, cpu_workers=1, job_lease_seconds=LEASE_S,
                    job_heartbeat_seconds=LEASE_S / 4, token_cache_seconds=0.0)
    token = await token_create(config, "alice", ["read", "write"])
    gate = f"cancel-{id(config)}"
    GATES[gate] = asyncio.Event()
    client_a = await aiohttp_client(create_app(config, jobs_registry()))
    a = Api(client_a, token)
    b = Api(await aiohttp_client(create_app(config, jobs_registry())), token)
    _, queued = await a.post("testing/crunch", {"gate": gate})
    job_id = queued["job_id"]
    await poll(a, job_id, until=("running",))
    status, out = await b.post("jobs/cancel", {"id": job_id})
    assert status == 200 and out["status"] == "cancelled"
    # A learns it at its next heartbeat and stops the job's work.
    for _ in range(400):
        if job_id not in client_a.app[JOBS].running:
            break
        await asyncio.sleep(0.05)
    assert job_id not in client_a.app[JOBS].running
    assert (await a.post("get/job", {"id": job_id}))[1]["status"] == "cancelled"
