"""The job mechanism, proven through actions the tests register themselves."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bathtub.errors import InputError
from bathtub_api.app import create_app
from bathtub_api.auth import hash_token
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.ids import now
from bathtub_api.jobs import JobCtx, gave_up
from bathtub_api.registry import Ctx, Registry
from bathtub_api.store import open_store
from bathtub_api.tools import default_registry
from bathtub_api.tools.common import Strict
from tests.conftest import Api
from tests.service import jobwork

GATES: dict[str, asyncio.Event] = {}


class Crunch(Strict):
    n: int = 1000
    fail: bool = False
    spin: float = 0.0
    gate: str | None = None


def jobs_registry() -> Registry:
    reg = default_registry()

    @reg.job("testing.crunch")
    async def crunch(ctx: JobCtx, args: dict[str, Any]) -> dict[str, Any]:
        if args["gate"]:
            await GATES.setdefault(args["gate"], asyncio.Event()).wait()
        if args["fail"]:
            raise InputError("n", "is unlucky")
        if args["spin"]:
            await ctx.jobs.run_cpu(jobwork.spin, args["spin"])
        return {"sum": await ctx.jobs.run_cpu(jobwork.sum_squares, args["n"])}

    @reg.action("testing", "crunch", request=Crunch, summary="test job", heavy=True)
    async def submit(ctx: Ctx, req: Crunch) -> dict[str, Any]:
        return await ctx.jobs.submit(ctx.user.id, "testing.crunch", req.model_dump())

    return reg


@pytest.fixture
def registry() -> Registry:
    return jobs_registry()


async def poll(api: Api, job_id: str, until: tuple[str, ...] = ("done", "failed")) -> dict[str, Any]:
    for _ in range(600):
        status, job = await api.post("get/job", {"id": job_id})
        assert status == 200, job
        if job["status"] in until:
            return job
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {job_id} stuck in {job['status']}")


async def test_job_runs_to_done_in_a_worker_process(api: Api) -> None:
    status, queued = await api.post("testing/crunch", {"n": 10_000})
    assert status == 200 and queued["status"] == "queued" and queued["queue_position"] >= 1
    job = await poll(api, queued["job_id"])
    n = 10_000
    assert job["status"] == "done" and job["result"] == {"sum": (n - 1) * n * (2 * n - 1) // 6}
    assert job["started_at"] and job["finished_at"]


async def test_failed_job_says_why(api: Api) -> None:
    _, queued = await api.post("testing/crunch", {"fail": True})
    job = await poll(api, queued["job_id"])
    assert job["status"] == "failed" and job["message"] == "n: is unlucky" and "result" not in job


async def test_queue_positions_and_limit(api: Api) -> None:
    gate = f"g{id(api)}"
    GATES[gate] = asyncio.Event()
    ids = [(await api.post("testing/crunch", {"gate": gate}))[1]["job_id"] for _ in range(4)]
    await poll(api, ids[1], until=("running",))
    states = [(await api.post("get/job", {"id": i}))[1] for i in ids]
    assert [s["status"] for s in states] == ["running", "running", "queued", "queued"]  # limit is 2
    assert [s["queue_position"] for s in states[2:]] == [1, 2]
    GATES[gate].set()
    assert [(await poll(api, i))["status"] for i in ids] == ["done"] * 4


@pytest.mark.slow  # ~4 s a store: the test is a 4-second job running while the loop answers
async def test_cpu_work_does_not_stall_the_loop(api: Api) -> None:
    _, created = await api.post("datasets/create", {"name": "d", "data": {"t": [1, 2, 3]}})
    _, queued = await api.post("testing/crunch", {"spin": 4.0})
    await poll(api, queued["job_id"], until=("running",))
    for _ in range(20):
        status, page = await api.post("get/dataset", {"id": created["id"]})
        assert status == 200 and page["row_count"] == 3
    # All twenty reads were served while the 4-second pure-Python job still held its worker.
    assert (await api.post("get/job", {"id": queued["job_id"]}))[1]["status"] == "running"
    assert (await poll(api, queued["job_id"]))["status"] == "done"


async def test_jobs_are_private(api: Api, other_api: Api) -> None:
    _, queued = await api.post("testing/crunch", {})
    status, body = await other_api.post("get/job", {"id": queued["job_id"]})
    assert status == 404 and list(body) == ["detail"]


async def test_startup_recovers_expired_leases_runs_queued_and_purges(aiohttp_client: Any, database_url: str) -> None:
    config = Config(database_url=database_url, cpu_workers=1)
    token = await token_create(config, "alice", ["read", "write"])
    args = {"n": 5, "fail": False, "spin": 0.0, "gate": None}
    store = await open_store(database_url)
    try:
        owner = (await store.token_owner(hash_token(token)))["user_id"]
        # Left running by a dead instance: its lease ran out, so it is requeued and run again.
        orphan = await store.create_job(owner, "testing.crunch", args)
        assert await store.claim_job(orphan, "inst_dead", now() - 1.0)
        # The same, but it already used every attempt (it keeps killing its instance): failed.
        doomed = await store.create_job(owner, "testing.crunch", args)
        await store.db.execute("UPDATE jobs SET attempts = ? WHERE id = ?", config.job_max_attempts - 1, doomed)
        assert await store.claim_job(doomed, "inst_dead", now() - 1.0)
        waiting = await store.create_job(owner, "testing.crunch", args)
        old = await store.create_job(owner, "testing.crunch", args)
        await store.db.execute("UPDATE jobs SET created_at = ?, status = 'done' WHERE id = ?", now() - 8 * 86400, old)
    finally:
        await store.close()
    api = Api(await aiohttp_client(create_app(config, jobs_registry())), token)
    assert (await poll(api, orphan))["result"] == {"sum": 30}
    job = await poll(api, doomed)
    assert job["status"] == "failed" and job["message"] == gave_up(config.job_max_attempts)
    assert (await poll(api, waiting))["result"] == {"sum": 30}
    status, _ = await api.post("get/job", {"id": old})
    assert status == 404  # older than a week: purged
