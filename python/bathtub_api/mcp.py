"""The tool-calling protocol (MCP over HTTP, JSON-RPC 2.0 at POST /mcp).

Tools are the registry's tools; a tool with several actions takes its selector argument
(`kind` for get, `action` for the others). Calls run through the same `invoke` as REST, so
results and refusals are identical: a refusal is `isError` with the same `detail`.
"""

from __future__ import annotations

import functools
from typing import Any

import orjson
from aiohttp import web
from pydantic import BaseModel, ValidationError

from bathtub.errors import InputError
from bathtub_api.errors import ApiError, json_response, validation_detail, write_refusal
from bathtub_api.fields import NUL_RULE, refuse_nul
from bathtub_api.openapi import API_VERSION, CROSS_FIELD, cross_field_described, definitions, key_patterns
from bathtub_api.registry import Action, Registry, ctx_of, invoke
from bathtub_api.schema_refs import BRIEF_MARK, brief, hoist, outline, reachable, untitled
from bathtub_api.tools.guide import PAGES

PROTOCOL_VERSION = "2025-06-18"


NUL_PREAMBLE = f"Every string and key {NUL_RULE}."
# Said once where an agent reads it first (the server's instructions, and the guide tool, for
# clients that do not show instructions), not in every tool's description: 1.1 KB of the list.
INSTRUCTIONS = (f"Bathtub reliability-engineering tools. {NUL_PREAMBLE} Each tool's how-to is in the guide "
                "tool (call guide with a topic; no topic lists them), and every field's meaning, unit and "
                "default too (call guide with tool: its name); a description ending in ... continues there.")
DEFS = "#/$defs/"
# An agent reads the whole tool list into its context: a part repeated in one tool is said once
# from this size (the OpenAPI document, read by tools, keeps schema_refs.MIN_BYTES).
TOOL_MIN_BYTES = 150
# A field's description in the tool list stops at its first sentence past this length, and
# an action's summary in its tool's description at a word (the whole text: guide, OpenAPI).
TOOL_DESCRIPTION_CHARS = 100
TOOL_SUMMARY_CHARS = 100


def _topics(actions: list[Action]) -> list[str]:
    """The guide topics that explain these actions (where the how-to lives)."""
    names = {f"{a.tool}/{a.action}" if a.action else a.tool for a in actions}
    return [key for key, page in PAGES.items() if names & set(page.actions)]


def _cut(text: str, limit: int) -> str:
    """`text` up to `limit` characters, cut at a word and marked as brief() marks it."""
    return text if len(text) <= limit else text[:text.rfind(" ", 0, limit)].rstrip(",;:") + BRIEF_MARK


def _description(actions: list[Action]) -> str:
    """Short: what the tool does and its actions; the how-to is in the guide, on request."""
    if len(actions) == 1 and actions[0].action is None:
        text = actions[0].summary
    else:
        text = "; ".join(f"{actions[0].selector}={a.action}: {_cut(a.summary, TOOL_SUMMARY_CHARS)}" for a in actions)
    topics = _topics(actions)
    # a tool every topic uses (get, list) points to the topic list rather than naming them all
    how = (f" How-to: call guide with topic {' or '.join(topics)}." if 0 < len(topics) <= 3
           else " How-to: call guide (no topic) for the topics." if topics else "")
    said = f" {INSTRUCTIONS}" if actions[0].tool == "guide" else ""
    end = "" if text.endswith(BRIEF_MARK) else "."
    return f"{text.rstrip('.') if end else text}{end}{how}{said}"


def rules_only(text: str) -> str | None:
    """An action's description in the tool list: only the rules between values the service
    checks (what each action does is in the tool's description; the how-to and the model's
    full text are in the guide's topics and the OpenAPI document)."""
    _, found, rules = text.partition(CROSS_FIELD)
    return f"Also refused: {rules}" if found else None


@functools.lru_cache(maxsize=64)
def _input_schema(requests: tuple[type[BaseModel], ...], selector: str, names: tuple[str | None, ...]) -> bytes:
    """One tool's input schema: its request models outlined (fields, types, bounds, enums,
    descriptions; rules between values are left to the service, which refuses naming the field,
    and to the OpenAPI document, which states them), the parts they share said once in the tool's
    own `$defs` (tools/list has no shared components). Cached: the models never change."""
    inlined = {m.__name__ for m in requests}
    # the glossary's descriptions stay out (measured: they take the list from 64 KB to 96 KB, past
    # what an agent's context should hold); a field's own description comes, cut short by `brief`
    defs = outline(cross_field_described(key_patterns(definitions(requests, DEFS + "{model}", glossary=False))))
    defs = brief(untitled(hoist(reachable(defs, DEFS, inlined), DEFS, TOOL_MIN_BYTES, roles=False)),
                 TOOL_DESCRIPTION_CHARS)
    used = orjson.dumps([v for k, v in defs.items() if k not in inlined])
    bodies = {name: defs[name] if f'"{DEFS}{name}"'.encode() in used else defs.pop(name) for name in inlined}

    def take(model: type[BaseModel]) -> dict[str, Any]:
        # a request model nothing else refers to is inlined in its variants, not also in $defs
        return dict(bodies[model.__name__])

    if names == (None,):
        schema = take(requests[0])
    else:
        # one variant per distinct request, naming the actions that take it (list's kinds share
        # one model; most of get's kinds take the same {id})
        by_body: dict[bytes, list[str | None]] = {}
        for model, action in zip(requests, names, strict=True):
            by_body.setdefault(orjson.dumps(take(model), option=orjson.OPT_SORT_KEYS), []).append(action)
        variants = []
        for body, actions in by_body.items():
            sub = orjson.loads(body)
            if (said := rules_only(sub.pop("description", ""))) is not None:
                sub["description"] = said
            chosen = {"const": actions[0]} if len(actions) == 1 else {"enum": actions}
            sub["properties"] = {selector: chosen, **sub.get("properties", {})}
            sub["required"] = [selector, *sub.get("required", [])]
            if sub.get("type") == "object":
                del sub["type"]  # the tool's schema says it once: every variant applies to that object
            variants.append(sub)
        schema = {"type": "object", "properties": {selector: {"enum": list(names),
                                                              "description": "which action to run"}},
                  "required": [selector], "oneOf": variants}
    if defs:
        schema["$defs"] = defs
    return orjson.dumps(schema)


def tool_list(reg: Registry) -> list[dict[str, Any]]:
    out = []
    for tool, actions in reg.tools().items():
        actions = [a for a in actions if not a.rest_only]
        if not actions:
            continue
        schema = _input_schema(tuple(a.request for a in actions), actions[0].selector,
                               tuple(a.action for a in actions))
        out.append({
            "name": tool,
            "description": _description(actions),
            "inputSchema": orjson.loads(schema),
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
            "instructions": INSTRUCTIONS,
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": tool_list(reg)}
    if method == "tools/call":
        return await _call(request, reg, params, raw)
    raise RpcError(-32601, f"method {method!r} not found")
