"""Exact reliability R(t) of a non-repairable diagram, where a closed form exists.

Rule: a diagram qualifies when its blocks are independent and non-repairable, none is a
standby group, and its graph reduces to series, parallel and k-of-n compositions, after
conditioning on at most MAX_PIVOTS blocks (pivotal decomposition: a bridge needs one).
Then R(t) is built from products, complement-products, Poisson-binomial tails and
R = p·R(block works) + (1-p)·R(block failed) of the blocks' own R(t)
(`bathtub.distributions.Lifetime.sf`), exact to rounding; the MTTF is the integral of R
over [0, inf) by Gauss-Legendre quadrature refined to 1e-10.

Method: each block node is split into an edge carrying its reliability; wires carry 1.
Parallel edges between two nodes merge (OR, or k-of-n into a gate fed only by them),
and a node with one edge in and one out is spliced out (AND), until one edge joins the
input to the output. Each merge joins formulas over disjoint blocks, hence independence.
When no merge applies, the busiest remaining edge is conditioned on (working: a wire;
failed: removed, with whatever then leads nowhere pruned) and both graphs are reduced.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from bathtub.distributions import Lifetime

# A formula: ("one",) | ("zero",) | ("block", Lifetime, kind, n) | ("sub", formula) |
# ("and", [f]) | ("kofn", m, [f]) (an OR is k-of-n with m = 1) | ("pivot", f, f_up, f_down).
Formula = tuple[Any, ...]
ONE: Formula = ("one",)
ZERO: Formula = ("zero",)
MAX_PIVOTS = 8  # conditioning depth: at most 2^8 reduced graphs
# Gauss-Legendre rule of `mttf`'s panels, made once: leggauss(16) solves an eigenproblem (~1.5 ms),
# and a parameter-uncertainty analysis asks for an MTTF per closed-form draw (13% of its time).
MTTF_NODES, MTTF_WEIGHTS = np.polynomial.legendre.leggauss(16)
MTTF_NODES.flags.writeable = MTTF_WEIGHTS.flags.writeable = False  # shared by every call


@dataclass(frozen=True)
class Exactness:
    """Whether a diagram has a closed form, and if not, why (`reason`)."""

    exact: bool
    reason: str
    formula: Formula | None = None


@functools.lru_cache(maxsize=4096)
def _lifetime(distribution_id: str, params: tuple[tuple[str, float], ...], base: str | None) -> Lifetime:
    # Building a frozen scipy distribution costs ~1 ms: blocks sharing a model share one.
    return Lifetime.of(distribution_id, dict(params), base)


def _block(node: Mapping[str, Any]) -> Formula:
    m = node["model"]
    params = {p["name"]: p["value"] for p in m["params"]} if isinstance(m["params"], list) else dict(m["params"])
    life = _lifetime(m["distribution_id"], tuple(sorted(params.items())), m.get("base_distribution_id"))
    return ("block", life, node["type"], int(node.get("n", 1)))


class _Graph:
    """The split diagram: nodes with thresholds, edges carrying formulas."""

    def __init__(self) -> None:
        self.threshold: dict[str, int] = {}
        self.edges: dict[int, tuple[str, str, Formula]] = {}
        self.ins: dict[str, set[int]] = {}
        self.outs: dict[str, set[int]] = {}
        self.source = self.sink = ""
        self.next_id = 0

    def copy(self) -> _Graph:
        g = _Graph()
        g.threshold = dict(self.threshold)
        g.edges = dict(self.edges)
        g.ins = {k: set(v) for k, v in self.ins.items()}
        g.outs = {k: set(v) for k, v in self.outs.items()}
        g.source, g.sink, g.next_id = self.source, self.sink, self.next_id
        return g

    def node(self, nid: str, need: int) -> None:
        self.threshold[nid] = need
        self.ins[nid], self.outs[nid] = set(), set()

    def add(self, u: str, v: str, f: Formula) -> None:
        eid = self.next_id
        self.next_id += 1
        self.edges[eid] = (u, v, f)
        self.outs[u].add(eid)
        self.ins[v].add(eid)

    def drop(self, eid: int) -> tuple[str, str, Formula]:
        u, v, f = self.edges.pop(eid)
        self.outs[u].discard(eid)
        self.ins[v].discard(eid)
        return u, v, f

    def remove_node(self, w: str) -> None:
        for eid in list(self.ins[w]) + list(self.outs[w]):
            self.drop(eid)
        del self.threshold[w], self.ins[w], self.outs[w]

    def prune(self) -> bool:
        """Drop nodes that can no longer pass the signal on (nothing in, nothing out, or a
        gate fed by fewer branches than it needs). False when the output is cut off."""
        work = list(self.threshold)
        while work:
            w = work.pop()
            if w not in self.threshold or w in (self.source, self.sink):
                continue
            if not self.outs[w] or len(self.ins[w]) < self.threshold[w]:
                neighbours = [self.edges[e][0] for e in self.ins[w]] + [self.edges[e][1] for e in self.outs[w]]
                self.remove_node(w)
                work.extend(neighbours)
        return bool(self.outs[self.source]) and len(self.ins[self.sink]) >= 1

    def reduce(self) -> None:
        """Parallel merges and series splices until none applies (worklist: linear in the
        edges, times the degree)."""
        work = list(self.threshold)
        while work:
            w = work.pop()
            if w not in self.threshold:
                continue
            by_source: dict[str, list[int]] = {}
            for eid in self.ins[w]:
                by_source.setdefault(self.edges[eid][0], []).append(eid)
            if self.threshold[w] > 1:
                if len(by_source) == 1:
                    ((u, group),) = by_source.items()
                    parts = [self.drop(eid)[2] for eid in sorted(group)]
                    self.add(u, w, ("kofn", self.threshold[w], parts))
                    self.threshold[w] = 1
                    work.extend((u, w))
                continue
            for u, group in by_source.items():
                if len(group) > 1:
                    parts = [self.drop(eid)[2] for eid in sorted(group)]
                    self.add(u, w, ONE if ONE in parts else ("kofn", 1, parts))
                    work.append(u)
            if w in (self.source, self.sink):
                continue
            if len(self.ins[w]) == 1 and len(self.outs[w]) == 1:
                u, _, f1 = self.drop(next(iter(self.ins[w])))
                _, x, f2 = self.drop(next(iter(self.outs[w])))
                self.remove_node(w)
                self.add(u, x, _and(f1, f2))
                work.extend((u, x))
            elif self.threshold[w] == 1 and len(self.ins[w]) == 1 and self.edges[next(iter(self.ins[w]))][2] == ONE:
                # w passes exactly when its one predecessor u does: u takes over w's edges out.
                u = self.edges[next(iter(self.ins[w]))][0]
                moved = [self.edges[e][1:] for e in self.outs[w]]
                self.remove_node(w)
                for x, f in moved:
                    self.add(u, x, f)
                work.extend([u, *(x for x, _ in moved)])
            elif self.threshold[w] == 1 and len(self.outs[w]) == 1:
                _, x, f = self.edges[next(iter(self.outs[w]))]
                if f == ONE and self.threshold[x] == 1:
                    # x is an OR of w and its other inputs, and w an OR of its own: x takes w's inputs.
                    moved = [(self.edges[e][0], self.edges[e][2]) for e in self.ins[w]]
                    self.remove_node(w)
                    for u, g in moved:
                        self.add(u, x, g)
                    work.extend([x, *(u for u, _ in moved)])

    def pivot_edge(self) -> int | None:
        """The block-carrying edge between the busiest nodes (a bridge's middle)."""
        best, score = None, -1
        for eid, (u, v, f) in self.edges.items():
            if f == ONE:
                continue
            s = len(self.ins[u]) + len(self.outs[u]) + len(self.ins[v]) + len(self.outs[v])
            if s > score:
                best, score = eid, s
        return best


def _solve(g: _Graph, depth: int) -> tuple[Formula | None, int]:
    """(formula, pivots used) of a graph, or (None, ...) past MAX_PIVOTS."""
    if not g.prune():
        return ZERO, 0
    g.reduce()
    if len(g.edges) == 1:
        ((u, v, f),) = g.edges.values()
        if (u, v) == (g.source, g.sink):
            return f, 0
    eid = g.pivot_edge()
    if eid is None or depth >= MAX_PIVOTS:
        return None, 0
    up, down = g.copy(), g.copy()
    u, v, f = up.drop(eid)
    up.add(u, v, ONE)
    down.drop(eid)
    f_up, n_up = _solve(up, depth + 1)
    if f_up is None:
        return None, 0
    f_down, n_down = _solve(down, depth + 1)
    if f_down is None:
        return None, 0
    return ("pivot", f, f_up, f_down), 1 + n_up + n_down


# What makes blocks dependent or time-varying beyond a static structure of independent
# lives: such diagrams are simulated, never answered by the formula.
SIMULATED_SETTINGS = ("ccf", "phases", "network", "maintenance_groups", "costs", "production", "safety_function")
SIMULATED_NODE_FIELDS = ("preventive", "inspection", "state", "repair_quality", "capacity", "costs",
                         "maintenance_group", "switch")


def structure(d: Mapping[str, Any]) -> Exactness:
    """Reduce an engine-form diagram (`bathtub.rbd.resolve.engine_form`) to a formula."""
    for key in SIMULATED_SETTINGS:
        if d.get(key):
            return Exactness(False, f"the diagram sets {key}, which only the simulation honours")
    for n in d["nodes"]:
        for key in SIMULATED_NODE_FIELDS:
            if n.get(key) is not None:
                return Exactness(False, f"block {n['id']} has {key}, which only the simulation honours")
        m = n.get("model") or {}
        if m.get("path") is not None:
            return Exactness(False, f"block {n['id']} follows covariate schedules: its life under them is simulated")
        if m.get("distribution_id") == "table":
            return Exactness(False, f"block {n['id']} is a joint unit: its tabulated conditional life is simulated")
        if m.get("distribution_id") == "steps":
            return Exactness(False, f"block {n['id']} is on a Cox model: its step (Breslow) life is simulated")

    def leaf(nid: str, n: Mapping[str, Any]) -> Formula | Exactness:
        if n["type"] == "standby":
            return Exactness(False, f"block {nid} is a standby group (its reliability depends on switching order)")
        if n["type"] == "subsystem":
            inner = structure(n["diagram"])
            if not inner.exact:
                return Exactness(False, f"subsystem {nid}: {inner.reason}")
            return ("sub", inner.formula)
        return _block(n)

    solved = structure_formula(d, leaf)
    if isinstance(solved, Exactness):
        return solved
    formula, pivots = solved
    if formula is None:
        return Exactness(False, f"the diagram does not reduce to series, parallel and k-of-n parts even after "
                                f"conditioning on {MAX_PIVOTS} blocks")
    if pivots:
        return Exactness(True, f"series, parallel and k-of-n parts after conditioning on {pivots} block state(s) "
                               "(pivotal decomposition): exact in closed form", formula)
    return Exactness(True, "series, parallel and k-of-n blocks: exact in closed form", formula)


def structure_formula(
    d: Mapping[str, Any], leaf: Callable[[str, Mapping[str, Any]], Formula | Exactness]
) -> tuple[Formula | None, int] | Exactness:
    """(formula, pivots used) of an engine-form diagram's structure, each block node's part
    given by `leaf(id, node)` (a formula, or an Exactness saying why there is none, which is
    returned as is); the formula is None when the graph does not reduce."""
    g = _Graph()
    rename: dict[str, tuple[str, str]] = {}  # node id -> (entry, exit) after splitting
    for n in d["nodes"]:
        nid, kind = n["id"], n["type"]
        if kind in ("component", "series", "parallel", "subsystem", "standby"):
            f = leaf(nid, n)
            if isinstance(f, Exactness):
                return f
            a, b = f"{nid}\0in", f"{nid}\0out"
            g.node(a, 1)
            g.node(b, 1)
            g.add(a, b, f)
            rename[nid] = (a, b)
        else:
            g.node(nid, int(n["n"]) if kind == "knode" else 1)
            rename[nid] = (nid, nid)
            if kind == "input":
                g.source = nid
            elif kind == "output":
                g.sink = nid
    for e in d["edges"]:
        g.add(rename[e["source"]][1], rename[e["target"]][0], ONE)
    return _solve(g, 0)


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


def at_least_m_of(m: int, ps: list[np.ndarray]) -> np.ndarray:
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
    if kind == "zero":
        return np.zeros_like(t)
    if kind == "pivot":
        p = evaluate(f[1], t, memo)
        return p * evaluate(f[2], t, memo) + (1.0 - p) * evaluate(f[3], t, memo)
    if kind == "block":
        _, life, block_kind, n = f
        if id(life) not in memo:  # blocks sharing a model are evaluated once
            # far in the tail scipy's log-logistic sf takes log1p(-1) on its way to 0: a right 0
            with np.errstate(divide="ignore", under="ignore"):
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
    return at_least_m_of(m, ps)


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
    nodes, weights = MTTF_NODES, MTTF_WEIGHTS
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
