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


# A repairable diagram using every RbdNode field, edit-op setting and a ccf group, in stored form.
FULL_REPAIRABLE = {
    "name": "every field", "unit": "hours", "repairable": True, "repair_crews": 2,
    "nodes": [
        {"id": "in", "type": "input", "label": "source"},
        {"id": "out", "type": "output"},
        {"id": "a", "type": "component", "label": "A", "model": exp_model(0.01),
         "repair": {"distribution_id": "lognormal", "params": [{"name": "mu", "value": 1.0},
                                                               {"name": "sigma", "value": 0.5}]},
         "costs": {"repair": {"min": 10.0, "max": 20.0}, "replace": 5.0, "downtime": 1.5, "acquisition": 900.0},
         "preventive": {"policy": "age", "interval": 400.0, "duration": 2.0, "cost": 50.0, "opportunity": 300.0},
         "maintenance_group": "north", "crew_priority": 2.0,
         "repair_quality": {"model": "kijima1", "q": 0.3, "replace_after": 4},
         "capacity": [{"value": 100.0, "probability": 0.8}, {"value": 50.0, "probability": 0.2}]},
        {"id": "b", "type": "component", "model": exp_model(0.02), "instant_repair": True,
         "inspection": {"interval": 720.0, "duration": 1.0, "cost": {"min": 1.0, "max": 2.0}, "offset": 100.0,
                        "coverage": 0.9, "full_test": 2160.0}, "capacity": 80.0},
        {"id": "s", "type": "standby", "model": exp_model(0.005), "repair": exp_model(0.1), "k": 1, "spares": 2,
         "cold": False, "dormancy": 0.2, "repair_one_at_a_time": True},
        {"id": "g", "type": "knode", "n": 2, "k": 3, "label": "vote"},
    ],
    "edges": [{"source": "in", "target": x} for x in ("a", "b", "s")]
    + [{"source": x, "target": "g"} for x in ("a", "b", "s")] + [{"source": "g", "target": "out"}],
    "ccf": [{"id": "pumps", "members": ["a", "b", "s"], "beta": 0.1, "basis": "probability", "mgl": [0.4]}],
    "maintenance_groups": {"north": {"setup_cost": 300.0, "system_down": True}},
    "safety_function": True, "target_sil": 2,
    "costs": {"downtime_rate": 1000.0, "horizon": 87600.0, "discount_rate": 5.0},
    "production": {"demand": 150.0, "unit": "t/h", "period": 8760.0},
    "phases": [{"name": "start", "duration": 10.0, "not_needed": ["b"], "votes": {"g": 1}},
               {"name": "run", "duration": 1000.0}],
    "network": {"source": "in", "target": "out"},
}
