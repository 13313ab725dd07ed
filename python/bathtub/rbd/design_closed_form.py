"""Closed forms of a design's figure, for ranking and pruning a design space exactly.

Where every block is independent of the others, a design's system figure is the
structure function (`bathtub.rbd.exact.structure_formula`: series, parallel, k-of-n,
pivots) of its blocks' up-probabilities at each time, and each block's up-probability is
a small Markov chain's:

- repairable runs (availability, PFDavg): exponential lives and repairs, repair crews
  unlimited (`repair_crews` 0) or a standby group's own repairer. A component is the chain
  up -> (rate lambda) in repair -> (mu) up; with a proof test (coverage 1, no duration)
  up -> hidden, found at each test time and then repaired (or renewed at once with
  instant repair). A standby group of k running, s spares and dormancy d is a
  birth-death chain on the units down: failures at (min(k, up) + d max(up - k, 0)) lambda,
  repairs at (units in repair) mu (one at a time: mu). Active copies (k of n) of one
  design are independent and tested together: the binomial tail of one copy's chain.
  The figure is the time average of the system's up-probability over [0, horizon]
  (the simulation's own figure, start-up transient included), by Gauss-Legendre
  quadrature on panels between proof tests, graded towards each panel's start where the
  transients are: exact to ~1e-10.
- non-repairable runs (mission reliability at the mission time): any parametric life for
  components and series/parallel blocks (their survival function), k of n hot units
  (dormancy 1) of any life, and exponential standby groups (the pure-death chain).

Anything else (common cause, limited crews, maintenance groups, preventive replacement,
non-exponential repairable blocks, imperfect repair, initial states...) has no closed form
here: `ClosedForm.build` says why, and the search simulates instead.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import scipy.stats

from bathtub.distributions import Lifetime
from bathtub.rbd.design_space import Option, Space, arrangement
from bathtub.rbd.exact import Exactness, Formula, at_least_m_of, structure_formula

MAX_PANELS = 2000  # proof-test times in the horizon the quadrature follows
GRADING = np.concatenate([[0.0], np.logspace(-9, 0, 19)])  # sub-panel edges, as fractions of a panel
GL_NODES, GL_WEIGHTS = np.polynomial.legendre.leggauss(8)


class NoClosedForm(Exception):
    """Why a block (or the diagram) has no closed form here."""


def _params(m: Mapping[str, Any]) -> dict[str, float]:
    p = m["params"]
    return {x["name"]: float(x["value"]) for x in p} if isinstance(p, list) else {k: float(v) for k, v in p.items()}


def _rate(m: Mapping[str, Any] | None, what: str) -> float:
    """The rate of an exponential model (no location shift), else NoClosedForm."""
    if m is None:
        raise NoClosedForm(f"no {what} model")
    p = _params(m)
    if m.get("distribution_id") != "exponential" or p.get("gamma", 0.0) != 0.0 or m.get("path") is not None:
        raise NoClosedForm(f"{what} is not exponential")
    return p["failure_rate"]


@dataclass(frozen=True)
class Grid:
    """Quadrature nodes `t` over [0, horizon] with `weights` adding to 1 (a time average),
    and the test epochs (`edges`) the panels break at; for a mission, the mission time."""

    t: np.ndarray
    weights: np.ndarray
    edges: np.ndarray


def mission_grid(mission_time: float) -> Grid:
    return Grid(np.array([mission_time]), np.array([1.0]), np.array([0.0, mission_time]))


def horizon_grid(horizon: float, schedules: Sequence[tuple[float, float]]) -> Grid:
    """Panels between 0, the horizon and every proof test (offset + j interval, j >= 0, none
    at 0) of `schedules` (interval, offset) pairs."""
    cuts = {0.0, horizon}
    for interval, offset in schedules:
        n = math.floor((horizon - offset) / interval) + 1 if offset < horizon else 0
        if len(cuts) + n > MAX_PANELS:
            raise NoClosedForm(f"more than {MAX_PANELS} proof tests in the horizon")
        cuts.update(offset + j * interval for j in range(n) if 0.0 < offset + j * interval < horizon)
    edges = np.array(sorted(cuts))
    ts, ws = [], []
    for a, b in itertools.pairwise(edges):
        sub = a + (b - a) * GRADING
        for lo, hi in itertools.pairwise(sub):
            half = (hi - lo) / 2.0
            ts.append(lo + half + half * GL_NODES)
            ws.append(half * GL_WEIGHTS)
    return Grid(np.concatenate(ts), np.concatenate(ws) / horizon, edges)


def _expm_many(q: np.ndarray, dt: np.ndarray) -> np.ndarray:
    """expm(q * t) for each t of `dt`, shape (len(dt), states, states): by the
    eigendecomposition where it is well conditioned (the usual case, and fast), else one
    matrix exponential each (repeated rates make the generator defective)."""
    w, v = np.linalg.eig(q)
    if np.linalg.cond(v) < 1e6:
        vi = np.linalg.inv(v)
        out = np.einsum("ij,tj,jk->tik", v, np.exp(np.outer(dt, w)), vi)
        if np.all(np.abs(out.imag) < 1e-12):
            return np.asarray(out.real, dtype=float)
    return np.asarray(scipy.linalg.expm(q[None, :, :] * dt[:, None, None]), dtype=float)


def _chain_up(q: np.ndarray, up: np.ndarray, grid: Grid, tests: tuple[float, float] | None = None,
              found: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """P(up) at the grid's nodes of a chain with generator `q` starting in state 0; at each
    test time of `tests` (interval, offset) the state vector goes through `found`."""
    p = np.zeros(q.shape[0])
    p[0] = 1.0
    out = np.empty_like(grid.t)
    test_times = set()
    if tests is not None:
        interval, offset = tests
        horizon = float(grid.edges[-1])
        test_times = {round(offset + j * interval, 12) for j in range(int((horizon - offset) // interval) + 1)
                      if offset + j * interval > 0.0}
    k = 0
    # Panels between periodic tests share their length: their transition matrices once each.
    cache: dict[float, tuple[np.ndarray, np.ndarray]] = {}
    for a, b in zip(grid.edges[:-1], grid.edges[1:], strict=True):
        if found is not None and round(float(a), 12) in test_times:
            p = found(p)
        m = int(np.searchsorted(grid.t, b, side="right")) - k
        key = round(float(b - a), 9)
        if key not in cache:
            dt = grid.t[k:k + m] - a
            cache[key] = (_expm_many(q, dt) @ up,
                          scipy.linalg.expm(q * (b - a)))
        at_nodes, across = cache[key]
        out[k:k + m] = at_nodes @ p
        k += m
        p = p @ across
    return np.clip(out, 0.0, 1.0)


def component_up(node: Mapping[str, Any], grid: Grid, repairable: bool) -> np.ndarray:
    """P(up) of one unit (component, or each unit of a series / parallel block)."""
    if not repairable:
        life = _lifetime(node["model"])
        with np.errstate(divide="ignore", under="ignore"):
            return np.asarray(life.sf(grid.t), dtype=float)
    lam = _rate(node.get("model"), "life")
    instant = bool(node.get("instant_repair"))
    mu = math.inf if instant else _rate(node.get("repair"), "repair")
    test = node.get("inspection")
    if test is None:
        if instant:
            return np.ones_like(grid.t)
        q = np.array([[-lam, lam], [mu, -mu]])
        return _chain_up(q, np.array([1.0, 0.0]), grid)
    if test.get("coverage", 1.0) < 1.0 or test.get("duration", 0.0) > 0.0:
        raise NoClosedForm("a proof test with partial coverage or a duration")
    # States: up, failed unseen, in repair. A test moves the unseen failure into repair (or up).
    rep = 0.0 if instant else mu
    q = np.array([[-lam, lam, 0.0], [0.0, 0.0, 0.0], [rep, 0.0, -rep]])

    def found(p: np.ndarray) -> np.ndarray:
        return np.array([p[0] + p[1], 0.0, p[2]]) if instant else np.array([p[0], 0.0, p[1] + p[2]])

    return _chain_up(q, np.array([1.0, 0.0, 0.0]), grid, (float(test["interval"]), float(test.get("offset", 0.0))),
                     found)


def standby_up(node: Mapping[str, Any], k: int, spares: int, dormancy: float, grid: Grid,
               repairable: bool) -> np.ndarray:
    """P(at least k units up) of a standby group (see the module docstring)."""
    n = k + spares
    if dormancy == 1.0 and not repairable:
        # Hot spares age as running units: k of n independent lives.
        p = component_up(node, grid, False)
        return np.asarray(scipy.stats.binom.sf(k - 1, n, p), dtype=float)
    lam = _rate(node.get("model"), "life")
    mu = _rate(node.get("repair"), "repair") if repairable else 0.0
    own = bool(node.get("repair_one_at_a_time"))
    q = np.zeros((n + 1, n + 1))
    for j in range(n + 1):
        alive = n - j
        fail = (min(k, alive) + dormancy * max(alive - k, 0)) * lam
        if j < n:
            q[j, j + 1] = fail
        if j > 0:
            q[j, j - 1] = (1 if own else j) * mu
        q[j, j] = -q[j].sum()
    up = np.array([1.0 if n - j >= k else 0.0 for j in range(n + 1)])
    return _chain_up(q, up, grid)


def _lifetime(m: Mapping[str, Any]) -> Lifetime:
    if m.get("path") is not None or m.get("distribution_id") in ("table", "steps"):
        raise NoClosedForm("its life is simulated (covariate schedule, joint unit or Cox model)")
    return Lifetime.of(m["distribution_id"], _params(m), m.get("base_distribution_id"))


def block_up(node: Mapping[str, Any], grid: Grid, repairable: bool) -> np.ndarray:
    """P(up) of a block node as the diagram has it."""
    # A standby switch (failures on demand, its own life, switch-over) is simulated only.
    for key in ("preventive", "repair_quality", "state", "maintenance_group", "capacity", "switch"):
        if node.get(key) is not None:
            raise NoClosedForm(f"it has {key}")
    kind = node["type"]
    if kind == "standby":
        cold = node.get("cold", True)
        dormancy = float(node.get("dormancy", 0.0 if cold else 1.0))
        return standby_up(node, int(node.get("k", 1)), int(node["spares"]), dormancy, grid, repairable)
    p = component_up(node, grid, repairable)
    n = int(node.get("n", 1))
    if kind == "series":
        return p**n
    if kind == "parallel":
        return 1.0 - (1.0 - p) ** n
    return p


def option_up(node: Mapping[str, Any], o: Option, grid: Grid, repairable: bool) -> np.ndarray:
    """P(up) of the arrangement option `o` puts in the block's place."""
    placed = arrangement(node, o)
    if o.standby:
        return block_up(placed[0], grid, repairable)
    p = block_up(placed[0], grid, repairable)
    if o.units == 1:
        return p
    return np.asarray(scipy.stats.binom.sf(o.required - 1, o.units, p), dtype=float)


