"""The tool-calling protocol (MCP over HTTP, JSON-RPC 2.0 at POST /mcp).

Tools are the registry's tools; a tool with several actions takes its selector argument
(`kind` for get, `action` for the others). Calls run through the same `invoke` as REST, so
results and refusals are identical: a refusal is `isError` with the same `detail`.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web
from pydantic import ValidationError

from bathtub.errors import InputError
from bathtub_api.errors import ApiError, json_response, validation_detail, write_refusal
from bathtub_api.fields import refuse_nul
from bathtub_api.openapi import API_VERSION, cross_field_described, definitions, key_patterns
from bathtub_api.registry import Action, Registry, ctx_of, invoke

PROTOCOL_VERSION = "2025-06-18"


def tool_list(reg: Registry) -> list[dict[str, Any]]:
    out = []
    for tool, actions in reg.tools().items():
        actions = [a for a in actions if not a.rest_only]
        if not actions:
            continue
        defs = cross_field_described(key_patterns(definitions((a.request for a in actions), "#/$defs/{model}")))
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
    actions = [a for a in reg.tools().get(name, []) if not a.rest_only]  # the caller checked there are some
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


class RpcError(Exception):
    """A protocol fault, answered as a JSON-RPC error: -32700 parse error, -32600 invalid
    request (HTTP 400, id null: the request could not be read), -32601 unknown method,
    -32602 invalid params (HTTP 200, with the request's id)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


async def _call(request: web.Request, reg: Registry, params: dict[str, Any], raw: bytes) -> dict[str, Any]:
    name = params.get("name")
    args = params.get("arguments")
    args = {} if args is None else args
    if not isinstance(name, str):
        raise RpcError(-32602, "params.name: required, the tool's name (a string)")
    if not isinstance(args, dict):
        raise RpcError(-32602, "params.arguments: must be an object")
    if not any(not a.rest_only for a in reg.tools().get(name, [])):
        raise RpcError(-32602, f"params.name: no tool named {name!r}")
    try:
        refuse_nul(args, raw=raw)
        args = dict(args)
        action = _pick(reg, name, args)  # takes the selector out of args
        result = await invoke(action, ctx_of(request), args)
    except ApiError as e:
        return _tool_error(e.status, e.detail)
    except InputError as e:
        return _tool_error(422, str(e))
    except ValidationError as e:
        return _tool_error(422, validation_detail(e))
    except Exception as e:
        fault = write_refusal(request, e)
        if fault is None:
            raise
        return _tool_error(fault.status, fault.detail)
    return {"content": [{"type": "text", "text": json_response(result).text}], "structuredContent": result,
            "isError": False}


def _tool_error(status: int, detail: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": detail}], "structuredContent": {"detail": detail, "status": status},
            "isError": True}


def _request(raw: bytes) -> tuple[dict[str, Any], bool]:
    """The JSON-RPC request object and whether it is a notification; RpcError if unreadable."""
    try:
        msg = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise RpcError(-32700, f"parse error: {e}") from None
    if not isinstance(msg, dict):
        raise RpcError(-32600, "invalid request: one JSON-RPC 2.0 request object is expected (no batches)")
    if msg.get("jsonrpc") != "2.0":
        raise RpcError(-32600, 'invalid request: jsonrpc must be "2.0"')
    if not isinstance(msg.get("method"), str):
        raise RpcError(-32600, "invalid request: method must be a string")
    if "id" not in msg:
        return msg, True
    rid = msg["id"]
    # MCP: a request id is a string or an integer, never null (anything else cannot be echoed safely).
    if not (isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))):
        raise RpcError(-32600, "invalid request: id must be a string or an integer")
    return msg, False


def add_route(app: web.Application, reg: Registry) -> None:
    async def endpoint(request: web.Request) -> web.StreamResponse:
        raw = await request.read()  # honours client_max_size: 413 past the limit
        try:
            msg, notification = _request(raw)
        except RpcError as e:
            return json_response(_rpc_error(None, e.code, e.message), status=400)
        if notification:
            return web.Response(status=202)  # a notification: nothing to answer
        rid, method, params = msg["id"], msg["method"], msg.get("params", {})
        try:
            if params is None:
                params = {}
            if not isinstance(params, dict):
                raise RpcError(-32602, "invalid params: params must be an object")
            result = await _dispatch(request, reg, method, params, raw)
        except RpcError as e:
            return json_response(_rpc_error(rid, e.code, e.message))
        return json_response({"jsonrpc": "2.0", "id": rid, "result": result})

    app.router.add_post("/mcp", endpoint, name="mcp")


async def _dispatch(request: web.Request, reg: Registry, method: str, params: dict[str, Any],
                    raw: bytes) -> dict[str, Any]:
    if method == "initialize":
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "bathtub", "version": API_VERSION},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": tool_list(reg)}
    if method == "tools/call":
        return await _call(request, reg, params, raw)
    raise RpcError(-32601, f"method {method!r} not found")
