"""An agent's session through the official MCP SDK (issue 29): it knows only what `tools/list`
and the `guide` tool tell it. It reads the guide for diagrams, writes a diagram whose every key
the guide names and the `rbd` tool's schema accepts, runs a simulation as the `rbd_analysis`
guide says, polls the job with `get`, and reads a mean availability that matches the closed form
of one repairable exponential unit (MTBF / (MTBF + MTTR)) within the run's own interval."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import jsonschema
import pytest

from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.registry import Registry

# The tool protocol as agents use it: mapping, no store-specific behaviour (see tests/conftest.py).
pytestmark = pytest.mark.one_store


def _keys(node: Any) -> set[str]:
    """Every object key of a request, nested (what the agent had to know the name of)."""
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in _keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _keys(v)}
    return set()


async def test_an_agent_builds_and_simulates_a_diagram_from_the_tool_list_and_guide_alone(
        aiohttp_server: Any, config: Config, registry: Registry) -> None:
    server = await aiohttp_server(create_app(config, registry))
    token = await token_create(config, "agent", ["read", "write"])
    # imported here, not at the top: the SDK costs ~1.8 s at collection in every xdist worker
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    base = str(server.make_url("")).rstrip("/")
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http, \
            streamable_http_client(f"{base}/mcp", http_client=http) as streams, \
            ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        # The rbd tool says where its how-to is; the agent asks for it.
        said = tools["rbd"].description
        assert "guide" in tools and "call guide with topic" in said and "rbds" in said
        how = (await session.call_tool("guide", {"topic": "rbds"})).structured_content["text"]
        how_run = (await session.call_tool("guide", {"topic": "rbd_analysis"})).structured_content["text"]

        unit = {"distribution_id": "exponential", "mean": 1000.0}
        fix = {"distribution_id": "exponential", "mean": 10.0}
        create = {"action": "create", "name": "one pump", "unit": "hours", "repairable": True,
                  "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
                            {"id": "pump", "type": "component", "model": unit, "repair": fix}],
                  "edges": [{"source": "in", "target": "pump"}, {"source": "pump", "target": "out"}]}
        # Every word the agent used comes from the guide or the schema it was given.
        for word in ("rbd create", "nodes", "edges", "input", "output", "component", "repairable",
                     "`repair`", "distribution_id", "`mean`"):
            assert word in how, word
        jsonschema.validate(create, tools["rbd"].input_schema)
        assert _keys(create) - {"action"} <= _keys(tools["rbd"].input_schema) | set(how.replace("`", " ").split())
        made = await session.call_tool("rbd", create)
        assert not made.is_error, made.content
        rbd_id = made.structured_content["id"]

        for word in ("rbd_analysis analyze", "`id`", "`horizon`", "`replications`", "`seed`", "get job"):
            assert word in how_run, word
        analyze = {"action": "analyze", "id": rbd_id, "horizon": 20_000.0, "replications": 2000, "seed": 7}
        jsonschema.validate(analyze, tools["rbd_analysis"].input_schema)
        queued = (await session.call_tool("rbd_analysis", analyze)).structured_content
        job = {"status": "queued"}
        for _ in range(600):
            job = (await session.call_tool("get", {"kind": "job", "id": queued["job_id"]})).structured_content
            if job["status"] in ("done", "failed", "cancelled"):
                break
            await asyncio.sleep(0.1)
        assert job["status"] == "done", job
        run = (await session.call_tool("get", {"kind": "rbd_run", "id": queued["run_id"]})).structured_content

    low, high = run["results"]["mean_availability_interval"]
    # Alternating renewal, exponential up and down times, starting up: the mean availability over
    # [0, T] is A + (1 - A) / ((λ + μ) T) (1 - e^{-(λ + μ) T}) with A = μ / (λ + μ).
    lam, mu, horizon = 1 / 1000, 1 / 10, 20_000.0
    exact = mu / (lam + mu) + lam / (lam + mu) ** 2 / horizon * (1 - 2.718281828459045 ** (-(lam + mu) * horizon))
    assert low <= exact <= high, (low, exact, high)
