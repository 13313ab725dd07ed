"""The OpenAPI 3.1.0 document, generated from the registry (never written by hand)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

import orjson
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from bathtub_api.fields import CSV_BODY_SCHEMA, NUL_RULE, NUL_STATEMENT
from bathtub_api.glossary import describe
from bathtub_api.registry import Registry
from bathtub_api.schema_refs import each_dict, hoist

API_VERSION = "1.1.0"
REF = "#/components/schemas/{model}"

ERRORS = {
    "401": "Bad or missing token (or a forged, expired or ended session cookie)",
    "402": "A plan limit stops the call; detail names the limit and its value (guide topic `plans`)",
    "403": "The token lacks the scope, or a change carried by a session cookie lacks this service's Origin",
    "404": "Unknown id, or an item owned by someone else",
    "413": "Request body too large",
    "422": f"Bad input; detail names the field and the rule. Every string and key of a JSON body {NUL_RULE}.",
    "429": "Rate limit exceeded; see Retry-After",
    "507": "The store or the file system is full or read-only; detail names which and why, nothing was saved "
           "(retry once room is made; GET /healthz says `degraded` meanwhile)",
}


def _ref(model: type[BaseModel] | None) -> dict[str, Any]:
    return {"$ref": REF.format(model=model.__name__)} if model else {"type": "object"}


def _responses(response: type[BaseModel] | None, produces: str = "application/json") -> dict[str, Any]:
    ok = {"schema": _ref(response)} if produces == "application/json" else {
        "schema": {"type": "string", **({"format": "binary"} if produces == "application/pdf" else {})}}
    out: dict[str, Any] = {"200": {"description": "OK", "content": {produces: ok}}}
    # the refusals are the same for every operation: said once under components/responses
    out.update({code: {"$ref": f"#/components/responses/{_error_name(code)}"} for code in ERRORS})
    return out


def _error_name(code: str) -> str:
    return f"Error{code}"


def _error_responses() -> dict[str, Any]:
    error = {"schema": {"$ref": REF.format(model="Error")}}
    return {_error_name(code): {"description": text, "content": {"application/json": error}}
            for code, text in ERRORS.items()}


# Path parameters are ids (the door refuses NUL in them too: registry._route_view, NUL_STATEMENT).
PATH_ID = {"type": "string", "minLength": 1, "maxLength": 200}


class Error(BaseModel):
    detail: str


def key_patterns(node: Any) -> Any:
    """Pydantic writes a dict whose keys have a pattern as `patternProperties`, which leaves
    other keys allowed; we mean every key matches: `propertyNames` (in place, recursively)."""

    def visit(d: dict[str, Any]) -> None:
        pattern_props = d.get("patternProperties")
        if isinstance(pattern_props, dict) and len(pattern_props) == 1 and "additionalProperties" not in d:
            (pattern, values), = pattern_props.items()
            del d["patternProperties"]
            d["propertyNames"] = {**d.get("propertyNames", {}), "pattern": pattern}
            d["additionalProperties"] = values

    return each_dict(node, visit)


CROSS_FIELD = "Rules between values, checked by the service (JSON Schema cannot state them): "


def cross_field_described(node: Any) -> Any:
    """A schema's `x-cross-field` rules (`field: rule`, the refusal's own words) are also said in
    its description, for readers that skip extensions (in place)."""

    def visit(d: dict[str, Any]) -> None:
        rules = d.get("x-cross-field")
        if rules and CROSS_FIELD not in d.get("description", ""):
            said = CROSS_FIELD + "; ".join(rules) + "."
            d["description"] = f"{d['description'].rstrip()} {said}" if d.get("description") else said

    return each_dict(node, visit)


@functools.lru_cache(maxsize=64)
def _definitions_json(models: tuple[type[BaseModel], ...], ref_template: str, glossary: bool) -> bytes:
    _, top = models_json_schema([(m, "validation") for m in models], ref_template=ref_template)
    defs = top.get("$defs", {})
    return orjson.dumps(describe(defs) if glossary else defs)


def definitions(models: Iterable[type[BaseModel]], ref_template: str = REF, glossary: bool = True) -> dict[str, Any]:
    """The JSON Schemas of `models` and those they use, by name, every field described (its own
    description or, with `glossary`, the glossary's): a fresh copy each call (callers edit it in
    place).
    Generating them takes pydantic about 1.5 s for the whole registry, and the classes never
    change after import, so it is done once per set of models and process: an app
    starts (every service test makes one) and MCP answers tools/list without paying it again."""
    return orjson.loads(_definitions_json(tuple(models), ref_template, glossary))


@functools.lru_cache(maxsize=8)
def _component_schemas(models: tuple[type[BaseModel], ...]) -> bytes:
    """The document's components: the models' schemas with keys as propertyNames, cross-field
    rules said in descriptions, repeated parts said once (cached as `definitions`)."""
    schemas = hoist(cross_field_described(key_patterns(definitions(models))), REF.format(model=""))
    return orjson.dumps(dict(sorted(schemas.items())))


def _needs_body(model: type[BaseModel]) -> bool:
    """An empty body is taken as {}: say it is optional only when {} is a valid request."""
    return any(f.is_required() for f in model.model_fields.values()) or bool(getattr(model, "exactly_one", ()))


def build(reg: Registry) -> dict[str, Any]:
    models: set[type[BaseModel]] = {Error}
    for a in reg.actions.values():
        models.add(a.request)
        if a.response:
            models.add(a.response)
    for r in reg.routes:
        for m in (r.request, r.response):
            if m:
                models.add(m)
    ordered = tuple(sorted(models, key=lambda m: m.__name__))
    schemas = orjson.loads(_component_schemas(ordered))

    paths: dict[str, dict[str, Any]] = {}
    for a in reg.actions.values():
        paths.setdefault(a.path, {})["post"] = {
            "operationId": a.operation_id,
            "summary": a.summary,
            "description": a.description or a.summary,
            "tags": [a.tool],
            "requestBody": {"required": _needs_body(a.request),
                            "content": {"application/json": {"schema": _ref(a.request),
                                                             **({"example": a.example} if a.example else {})}}},
            "responses": _responses(a.response),
            "x-bathtub": a.metadata(),
        }
    for r in reg.routes:
        op: dict[str, Any] = {
            "operationId": r.operation_id,
            "summary": r.summary,
            "description": r.description or r.summary,
            "tags": ["original"],
            "responses": _responses(r.response, r.produces),
            "x-bathtub": {"scope": r.scope, "stores": r.stores, "rest_only": True},
        }
        params = [
            {"name": name, "in": "path", "required": True, "schema": PATH_ID}
            for name in re.findall(r"{(\w+)}", r.path)
        ]
        params += [{"name": name, "in": "query", "required": required, "description": text,
                    "schema": schema[0] if schema else {"type": "string"}} for name, required, text, *schema in r.query]
        if params:
            op["parameters"] = params
        if r.public:
            op["security"] = []
        binary = {"type": "string", "format": "binary"}
        if r.request or any(ct != "application/json" for ct in r.content_types):
            content = {
                ct: {"schema": _ref(r.request) if ct == "application/json" else
                     (binary if ct.startswith(("application/octet-stream", "image/", "multipart/"))
                      else CSV_BODY_SCHEMA if ct == "text/csv" else {"type": "string"})}
                for ct in r.content_types
            }
            op["requestBody"] = {"required": True, "content": content}
        paths.setdefault(r.path, {})[r.method.lower()] = op

    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Bathtub reliability analysis service",
            "version": API_VERSION,
            "description": "Tool API: POST /api/v1/{tool}/{action} with one JSON object. Refusals are "
                           '{"detail": "..."}. The same actions are offered through the tool protocol at /mcp. '
                           'GET /healthz (no token) answers 200 {"status": "ok", "store", "engine_version"}, or '
                           '200 {"status": "degraded", "reason", "since", ...} after a write the store or the '
                           "file system refused (507), until a write of that kind succeeds again. "
                           f"Every string and object key of a JSON request body, and every path parameter, {NUL_RULE}: "
                           "the service refuses it with 422 naming the field; the rule holds everywhere, so "
                           "the schemas do not repeat it on each string.",
            # The same rule, machine-readable in the form of `x-cross-field` (`*` is any field).
            "x-every-field": [NUL_STATEMENT],
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": schemas,
            "responses": _error_responses(),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                # Described, not listed as a requirement: it is the browser's alternative, and fuzzers
                # (tests/service/test_schemathesis.py) should exercise the API with the bearer token.
                "session": {"type": "apiKey", "in": "cookie", "name": "bathtub_session",
                            "description": "Set by POST /api/v1/session (signing in with a token); accepted "
                                           "wherever the bearer token is, with its scopes. A request carried by "
                                           "it that changes anything must send this service's Origin (else "
                                           "403)."},
            },
        },
    }
