"""The client's view of the service: a compact snapshot of the OpenAPI document.

`compact(openapi_document)` keeps what a method needs (operation id, method, path, summary,
description, path and query parameters, the request body's fields with their types, defaults and
descriptions, what the call returns and the refusals it declares). The snapshot shipped beside
this file (`spec.json`) is refreshed by a test that fails when it no longer equals `compact()` of
the service's own document, so a new tool action gets its client method without hand work and
the library does not import the service.
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


def _component(doc: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The component a schema refers to (directly, or as the one non-null branch of an optional)."""
    if not schema:
        return None
    if "$ref" in schema and schema["$ref"].startswith(REF):
        return _deref(doc, schema)
    branches = [b for b in schema.get("anyOf") or schema.get("oneOf") or [] if b.get("type") != "null"]
    return _component(doc, branches[0]) if len(branches) == 1 else None


def _described(doc: dict[str, Any], prop: dict[str, Any]) -> str:
    """A field's meaning: its own description, else that of the part it refers to (a field whose
    type is a shared model, such as `options`, or an optional one, is described once, there)."""
    if prop.get("description"):
        return str(prop["description"])
    target = _component(doc, prop)
    return str(target.get("description", "")) if target else ""


def _fields(doc: dict[str, Any], schema: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not schema or "$ref" not in schema:
        return []
    model = _deref(doc, schema)
    required = set(model.get("required", []))
    out = []
    for name, prop in model.get("properties", {}).items():
        said = _deref(doc, prop)  # a field's schema may be a part said once elsewhere
        f: dict[str, Any] = {"name": name, "arg": arg_name(name), "type": _pytype(prop, doc),
                             "required": name in required, "description": _described(doc, prop)}
        if "default" in prop or "default" in said:
            f["default"] = prop.get("default", said.get("default"))
        out.append(f)
    return out


def _returns(doc: dict[str, Any], op: dict[str, Any]) -> dict[str, str]:
    """What a call returns: the 200 answer's media type, and for JSON the model's name and meaning."""
    content = op.get("responses", {}).get("200", {}).get("content", {})
    media = next(iter(content), "application/json")
    schema = content.get(media, {}).get("schema", {})
    model = _component(doc, schema)
    name = schema["$ref"][len(REF):] if "$ref" in schema else ""
    return {"media": media, "model": name, "description": str((model or {}).get("description", "")),
            "keys": list((model or {}).get("properties", {}))}


def _refusals(op: dict[str, Any]) -> dict[str, str]:
    """The refusals the operation declares: status -> when, as the client raises them."""
    return {code: str(r.get("description", "")) for code, r in sorted(op.get("responses", {}).items())
            if code[:1] in "45"}


def compact(doc: dict[str, Any]) -> dict[str, Any]:
    """The snapshot of an OpenAPI document (pure: the same document gives the same bytes)."""
    ops = []
    refusals: dict[str, str] = {}  # status -> when: the same text for every operation, kept once
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            refusals.update(_refusals(op))
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
                "returns": _returns(doc, op),
                "refusals": list(_refusals(op)),
            }
            ops.append(entry)
    ops.sort(key=lambda o: o["name"])
    return {"api_version": doc["info"]["version"], "operations": ops, "refusals": dict(sorted(refusals.items()))}


def dumps(spec: dict[str, Any]) -> bytes:
    return orjson.dumps(spec, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def load() -> dict[str, Any]:
    return orjson.loads(SNAPSHOT.read_bytes())
