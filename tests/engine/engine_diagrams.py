"""Small diagram builders for the engine tests (spec node/edge form)."""

from __future__ import annotations

import itertools
from typing import Any


def exp_model(rate: float) -> dict[str, Any]:
    return {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": rate}]}


def block(node_id: str, life: dict[str, Any], repair: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    node = {"id": node_id, "type": "component", "model": life, **extra}
    if repair is not None:
        node["repair"] = repair
    return node


def series(*blocks: dict[str, Any]) -> dict[str, Any]:
    """input -> b1 -> b2 -> ... -> output."""
    nodes = [{"id": "in", "type": "input"}, *blocks, {"id": "out", "type": "output"}]
    ids = ["in", *(b["id"] for b in blocks), "out"]
    return {"nodes": nodes, "edges": [{"source": a, "target": b} for a, b in itertools.pairwise(ids)]}


def parallel(*blocks: dict[str, Any], need: int | None = None) -> dict[str, Any]:
    """input -> each block -> output, or through a k-of-n gate when `need` is given."""
    nodes = [{"id": "in", "type": "input"}, *blocks, {"id": "out", "type": "output"}]
    edges = [{"source": "in", "target": b["id"]} for b in blocks]
    sink = "out"
    if need is not None:
        nodes.append({"id": "vote", "type": "knode", "n": need, "k": len(blocks)})
        edges.append({"source": "vote", "target": "out"})
        sink = "vote"
    edges += [{"source": b["id"], "target": sink} for b in blocks]
    return {"nodes": nodes, "edges": edges}


def bridge(a, b, c, d, e) -> dict[str, Any]:
    """The classic bridge: paths A-C, B-D, A-E-D, B-E-C. E is one block with two inputs
    and two outputs, so the same E serves both cross paths."""
    nodes = [{"id": "in", "type": "input"}, a, b, c, d, e, {"id": "out", "type": "output"}]
    pairs = [("in", "A"), ("in", "B"), ("A", "C"), ("B", "D"), ("A", "E"), ("B", "E"), ("E", "C"), ("E", "D"),
             ("C", "out"), ("D", "out")]
    return {"nodes": nodes, "edges": [{"source": s, "target": t} for s, t in pairs]}
