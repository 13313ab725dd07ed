"""Scopes: whatever stores needs `write`. Walks the whole registry (every action and route)
for handlers that can reach a store write, and checks that a read-only token is refused
wherever a request would store; on SQLite and PostgreSQL."""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.jobs import JobRunner
from bathtub_api.mcp import tool_list
from bathtub_api.registry import Ctx, Registry
from bathtub_api.store.base import Store
from bathtub_api.store.datasets import DatasetQueries
from bathtub_api.store.items import ItemQueries
from bathtub_api.store.job_queries import JobQueries
from bathtub_api.store.readonly import READS
from bathtub_api.tools import default_registry
from tests.conftest import Api

# Every public Store method that is not a read, and the job runner's submit (it stores a job).
# Store's own methods and those of the item, dataset and job queries split out of it (accounts,
# sessions, links and tracking have their own scope rules and tests).
STORE_WRITES = {n for cls in (Store, ItemQueries, DatasetQueries, JobQueries) for n, f in vars(cls).items()
                if inspect.iscoroutinefunction(f) and not n.startswith("_")} - READS
WRITES = STORE_WRITES | {"submit"}
# The job runner's own machinery (pool start-up, leases, purges) is not a request's write: a handler
# stores through the runner only by `submit`ting a job (in WRITES); run_cpu/run_thread run pure work.
RUNNER_METHODS = {n: f for n, f in vars(JobRunner).items()
                  if inspect.isfunction(f) and n not in ("run_cpu", "run_thread")}


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _codes(c)


def _callees(fn: Callable[..., Any], names: set[str]) -> Iterator[Callable[..., Any]]:
    """Functions of the service (bathtub_api) a function may call: its globals, functions of
    service modules it names by attribute, closure cells, and job-runner methods."""
    cells = [c.cell_contents for c in (fn.__closure__ or ()) if c.cell_contents is not None]
    for name in names:
        target = fn.__globals__.get(name)
        if target is not None:
            cells.append(target)
        if name in RUNNER_METHODS:
            cells.append(RUNNER_METHODS[name])
    for obj in cells:
        if isinstance(obj, types.ModuleType) and obj.__name__.startswith("bathtub_api"):
            yield from (f for n, f in vars(obj).items() if n in names and inspect.isfunction(f))
        elif inspect.isfunction(obj) and obj.__module__.startswith(("bathtub_api", "tests")):
            yield obj


def can_write(fn: Callable[..., Any], seen: set[Any] | None = None) -> bool:
    seen = set() if seen is None else seen
    if fn in seen:
        return False
    seen.add(fn)
    names = {n for c in _codes(fn.__code__) for n in (*c.co_names, *c.co_freevars)}
    if names & WRITES:
        return True
    return any(can_write(f, seen) for f in _callees(fn, names))


def test_the_walker_sees_writes_through_calls() -> None:
    async def writes(ctx: Ctx, req: Any) -> None:
        await ctx.store.insert_item("u", "k", "i", "n", {})

    async def calls(ctx: Ctx, req: Any) -> None:
        await writes(ctx, req)

    async def reads(ctx: Ctx, req: Any) -> None:
        await ctx.store.get_item("u", "k", "i")

    assert can_write(writes) and can_write(calls) and not can_write(reads)


def test_every_storing_action_and_route_needs_write_or_says_when_it_stores() -> None:
    reg = default_registry()
    flagged = []
    for a in reg.actions.values():
        if can_write(a.handler):
            flagged.append(a.operation_id)
            assert a.scope == "write" or a.writes_if is not None, f"{a.operation_id} stores but is read-scoped"
        else:
            assert a.stores == "never" or a.scope == "write", f"{a.operation_id} says it stores but cannot"
    for r in reg.routes:
        if can_write(r.handler):
            flagged.append(r.operation_id)
            assert r.scope == "write" or r.writes_if is not None, f"{r.method} {r.path} stores but is read-scoped"
    # The walk does find the writers (it would pass vacuously otherwise).
    assert {"rbd_create", "rbd_edit", "strategy_optimal_replacement", "fit_life", "datasets_create"} <= set(flagged)
    # MCP: read-only exactly when no action of the tool can ever store.
    for tool in tool_list(reg):
        actions = [a for a in reg.tools()[tool["name"]] if not a.rest_only]
        assert tool["annotations"]["readOnlyHint"] == all(a.stores == "never" for a in actions), tool["name"]
        if any(can_write(a.handler) for a in actions):
            assert tool["annotations"]["readOnlyHint"] is False, tool["name"]


@pytest.fixture
async def reader(client: Any, config: Config) -> Api:
    return Api(client, await token_create(config, "alice", ["read"]))


REPLACEMENT = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": 1000.0},
                                                        {"name": "beta", "value": 2.5}],
               "planned_cost": 100.0, "unplanned_cost": 1000.0}


async def _saved_analyses(api: Api) -> list[Any]:
    status, listed = await api.post("list/strategy_analysis", {})
    assert status == 200, listed
    return list(listed["items"])


async def test_a_read_token_cannot_save_strategy_analyses(api: Api, reader: Api) -> None:
    refused = "this token lacks the 'write' scope (save: true stores a strategy_analysis item)"
    for path in ("strategy/optimal_replacement", "/api/v1/strategy/optimal-replacement"):
        status, body = await reader.post(path, {**REPLACEMENT, "save": True})
        assert (status, body) == (403, {"detail": refused}), path
        status, body = await reader.post(path, REPLACEMENT)
        assert status == 200 and "analysis_id" not in body, body
    status, rpc = await reader.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "strategy", "arguments": {"action": "optimal_replacement", **REPLACEMENT, "save": True}}})
    assert status == 200 and rpc["result"]["isError"] is True, rpc
    assert rpc["result"]["structuredContent"] == {"detail": refused, "status": 403}
    assert await _saved_analyses(api) == []
    status, body = await api.post("strategy/optimal_replacement", {**REPLACEMENT, "save": True})
    assert status == 200 and body["analysis_id"].startswith("sa_"), body
    assert [a["id"] for a in await _saved_analyses(reader)] == [body["analysis_id"]]
    status, rpc = await reader.post("/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    hints = {t["name"]: t["annotations"]["readOnlyHint"] for t in rpc["result"]["tools"]}
    assert hints["strategy"] is False and hints["get"] is True and hints["list"] is True


class Rogue(BaseModel):
    name: str


async def _rogue(ctx: Ctx, req: Rogue) -> dict[str, Any]:
    # Declared read-only, stores anyway: the read-only store refuses it.
    await ctx.store.insert_item(ctx.user.id, "rbd", "rbd_rogue", req.name, {"name": req.name})
    return {"stored": True}


@pytest.fixture
def registry() -> Registry:
    reg = default_registry()
    reg.action("rogue", None, request=Rogue, summary="an undeclared write")(_rogue)
    return reg


async def test_an_undeclared_write_is_refused_to_a_read_token(api: Api, reader: Api) -> None:
    status, body = await reader.post("rogue", {"name": "x"})
    assert (status, body) == (403, {"detail": "this token lacks the 'write' scope (this request would store data)"})
    status, listed = await api.post("list/rbd", {})
    assert status == 200 and listed["items"] == []
    status, body = await api.post("rogue", {"name": "x"})
    assert status == 200 and body == {"stored": True}
