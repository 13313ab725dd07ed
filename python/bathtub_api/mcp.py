"""The tool-calling protocol (MCP over HTTP, JSON-RPC 2.0 at POST /mcp).

Tools are the registry's tools; a tool with several actions takes its selector argument
(`kind` for get, `action` for the others). Calls run through the same `invoke` as REST, so
results and refusals are identical: a refusal is `isError` with the same `detail`.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import ValidationError
from pydantic.json_schema import models_json_schema

from bathtub.errors import InputError
from bathtub_api.errors import ApiError, json_response, validation_detail
from bathtub_api.openapi import API_VERSION
from bathtub_api.registry import Action, Registry, ctx_of, invoke, read_json

PROTOCOL_VERSION = "2025-06-18"


def tool_list(reg: Registry) -> list[dict[str, Any]]:
    out = []
    for tool, actions in reg.tools().items():
        actions = [a for a in actions if not a.rest_only]
        if not actions:
            continue
        _, top = models_json_schema([(a.request, "validation") for a in actions], ref_template="#/$defs/{model}")
        defs = top.get("$defs", {})
        if len(actions) == 1 and actions[0].action is None:
            schema = dict(defs.pop(actions[0].request.__name__))
            description = actions[0].summary
        else:
            sel = actions[0].selector
            variants = []
            for a in actions:
                sub = dict(defs[a.request.__name__])
                sub["properties"] = {sel: {"const": a.action}, **sub.get("properties", {})}
                sub["required"] = [sel, *sub.get("required", [])]
                variants.append(sub)
            schema = {"type": "object", "properties": {sel: {"enum": [a.action for a in actions]}},
                      "required": [sel], "oneOf": variants}
            description = "; ".join(f"{sel}={a.action}: {a.summary}" for a in actions)
        if defs:
            schema["$defs"] = defs
        out.append({
            "name": tool,
            "description": description,
            "inputSchema": schema,
            # Read-only only if no action ever stores (a `save: true` calculator does).
            "annotations": {"readOnlyHint": all(a.stores == "never" for a in actions)},
        })
    return out


def _pick(reg: Registry, name: str, args: dict[str, Any]) -> Action:
    actions = [a for a in reg.tools().get(name, []) if not a.rest_only]
    if not actions:
        raise ApiError(404, f"no tool named {name!r}")
    if len(actions) == 1 and actions[0].action is None:
        return actions[0]
    sel = actions[0].selector
    chosen = args.pop(sel, None)
    for a in actions:
        if a.action == chosen:
            return a
    raise ApiError(422, f"{sel}: must be one of {', '.join(str(a.action) for a in actions)}")


def _rpc_error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


async def _call(request: web.Request, reg: Registry, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    args = params.get("arguments") or {}
    if not isinstance(name, str) or not isinstance(args, dict):
        raise ApiError(422, "params: needs name (string) and arguments (object)")
    try:
        args = dict(args)
        action = _pick(reg, name, args)  # takes the selector out of args
        result = await invoke(action, ctx_of(request), args)
    except ApiError as e:
        return _tool_error(e.status, e.detail)
    except InputError as e:
        return _tool_error(422, str(e))
    except ValidationError as e:
        return _tool_error(422, validation_detail(e))
    return {"content": [{"type": "text", "text": json_response(result).text}], "structuredContent": result,
            "isError": False}


def _tool_error(status: int, detail: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": detail}], "structuredContent": {"detail": detail, "status": status},
            "isError": True}


def add_route(app: web.Application, reg: Registry) -> None:
    async def endpoint(request: web.Request) -> web.StreamResponse:
        msg = await read_json(request)
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or "method" not in msg:
            return json_response(_rpc_error(None, -32600, "invalid JSON-RPC 2.0 request"))
        rid, method, params = msg.get("id"), msg["method"], msg.get("params") or {}
        if "id" not in msg:
            return web.Response(status=202)  # a notification: nothing to answer
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "bathtub", "version": API_VERSION},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": tool_list(reg)}
        elif method == "tools/call":
            result = await _call(request, reg, params)
        else:
            return json_response(_rpc_error(rid, -32601, f"method {method!r} not found"))
        return json_response({"jsonrpc": "2.0", "id": rid, "result": result})

    app.router.add_post("/mcp", endpoint, name="mcp")
