"""Exact reliability R(t) of a non-repairable diagram, where a closed form exists.

Rule: a diagram qualifies when its blocks are independent and non-repairable, none is a
standby group, and its graph reduces to series, parallel and k-of-n compositions (every
shared node — a bridge's middle, a gate feeding several branches that meet again — makes
it fail to reduce). Then R(t) is a product / complement-product / Poisson-binomial tail
of the blocks' own R(t) (`bathtub.distributions.Lifetime.sf`), exact to rounding; the
MTTF is the integral of R over [0, inf) by adaptive quadrature.

Method: each block node is split into an edge carrying its reliability; wires carry 1.
Parallel edges between two nodes merge (OR, or k-of-n into a gate fed only by them),
and a node with one edge in and one out is spliced out (AND), until one edge joins the
input to the output. Each merge joins formulas over disjoint blocks, hence independence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import integrate

from bathtub.distributions import Lifetime

# A formula: ("one",) | ("block", Lifetime, kind, n) | ("sub", formula) | ("and", [f]) |
# ("kofn", m, [f]) — an OR is k-of-n with m = 1.
Formula = tuple[Any, ...]
ONE: Formula = ("one",)


@dataclass(frozen=True)
class Exactness:
    """Whether a diagram has a closed form, and if not, why (`reason`)."""

    exact: bool
    reason: str
    formula: Formula | None = None


def _block(node: Mapping[str, Any]) -> Formula:
    m = node["model"]
    params = {p["name"]: p["value"] for p in m["params"]} if isinstance(m["params"], list) else dict(m["params"])
    life = Lifetime(m["distribution_id"], params, m.get("base_distribution_id"))
    return ("block", life, node["type"], int(node.get("n", 1)))


def structure(d: Mapping[str, Any]) -> Exactness:
    """Reduce an engine-form diagram (`bathtub.rbd.resolve.engine_form`) to a formula."""
    threshold: dict[str, int] = {}
    edges: list[tuple[str, str, Formula]] = []
    rename: dict[str, tuple[str, str]] = {}  # node id -> (entry, exit) after splitting
    source = sink = ""
    for n in d["nodes"]:
        nid, kind = n["id"], n["type"]
        if kind == "standby":
            return Exactness(False, f"block {nid} is a standby group (its reliability depends on switching order)")
        if kind in ("component", "series", "parallel", "subsystem"):
            if kind == "subsystem":
                inner = structure(n["diagram"])
                if not inner.exact:
                    return Exactness(False, f"subsystem {nid}: {inner.reason}")
                f: Formula = ("sub", inner.formula)
            else:
                f = _block(n)
            a, b = f"{nid}\0in", f"{nid}\0out"
            threshold[a] = threshold[b] = 1
            edges.append((a, b, f))
            rename[nid] = (a, b)
        else:
            threshold[nid] = int(n["n"]) if kind == "knode" else 1
            rename[nid] = (nid, nid)
            if kind == "input":
                source = nid
            elif kind == "output":
                sink = nid
    for e in d["edges"]:
        edges.append((rename[e["source"]][1], rename[e["target"]][0], ONE))
    changed = True
    while changed:
        changed = False
        # Parallel merges.
        by_target: dict[str, list[int]] = {}
        for i, (_, t, _) in enumerate(edges):
            by_target.setdefault(t, []).append(i)
        for t, idx in by_target.items():
            sources = {edges[i][0] for i in idx}
            if threshold[t] > 1:
                if len(sources) == 1:
                    u = edges[idx[0]][0]
                    merged: Formula = ("kofn", threshold[t], [edges[i][2] for i in idx])
                    edges = [e for i, e in enumerate(edges) if i not in set(idx)] + [(u, t, merged)]
                    threshold[t] = 1
                    changed = True
                    break
                continue
            for u in sources:
                group = [i for i in idx if edges[i][0] == u]
                if len(group) > 1:
                    merged = ("kofn", 1, [edges[i][2] for i in group])
                    edges = [e for i, e in enumerate(edges) if i not in set(group)] + [(u, t, merged)]
                    changed = True
                    break
            if changed:
                break
        if changed:
            continue
        # Series splices.
        ins: dict[str, list[int]] = {}
        outs: dict[str, list[int]] = {}
        for i, (u, t, _) in enumerate(edges):
            outs.setdefault(u, []).append(i)
            ins.setdefault(t, []).append(i)
        for w in threshold:
            if w in (source, sink) or len(ins.get(w, [])) != 1 or len(outs.get(w, [])) != 1:
                continue
            i, j = ins[w][0], outs[w][0]
            (u, _, f1), (_, x, f2) = edges[i], edges[j]
            edges = [e for k, e in enumerate(edges) if k not in (i, j)] + [(u, x, _and(f1, f2))]
            del threshold[w]
            changed = True
            break
    if len(edges) == 1 and edges[0][0] == source and edges[0][1] == sink:
        return Exactness(True, "series, parallel and k-of-n blocks: exact in closed form", edges[0][2])
    return Exactness(False, "the diagram does not reduce to series, parallel and k-of-n parts (a bridge or a "
                            "shared block)")


def _and(a: Formula, b: Formula) -> Formula:
    parts = [f for f in (a, b) if f != ONE]
    if not parts:
        return ONE
    if len(parts) == 1:
        return parts[0]
    flat: list[Formula] = []
    for f in parts:
        flat.extend(f[1] if f[0] == "and" else [f])
    return ("and", flat)


def _at_least(m: int, ps: list[np.ndarray]) -> np.ndarray:
    """P(at least m of independent events with probabilities ps): Poisson-binomial by
    dynamic programming over the count of successes."""
    dist = [np.ones_like(ps[0])]
    for p in ps:
        nxt = [np.zeros_like(p) for _ in range(len(dist) + 1)]
        for c, w in enumerate(dist):
            nxt[c] = nxt[c] + w * (1.0 - p)
            nxt[c + 1] = nxt[c + 1] + w * p
        dist = nxt
    return np.clip(sum(dist[m:], np.zeros_like(ps[0])), 0.0, 1.0)


def evaluate(f: Formula, t: np.ndarray) -> np.ndarray:
    """R(t) of a formula on an array of times (diagram unit)."""
    kind = f[0]
    if kind == "one":
        return np.ones_like(t)
    if kind == "block":
        _, life, block_kind, n = f
        r = np.asarray(life.sf(t), dtype=float)
        if block_kind == "series":
            return r**n
        if block_kind == "parallel":
            return 1.0 - (1.0 - r) ** n
        return r
    if kind == "sub":
        return evaluate(f[1], t)
    if kind == "and":
        out = np.ones_like(t)
        for g in f[1]:
            out = out * evaluate(g, t)
        return out
    m, parts = f[1], f[2]
    ps = [evaluate(g, t) for g in parts]
    if m == 1:
        q = np.ones_like(t)
        for p in ps:
            q = q * (1.0 - p)
        return 1.0 - q
    return _at_least(m, ps)


def reliability(d: Mapping[str, Any], t: Any) -> np.ndarray:
    """Exact R(t) of an engine-form diagram; raises ValueError when it has no closed form."""
    ex = structure(d)
    if not ex.exact or ex.formula is None:
        raise ValueError(ex.reason)
    return evaluate(ex.formula, np.asarray(t, dtype=float))


def mttf(f: Formula) -> float:
    """Integral of R over [0, inf) (diagram unit), by adaptive quadrature on a split range."""

    if f == ONE:
        return math.inf

    def r(x: float) -> float:
        return float(evaluate(f, np.asarray([x]))[0])

    # Split at a scale where R has fallen, so quad sees the body of the curve.
    scale = 1.0
    while r(scale) > 1e-3 and scale < 1e300:
        scale *= 2.0
    head, _ = integrate.quad(r, 0.0, scale, limit=400)
    tail, _ = integrate.quad(r, scale, math.inf, limit=400)
    return float(head + tail)
