"""The client's view of the service: a compact snapshot of the OpenAPI document.

`compact(openapi_document)` keeps what a method needs (operation id, method, path, summary,
description, path and query parameters, the request body's fields with their types, defaults and
descriptions). The snapshot shipped beside this file (`spec.json`) is refreshed by a test that
fails when it no longer equals `compact()` of the service's own document, so a new tool action
gets its client method without hand work and the library does not import the service.
"""

from __future__ import annotations

import keyword
from pathlib import Path
from typing import Any

import orjson

SNAPSHOT = Path(__file__).with_name("spec.json")
REF = "#/components/schemas/"
# Keyword arguments the client adds itself; a body field of the same name gets a trailing "_".
RESERVED = ("self", "content", "content_type", "query_params", "idempotency_key")


def _deref(doc: dict[str, Any], s: dict[str, Any]) -> dict[str, Any]:
    """The schema a `$ref` names (followed through refs to refs); any other schema as it is. The
    document says a part used in several places once, under components/schemas."""
    seen: set[str] = set()
    while isinstance(s.get("$ref"), str) and s["$ref"].startswith(REF) and s["$ref"] not in seen:
        seen.add(s["$ref"])
        s = doc["components"]["schemas"].get(s["$ref"][len(REF):], {})
    return s


def _pytype(s: dict[str, Any], doc: dict[str, Any] | None = None) -> str:
    """A Python annotation (as text) for a JSON schema: what `help()` and type checkers show."""
    if doc is not None and "$ref" in s:
        s = _deref(doc, s)
    if "anyOf" in s or "oneOf" in s:
        parts: list[str] = []
        for sub in s.get("anyOf") or s.get("oneOf") or []:
            t = _pytype(sub, doc)
            if t not in parts:
                parts.append(t)
        if "None" in parts:  # `X | None` reads better with None last
            parts = [p for p in parts if p != "None"] + ["None"]
        return " | ".join(parts) if parts else "Any"
    if "$ref" in s or "allOf" in s:
        return "dict"
    if "const" in s:
        return f"Literal[{s['const']!r}]"
    if "enum" in s:
        return f"Literal[{', '.join(repr(v) for v in s['enum'])}]"
    names = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "array": "list",
             "object": "dict", "null": "None"}
    t = s.get("type")
    if isinstance(t, list):
        return " | ".join(names.get(x, "Any") for x in t)
    return names.get(t, "Any") if isinstance(t, str) else "Any"


def arg_name(field: str) -> str:
    """The keyword argument for a body field: the field's own name, unless Python forbids it."""
    name = field if field.isidentifier() else "".join(c if c.isalnum() else "_" for c in field)
    return f"{name}_" if keyword.iskeyword(name) or name in RESERVED else name


def _fields(doc: dict[str, Any], schema: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not schema or "$ref" not in schema:
        return []
    model = _deref(doc, schema)
    required = set(model.get("required", []))
    out = []
    for name, prop in model.get("properties", {}).items():
        said = _deref(doc, prop)  # a field's schema may be a part said once elsewhere
        f: dict[str, Any] = {"name": name, "arg": arg_name(name), "type": _pytype(prop, doc),
                             "required": name in required,
                             "description": prop.get("description") or said.get("description", "")}
        if "default" in prop or "default" in said:
            f["default"] = prop.get("default", said.get("default"))
        out.append(f)
    return out


def compact(doc: dict[str, Any]) -> dict[str, Any]:
    """The snapshot of an OpenAPI document (pure: the same document gives the same bytes)."""
    ops = []
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            meta = op.get("x-bathtub", {})
            content = op.get("requestBody", {}).get("content", {})
            json_schema = content.get("application/json", {}).get("schema")
            entry: dict[str, Any] = {
                "name": op["operationId"],
                "method": method.upper(),
                "path": path,
                "summary": op.get("summary", ""),
                "description": op.get("description", ""),
                "scope": meta.get("scope", "read"),
                "tool": meta.get("tool"),
                "selector": meta.get("selector"),
                "action": meta.get("action"),
                "rest_only": meta.get("rest_only", False),
                "public": op.get("security") == [],
                "path_params": [p["name"] for p in op.get("parameters", []) if p["in"] == "path"],
                "query": [{"name": p["name"], "required": p.get("required", False),
                           "description": p.get("description", "")}
                          for p in op.get("parameters", []) if p["in"] == "query"],
                "content_types": list(content),
                "fields": _fields(doc, json_schema),
            }
            ops.append(entry)
    ops.sort(key=lambda o: o["name"])
    return {"api_version": doc["info"]["version"], "operations": ops}


def dumps(spec: dict[str, Any]) -> bytes:
    return orjson.dumps(spec, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def load() -> dict[str, Any]:
    return orjson.loads(SNAPSHOT.read_bytes())
