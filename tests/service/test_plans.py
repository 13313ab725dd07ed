"""Plans and 402, on both stores: each limit at its edge (the last allowed call is 200, the next
is 402 naming the limit and its value and pointing at the guide topic `plans`), a refused call
changes nothing, `bathtub user plan` lifts the limits, and 402 is in every OpenAPI operation."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from pydantic import BaseModel

from bathtub_api.app import create_app
from bathtub_api.cli import main, token_create
from bathtub_api.config import Config
from bathtub_api.registry import Ctx, Registry
from bathtub_api.store import open_store
from bathtub_api.tools import default_registry
from bathtub_api.tools.common import Strict
from tests.conftest import Api
from tests.service.test_job_control import forty_in_series, quoted_seconds
from tests.service.test_jobs import poll
from tests.service.test_rbd_service import two_of_three


def refused_402(status: int, body: Any, limit: str, value: str) -> None:
    assert status == 402, body
    detail = body["detail"]
    assert detail.startswith(f"plan.{limit}: the free plan allows ")
    assert f"({limit} = {value})" in detail
    assert "guide topic `plans`" in detail


async def make_api(aiohttp_client: Any, config: Config, registry: Registry | None = None,
                   user: str = "alice") -> Api:
    client = await aiohttp_client(create_app(config, registry))
    return Api(client, await token_create(config, user, ["read", "write"]))


async def set_plan(config: Config, user: str, plan: str) -> None:
    assert await asyncio.to_thread(main, ["--database-url", config.database_url, "user", "plan", user, plan]) == 0


async def count(config: Config, sql: str) -> int:
    store = await open_store(config.database_url)
    try:
        row = await store.db.fetchrow(sql)
        return int(row["n"])
    finally:
        await store.close()


async def test_stored_items_at_the_edge(aiohttp_client: Any, config: Config) -> None:
    config = dataclasses.replace(config, free_stored_items=3)
    api = await make_api(aiohttp_client, config)
    for i in range(3):  # every kind counts: datasets, models, diagrams
        status, ds = await api.post("datasets/create", {"name": f"d{i}", "data": {"t": [1.0, 2.0, 3.0]}})
        assert status == 200, ds
    before = await count(config, "SELECT COUNT(*) AS n FROM items")
    status, body = await api.post("datasets/create", {"name": "one too many", "data": {"t": [1.0]}})
    refused_402(status, body, "stored_items", "3")
    status, body = await api.post("rbd/create", two_of_three())
    refused_402(status, body, "stored_items", "3")
    status, body = await api.post("/api/v1/fit", {"name": "m", "dataset_id": ds["id"], "distribution": "weibull",
                                                  "mapping": {"x": "t"}})
    refused_402(status, body, "stored_items", "3")
    assert await count(config, "SELECT COUNT(*) AS n FROM items") == before  # nothing stored
    # An upload waiting for import is not a stored item.
    status, link = await api.post("uploads/create", {"filename": "lives.csv", "purpose": "dataset_import"})
    assert status == 200, link
    # Deleting one makes room for exactly one.
    status, _ = await api.post("datasets/delete", {"id": ds["id"]})
    assert status == 200
    status, body = await api.post("datasets/create", {"name": "again", "data": {"t": [1.0]}})
    assert status == 200, body
    status, body = await api.post("datasets/create", {"name": "again", "data": {"t": [1.0]}})
    refused_402(status, body, "stored_items", "3")
    # Another user's items are theirs: mallory starts from zero.
    other = Api(api.client, await token_create(config, "mallory", ["read", "write"]))
    status, _ = await other.post("datasets/create", {"name": "m", "data": {"t": [1.0]}})
    assert status == 200
    # The pro plan's limit is its own.
    await set_plan(config, "alice", "pro")
    status, body = await api.post("datasets/create", {"name": "pro now", "data": {"t": [1.0]}})
    assert status == 200, body


async def test_the_last_place_goes_to_one_of_two_concurrent_calls(aiohttp_client: Any, config: Config) -> None:
    config = dataclasses.replace(config, free_stored_items=5)
    api = await make_api(aiohttp_client, config)
    for i in range(4):
        assert (await api.post("datasets/create", {"name": f"d{i}", "data": {"t": [1.0]}}))[0] == 200
    outcomes = await asyncio.gather(*(api.post("datasets/create", {"name": f"race{i}", "data": {"t": [1.0]}})
                                      for i in range(6)))
    assert sorted(s for s, _ in outcomes) == [200, 402, 402, 402, 402, 402]
    assert await count(config, "SELECT COUNT(*) AS n FROM items") == 5


async def test_replications_per_job_at_the_edge(aiohttp_client: Any, config: Config) -> None:
    config = dataclasses.replace(config, free_replications_per_job=1000)
    api = await make_api(aiohttp_client, config)
    _, created = await api.post("rbd/create", two_of_three())
    status, queued = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": 50.0,
                                                             "replications": 1000})
    assert status == 200 and queued["status"] == "queued", queued
    # The first job finishes before the counts: it may store its result at any moment (seen
    # under load), which is not the refused request storing something.
    await poll(api, queued["job_id"])
    stored = "SELECT COUNT(*) AS n FROM items"
    jobs, items = (await count(config, "SELECT COUNT(*) AS n FROM jobs"), await count(config, stored))
    status, body = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": 50.0,
                                                           "replications": 1001, "seed": 2})
    refused_402(status, body, "replications_per_job", "1000")
    assert "this one asks 1,001" in body["detail"]
    assert await count(config, "SELECT COUNT(*) AS n FROM jobs") == jobs  # nothing queued
    assert await count(config, stored) == items
    await set_plan(config, "alice", "pro")
    status, queued = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": 50.0,
                                                             "replications": 1001, "seed": 2})
    assert status == 200, queued


async def test_cpu_seconds_per_job_at_the_edge(aiohttp_client: Any, config: Config) -> None:
    diagram = two_of_three()
    horizon, n = 200.0, 3000
    edge = quoted_seconds(diagram, n, horizon)  # the library's quote: what the plan is checked against
    assert quoted_seconds(diagram, n + 1, horizon) > edge
    config = dataclasses.replace(config, free_job_cpu_seconds=edge)
    api = await make_api(aiohttp_client, config)
    _, created = await api.post("rbd/create", diagram)
    status, queued = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": horizon,
                                                             "replications": n})
    assert status == 200 and queued["quote"]["seconds"] == edge, queued
    jobs = await count(config, "SELECT COUNT(*) AS n FROM jobs")
    status, body = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": horizon,
                                                           "replications": n + 1})
    refused_402(status, body, "job_cpu_seconds", f"{edge:g}")
    assert await count(config, "SELECT COUNT(*) AS n FROM jobs") == jobs


async def test_the_service_wide_limit_stays_a_422_whatever_the_plan(aiohttp_client: Any, config: Config) -> None:
    # No plan lifts the per-job limit of the service: over it is the 422 naming the field to lower.
    config = dataclasses.replace(config, job_cpu_limit_seconds=5.0, pro_job_cpu_seconds=1e9)
    api = await make_api(aiohttp_client, config)
    await set_plan(config, "alice", "pro")
    _, created = await api.post("rbd/create", forty_in_series())
    status, body = await api.post("rbd_analysis/analyze", {"id": created["id"], "horizon": 1e5,
                                                           "replications": 10_000})
    assert status == 422 and body["detail"].startswith("replications: this run is quoted at "), body


async def test_concurrent_jobs_at_the_edge(aiohttp_client: Any, config: Config) -> None:
    # Runs of hours, one worker: the jobs stay queued or running until cancelled.
    config = dataclasses.replace(config, free_concurrent_jobs=2, job_concurrency=1, job_cpu_limit_seconds=1e9,
                                 free_job_cpu_seconds=1e9)
    api = await make_api(aiohttp_client, config)
    _, created = await api.post("rbd/create", forty_in_series())
    long_run = {"id": created["id"], "horizon": 1e5, "replications": 1_000_000}
    ids = []
    for seed in (1, 2):
        status, queued = await api.post("rbd_analysis/analyze", {**long_run, "seed": seed})
        assert status == 200, queued
        ids.append(queued["job_id"])
    try:
        jobs = await count(config, "SELECT COUNT(*) AS n FROM jobs")
        status, body = await api.post("rbd_analysis/analyze", {**long_run, "seed": 3})
        refused_402(status, body, "concurrent_jobs", "2")
        assert await count(config, "SELECT COUNT(*) AS n FROM jobs") == jobs
        status, cancelled = await api.post("jobs/cancel", {"id": ids.pop(0)})
        assert status == 200 and cancelled["status"] == "cancelled", cancelled
        status, queued = await api.post("rbd_analysis/analyze", {**long_run, "seed": 3})
        assert status == 200, queued  # a finished (cancelled) job frees its place
        ids.append(queued["job_id"])
    finally:
        for job_id in ids:
            await api.post("jobs/cancel", {"id": job_id})


class Probe(Strict):
    x: float = 1.0


class ProbeOut(BaseModel):
    twice: float


@pytest.fixture
def pro_registry() -> Registry:
    """The service's registry plus one pro-only action: the mechanism, whatever tools are flagged."""
    reg = default_registry()

    async def probe(ctx: Ctx, req: Probe) -> dict[str, Any]:
        return {"twice": 2 * req.x}

    reg.action("probe", "double", request=Probe, response=ProbeOut, pro_only=True,
               summary="A pro-only probe (tests)")(probe)
    return reg


