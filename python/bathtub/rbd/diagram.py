"""A whole diagram in stored form: nodes, edges, common-cause groups and diagram settings.

`check_diagram` is the one validator: every create and every edit ends with it, so a
stored diagram is always well formed. The graph rules are the engine's (a directed
acyclic graph from the one `input` to the one `output`, each node on such a path, a
k-of-n gate needing at most as many branches as feed it); errors name the node or edge.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from bathtub.currency import CURRENCY
from bathtub.errors import InputError
from bathtub.rbd import schema as s
from bathtub.rbd.blocks import BLOCK_TYPES, LIFE_TYPES, check_node, node_field, on_placeholder
from bathtub.units import years_per_unit

MAX_NODES = 5000
SETTINGS: dict[str, s.Check] = {
    "repair_crews": s.integer(0, 1_000_000),
    "maintenance_groups": s.mapping(s.MAINTENANCE_GROUP, 500),
    "safety_function": s.boolean,
    "target_sil": s.integer(0, 4),
    "costs": s.DIAGRAM_COSTS,
    "production": s.PRODUCTION,
    "phases": s.PHASES,
    "network": s.NETWORK,
    "currency": CURRENCY,
}
# A common-cause group: declared with the engine's lowering, which checks it the same way.
CCF_GROUP = s.CCF_GROUP


EDGE_SCHEMA: s.Schema = {"type": "object", "required": ["source", "target"], "additionalProperties": False,
                         "properties": {"source": {"type": "string"}, "target": {"type": "string"}}}
GRAPH_RULES = ("The graph: node ids unique; exactly one input and one output node; every edge joins two nodes of "
               "the diagram, once, never into the input or out of the output; every node lies on a path from "
               "the input to the output; no cycle; a knode's k (when given) equals the branches feeding it.")
# GRAPH_RULES as `field: rule` in the refusals' words, but the one node of each end (a schema's `contains`).
GRAPH_CROSS_FIELD = ("nodes[].id: is used twice; node ids must be unique",
                     "edges[].*: no node", "edges[]: to itself", "edges[]: given twice",
                     "edges[].target: is the input node", "edges[].source: is the output node",
                     "nodes.*: not reached from the input node", "nodes.*: does not lead to the output node",
                     "nodes.*.k: branches feed the gate", "nodes.*.n: branches feed the gate",
                     "nodes.*: lies on a cycle")
ONE_INPUT_AND_OUTPUT: s.Schema = {"allOf": [{"contains": {"type": "object", "required": ["type"],
                                                          "properties": {"type": {"const": end}}},
                                             "minContains": 1, "maxContains": 1} for end in ("input", "output")]}


def clean_settings(values: Mapping[str, Any], field: str) -> dict[str, Any]:
    """Diagram settings with their "clears" values removed (0 target_sil, [] phases, {} groups,
    false network, zero costs and production figures)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        if key not in SETTINGS:
            raise InputError(f"{field}.{key}", "unknown setting")
        v = SETTINGS[key](value, f"{field}.{key}" if field else key)
        if key in ("costs", "production"):
            v = {k: x for k, x in v.items() if x not in (0, 0.0, "")}
        if v in ({}, [], False) or (key == "target_sil" and v == 0):
            continue
        out[key] = v
    return out


def check_diagram(d: Any) -> dict[str, Any]:
    """The stored form of a diagram {name, unit, repairable, nodes, edges, ccf, ...settings};
    raises InputError naming the node, edge or field."""
    if not isinstance(d, Mapping):
        raise InputError("diagram", "must be an object")
    known = ("name", "unit", "repairable", "nodes", "edges", "ccf", *SETTINGS)
    for k in d:
        if k not in known:
            raise InputError(k, "unknown field of a diagram")
    name = s.text(200, 1)(d.get("name"), "name")
    unit = None if d.get("unit") is None else s.text(40)(d["unit"], "unit")
    repairable = s.boolean(d.get("repairable", False), "repairable")
    raw_nodes = d.get("nodes")
    if not isinstance(raw_nodes, Sequence) or isinstance(raw_nodes, (str, bytes)) or not raw_nodes:
        raise InputError("nodes", "must be a non-empty array")
    if len(raw_nodes) > MAX_NODES:
        raise InputError("nodes", f"at most {MAX_NODES} nodes")
    nodes: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_nodes):
        node = check_node(raw, node_field(raw, i), repairable=repairable)
        if node["id"] in seen:
            raise InputError(f"nodes[{i}].id", f"{node['id']!r} is used twice; node ids must be unique")
        seen.add(node["id"])
        nodes.append(node)
    edges = _check_edges(d.get("edges"), {n["id"]: n for n in nodes})
    _check_graph(nodes, edges)
    ccf = _check_ccf(d.get("ccf") or [], {n["id"]: n for n in nodes})
    out: dict[str, Any] = {"name": name, "unit": unit, "repairable": repairable, "nodes": nodes, "edges": edges,
                           "ccf": ccf}
    out.update(clean_settings({k: d.get(k) for k in SETTINGS}, ""))
    _check_settings_refs(out, {n["id"]: n for n in nodes})
    return out


