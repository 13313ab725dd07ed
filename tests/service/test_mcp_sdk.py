"""The tool list as an agent receives it, through the official MCP Python SDK (issue 29): small
enough to take into a model's context (at most 64 KB in all, 16 KB for any one tool), every
tool pointing to the guide for its how-to and stating the NUL rule once, every `$ref` resolving
inside the tool's own schema (tools/list has no shared components), and a call answered."""

from __future__ import annotations

from typing import Any

import httpx2
import orjson
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

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


async def list_through_sdk(base: str, token: str) -> tuple[list[dict[str, Any]], Any]:
    """tools/list and a first tools/call (guide) as the SDK makes them: the tools as JSON (what
    the SDK hands an agent), and the call's result."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http, \
            streamable_http_client(f"{base}/mcp", http_client=http) as streams, \
            ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        listed = await session.list_tools()
        called = await session.call_tool("guide", {"topic": "rbds"})
    tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]
    return tools, called


async def test_tool_list_fits_an_agent_s_context(aiohttp_server: Any, config: Config, registry: Registry) -> None:
    server = await aiohttp_server(create_app(config, registry))
    token = await token_create(config, "alice", ["read"])
    tools, called = await list_through_sdk(str(server.make_url("")).rstrip("/"), token)
    assert {t["name"] for t in tools} == {a.tool for a in registry.actions.values() if not a.rest_only}
    sizes = {t["name"]: len(orjson.dumps(t)) for t in tools}
    assert sum(sizes.values()) <= MAX_ALL, sorted(sizes.items(), key=lambda kv: -kv[1])
    assert max(sizes.values()) <= MAX_TOOL, sizes
    for t in tools:
        assert NUL_RULE in t["description"], t["name"]
        schema = t["inputSchema"]
        for ref in refs(schema):  # each tool carries the definitions it uses, and only those
            assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in schema.get("$defs", {}), ref
        assert set(schema.get("$defs", {})) <= {r.removeprefix("#/$defs/") for r in refs(schema)}, t["name"]
    rbd = next(t for t in tools if t["name"] == "rbd")
    assert "call guide with topic" in rbd["description"] and " rbds" in rbd["description"]
    assert not called.is_error and called.structured_content["title"] == "Reliability block diagrams"