async def test_pro_only_tools_need_the_pro_plan(aiohttp_client: Any, config: Config, pro_registry: Registry) -> None:
    api = await make_api(aiohttp_client, config, pro_registry)
    status, body = await api.post("probe/double", {"x": 2.0})
    refused_402(status, body, "pro_tools", "0")
    assert "probe/double is pro-only" in body["detail"]
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "probe", "arguments": {"action": "double", "x": 2.0}}}
    _, rpc = await api.post("/mcp", call)  # the tool protocol refuses alike
    assert rpc["result"]["isError"] and rpc["result"]["structuredContent"] == {"detail": body["detail"],
                                                                               "status": 402}
    _, document = await api.get("/api/v1/openapi.json")
    assert "402" in document["paths"]["/api/v1/probe/double"]["post"]["responses"]
    await set_plan(config, "alice", "pro")
    assert await api.post("probe/double", {"x": 2.0}) == (200, {"twice": 4.0})
    _, rpc = await api.post("/mcp", call)
    assert rpc["result"]["structuredContent"] == {"twice": 4.0}


async def test_402_is_in_every_operation_and_the_guide_says_what_each_plan_allows(
        aiohttp_client: Any, config: Config) -> None:
    config = dataclasses.replace(config, free_stored_items=7, pro_replications_per_job=123_456)
    api = await make_api(aiohttp_client, config)
    _, document = await api.get("/api/v1/openapi.json")
    for path, ops in document["paths"].items():
        for method, op in ops.items():
            assert "402" in op["responses"], (method, path)
    status, guide = await api.post("guide", {"topic": "plans"})
    assert status == 200
    text = guide["text"]
    assert "free: 7 stored items" in text and "123,456 replications per job" in text
    assert "bathtub user plan USER free|pro" in text and "Your plan: free." in text
    assert "402" in text and "plan.concurrent_jobs" in text and "planned" not in text
    async with api.client.get("/api/v1/docs/guide/plans") as resp:  # the browsable docs say the same figures
        page = await resp.text()
    assert resp.status == 200 and "free: 7 stored items" in page


