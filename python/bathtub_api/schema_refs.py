"""Shared definitions said once: a schema that appears in several places (a distribution's
parameters, a block's model) is moved into the definitions and referred to with `$ref`.

The request models' schemas embed hand-built library schemas (`bathtub.distribution_schema.params_rules`,
the diagram's node and model schemas) wherever a field takes them, so the same subtree used to be
inlined dozens of times: 1.2 MB of OpenAPI and 1.9 MB of MCP tool list. `hoist` finds repeated
subtrees by their canonical JSON and keeps one copy; `outline` is the tool protocol's lighter view.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from bathtub_api.fields import DATE_PATTERN

# A subtree smaller than this stays inline: a `$ref` to a tiny schema costs a reader a jump
# for a handful of bytes saved.
MIN_BYTES = 400
# Keywords that state rules between values (one field's schema depending on another's value):
# the tool protocol's outline leaves them to the service's refusals, which name the field.
RULE_KEYWORDS = ("if", "then", "else", "dependentRequired", "dependentSchemas")
# What the outline also leaves out: `x-cross-field` is said in the schema's description already
# (openapi.cross_field_described).
OUTLINE_DROPS = ("x-cross-field",)


def _canon(node: Any) -> bytes:
    return orjson.dumps(node, option=orjson.OPT_SORT_KEYS)


# Keywords whose value maps names to schemas: such a map is not a schema, so never a `$ref`'s
# target (once descriptions made two diagrams' block-model `properties` equal, the map itself
# was hoisted and `properties` became `{"$ref": ...}`, a property named "$ref").
NAME_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")


def _subtrees(node: Any, path: tuple[str, ...], out: dict[bytes, list[tuple[str, ...]]], min_bytes: int,
              bare: set[tuple[str, ...]] | None, is_map: bool = False, at_property: bool = False) -> int:
    """Record every schema subtree (a dict, by canonical JSON; not a name map) of at least
    `min_bytes` with its paths; returns the node's size so parents skip serialising small
    subtrees again. A property's schema is recorded without its description (its path added to
    `bare`): the description says the property's role and stays beside the `$ref` where it is
    used, so fields of one type with different roles share one definition."""
    if isinstance(node, dict):
        size = 2 + sum(len(k) + 4 + _subtrees(v, (*path, k), out, min_bytes, bare, not is_map and k in NAME_MAPS,
                                              is_map and path[-1] == "properties")
                       for k, v in node.items())
        if size >= min_bytes and "$ref" not in node and not is_map:
            body = {k: v for k, v in node.items() if k != "description"} if at_property and bare is not None else node
            if body is node or len(_canon(body)) >= min_bytes:
                out.setdefault(_canon(body), []).append(path)
                if body is not node and bare is not None:
                    bare.add(path)
        return size
    if isinstance(node, list):
        return 2 + sum(1 + _subtrees(v, (*path, str(i)), out, min_bytes, bare) for i, v in enumerate(node))
    return len(orjson.dumps(node))


def _at(root: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        root = root[int(key)] if isinstance(root, list) else root[key]
    return root


def _put(root: Any, path: tuple[str, ...], value: Any) -> None:
    parent = _at(root, path[:-1])
    if isinstance(parent, list):
        parent[int(path[-1])] = value
    else:
        parent[path[-1]] = value


def _name(node: dict[str, Any], path: tuple[str, ...], taken: dict[str, Any]) -> str:
    """A definition's name: its title when it has one (the library names its shared schemas),
    else the definition it first appeared in and the properties leading to it."""
    title = node.get("title")
    if isinstance(title, str) and title.strip():
        base = "".join(w[:1].upper() + w[1:] for w in re.findall(r"[A-Za-z0-9]+", title))
    else:
        fields = [path[i + 1] for i, k in enumerate(path[1:-1], 1) if k == "properties"]
        base = "_".join([path[0], *fields]) if fields else f"{path[0]}_part"
        base = re.sub(r"[^A-Za-z0-9_]", "_", base)
    name, n = base, 2
    while name in taken:
        name, n = f"{base}{n}", n + 1
    return name


def hoist(defs: dict[str, Any], prefix: str, min_bytes: int = MIN_BYTES, roles: bool = True) -> dict[str, Any]:
    """Move every subtree of `defs` that appears more than once (`min_bytes` or more) into `defs`
    under a name, replacing each use by `{"$ref": prefix + name}`; a subtree equal to an existing
    definition refers to it. Greedy, largest saving first, until nothing repeats (in place).

    Each pass takes every candidate whose places do not overlap a place already taken in that
    pass (a walk of the whole tree costs more than the choosing), so passes are about as many
    as shared schemas nest.

    With `roles`, a property's schema is shared without its description, which stays beside
    each `$ref` (the property's role: two `unit` fields of one type may mean different things);
    without, a property said the same way in several places, description included, is said once
    (the tool list, where bytes count most and a repeated field means the same).
    """
    by_body = {_canon(body): name for name, body in defs.items()}
    while True:
        seen: dict[bytes, list[tuple[str, ...]]] = {}
        bare: set[tuple[str, ...]] = set()  # property schemas recorded without their description
        for name, body in defs.items():
            for key, value in body.items() if isinstance(body, dict) else ():
                _subtrees(value, (name, key), seen, min_bytes, bare if roles else None, key in NAME_MAPS)
        candidates = sorted(((len(body) * (len(paths) - (body not in by_body)), body, paths)
                             for body, paths in seen.items() if len(paths) > 1 or body in by_body),
                            key=lambda c: c[0], reverse=True)
        if not candidates:
            return defs
        taken: set[tuple[str, ...]] = set()  # the places replaced this pass
        above: set[tuple[str, ...]] = set()  # and every place containing one
        for _, body, paths in candidates:
            if any(p in above or any(p[:i] in taken for i in range(1, len(p) + 1)) for p in paths):
                continue
            name = by_body.get(body)
            if name is None:
                name = _name(_at(defs, paths[0]), paths[0], defs)
                defs[name] = orjson.loads(body)
                by_body[body] = name
            # equal subtrees never nest inside one another, so no place holds another
            for path in paths:
                # a property keeps saying what it is beside its `$ref` (2020-12 allows siblings)
                said = _at(defs, path).get("description") if path in bare else None
                _put(defs, path, {"$ref": prefix + name, **({"description": said} if said else {})})
                taken.add(path)
                above.update(path[:i] for i in range(1, len(path)))


def outline(node: Any) -> Any:
    """The schema without its rules between values (RULE_KEYWORDS, and `allOf` lists of such
    rules): the fields, their types, bounds, enums and descriptions. Returns a new tree. Run
    it before `hoist` (the rules hold most of what repeats)."""
    if isinstance(node, list):
        return [outline(v) for v in node]
    if not isinstance(node, dict):
        return node
    drop = {*RULE_KEYWORDS, *OUTLINE_DROPS, "allOf"}
    if "properties" in node:
        drop.add("anyOf")  # beside an object's fields, an anyOf is a rule over their combinations
    out = {k: outline(v) for k, v in node.items()
           if k not in drop and not (k == "default" and v is None)}  # null is what leaving it out means
    if out.get("pattern") == DATE_PATTERN:
        del out["pattern"]
        out["format"] = "date"  # the same calendar dates, said in a word
    kept = [outline(v) for v in node.get("allOf", ()) if b'"$ref"' in orjson.dumps(v)]
    if kept:
        out["allOf"] = kept
    return _nullable(out)


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """`anyOf: [{type: T, ...}, {type: null}]` (pydantic's optional field) as `type: [T, null]`:
    the same schema in fewer bytes, and what a reader of tool schemas expects."""
    options = node.get("anyOf")
    if not (isinstance(options, list) and len(options) == 2 and options[1] == {"type": "null"}):
        return node
    first = options[0]
    if not isinstance(first, dict) or not isinstance(first.get("type"), str) or set(first) & set(node) - {"anyOf"}:
        return node
    if any(k in first for k in ("anyOf", "oneOf", "allOf", "enum", "const", "$ref")):
        return node
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    return {**rest, **first, "type": [first["type"], "null"]}


def reachable(defs: dict[str, Any], prefix: str, roots: set[str]) -> dict[str, Any]:
    """The definitions `roots` use, directly or not (after `outline`, those only its dropped
    rules used are gone), in their order."""
    names, pending = set(roots), list(roots)
    pattern = re.compile(re.escape(prefix) + r"([A-Za-z0-9_.-]+)")
    while pending:
        for ref in pattern.findall(orjson.dumps(defs[pending.pop()]).decode()):
            if ref not in names:
                names.add(ref)
                pending.append(ref)
    return {k: v for k, v in defs.items() if k in names}


def each_dict(node: Any, visit: Callable[[dict[str, Any]], None]) -> Any:
    """Call `visit` on every dict inside `node`, outermost first (in place); returns `node`."""
    if isinstance(node, dict):
        visit(node)
        for v in node.values():
            each_dict(v, visit)
    elif isinstance(node, list):
        for v in node:
            each_dict(v, visit)
    return node


def untitled(node: Any) -> Any:
    """The tree without `title`s (in place): pydantic's repeat the property names, and a shared
    schema's title is its definition's name once `hoist` has run."""

    def visit(d: dict[str, Any]) -> None:
        if isinstance(d.get("title"), str):
            del d["title"]

    return each_dict(node, visit)


BRIEF_MARK = " ..."


def brief(node: Any, limit: int) -> Any:
    """Every description longer than `limit` characters cut to its first sentence (or to
    `limit` at a word) and ended with BRIEF_MARK, in place: the tool list is read whole into an
    agent's context; the full text is in the OpenAPI document (the server's instructions say so
    once, rather than each cut description)."""

    def visit(d: dict[str, Any]) -> None:
        text = d.get("description")
        if isinstance(text, str) and len(text) > limit:
            flat = " ".join(text.split())
            end = flat.find(". ", 0, limit)
            d["description"] = (flat[:end + 1] if end > 0 else flat[:flat.rfind(" ", 0, limit)]) + BRIEF_MARK

    return each_dict(node, visit)


# Where a schema restates fields its object declares (a rule narrowing them for some values, or
# a combination of them): a property named there is the declared one, described where declared.
RULE_BRANCHES = (*RULE_KEYWORDS, "allOf", "not", "contains")


def each_property(node: Any, visit: Callable[[str, str, dict[str, Any]], None], owner: str = "",
                  resolve: Callable[[str], Any] | None = None, ref_owner: bool = True) -> None:
    """Call `visit(owner, name, schema)` once for every property a schema declares: `owner` is
    the dotted path of properties leading to its object, from `owner` given (e.g. the model's
    name): `RbdCreate.nodes.model` for a block model's fields. With `resolve` (a `$ref` to its
    schema) the walk follows references, a definition's fields owned by its name (with
    `ref_owner`) or by the path of properties that led there.

    A property a rule restates (inside `if`/`then`/`allOf`/..., or an `anyOf`/`oneOf` beside
    `properties`, naming a field the object declares) is not visited: it is the declared one,
    narrowed; inside it, only fields the declared one leaves open are declared (a loose list of
    objects whose fields a rule spells out). A rule's branch that brings a field of its own (a
    tool's variants under `oneOf`) declares it, and it is visited."""
    seen: set[tuple[str, str, frozenset[str]]] = set()

    def fields(schema: Any, depth: int = 0) -> frozenset[str]:
        """The property names a declared schema gives its object(s), through items, unions and refs."""
        if depth > 8:
            return frozenset()
        if isinstance(schema, list):
            return frozenset().union(*(fields(v, depth + 1) for v in schema))
        if not isinstance(schema, dict):
            return frozenset()
        out = frozenset(schema.get("properties") or ())
        if resolve is not None and isinstance(schema.get("$ref"), str):
            out |= fields(resolve(schema["$ref"]), depth + 1)
        for key in ("items", "anyOf", "oneOf", "additionalProperties", "prefixItems"):
            out |= fields(schema.get(key), depth + 1)
        return out

    def walk(node: Any, owner: str, outer: dict[str, Any]) -> None:
        if isinstance(node, list):
            for v in node:
                walk(v, owner, outer)
            return
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if resolve is not None and isinstance(ref, str):
            key = (ref, owner, frozenset(outer))
            if key not in seen:
                seen.add(key)
                walk(resolve(ref), ref.rsplit("/", 1)[-1] if ref_owner and not outer else owner, outer)
        props = node.get("properties")
        props = props if isinstance(props, dict) else {}
        for name, sub in props.items():
            if not isinstance(sub, dict):
                continue
            at = f"{owner}.{name}" if owner else name
            if name in outer:  # restated: what the declared one leaves open is declared here
                walk(sub, at, {k: None for k in fields(outer[name])} or {"": None})
            else:
                visit(owner, name, sub)
                walk(sub, at, {})
        for key, v in node.items():
            if key not in ("properties", "$defs"):
                ruled = key in RULE_BRANCHES or (props and key in ("anyOf", "oneOf"))
                walk(v, owner, {**outer, **props} if ruled else outer)

    walk(node, owner, {})


def undescribed(tree: Any, owner: str, resolve: Callable[[str], Any] | None = None) -> list[str]:
    """The path (`owner.field...`) of every property `tree` declares without a description."""
    out: list[str] = []

    def visit(at: str, name: str, schema: dict[str, Any]) -> None:
        if not (isinstance(schema.get("description"), str) and schema["description"].strip()):
            out.append(f"{at}.{name}")

    each_property(tree, visit, owner, resolve)
    return out
