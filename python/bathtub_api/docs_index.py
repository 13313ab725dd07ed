"""The docs page's operation index, rendered on the server from the OpenAPI document: every
operation with its summary, description, parameters, request body (each property with its type,
rules and description), worked example and responses; and a page of the schemas the operations
refer to (their answers, the parts requests share), which a type's name links to.

Why not Swagger UI alone: it downloads a 1.4 MB script, fetches and parses the whole document
and builds every operation in the browser, 5-10 s before anything shows on a shared machine.
These pages are plain HTML (no script), built once per app at the first request and served with
an ETag and gzip (bathtub_api.precompressed), so they show at once; Swagger UI stays one link away
for trying requests (/api/v1/docs/try). Everything from the document is escaped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any

import orjson

from bathtub_api.openapi import CROSS_FIELD

REF_PREFIX = "#/components/schemas/"
NESTING = 4  # objects nested deeper show their type only (the OpenAPI document has their fields)
INDEX = "/api/v1/docs"
SCHEMAS = f"{INDEX}/schemas"  # the schemas on a page of their own: the index stays small enough to show at once
ORIGINAL = "original"  # the tag of the REST routes that are not tool actions
ORIGINAL_SAYS = ("The original routes (models, datasets, fit, fleets, strategy, ingest, import), supported "
                 "unchanged with the same token and scopes, and the routes that carry bytes (upload links, "
                 "photos, report pages). The tool API above is the one for new work.")
PATTERN_CHARS = 48  # a longer pattern is noise to a reader; the OpenAPI document keeps it


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


_CODE = re.compile(r"`([^`]+)`")


def prose(text: str) -> str:
    """A description's text, escaped, with its `code spans` set as code."""
    return _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", esc(text))


def anchor(name: str) -> str:
    return f"schema-{re.sub(r'[^A-Za-z0-9_-]', '_', name)}"


def op_anchor(tag: str, operation_id: str) -> str:
    """The same fragment Swagger UI's deep links use (#/tag/operationId), as an element id."""
    return f"operations-{tag}-{operation_id}"


def _literal(value: Any) -> str:
    return f"<code>{esc(orjson.dumps(value).decode())}</code>"


