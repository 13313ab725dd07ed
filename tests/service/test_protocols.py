"""One registry, three faces: REST routes, the OpenAPI document and the tool protocol agree."""

from __future__ import annotations

from typing import Any

import pytest
from openapi_spec_validator import validate

from bathtub_api.registry import Registry
from bathtub_api.tools.guide import PAGES, available_names
from tests.conftest import Api

# The tool protocol's framing: no store-specific behaviour (see tests/conftest.py).
pytestmark = pytest.mark.one_store


async def test_openapi_is_valid_and_lists_every_route(api: Api, registry: Registry) -> None:
    async with api.client.get("/api/v1/openapi.json") as resp:  # public: no token needed
        assert resp.status == 200
        doc = await resp.json()
    validate(doc)
    assert doc["openapi"] == "3.1.0" and doc["info"]["version"] == "1.1.0"
    for a in registry.actions.values():
        op = doc["paths"][a.path]["post"]
        assert op["x-bathtub"] == a.metadata()
        assert op["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(a.request.__name__)
        assert "200" in op["responses"] and "422" in op["responses"]
    for r in registry.routes:
        assert r.method.lower() in doc["paths"][r.path]
    assert doc["paths"]["/api/v1/get/dataset"]["post"]["x-bathtub"]["selector"] == "kind"


async def _rpc(api: Api, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    status, body = await api.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})
    assert status == 200 and "result" in body, body
    return body["result"]


async def test_tool_protocol_lists_tools_with_selectors(api: Api, registry: Registry) -> None:
    init = await _rpc(api, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    assert init["serverInfo"]["name"] == "bathtub"
    tools = {t["name"]: t for t in (await _rpc(api, "tools/list"))["tools"]}
    assert set(tools) == set(registry.tools())
    assert set(tools["get"]["inputSchema"]["properties"]["kind"]["enum"]) >= {"dataset", "job"}
    assert "topic" in tools["guide"]["inputSchema"]["properties"]


async def test_tool_calls_match_rest_results_and_refusals(api: Api) -> None:
    _, created = await api.post("datasets/create", {"name": "d", "data": {"t": [1, 2, 3]}})
    rest = (await api.post("get/dataset", {"id": created["id"], "limit": 2}))[1]
    call = await _rpc(api, "tools/call", {"name": "get", "arguments": {"kind": "dataset", "id": created["id"],
                                                                      "limit": 2}})
    assert call["isError"] is False and call["structuredContent"] == rest
    for args, (status, body) in (
        ({"kind": "dataset", "id": created["id"], "limit": 0},
         await api.post("get/dataset", {"id": created["id"], "limit": 0})),
        ({"kind": "dataset", "id": "ds_nope"}, await api.post("get/dataset", {"id": "ds_nope"})),
    ):
        refused = await _rpc(api, "tools/call", {"name": "get", "arguments": args})
        assert refused["isError"] is True
        assert refused["structuredContent"] == {"detail": body["detail"], "status": status}
    bad = await _rpc(api, "tools/call", {"name": "get", "arguments": {"kind": "nonsense"}})
    assert bad["isError"] and "kind" in bad["structuredContent"]["detail"]


async def test_guide_lists_15_topics_and_never_overstates(api: Api, registry: Registry) -> None:
    status, body = await api.post("guide")
    assert status == 200 and len(body["topics"]) == 15
    live = available_names(registry)
    for topic in PAGES:
        status, page = await api.post("guide", {"topic": topic})
        assert status == 200 and page["text"] and page["title"]
        assert page["actions"] and all(a["available"] and a["name"] in live for a in page["actions"])
        assert "not yet available" not in page["text"].lower(), topic
    status, body = await api.post("guide", {"topic": "astrology"})
    assert status == 422 and "topic" in body["detail"]
