"""The spec's `rbd edit` operations, applied atomically.

`apply_edits(diagram, ops)` works on a copy and checks the result whole
(`check_diagram`): either every op applies and a valid diagram comes back, or an
InputError naming the op (`ops[2].source: ...`) or the node is raised and the caller's
diagram is untouched. Intermediate states may be incomplete (a node added, then wired).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from bathtub.errors import InputError, prefixed
from bathtub.rbd import schema as s
from bathtub.rbd.blocks import CLEARABLE, FIELD_TYPES
from bathtub.rbd.diagram import SETTINGS, check_diagram, clean_settings

OPS = ("add_node", "add_edge", "remove_edge", "remove_node", "add_ccf", "remove_ccf", "set", "update_node")
POSITIONS = ("between", "after", "before", "parallel_to")
UPDATABLE = (*FIELD_TYPES, "model", "repair")
MAX_OPS = 1000


def _keys(op: Mapping[str, Any], allowed: Sequence[str], field: str) -> None:
    for k in op:
        if k != "op" and k not in allowed:
            raise InputError(f"{field}.{k}", f"unknown field of op {op['op']}; known: {', '.join(allowed)}")


def _node(d: dict[str, Any], nid: Any, field: str) -> dict[str, Any]:
    if not isinstance(nid, str):
        raise InputError(field, "required (a node id)")
    for n in d["nodes"]:
        if n["id"] == nid:
            return n
    raise InputError(field, f"no node {nid!r}")


def _has_edge(d: dict[str, Any], src: str, dst: str) -> bool:
    return any(e["source"] == src and e["target"] == dst for e in d["edges"])


def _add_edge(d: dict[str, Any], src: str, dst: str) -> None:
    if not _has_edge(d, src, dst):
        d["edges"].append({"source": src, "target": dst})


def _add_node(d: dict[str, Any], op: Mapping[str, Any], f: str) -> None:
    _keys(op, ("node", *POSITIONS), f)
    node = op.get("node")
    if not isinstance(node, Mapping):
        raise InputError(f"{f}.node", "required (an RbdNode)")
    nid = node.get("id")
    if not isinstance(nid, str) or any(n["id"] == nid for n in d["nodes"]):
        raise InputError(f"{f}.node.id", f"must be a new node id ({nid!r} is taken or missing)")
    given = [p for p in POSITIONS if op.get(p) is not None]
    if len(given) > 1:
        raise InputError(f"{f}.{given[1]}", f"give at most one position (not both {given[0]} and {given[1]})")
    d["nodes"].append(dict(node))
    if not given:
        return
    where = given[0]
    if where == "between":
        pair = op["between"]
        if not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) != 2:
            raise InputError(f"{f}.between", "must be [source, target], an existing edge")
        src, dst = pair
        if not (isinstance(src, str) and isinstance(dst, str) and _has_edge(d, src, dst)):
            raise InputError(f"{f}.between", f"no edge {src} -> {dst} to splice into")
        d["edges"] = [e for e in d["edges"] if not (e["source"] == src and e["target"] == dst)]
        _add_edge(d, src, nid)
        _add_edge(d, nid, dst)
        return
    anchor = _node(d, op[where], f"{f}.{where}")["id"]
    if where == "after":
        outs = [e["target"] for e in d["edges"] if e["source"] == anchor]
        d["edges"] = [e for e in d["edges"] if e["source"] != anchor]
        _add_edge(d, anchor, nid)
        for t in outs:
            _add_edge(d, nid, t)
    elif where == "before":
        ins = [e["source"] for e in d["edges"] if e["target"] == anchor]
        d["edges"] = [e for e in d["edges"] if e["target"] != anchor]
        for src in ins:
            _add_edge(d, src, nid)
        _add_edge(d, nid, anchor)
    else:  # parallel_to: the same neighbours as the anchor
        for e in list(d["edges"]):
            if e["target"] == anchor:
                _add_edge(d, e["source"], nid)
            if e["source"] == anchor:
                _add_edge(d, nid, e["target"])


def _edge_op(d: dict[str, Any], op: Mapping[str, Any], f: str, add: bool) -> None:
    _keys(op, ("source", "target"), f)
    src = _node(d, op.get("source"), f"{f}.source")["id"]
    dst = _node(d, op.get("target"), f"{f}.target")["id"]
    if add:
        if _has_edge(d, src, dst):
            raise InputError(f, f"edge {src} -> {dst} already exists")
        d["edges"].append({"source": src, "target": dst})
    else:
        if not _has_edge(d, src, dst):
            raise InputError(f, f"no edge {src} -> {dst}")
        d["edges"] = [e for e in d["edges"] if not (e["source"] == src and e["target"] == dst)]


def _remove_node(d: dict[str, Any], op: Mapping[str, Any], f: str) -> None:
    _keys(op, ("id", "reconnect"), f)
    node = _node(d, op.get("id"), f"{f}.id")
    nid = node["id"]
    if node["type"] in ("input", "output"):
        raise InputError(f"{f}.id", f"the {node['type']} node cannot be removed")
    reconnect = s.enum("auto", "none")(op.get("reconnect", "auto"), f"{f}.reconnect")
    ins = [e["source"] for e in d["edges"] if e["target"] == nid]
    outs = [e["target"] for e in d["edges"] if e["source"] == nid]
    d["nodes"] = [n for n in d["nodes"] if n["id"] != nid]
    d["edges"] = [e for e in d["edges"] if nid not in (e["source"], e["target"])]
    if reconnect == "auto":
        for a in ins:
            for b in outs:
                _add_edge(d, a, b)
    # A removed block leaves its common-cause group; a group left with one member is gone.
    groups = []
    for g in d.get("ccf", []):
        members = [m for m in g["members"] if m != nid]
        if len(members) >= 2:
            groups.append({**g, "members": members})
    d["ccf"] = groups


def _add_ccf(d: dict[str, Any], op: Mapping[str, Any], f: str) -> None:
    _keys(op, ("members", "beta", "basis", "mgl", "id"), f)
    groups = d.setdefault("ccf", [])
    gid = op.get("id")
    if gid is None:
        taken = {g["id"] for g in groups}
        i = 1
        while f"ccf-{i}" in taken:
            i += 1
        gid = f"ccf-{i}"
    elif any(g["id"] == gid for g in groups):
        raise InputError(f"{f}.id", f"common-cause group {gid!r} already exists")
    if op.get("beta") is None:
        raise InputError(f"{f}.beta", "required")
    group = {"id": gid, "members": op.get("members"), "beta": op["beta"], "basis": op.get("basis", "rate")}
    if op.get("mgl") is not None:
        group["mgl"] = op["mgl"]
    groups.append(group)


def _remove_ccf(d: dict[str, Any], op: Mapping[str, Any], f: str) -> None:
    _keys(op, ("id",), f)
    before = len(d.get("ccf", []))
    d["ccf"] = [g for g in d.get("ccf", []) if g["id"] != op.get("id")]
    if len(d["ccf"]) == before:
        raise InputError(f"{f}.id", f"no common-cause group {op.get('id')!r}")


def _set(d: dict[str, Any], op: Mapping[str, Any], f: str) -> None:
    _keys(op, ("name", "unit", "repairable", *SETTINGS), f)
    for key in ("name", "unit", "repairable"):
        if key in op:
            d[key] = op[key]
    try:
        updates = clean_settings({k: op[k] for k in SETTINGS if k in op and op[k] is not None}, "")
    except InputError as e:
        raise prefixed(f, e) from None
    for key in SETTINGS:
        if key in op and op[key] is not None:
            d.pop(key, None)  # each setting replaces the previous value; a "clears" value removes it
            if key in updates:
                d[key] = updates[key]


def _update_node(d: dict[str, Any], op: Mapping[str, Any], f: str) -> None:
    _keys(op, ("id", "ids", *UPDATABLE, "clear"), f)
    if (op.get("id") is None) == (op.get("ids") is None):
        raise InputError(f, "give id or ids (exactly one)")
    if op.get("ids") is not None:
        ids = s.array(s.text(64, 1), 1, 10_000)(op["ids"], f"{f}.ids")
        targets = [_node(d, nid, f"{f}.ids[{i}]") for i, nid in enumerate(ids)]
    else:
        targets = [_node(d, op["id"], f"{f}.id")]
    clear = s.array(s.enum(*CLEARABLE), 0, len(CLEARABLE))(op.get("clear", []), f"{f}.clear")
    changes = {k: v for k, v in op.items() if k in UPDATABLE and v is not None}
    for key in changes:
        if key in clear:
            raise InputError(f"{f}.clear", f"{key} is both set and cleared")
    for node in targets:
        for key in clear:
            node.pop(key, None)
        for key, value in changes.items():
            node[key] = copy.deepcopy(value)
            # Preventive maintenance and proof tests exclude each other: the new one wins.
            if key == "preventive":
                node.pop("inspection", None)
            elif key == "inspection":
                node.pop("preventive", None)
            # A standby group's identical units (model, repair, spares) or its own units: the new form wins.
            elif key == "units":
                for other in ("model", "repair", "spares"):
                    node.pop(other, None)
            elif key in ("model", "spares"):
                node.pop("units", None)
                node.pop("switch_back", None)


_APPLY = {
    "add_node": _add_node,
    "add_edge": lambda d, op, f: _edge_op(d, op, f, True),
    "remove_edge": lambda d, op, f: _edge_op(d, op, f, False),
    "remove_node": _remove_node,
    "add_ccf": _add_ccf,
    "remove_ccf": _remove_ccf,
    "set": _set,
    "update_node": _update_node,
}


def apply_edits(diagram: Mapping[str, Any], ops: Any) -> dict[str, Any]:
    """A new, checked diagram with `ops` applied in order; the input is never modified."""
    op_list = s.array(lambda v, f: v, 1, MAX_OPS)(ops, "ops")
    d = copy.deepcopy(dict(diagram))
    d.setdefault("ccf", [])
    for i, op in enumerate(op_list):
        f = f"ops[{i}]"
        if not isinstance(op, Mapping):
            raise InputError(f, "must be an object with op")
        if op.get("op") not in OPS:
            raise InputError(f"{f}.op", f"must be one of {', '.join(OPS)}")
        _APPLY[op["op"]](d, op, f)
    try:
        return check_diagram(d)
    except InputError as e:
        raise InputError(e.field, f"{e.rule} (after the edits)") from None
