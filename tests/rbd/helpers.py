"""Diagram builders and an independent reference: the structure function by brute force."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np


def exp_model(rate: float) -> dict[str, Any]:
    return {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": rate}]}


def weibull_model(alpha: float, beta: float) -> dict[str, Any]:
    params = [{"name": "alpha", "value": alpha}, {"name": "beta", "value": beta}]
    return {"distribution_id": "weibull", "params": params}


def block(nid: str, model: dict[str, Any], kind: str = "component", **extra: Any) -> dict[str, Any]:
    return {"id": nid, "type": kind, "model": model, **extra}


def diagram(
    blocks: list[dict[str, Any]], edges: list[tuple[str, str]], name: str = "d", **extra: Any
) -> dict[str, Any]:
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}, *blocks]
    return {"name": name, "nodes": nodes, "edges": [{"source": a, "target": b} for a, b in edges], **extra}


def series(*models: dict[str, Any]) -> dict[str, Any]:
    ids = [f"b{i}" for i in range(len(models))]
    chain = ["in", *ids, "out"]
    return diagram([block(i, m) for i, m in zip(ids, models)], list(itertools.pairwise(chain)))


def bridge(models: list[dict[str, Any]]) -> dict[str, Any]:
    """The classic bridge: a, b on top, c, d below, e across the middle (a->e->d)."""
    ids = ["a", "b", "c", "d", "e"]
    edges = [("in", "a"), ("in", "c"), ("a", "b"), ("c", "d"), ("a", "e"), ("e", "d"), ("b", "out"), ("d", "out")]
    return diagram([block(i, m) for i, m in zip(ids, models)], edges)


def brute_force(d: dict[str, Any], p: dict[str, float]) -> float:
    """P(system works) by summing over all 2^n block states, with the signal semantics
    written out directly (a node passes when its block works and enough predecessors pass).
    Blocks: component nodes only; p maps block id -> probability of working."""
    nodes = {n["id"]: n for n in d["nodes"]}
    preds: dict[str, list[str]] = {i: [] for i in nodes}
    for e in d["edges"]:
        preds[e["target"]].append(e["source"])
    blocks = [i for i, n in nodes.items() if n["type"] == "component"]
    sink = next(i for i, n in nodes.items() if n["type"] == "output")
    total = 0.0
    for states in itertools.product([False, True], repeat=len(blocks)):
        up = dict(zip(blocks, states))
        memo: dict[str, bool] = {}

        def passes(i: str, up: dict[str, bool] = up, memo: dict[str, bool] = memo) -> bool:
            if i not in memo:
                n = nodes[i]
                need = n.get("n", 1) if n["type"] == "knode" else 1
                ok = up.get(i, True)
                memo[i] = n["type"] == "input" or (ok and sum(passes(j) for j in preds[i]) >= need)
            return memo[i]

        if passes(sink):
            w = 1.0
            for b, s in up.items():
                w *= p[b] if s else 1.0 - p[b]
            total += w
    return total


def sf(model: dict[str, Any], t: float) -> float:
    v = {q["name"]: q["value"] for q in model["params"]}
    if model["distribution_id"] == "exponential":
        return float(np.exp(-v["failure_rate"] * t))
    return float(np.exp(-((t / v["alpha"]) ** v["beta"])))