def _evaluate(f: Formula, leaves: Mapping[str, np.ndarray]) -> np.ndarray:
    kind = f[0]
    if kind == "leaf":
        return leaves[f[1]]
    if kind == "one":
        return np.ones(1)
    if kind == "zero":
        return np.zeros(1)
    if kind == "pivot":
        p = _evaluate(f[1], leaves)
        return p * _evaluate(f[2], leaves) + (1.0 - p) * _evaluate(f[3], leaves)
    if kind == "sub":
        return _evaluate(f[1], leaves)
    if kind == "and":
        out = _evaluate(f[1][0], leaves)
        for g in f[1][1:]:
            out = out * _evaluate(g, leaves)
        return out
    m, parts = f[1], f[2]
    ps = [np.broadcast_to(_evaluate(g, leaves), np.broadcast_shapes(*(np.shape(leaves[k]) for k in leaves)))
          for g in parts]
    if m == 1:
        q = 1.0 - ps[0]
        for p in ps[1:]:
            q = q * (1.0 - p)
        return 1.0 - q
    return at_least_m_of(m, [np.asarray(p, dtype=float) for p in ps])


def _leaf_formula(d: Mapping[str, Any], prefix: str = "") -> Formula:
    def leaf(nid: str, n: Mapping[str, Any]) -> Formula | Exactness:
        if n["type"] == "subsystem":
            try:
                return ("sub", _leaf_formula(n["diagram"], f"{prefix}{nid}/"))
            except NoClosedForm as e:
                return Exactness(False, f"subsystem {nid}: {e}")
        return ("leaf", f"{prefix}{nid}")

    solved = structure_formula(d, leaf)
    if isinstance(solved, Exactness):
        raise NoClosedForm(solved.reason)
    if solved[0] is None:
        raise NoClosedForm("the diagram does not reduce to series, parallel and k-of-n parts")
    return solved[0]