def _check_edges(raw: Any, nodes: Mapping[str, dict[str, Any]]) -> list[dict[str, str]]:
    if raw is None:
        raw = []
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        raise InputError("edges", "must be an array of {source, target}")
    out: list[dict[str, str]] = []
    pairs: set[tuple[str, str]] = set()
    for i, e in enumerate(raw):
        f = f"edges[{i}]"
        if not isinstance(e, Mapping):
            raise InputError(f, "must be an object {source, target}")
        for k in e:
            if k not in ("source", "target"):
                raise InputError(f"{f}.{k}", "unknown field")
        src, dst = e.get("source"), e.get("target")
        for key, v in (("source", src), ("target", dst)):
            if not isinstance(v, str):
                raise InputError(f"{f}.{key}", "required (a node id)")
            if v not in nodes:
                raise InputError(f"{f}.{key}", f"no node {v!r}")
        assert isinstance(src, str) and isinstance(dst, str)
        if src == dst:
            raise InputError(f, f"an edge from {src!r} to itself")
        if (src, dst) in pairs:
            raise InputError(f, f"edge {src} -> {dst} given twice")
        if nodes[dst]["type"] == "input":
            raise InputError(f"{f}.target", f"{dst!r} is the input node: nothing leads into it")
        if nodes[src]["type"] == "output":
            raise InputError(f"{f}.source", f"{src!r} is the output node: nothing leaves it")
        pairs.add((src, dst))
        out.append({"source": src, "target": dst})
    return out


def _check_graph(nodes: list[dict[str, Any]], edges: list[dict[str, str]]) -> None:
    kinds = [n["type"] for n in nodes]
    for kind in ("input", "output"):
        count = kinds.count(kind)
        if count != 1:
            raise InputError("nodes", f"a diagram has exactly one {kind} node (found {count})")
    succ: dict[str, list[str]] = {n["id"]: [] for n in nodes}
    pred: dict[str, list[str]] = {n["id"]: [] for n in nodes}
    for e in edges:
        succ[e["source"]].append(e["target"])
        pred[e["target"]].append(e["source"])
    order = topological_order([n["id"] for n in nodes], succ, pred)
    source = next(n["id"] for n in nodes if n["type"] == "input")
    sink = next(n["id"] for n in nodes if n["type"] == "output")
    down = _reach(source, succ)
    up = _reach(sink, pred)
    for nid in order:
        if nid not in down:
            raise InputError(f"nodes.{nid}", "not reached from the input node: connect it with edges")
        if nid not in up:
            raise InputError(f"nodes.{nid}", "does not lead to the output node: connect it with edges")
    for n in nodes:
        if n["type"] == "knode":
            feeding = len(pred[n["id"]])
            if "k" in n and n["k"] != feeding:
                raise InputError(f"nodes.{n['id']}.k", f"is {n['k']} but {feeding} branches feed the gate")
            if n["n"] > feeding:
                raise InputError(f"nodes.{n['id']}.n", f"needs {n['n']} working branches but {feeding} feed the gate")


def topological_order(ids: list[str], succ: Mapping[str, list[str]], pred: Mapping[str, list[str]]) -> list[str]:
    """Kahn's order; a cycle is refused naming a node on it."""
    indeg = {i: len(pred[i]) for i in ids}
    ready = [i for i in ids if indeg[i] == 0]
    order: list[str] = []
    while ready:
        i = ready.pop()
        order.append(i)
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    if len(order) != len(ids):
        # Every node left has a predecessor left: walking back must revisit, and the node
        # revisited is on a cycle (not merely downstream of one).
        left = {i for i in ids if indeg[i] > 0}
        node, seen = next(i for i in ids if i in left), set()
        while node not in seen:
            seen.add(node)
            node = next(p for p in pred[node] if p in left)
        raise InputError(f"nodes.{node}", "lies on a cycle: a diagram's edges must not loop back")
    return order


