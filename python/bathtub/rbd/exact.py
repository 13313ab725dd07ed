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

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

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


@functools.lru_cache(maxsize=4096)
def _lifetime(distribution_id: str, params: tuple[tuple[str, float], ...], base: str | None) -> Lifetime:
    # Building a frozen scipy distribution costs ~1 ms: blocks sharing a model share one.
    return Lifetime(distribution_id, dict(params), base)


def _block(node: Mapping[str, Any]) -> Formula:
    m = node["model"]
    params = {p["name"]: p["value"] for p in m["params"]} if isinstance(m["params"], list) else dict(m["params"])
    life = _lifetime(m["distribution_id"], tuple(sorted(params.items())), m.get("base_distribution_id"))
    return ("block", life, node["type"], int(node.get("n", 1)))


def structure(d: Mapping[str, Any]) -> Exactness:
    """Reduce an engine-form diagram (`bathtub.rbd.resolve.engine_form`) to a formula.
    A worklist of nodes to look at again keeps it linear in the edges, times the degree."""
    threshold: dict[str, int] = {}
    edges: dict[int, tuple[str, str, Formula]] = {}
    ins: dict[str, set[int]] = {}
    outs: dict[str, set[int]] = {}
    rename: dict[str, tuple[str, str]] = {}  # node id -> (entry, exit) after splitting
    source = sink = ""
    counter = iter(range(1 << 62))

    def add(u: str, v: str, f: Formula) -> None:
        eid = next(counter)
        edges[eid] = (u, v, f)
        outs[u].add(eid)
        ins[v].add(eid)

    def drop(eid: int) -> tuple[str, str, Formula]:
        u, v, f = edges.pop(eid)
        outs[u].discard(eid)
        ins[v].discard(eid)
        return u, v, f

    def node(nid: str, need: int) -> None:
        threshold[nid] = need
        ins[nid], outs[nid] = set(), set()

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
            node(a, 1)
            node(b, 1)
            add(a, b, f)
            rename[nid] = (a, b)
        else:
            node(nid, int(n["n"]) if kind == "knode" else 1)
            rename[nid] = (nid, nid)
            if kind == "input":
                source = nid
            elif kind == "output":
                sink = nid
    for e in d["edges"]:
        add(rename[e["source"]][1], rename[e["target"]][0], ONE)
    work = list(threshold)
    while work:
        w = work.pop()
        if w not in threshold:
            continue
        # Parallel edges into w merge: an OR, or the k-of-n of a gate fed by one node only.
        by_source: dict[str, list[int]] = {}
        for eid in ins[w]:
            by_source.setdefault(edges[eid][0], []).append(eid)
        if threshold[w] > 1:
            if len(by_source) == 1:
                ((u, group),) = by_source.items()
                add(u, w, ("kofn", threshold[w], [drop(eid)[2] for eid in sorted(group)]))
                threshold[w] = 1
                work.extend((u, w))
            continue
        for u, group in by_source.items():
            if len(group) > 1:
                add(u, w, ("kofn", 1, [drop(eid)[2] for eid in sorted(group)]))
                work.append(u)
        # A node with one edge in and one out is spliced out.
        if w not in (source, sink) and len(ins[w]) == 1 and len(outs[w]) == 1:
            u, _, f1 = drop(next(iter(ins[w])))
            _, x, f2 = drop(next(iter(outs[w])))
            del threshold[w], ins[w], outs[w]
            add(u, x, _and(f1, f2))
            work.extend((u, x))
    if len(edges) == 1:
        ((u, v, f),) = edges.values()
        if (u, v) == (source, sink):
            return Exactness(True, "series, parallel and k-of-n blocks: exact in closed form", f)
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


def evaluate(f: Formula, t: np.ndarray, _memo: dict[int, np.ndarray] | None = None) -> np.ndarray:
    """R(t) of a formula on an array of times (diagram unit)."""
    memo: dict[int, np.ndarray] = {} if _memo is None else _memo
    kind = f[0]
    if kind == "one":
        return np.ones_like(t)
    if kind == "block":
        _, life, block_kind, n = f
        if id(life) not in memo:  # blocks sharing a model are evaluated once
            memo[id(life)] = np.asarray(life.sf(t), dtype=float)
        r = memo[id(life)]
        if block_kind == "series":
            return r**n
        if block_kind == "parallel":
            return 1.0 - (1.0 - r) ** n
        return r
    if kind == "sub":
        return evaluate(f[1], t, memo)
    if kind == "and":
        out = np.ones_like(t)
        for g in f[1]:
            out = out * evaluate(g, t, memo)
        return out
    m, parts = f[1], f[2]
    ps = [evaluate(g, t, memo) for g in parts]
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
    """Integral of R over [0, inf) (diagram unit). With t = s·u/(1-u), s the median system
    life, composite Gauss-Legendre in u on panels refined until two levels agree to 1e-10
    (relative): R is evaluated in whole arrays, so a large diagram costs a few passes."""
    if f == ONE:
        return math.inf
    probe = np.logspace(-12, 15, 271)
    r = evaluate(f, probe)
    below = np.nonzero(r < 0.5)[0]
    if below.size == 0:
        return math.inf
    scale = float(probe[below[0]])
    nodes, weights = np.polynomial.legendre.leggauss(16)
    previous = math.nan
    for panels in (64, 128, 256, 512, 1024):
        edges = np.linspace(0.0, 1.0, panels + 1)
        half = np.diff(edges) / 2.0
        u = ((edges[:-1] + half)[:, None] + half[:, None] * nodes[None, :]).ravel()
        w = (half[:, None] * weights[None, :]).ravel()
        t = scale * u / (1.0 - u)
        value = float(np.sum(w * evaluate(f, t) * scale / (1.0 - u) ** 2))
        if abs(value - previous) <= 1e-10 * abs(value):
            return value
        previous = value
    return previous