def _blocks(d: Mapping[str, Any], prefix: str = "") -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for n in d["nodes"]:
        if n["type"] == "subsystem":
            out.update(_blocks(n["diagram"], f"{prefix}{n['id']}/"))
        elif n["type"] not in ("input", "output", "knode"):
            out[f"{prefix}{n['id']}"] = n
    return out


def _settings(d: Mapping[str, Any]) -> None:
    for key in ("ccf", "network", "phases", "maintenance_groups", "production"):
        if d.get(key):
            raise NoClosedForm(f"the diagram sets {key}")
    for n in d["nodes"]:
        if n["type"] == "subsystem":
            _settings(n["diagram"])


@dataclass(frozen=True)
class ClosedForm:
    """Each block's up-probability on the grid (fixed blocks) and each option's (blocks of
    the space), and the structure formula over them."""

    formula: Formula
    grid: Grid
    fixed: dict[str, np.ndarray]
    options: list[np.ndarray]  # per block of the space: (options, grid nodes)

    @classmethod
    def build(cls, diagram: Mapping[str, Any], space: Space, *, repairable: bool, time: float,
              crews: int) -> ClosedForm:
        """Raises NoClosedForm (with the reason) where a block or setting has none."""
        if repairable and crews != 0:
            raise NoClosedForm("repair crews are limited (blocks wait for one another's crews)")
        _settings(diagram)
        formula = _leaf_formula(diagram)
        blocks = _blocks(diagram)
        if repairable:
            schedules = {(float(n["inspection"]["interval"]), float(n["inspection"].get("offset", 0.0)))
                         for n in blocks.values() if n.get("inspection")}
            schedules |= {(float(o.inspection["interval"]), float(o.inspection.get("offset", 0.0)))
                          for opts in space.options for o in opts if o.inspection}
            grid = horizon_grid(time, sorted(schedules))
        else:
            grid = mission_grid(time)
        fixed = {}
        for bid, node in blocks.items():
            if bid in space.blocks:
                continue
            try:
                fixed[bid] = block_up(node, grid, repairable)
            except NoClosedForm as e:
                raise NoClosedForm(f"block {bid}: {e}") from None
        per_block = []
        for bid, opts in zip(space.blocks, space.options, strict=True):
            node = blocks[bid]
            rows = []
            for i, o in enumerate(opts):
                try:
                    rows.append(option_up(node, o, grid, repairable))
                except NoClosedForm as e:
                    raise NoClosedForm(f"block {bid}, option {i} ({o.name}): {e}") from None
            per_block.append(np.vstack(rows))
        return cls(formula, grid, fixed, per_block)

    def figures(self, space: Space, choices: np.ndarray) -> np.ndarray:
        """The figure (time-average availability, or reliability at the mission time) of
        each design, `choices` an (designs, blocks) array of option indices."""
        leaves: dict[str, np.ndarray] = {k: v[None, :] for k, v in self.fixed.items()}
        for b, bid in enumerate(space.blocks):
            leaves[bid] = self.options[b][choices[:, b]]
        up = np.broadcast_to(_evaluate(self.formula, leaves), (choices.shape[0], self.grid.t.size))
        return np.asarray(up @ self.grid.weights, dtype=float)