def _reach(start: str, nxt: Mapping[str, list[str]]) -> set[str]:
    seen = {start}
    stack = [start]
    while stack:
        for j in nxt[stack.pop()]:
            if j not in seen:
                seen.add(j)
                stack.append(j)
    return seen


def _check_ccf(raw: Any, nodes: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
    groups = s.array(CCF_GROUP, 0, 1000)(raw, "ccf")
    taken: dict[str, str] = {}
    ids: set[str] = set()
    for i, g in enumerate(groups):
        f = f"ccf.{g['id']}"
        if g["id"] in ids:
            raise InputError(f"ccf[{i}].id", f"{g['id']!r} is used twice")
        ids.add(g["id"])
        s.ccf_rules(g, f)
        for m in g["members"]:
            if m not in nodes:
                raise InputError(f"{f}.members", f"no node {m!r}")
            if nodes[m]["type"] not in LIFE_TYPES:
                raise InputError(f"{f}.members", f"{m!r} is a {nodes[m]['type']} node, not a block with a life model")
            if m in taken:
                raise InputError(f"{f}.members", f"{m!r} is already in common-cause group {taken[m]!r}")
            taken[m] = g["id"]
        g.setdefault("basis", "rate")
    return groups


def _check_settings_refs(d: Mapping[str, Any], nodes: Mapping[str, dict[str, Any]]) -> None:
    # Discounting is per year: the diagram unit must convert to years.
    if d.get("costs", {}).get("discount_rate") and years_per_unit(d.get("unit")) is None:
        raise InputError("costs.discount_rate", "needs a calendar time unit (seconds, minutes, hours, days, weeks, "
                                                f"months, years); the diagram's unit is {d.get('unit')!r}")
    for i, phase in enumerate(d.get("phases", [])):
        for b in phase.get("not_needed", []):
            if b not in nodes or nodes[b]["type"] not in BLOCK_TYPES:
                raise InputError(f"phases[{i}].not_needed", f"no block {b!r}")
        for g, v in phase.get("votes", {}).items():
            if g not in nodes or nodes[g]["type"] != "knode":
                raise InputError(f"phases[{i}].votes.{g}", "not a knode of this diagram")
            if v > nodes[g].get("k", v):
                raise InputError(f"phases[{i}].votes.{g}", f"more than the {nodes[g]['k']} branches feeding it")
    net = d.get("network")
    if isinstance(net, Mapping):
        for key in ("source", "target"):
            if key in net and net[key] not in nodes:
                raise InputError(f"network.{key}", f"no node {net[key]!r}")
    groups = d.get("maintenance_groups", {})
    for n in nodes.values():
        g = n.get("maintenance_group")
        if g is not None and groups and g not in groups:
            raise InputError(f"nodes.{n['id']}.maintenance_group", f"no maintenance group {g!r} in the diagram")


def content_hash(d: Mapping[str, Any]) -> str:
    """A hash of what an analysis reads (everything but the name): runs compare it to say
    whether the diagram changed since they ran."""
    body = {k: v for k, v in d.items() if k != "name"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def revision(d: Mapping[str, Any]) -> str:
    """A hash of the whole stored diagram, name included: edits may name the revision they
    were made against, and are refused if it is no longer current."""
    return hashlib.sha256(json.dumps(d, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def placeholders(d: Mapping[str, Any]) -> list[str]:
    return [n["id"] for n in d["nodes"] if on_placeholder(n)]


def view(d: Mapping[str, Any]) -> dict[str, Any]:
    """The compact node form `get/rbd` answers: blocks on placeholder models carry
    `placeholder: true`, and `placeholders` lists them."""
    nodes = [{**n, "placeholder": True} if on_placeholder(n) else dict(n) for n in d["nodes"]]
    out = {**d, "nodes": nodes}
    out["placeholders"] = placeholders(d)
    out["block_count"] = sum(1 for n in d["nodes"] if n["type"] in BLOCK_TYPES)
    return out