def _branches(s: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    """The alternatives of a schema without its `null` one, and whether null is allowed."""
    alts = s.get("anyOf") or s.get("oneOf") or [s]
    real = [a for a in alts if a.get("type") != "null"]
    return real, len(real) < len(alts)


def kind(s: dict[str, Any]) -> str:
    """A schema's type in a few words: a named schema is a link, an array names its items."""
    if "$ref" in s:
        name = s["$ref"].removeprefix(REF_PREFIX)
        return f'<a href="{SCHEMAS}#{anchor(name)}">{esc(name)}</a>'
    if "const" in s:
        return _literal(s["const"])
    if "enum" in s:
        return "one of " + ", ".join(_literal(v) for v in s["enum"])
    if "anyOf" in s or "oneOf" in s:
        real, nullable = _branches(s)
        said = " or ".join(dict.fromkeys(kind(a) for a in real)) or "null"
        return f"{said} or null" if nullable and real else said
    t = s.get("type")
    if isinstance(t, list):
        return " or ".join(esc(x) for x in t)
    if t == "array":
        if "prefixItems" in s:
            return "[" + ", ".join(kind(i) for i in s["prefixItems"]) + "]"
        items = s.get("items")
        return f"array of {kind(items)}" if isinstance(items, dict) and items else "array"
    if t == "object":
        extra = s.get("additionalProperties")
        if isinstance(extra, dict) and extra and not s.get("properties"):
            return f"object: key → {kind(extra)}"
        return "object"
    if t:
        return esc(t) + (f" ({esc(s['format'])})" if "format" in s else "")
    return "any"


# (lower key, upper key, unit): a pair is said as one range, "1 to 200 characters"
_RANGES = (("minLength", "maxLength", " characters"), ("minItems", "maxItems", " items"),
           ("minProperties", "maxProperties", " keys"))


def _bounds(part: dict[str, Any]) -> list[str]:
    out = []
    for low, high, unit in _RANGES:
        lo, hi = part.get(low), part.get(high)
        if lo and hi is not None:
            out.append(f"{esc(lo)} to {esc(hi)}{unit}")
        elif lo:
            out.append(f"at least {esc(lo)}{unit}")
        elif hi is not None:
            out.append(f"at most {esc(hi)}{unit}")
    lower = ("≥ ", part["minimum"]) if "minimum" in part else ("> ", part.get("exclusiveMinimum"))
    upper = ("≤ ", part["maximum"]) if "maximum" in part else ("< ", part.get("exclusiveMaximum"))
    said = [f"{sign}{esc(value)}" for sign, value in (lower, upper) if value is not None]
    if said:
        out.append(" and ".join(said))
    return out


def rules(s: dict[str, Any]) -> list[str]:
    """The checks a value meets (bounds, lengths, pattern), from the schema and its non-null branch."""
    out: list[str] = []
    real, _ = _branches(s)
    for part in ([s, real[0]] if len(real) == 1 and real[0] is not s else [s]):
        out += _bounds(part)
        pattern = part.get("pattern")
        if isinstance(pattern, str) and len(pattern) <= PATTERN_CHARS:
            out.append(f"matches <code>{esc(pattern)}</code>")
        keys = part.get("propertyNames")
        if isinstance(keys, dict):
            out += [f"keys {r}" for r in rules(keys)]
    return out


def _inline_object(s: dict[str, Any]) -> dict[str, Any] | None:
    """The unnamed object a property holds (itself, its non-null branch, its items or its values),
    whose properties are listed under it."""
    for node in _branches(s)[0][:1]:
        if node.get("properties") and "$ref" not in node:
            return node
        for inner in (node.get("items"), node.get("additionalProperties")):
            if isinstance(inner, dict) and inner.get("properties") and "$ref" not in inner:
                return inner
    return None


def properties(s: dict[str, Any], depth: int = 0) -> str:
    """An object schema's properties as a list: name, type, required, rules, default, description."""
    props = s.get("properties") or {}
    if not props:
        return ""
    required = set(s.get("required", ()))
    items = []
    for name, p in props.items():
        if not isinstance(p, dict):
            continue
        bits = [f'<code class="name">{esc(name)}</code>', f'<span class="type">{kind(p)}</span>']
        if name in required:
            bits.append('<span class="req">required</span>')
        said = rules(p)
        if "default" in p and p["default"] is not None:
            said.append(f"default {_literal(p['default'])}")
        if said:
            bits.append(f'<span class="rules">{"; ".join(said)}</span>')
        line = " ".join(bits)
        description = p.get("description") or next((a.get("description") for a in _branches(p)[0]
                                                     if a.get("description")), None)
        if description:
            line += f'<div class="desc">{prose(description)}</div>'
        inner = _inline_object(p)
        if inner is not None and depth < NESTING:
            line += properties(inner, depth + 1)
        items.append(f"<li>{line}</li>")
    return f'<ul class="props">{"".join(items)}</ul>'


def _described(s: dict[str, Any]) -> str:
    """A schema's description, with the rules between values (said at its end for readers of the
    plain document) set out as a list a reader can scan, closed until asked."""
    text = s.get("description") or ""
    checked = [r for r in s.get("x-cross-field", ()) if isinstance(r, str)]
    if checked and CROSS_FIELD in text:
        text = text[:text.index(CROSS_FIELD)].rstrip()
    out = f"<p>{prose(text)}</p>" if text else ""
    if checked:
        out += (f'<details class="checked"><summary>Also checked by the service ({len(checked)} rules)</summary>'
                f'<ul>{"".join(f"<li>{prose(r)}</li>" for r in checked)}</ul></details>')
    return out


def schema_body(s: dict[str, Any]) -> str:
    """A named schema: its description, its properties, or what it is when it has none."""
    parts = [_described(s)]
    listed = properties(s)
    if listed:
        parts.append(listed)
        if s.get("additionalProperties") is False:
            parts.append('<p class="note">No other keys are accepted.</p>')
    else:
        parts.append(f"<p>{kind(s)}</p>")
    return "".join(parts)


def _refs(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF_PREFIX):
            yield ref.removeprefix(REF_PREFIX)
        for v in node.values():
            yield from _refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from _refs(v)


def _example(example: Any, said: dict[str, str], setups: dict[str, str]) -> str:
    """The worked example, what each placeholder in it stands for, and the set-up requests that
    make the items no other example makes (and those their own requests name)."""
    text = orjson.dumps(example, option=orjson.OPT_INDENT_2).decode()
    used = list(dict.fromkeys(re.findall(r'"\{(\w+)\}"', text)))
    for name in used:  # a set-up request may name another item (a fit names its dataset)
        used += [n for n in re.findall(r"\{(\w+)\}", setups.get(name, "")) if n in said and n not in used]
    notes = "".join(f"<li><code>{{{esc(u)}}}</code>: {prose(said[u])}</li>" for u in used if u in said)
    steps = "".join(f'<details class="setup"><summary>Set-up: making <code>{{{esc(u)}}}</code></summary>'
                    f"<pre><code>{esc(setups[u])}</code></pre></details>" for u in reversed(used) if u in setups)
    return (f'<div class="example"><h4>Example request</h4><pre><code>{esc(text)}</code></pre>'
            + (f'<ul class="placeholders">{notes}</ul>' if notes else "") + steps + "</div>")


def _responses(op: dict[str, Any]) -> str:
    rows, refusals = [], []
    for code, r in op.get("responses", {}).items():
        if "$ref" in r:  # a shared refusal: said once under Errors
            refusals.append(esc(code))
            continue
        content = r.get("content", {})
        said = "; ".join(f"<code>{esc(ct)}</code> {kind(c.get('schema', {}))}" for ct, c in content.items())
        rows.append(f"<li><strong>{esc(code)}</strong> {prose(r.get('description', ''))}"
                    f"{': ' + said if said else ''}</li>")
    out = f'<h4>Responses</h4><ul class="responses">{"".join(rows)}</ul>'
    if refusals:
        out += f'<p class="refusals"><a href="#errors">Refusals</a>: {", ".join(refusals)}</p>'
    return out


def _parameters(op: dict[str, Any]) -> str:
    params = op.get("parameters") or []
    if not params:
        return ""
    items = []
    for p in params:
        schema = p.get("schema", {})
        bits = [f'<code class="name">{esc(p["name"])}</code>', f'<span class="type">{kind(schema)}</span>',
                f'<span class="in">in {esc(p.get("in", ""))}</span>']
        if p.get("required"):
            bits.append('<span class="req">required</span>')
        said = rules(schema)
        if said:
            bits.append(f'<span class="rules">{"; ".join(said)}</span>')
        desc = f'<div class="desc">{prose(p["description"])}</div>' if p.get("description") else ""
        items.append(f"<li>{' '.join(bits)}{desc}</li>")
    return f'<h4>Parameters</h4><ul class="props">{"".join(items)}</ul>'


def _request(op: dict[str, Any], schemas: dict[str, Any], said: dict[str, str], setups: dict[str, str]) -> str:
    body = op.get("requestBody")
    if not body:
        return ""
    out = []
    for ct, content in body.get("content", {}).items():
        schema = content.get("schema", {})
        name = schema.get("$ref", "").removeprefix(REF_PREFIX)
        # the schema's name, not a link: its fields are right here (the schema page points back here)
        head = (f'<h4>Request body <span class="ct"><code>{esc(ct)}</code> {esc(name) if name else kind(schema)}'
                f'{"" if body.get("required") else " (optional: an empty body is {})"}</span></h4>')
        target = schemas.get(name, schema)
        listed = schema_body(target) if name else (f"<p>{prose(schema['description'])}</p>"
                                                   if schema.get("description") else "")
        # the worked example first: what to send, then what each field means
        out.append(head + (_example(content["example"], said, setups) if "example" in content else "") + listed)
    return "".join(out)


def _operation(path: str, method: str, op: dict[str, Any], schemas: dict[str, Any], said: dict[str, str],
               setups: dict[str, str]) -> str:
    tag = (op.get("tags") or ["other"])[0]
    meta = op.get("x-bathtub", {})
    facts = [f"scope <code>{esc(meta['scope'])}</code>"] if meta.get("scope") else []
    if op.get("security") == []:
        facts.append("no token needed")
    if meta.get("heavy"):
        facts.append("may queue a job (poll <code>get/job</code>)")
    if meta.get("pro_only"):
        facts.append("pro plan")
    if "action" in meta or meta.get("tool"):
        tool = "/".join(x for x in (meta.get("tool"), meta.get("action")) if x)
        facts.append(f"MCP tool <code>{esc(meta.get('tool'))}</code>" + (f" ({esc(tool)})" if "/" in tool else ""))
    description = op.get("description", "")
    try_link = f"/api/v1/docs/try#/{esc(tag)}/{esc(op.get('operationId', ''))}"
    inner = "".join([
        f"<p>{prose(description)}</p>" if description and description != op.get("summary") else "",
        f'<p class="facts">{" · ".join(facts)}</p>' if facts else "",
        _parameters(op), _request(op, schemas, said, setups), _responses(op),
        f'<p class="try"><a href="{try_link}">Try it in Swagger UI</a></p>',
    ])
    return (f'<details class="op" id="{esc(op_anchor(tag, op.get("operationId", "")))}"><summary>'
            f'<span class="method m-{esc(method)}">{esc(method.upper())}</span> <code class="path">{esc(path)}</code>'
            f' <span class="summary">{prose(op.get("summary", ""))}</span></summary>'
            f'<div class="opbody">{inner}</div></details>')


def _body_pointer(name: str, path: str, method: str, op: dict[str, Any]) -> str:
    tag = (op.get("tags") or ["other"])[0]
    target = f"{INDEX}#{op_anchor(tag, op.get('operationId', ''))}"
    return (f'<section class="schema" id="{anchor(name)}"><h3>{esc(name)}</h3><p>The request body of '
            f'<a href="{esc(target)}">{esc(method.upper())} {esc(path)}</a>, listed there.</p></section>')


def render(doc: dict[str, Any], placeholders: dict[str, str], setups: dict[str, str] | None = None) -> str:
    """The index's body: operations grouped by tag, then the refusals they share. `placeholders` says
    what each `{name}` in an example stands for; `setups` the requests that make it, where no
    other example does."""
    setups = setups or {}
    schemas = doc.get("components", {}).get("schemas", {})
    by_tag: dict[str, list[str]] = {}
    for path, ops in doc.get("paths", {}).items():
        for method, op in ops.items():
            tag = (op.get("tags") or ["other"])[0]
            by_tag.setdefault(tag, []).append(_operation(path, method, op, schemas, placeholders, setups))
    # the tools first, in the registry's order; the original REST routes after them
    by_tag = {t: by_tag[t] for t in sorted(by_tag, key=lambda t: t == ORIGINAL)}
    count = sum(len(v) for v in by_tag.values())
    tags = " · ".join(f'<a href="#tag-{esc(t)}">{esc(t)}</a>' for t in by_tag)
    sections = "".join(f'<section class="tag" id="tag-{esc(t)}"><h2>{esc(t)}</h2>'
                       + (f"<p>{ORIGINAL_SAYS}</p>" if t == ORIGINAL else "") + f'{"".join(ops)}</section>'
                       for t, ops in by_tag.items())
    errors = "".join(f'<li id="error-{esc(name.removeprefix("Error"))}"><strong>{esc(name.removeprefix("Error"))}'
                     f"</strong> {prose(r.get('description', ''))}</li>"
                     for name, r in doc.get("components", {}).get("responses", {}).items())
    info = doc.get("info", {})
    return (f'<header><h1>{esc(info.get("title", "API"))} <small>{esc(info.get("version", ""))}</small></h1>'
            f'<p>{prose(info.get("description", ""))}</p>'
            '<p class="links"><a href="/api/v1/openapi.json">OpenAPI document</a> · '
            '<a href="/api/v1/docs/try">Try requests in Swagger UI</a> · send '
            "<code>Authorization: Bearer &lt;token&gt;</code> (Settings › API access makes one)</p>"
            f'<p class="tags"><strong>{count} operations:</strong> {tags} · <a href="#errors">errors</a> · '
            f'<a href="{SCHEMAS}">schemas</a></p></header>'
            f'<main class="ops">{sections}'
            f'<section id="errors"><h2>Errors</h2><p>Every refusal is <code>{{"detail": "field: rule"}}</code> '
            f'with one of these statuses.</p><ul>{errors}</ul></section></main>')


def render_schemas(doc: dict[str, Any]) -> str:
    """The schema page's body: every schema the operations name that is not a request body (those
    are listed under their operation, where the name points), each once."""
    schemas = doc.get("components", {}).get("schemas", {})
    # A request body's schema is listed in full under its operations; the schema section lists the
    # others once (responses, parts of other schemas) and points a request body's name at an operation.
    bodies = {}
    for path, ops in doc.get("paths", {}).items():
        for method, op in ops.items():
            for content in op.get("requestBody", {}).get("content", {}).values():
                name = content.get("schema", {}).get("$ref", "").removeprefix(REF_PREFIX)
                if name:
                    bodies.setdefault(name, (path, method, op))
    elsewhere = set(_refs([{k: v for k, v in op.items() if k != "requestBody"}
                           for ops in doc.get("paths", {}).values() for op in ops.values()]))
    elsewhere |= set(_refs(schemas))
    listed = "".join(
        f'<section class="schema" id="{anchor(n)}"><h3>{esc(n)}</h3>{schema_body(schemas[n])}</section>'
        if n in elsewhere or n not in bodies else _body_pointer(n, *bodies[n])
        for n in sorted(elsewhere | set(bodies)) if n in schemas)
    return (f'<header><h1>Schemas <small>{esc(doc.get("info", {}).get("version", ""))}</small></h1>'
            f'<p>What the operations answer and the parts their requests share. <a href="{INDEX}">All '
            f"operations</a> · <a href=\"/api/v1/openapi.json\">OpenAPI document</a></p></header>"
            f'<main class="ops"><section id="schemas">{listed}</section></main>')
