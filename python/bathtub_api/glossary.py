"""One description per quantity (issue 29): the fields many request and response models share
(`name`, `id`, `unit`, `params`, `saved_model_id`, ...) are described once, in `glossary.toml`,
and the schema generation gives each property without a description of its own the glossary's
entry, so the same name says the same thing in the OpenAPI document, the tool list and the
client's docstrings. A field described in place (`Field(description=...)`, a library schema's
own `description`) keeps its text.

Entries are keyed by the property's name, or more narrowly by its owner and name where the same
name means different things: `Model.field` for a model's field (`FitIn.name`), `parent.field`
for a field of a nested object, the parent being the property holding it (`nodes.model` is a
block's model; `phases.name` a phase's name). The narrowest key wins.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path
from typing import Any

from bathtub_api.schema_refs import each_property

GLOSSARY = Path(__file__).with_name("glossary.toml")


@functools.cache
def entries() -> dict[str, str]:
    """The glossary: key (`name`, `Owner.name`) to description (read once per process)."""
    with GLOSSARY.open("rb") as f:
        table = tomllib.load(f)
    bad = [k for k, v in table.items() if not (isinstance(v, str) and v.strip())]
    if bad:  # a mistyped entry would otherwise publish an empty description
        raise ValueError(f"{GLOSSARY.name}: entries must be non-empty strings: {', '.join(bad)}")
    return {k: " ".join(v.split()) for k, v in table.items()}


def key_for(owner: str, name: str) -> str | None:
    """The glossary's key for property `name` of `owner` (a dotted path, `RbdCreate.nodes`):
    `Model.name` (when the property is the model's own), the immediate parent's `nodes.name`,
    else `name` alone; None if the glossary has none of them."""
    table = entries()
    parts = owner.split(".")
    keys = ([f"{owner}.{name}"] if len(parts) == 1 else [f"{owner}.{name}", f"{parts[-1]}.{name}"]) + [name]
    return next((k for k in keys if k in table), None)


def describe(defs: dict[str, Any], used: set[str] | None = None) -> dict[str, Any]:
    """Every declared property of the definitions (by model name) without a description takes
    the glossary's, in place; returns `defs`. The keys applied are added to `used` if given (a
    test keeps the glossary free of entries nothing reads)."""

    def lookup(owner: str, name: str) -> str | None:
        key = key_for(owner, name)
        if key is None:
            return None
        if used is not None:
            used.add(key)
        return entries()[key]

    def visit(owner: str, name: str, schema: dict[str, Any]) -> None:
        if schema.get("description"):
            return
        # an optional field's own description sits in its non-null branch (pydantic's Optional of
        # an Annotated type): said at the property, where readers and the client look
        inner = [o for o in schema.get("anyOf", ()) if isinstance(o, dict) and o.get("description")]
        text = inner[0].pop("description") if len(inner) == 1 else lookup(owner, name)
        if text:
            schema["description"] = text

    def resolve(ref: str) -> Any:
        # the fields a model's `$ref` declares tell which of a rule's fields restate them
        return defs.get(ref.rsplit("/", 1)[-1], {})

    for model, body in defs.items():
        each_property(body, visit, model, resolve)
    return defs


def field_texts(defs: dict[str, Any], model: str) -> dict[str, str]:
    """Every field `model` declares (nested ones by dotted path, `nodes.model.mean`) with its
    description, from described definitions (`openapi.definitions`): what the guide answers
    for a tool, whose tool-list schema carries only the fields' own short descriptions."""
    out: dict[str, str] = {}

    def visit(owner: str, name: str, schema: dict[str, Any]) -> None:
        path = f"{owner}.{name}".partition(".")[2]  # without the model's name
        text = schema.get("description")
        if isinstance(text, str) and path not in out:
            out[path] = text

    each_property(defs[model], visit, model, lambda ref: defs.get(ref.rsplit("/", 1)[-1], {}), ref_owner=False)
    return out
