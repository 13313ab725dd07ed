"""The tool list as an agent receives it, through the official MCP Python SDK (issue 29): small
enough to take into a model's context (at most 64 KB in all, 16 KB for any one tool), every
tool pointing to the guide for its how-to, the NUL rule stated once (the server's instructions
and the guide tool), every `$ref` resolving inside the tool's own schema (tools/list has no
shared components), and calls answered: a topic's how-to, and a tool's fields."""

from __future__ import annotations

from typing import Any

import httpx2
import orjson
import pytest

from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.fields import NUL_RULE
from bathtub_api.registry import Registry
from tests.service.test_openapi_constraints import refs

# The official SDK against the tool protocol: mapping, no store-specific behaviour (see tests/conftest.py).
pytestmark = pytest.mark.one_store

MAX_ALL = 64 * 1024
MAX_TOOL = 16 * 1024


async def list_through_sdk(base: str, token: str) -> tuple[list[dict[str, Any]], Any, Any, str | None]:
    """tools/list and first tools/calls (guide) as the SDK makes them: the tools as JSON (what
    the SDK hands an agent), the calls' results, and the server's instructions."""
    # imported here, not at the top: the SDK costs ~1.8 s at collection in every xdist worker
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http, \
            streamable_http_client(f"{base}/mcp", http_client=http) as streams, \
            ClientSession(streams[0], streams[1]) as session:
        started = await session.initialize()
        listed = await session.list_tools()
        called = await session.call_tool("guide", {"topic": "rbds"})
        fields = await session.call_tool("guide", {"tool": "strategy"})
    tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]
    return tools, called, fields, started.instructions


async def test_tool_list_fits_an_agent_s_context(aiohttp_server: Any, config: Config, registry: Registry) -> None:
    server = await aiohttp_server(create_app(config, registry))
    token = await token_create(config, "alice", ["read"])
    tools, called, fields, instructions = await list_through_sdk(str(server.make_url("")).rstrip("/"), token)
    assert {t["name"] for t in tools} == {a.tool for a in registry.actions.values() if not a.rest_only}
    sizes = {t["name"]: len(orjson.dumps(t)) for t in tools}
    assert sum(sizes.values()) <= MAX_ALL, sorted(sizes.items(), key=lambda kv: -kv[1])
    assert max(sizes.values()) <= MAX_TOOL, sizes
    assert instructions and NUL_RULE in instructions and "guide" in instructions
    assert NUL_RULE in next(t for t in tools if t["name"] == "guide")["description"]  # for clients without them
    for t in tools:
        schema = t["inputSchema"]
        for ref in refs(schema):  # each tool carries the definitions it uses, and only those
            assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in schema.get("$defs", {}), ref
        assert set(schema.get("$defs", {})) <= {r.removeprefix("#/$defs/") for r in refs(schema)}, t["name"]
    rbd = next(t for t in tools if t["name"] == "rbd")
    assert "call guide with topic" in rbd["description"] and " rbds" in rbd["description"]
    assert not called.is_error and called.structured_content["title"] == "Reliability block diagrams"
    shut_plan = fields.structured_content["fields"]["shut_plan"]
    assert not fields.is_error and "calendar day" in shut_plan["usage_rate"] and "currency" in shut_plan["failure_cost"]