async def test_cli_sets_and_shows_a_plan(config: Config, capsys: Any) -> None:
    await token_create(config, "alice", ["read"])
    url = ["--database-url", config.database_url]
    assert await asyncio.to_thread(main, [*url, "user", "plan", "alice"]) == 0
    assert "alice: plan free" in capsys.readouterr().out
    assert await asyncio.to_thread(main, [*url, "user", "plan", "alice", "pro"]) == 0
    assert "alice: plan pro" in capsys.readouterr().out
    assert await asyncio.to_thread(main, [*url, "user", "plan", "nobody", "pro"]) == 1
    assert "no user nobody" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main([*url, "user", "plan", "alice", "gold"])
    assert info.value.code == 2


def test_plan_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATHTUB_FREE_STORED_ITEMS", "12")
    monkeypatch.setenv("BATHTUB_PRO_CONCURRENT_JOBS", "3")
    monkeypatch.setenv("BATHTUB_FREE_JOB_CPU_SECONDS", "42.5")
    config = Config.from_env()
    assert (config.free_stored_items, config.pro_concurrent_jobs, config.free_job_cpu_seconds) == (12, 3, 42.5)
    with pytest.raises(ValueError, match="free_stored_items"):
        Config(free_stored_items=-1)


async def test_the_client_raises_its_one_error_type_with_402(config: Config) -> None:
    from bathtub.client import Client
    from bathtub.errors import ApiError, BathtubError
    from tests.service.test_client import Served

    config = dataclasses.replace(config, free_stored_items=1)
    token = await token_create(config, "alice", ["read", "write"])
    served = await asyncio.to_thread(Served, config)

    def run() -> tuple[dict[str, Any], BathtubError, dict[str, Any]]:
        with Client(served.url, token, max_retries=0) as bt:
            first = bt.datasets_create(name="only one", data={"t": [1.0]})
            with pytest.raises(BathtubError) as info:
                bt.datasets_create(name="one too many", data={"t": [1.0]})
            opened = bt.post_session(token=token)  # the session route is a client method too
            return first, info.value, opened

    try:
        first, err, opened = await asyncio.to_thread(run)
    finally:
        await asyncio.to_thread(served.close)
    assert first["id"].startswith("ds_")
    assert isinstance(err, ApiError) and err.status == 402
    assert err.detail.startswith("plan.stored_items: the free plan allows at most 1 stored item;")
    assert str(err).startswith("402")
    assert opened["user"] == "alice" and opened["scopes"] == ["read", "write"]


async def test_bootstrap_resamples_are_replications_at_the_edge(aiohttp_client: Any, config: Config) -> None:
    from tests.service.test_alt_routes import _body, _dataset

    config = dataclasses.replace(config, free_replications_per_job=300)
    api = await make_api(aiohttp_client, config)
    status, fitted = await api.post("/api/v1/fit", _body(await _dataset(api)))
    assert status == 200, fitted
    status, queued = await api.post("alt/bootstrap", {"model_id": fitted["id"], "replicates": 300})
    assert status == 200 and queued["status"] == "queued", queued
    jobs = await count(config, "SELECT COUNT(*) AS n FROM jobs")
    status, body = await api.post("alt/bootstrap", {"model_id": fitted["id"], "replicates": 301})
    refused_402(status, body, "replications_per_job", "300")
    assert await count(config, "SELECT COUNT(*) AS n FROM jobs") == jobs
    await api.post("jobs/cancel", {"id": queued["job_id"]})
