"""Every property described (issue 29): each field of every request and response in the OpenAPI
document says what it is, and each field of every tool's input schema is said in the tool list
or by `guide {tool}`, so an agent, the docs page and the generated client's docstrings never show
a bare name. A new field without `Field(description=...)` or a glossary entry
(bathtub_api/glossary.toml) fails here by name."""

from __future__ import annotations

import re
from typing import Any

from pydantic.json_schema import models_json_schema

from bathtub_api import glossary, mcp, openapi
from bathtub_api.registry import Registry
from bathtub_api.schema_refs import each_property, hoist, undescribed
from bathtub_api.tools.guide import tool_fields


def _pointer(doc: dict[str, Any]) -> Any:
    def resolve(ref: str) -> Any:
        node: Any = doc
        for key in ref.removeprefix("#/").split("/"):
            node = node[key]
        return node

    return resolve


def _openapi_undescribed(doc: dict[str, Any]) -> list[str]:
    # from the operations and the shared refusals, following $refs: a rule's restated fields
    # (inside if/then/allOf) are the declared ones and are not asked twice
    resolve = _pointer(doc)
    return [*undescribed(doc["paths"], "", resolve), *undescribed(doc["components"]["responses"], "", resolve)]


def test_every_openapi_property_is_described(registry: Registry) -> None:
    doc = openapi.build(registry)
    missing = _openapi_undescribed(doc)
    assert not missing, f"{len(missing)} properties without a description: {sorted(set(missing))}"
    counted: list[str] = []
    each_property(doc["paths"], lambda owner, name, schema: counted.append(name), "", _pointer(doc))
    assert len(counted) > 800  # the walk reaches the models, not just the operations


def test_every_tool_property_is_described_in_the_list_or_by_the_guide(registry: Registry) -> None:
    """The tool list carries each field's own description, cut short, to stay within an agent's
    context (test_mcp_sdk); `guide {tool}` gives every field's full text, the glossary's too. A
    field said in neither is named."""
    bare = 0
    for tool in mcp.tool_list(registry):
        schema = tool["inputSchema"]
        texts = {path.rsplit(".", 1)[-1]: text for fields in tool_fields(registry, tool["name"]).values()
                 for path, text in fields.items() if text.strip()}
        missing = [p for p in undescribed(schema, tool["name"], _pointer(schema)) if p.rsplit(".", 1)[-1] not in texts]
        assert not missing, f"{tool['name']}: {missing}"
        bare += len(undescribed(schema, tool["name"], _pointer(schema)))
    assert bare > 100  # the list leaves most to the guide: this test is what checks them


def test_the_walk_names_what_is_missing() -> None:
    """The check can fail: a bare field, a `$ref` property without its own description, and a
    field a rule brings (not one it restates) are each named; a restated field is not."""
    doc = {
        "paths": {"/x": {"post": {"requestBody": {"content": {"application/json": {"schema": {
            "$ref": "#/components/schemas/In"}}}}}}},
        "components": {"responses": {}, "schemas": {
            "In": {"type": "object",
                   "properties": {"said": {"type": "string", "description": "described"},
                                  "bare": {"type": "number"},
                                  "part": {"$ref": "#/components/schemas/Part"},
                                  "rows": {"type": "array", "items": {"type": "object"}, "description": "open rows"}},
                   "allOf": [{"if": {"properties": {"said": {"const": "a"}}},
                              "then": {"properties": {"bare": {"minimum": 1},
                                                      "rows": {"items": {"properties": {"cell": {}}}}}}}]},
            "Part": {"type": "object", "description": "a part", "properties": {"inner": {"type": "string"}}}}},
    }
    assert sorted(_openapi_undescribed(doc)) == ["In.bare", "In.part", "In.rows.cell", "Part.inner"]


def test_a_hoisted_property_keeps_its_description() -> None:
    """A property's schema said once under the definitions is still described where it is used."""
    big = {"type": "object", "description": "the shared part", "properties": {
        f"f{i}": {"type": "number", "description": f"field {i} of the shared part"} for i in range(20)}}
    defs = hoist({"A": {"properties": {"x": dict(big)}}, "B": {"properties": {"y": dict(big)}}}, "#/$defs/")
    assert defs["A"]["properties"]["x"]["description"] == "the shared part" and "$ref" in defs["A"]["properties"]["x"]
    assert set(defs) == {"A", "B", "A_x"} and "$ref" not in defs["A_x"].get("properties", {})


def _models(registry: Registry) -> list[Any]:
    models = {openapi.Error}
    for a in registry.actions.values():
        models |= {a.request, *([a.response] if a.response else [])}
    for r in registry.routes:
        models |= {m for m in (r.request, r.response) if m}
    return sorted(models, key=lambda m: m.__name__)


def test_every_glossary_entry_is_used_and_says_more_than_its_name(registry: Registry) -> None:
    _, top = models_json_schema([(m, "validation") for m in _models(registry)], ref_template=openapi.REF)
    used: set[str] = set()
    glossary.describe(top["$defs"], used)
    assert set(glossary.entries()) - used == set(), "entries no field reads (renamed or described in place?)"
    filler = {"the", "a", "an", "of", "its", "this", "item", "item's", "value", "field"}
    for key, text in glossary.entries().items():
        words = set(re.findall(r"[a-z0-9']+", text.lower()))
        assert words - filler - set(key.rsplit(".", 1)[-1].split("_")), f"{key}: {text!r} only repeats its name"
