"""The cheapest design meeting a target: per block a list of options
(`bathtub.rbd.design_space`), a target on the run's figure, and the least capital cost.

Cost: a design's `cost` is the sum of its chosen options' `cost` (capital, as installed).
Blocks without options cost the same in every design and are not counted; the diagram's
running costs (block and diagram `costs`: repairs, downtime, acquisition) are not part of
the comparison; with costs on the diagram each verified design reports its simulated
mean running cost over the horizon (`running_cost`) beside it.

Targets: `availability` (time average over the horizon, at least the value),
`pfd_avg` (a safety function's mean unavailability, below the value), `sil` n (PFDavg
below the IEC 61508 low-demand band's upper end, 10^-n), all repairable; `reliability`
(at the mission time, at least the value) for non-repairable diagrams.

Search (`method` in the answer says which ran):
- exact by enumeration: when every design has a closed form
  (`bathtub.rbd.design_closed_form`) and the space fits the budget, every design is
  evaluated in closed form, those missing the target pruned, and the `top` cheapest meeting
  it simulated;
- exact by simulation: no closed form, at most MAX_SIMULATED designs: every design
  simulated on common random numbers in one engine pass;
- heuristic otherwise: greedy upgrading from the cheapest design, each step the upgrade
  (one block to a costlier option) with the largest gain in the figure per unit of extra
  cost, until the target is met; then each block lowered to the cheapest option that keeps
  it met. Figures from the closed form where there is one, else from simulation on common
  random numbers (every step's candidates in one engine pass).
Every reported design is verified by simulation on common random numbers (the same
replication streams for each; a copy added to one block renumbers the units after it, so
those draw from other streams than in a design without it: still valid, less correlated),
with its 95% interval and whether it meets the target with 95% one-sided confidence.
"""

from __future__ import annotations

import functools
import json
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from bathtub import engine
from bathtub.engine import RunControl, binding, call_engine
from bathtub.errors import InputError
from bathtub.rbd.decisions import Z95, check_run_args, engine_refusal, lane_difference, lanes_of, objective_transform
from bathtub.rbd.design_closed_form import ClosedForm, NoClosedForm
from bathtub.rbd.design_space import Space, check_space, design_diagram, largest
from bathtub.rbd.resolve import life_model
from bathtub.validate import check_integer, check_number

FIGURES = {True: ("availability", "pfd_avg", "sil"), False: ("reliability",)}
Z_ONE_SIDED = 1.6448536269514722  # 95% one-sided
MAX_SIMULATED = 200  # designs simulated in one engine pass (its lanes)
EXACT_BUDGET = 50_000_000  # designs x quadrature nodes evaluated in closed form
MAX_ENUMERATED = 200_000  # designs held in memory at once by the exact search
CHUNK = 2_000_000  # designs x nodes per closed-form batch (memory)
MAX_TOP = 20


def check_target(target: Any, diagram: Mapping[str, Any], repairable: bool) -> tuple[str, float, bool]:
    """(objective simulated, threshold, higher is better) of a target {figure, value}."""
    if not isinstance(target, Mapping) or set(target) - {"figure", "value"} or "figure" not in target:
        raise InputError("target", "must be an object {figure, value}")
    fig = target["figure"]
    if fig not in FIGURES[repairable]:
        kind = "repairable" if repairable else "non-repairable"
        raise InputError("target.figure", f"must be one of {', '.join(FIGURES[repairable])} for a {kind} diagram")
    if fig in ("pfd_avg", "sil") and not diagram.get("safety_function"):
        raise InputError("target.figure", f"{fig} is for a safety function (set safety_function on the diagram)")
    v = target.get("value")
    if fig == "sil":
        sil = check_integer(v, "target.value", 1, len(engine.SIL_UPPER))
        return "pfd_avg", engine.SIL_UPPER[sil - 1], False
    return fig, check_number(v, "target.value", 0.0, 1.0, lo_open=True, hi_open=True), fig != "pfd_avg"


def _saved_option(m: Mapping[str, Any], field: str, *, saved: Mapping[str, Mapping[str, Any]],
                  unit: str | None) -> dict[str, Any]:
    return life_model(m, field, saved, unit)


def _meets(value: float, threshold: float, higher: bool) -> bool:
    # A SIL band's upper end is excluded (SIL n while PFDavg < 10^-(n-1)); an availability
    # or reliability target is met at the value itself.
    return value >= threshold if higher else value < threshold


class _Stages:
    """Progress and cancel across several engine calls: each runs on its own control,
    watched so the caller's control shows the whole search's progress (in lane-replications)
    and a cancel reaches the running call."""

    def __init__(self, control: RunControl | None, planned: int) -> None:
        self.control, self.planned, self.done = control, max(planned, 1), 0

    def run(self, call: Callable[[RunControl], dict[str, Any]], lanes: int) -> dict[str, Any]:
        if self.control is None:
            return call_engine(call)
        parent, child, stop = self.control, RunControl(), threading.Event()
        self.planned = max(self.planned, self.done + lanes)

        def watch() -> None:
            while not stop.wait(0.05):
                if parent.cancelled:
                    child.cancel()
                parent.report(self.done + lanes * child.done, self.planned)

        w = threading.Thread(target=watch, daemon=True)
        w.start()
        try:
            return call_engine(call, child)
        finally:
            stop.set()
            w.join()
            self.done += lanes * child.done
            parent.report(self.done, self.planned)


class _Sim:
    """Designs simulated on common random numbers (one engine pass per call)."""

    def __init__(self, diagram: Mapping[str, Any], space: Space, repairable: bool, time: float, crews: int,
                 objective: str, replications: int, seed: int, threads: int | None, stages: _Stages) -> None:
        self.diagram, self.space, self.repairable, self.time, self.crews = diagram, space, repairable, time, crews
        self.objective, self.n, self.seed, self.threads, self.stages = objective, replications, seed, threads, stages
        self.compared, self.a, self.b = objective_transform(objective, time)
        self.lanes = 0
        self.events = 0
        self.cache: dict[tuple[int, ...], float] = {}

    def texts(self, designs: Sequence[tuple[int, ...]]) -> list[str]:
        return [json.dumps(engine.normalize_diagram(design_diagram(self.diagram, self.space, d)))
                for d in designs]

    def run(self, designs: Sequence[tuple[int, ...]], count: int | None = None) -> dict[str, Any]:
        texts = self.texts(designs)
        n = self.n if count is None else count
        kind = "availability" if self.repairable else "mission"
        try:
            plan = {"kind": kind, "time": self.time, "crews": self.crews, "compared": self.compared,
                    "seed": self.seed, "replication_start": 0, "replications": n, "threads": self.threads}
            s = self.stages.run(lambda ctl: binding.compare_designs(texts, plan, control=ctl),
                                len(texts) if n else 0)
        except engine.EngineError as e:
            raise _designs_error(e, self.space, designs) from None
        if n:
            self.lanes += len(designs)
            self.events += s["events"]
            _, _, means = lanes_of(s, self.compared)
            for d, m in zip(designs, means, strict=True):
                self.cache[d] = self.a + self.b * m
        return s

    def figures(self, designs: Sequence[tuple[int, ...]]) -> list[float]:
        todo = [d for d in dict.fromkeys(designs) if d not in self.cache]
        for k in range(0, len(todo), MAX_SIMULATED):
            self.run(todo[k:k + MAX_SIMULATED])
        return [self.cache[d] for d in designs]


def _designs_error(e: engine.EngineError, space: Space, designs: Sequence[tuple[int, ...]]) -> InputError:
    match e.path:
        case ("designs", int(i), *_):
            where = ", ".join(f"{b} option {o}" for b, o in zip(space.blocks, designs[i], strict=True))
            return InputError("options", f"the design ({where}): {e.below(2)}")
    return engine_refusal(e)


def _per_cost(gain: float, extra: float) -> float:
    """Gain per unit of extra cost; a gain at no extra cost ranks above any other."""
    if extra > 0:
        return gain / extra
    return math.inf if gain > 0 else 0.0


def _greedy(space: Space, figure: Callable[[Sequence[tuple[int, ...]]], list[float]], threshold: float,
            higher: bool) -> tuple[tuple[int, ...] | None, dict[tuple[int, ...], float]]:
    """Greedy upgrade then lowering (see the module docstring); every design evaluated on the
    way, with its figure."""
    seen: dict[tuple[int, ...], float] = {}
    sign = 1.0 if higher else -1.0

    def evaluate(ds: Sequence[tuple[int, ...]]) -> list[float]:
        new = [d for d in dict.fromkeys(ds) if d not in seen]
        if new:
            seen.update(zip(new, figure(new), strict=True))
        return [seen[d] for d in ds]

    cur = tuple(min(range(len(o)), key=lambda i: (o[i].cost, i)) for o in space.options)
    (value,) = evaluate([cur])
    while not _meets(value, threshold, higher):
        ups = [(*cur[:b], i, *cur[b + 1:]) for b, opts in enumerate(space.options) for i in range(len(opts))
               if opts[i].cost >= opts[cur[b]].cost and i != cur[b]]
        if not ups:
            return None, seen
        vals = evaluate(ups)
        extra = [space.cost(d) - space.cost(cur) for d in ups]
        # Gain per unit of extra cost; a free gain first (the most of them).
        scores = [_per_cost(sign * (v - value), x) for v, x in zip(vals, extra, strict=True)]
        best = max(range(len(ups)), key=lambda k: (scores[k], sign * vals[k]))
        if not sign * (vals[best] - value) > 0:
            return None, seen  # no upgrade helps: the target is out of reach
        cur, value = ups[best], vals[best]
    changed = True
    while changed:
        changed = False
        downs = [(*cur[:b], i, *cur[b + 1:]) for b, opts in enumerate(space.options) for i in range(len(opts))
                 if opts[i].cost < opts[cur[b]].cost]
        vals = evaluate(downs) if downs else []
        ok = [(space.cost(d), -sign * v, d) for d, v in zip(downs, vals, strict=True) if _meets(v, threshold, higher)]
        if ok:
            cur = min(ok)[2]
            changed = True
    return cur, seen


def _subset(summary: Mapping[str, Any], rows: Sequence[int]) -> dict[str, Any]:
    """A common-random-numbers summary restricted to some of its lanes (in that order)."""
    cov = summary["covariance"]
    return {**summary, "lanes": [summary["lanes"][i] for i in rows],
            "covariance": [[cov[i][j] for j in rows] for i in rows]}


def _all_designs(space: Space) -> np.ndarray:
    """Every design, (designs, blocks) option indices, the last block varying fastest."""
    return np.indices(space.sizes, dtype=np.int64).reshape(len(space.sizes), -1).T


def cheapest_design(
    diagram: Any,
    *,
    check_only: bool = False,
    repairable: bool,
    options: Any,
    target: Any,
    horizon: float | None = None,
    mission_time: float | None = None,
    top: int = 5,
    replications: int = 2000,
    seed: int = 1,
    crews: int = 0,
    resolve: Any = None,
    saved: Mapping[str, Mapping[str, Any]] | None = None,
    unit: str | None = None,
    threads: int | None = None,
    control: RunControl | None = None,
) -> dict[str, Any]:
    """The cheapest design of engine-form `diagram` meeting `target` ({figure, value}),
    each block in `options` on one of its options (see the module docstring), and up to
    `top` designs in all (the winner and the next cheapest meeting the target), each
    verified by simulation on common random numbers. `check_only` refuses what the search
    would refuse (every option compiled in the diagram) and returns the search plan:
    {method, lanes_bound, largest_design} for the quote. Options' models naming a
    `saved_model_id` are resolved from `saved` (model bodies by id) in the diagram's `unit`
    (`resolve(model, field)` instead, when given)."""
    if resolve is None and saved is not None:
        resolve = functools.partial(_saved_option, saved=saved, unit=unit)
    objective, threshold, higher = check_target(target, diagram, repairable)
    top = check_integer(top, "top", 1, MAX_TOP)
    text, _, time = check_run_args(diagram, repairable, horizon, mission_time, replications, seed)
    norm = json.loads(text)
    space = check_space(norm, options, repairable=repairable, resolve=resolve)
    stages = _Stages(control, 0)
    sim = _Sim(norm, space, repairable, time, crews, objective, replications, seed, threads, stages)
    try:
        closed: ClosedForm | None = ClosedForm.build(norm, space, repairable=repairable, time=time, crews=crews)
        reason = "every design is independent blocks in series, parallel and k-of-n with Markov (exponential) " \
                 "or survival-function closed forms" if repairable else \
            "every design is independent blocks in series, parallel and k-of-n with survival-function closed forms"
    except NoClosedForm as e:
        closed, reason = None, str(e)
    total = space.designs
    grid_size = closed.grid.t.size if closed is not None else 0
    if closed is not None and total * grid_size <= EXACT_BUDGET and total <= MAX_ENUMERATED:
        method = "exact"
        bound = min(top, total)
    elif closed is None and total <= MAX_SIMULATED:
        method = "simulated"
        bound = total
    else:
        method = "heuristic"
        # Each upgrade moves one block to a costlier option, each lowering to a cheaper one:
        # at most sum(m - 1) of each, every step simulating at most sum(m - 1) neighbours.
        steps = 2 * sum(m - 1 for m in space.sizes) + 1
        per_step = max(sum(m - 1 for m in space.sizes), 1)
        bound = top if closed is not None else steps * per_step + top
    if check_only:
        # Each option in the diagram alone: a refusal names the option (no replications run).
        for b, (bid, opts) in enumerate(zip(space.blocks, space.options, strict=True)):
            base = [0] * len(space.blocks)
            for i in range(len(opts)):
                choice = [*base[:b], i, *base[b + 1:]]
                try:
                    engine.compile_diagram(design_diagram(norm, space, choice))
                    sim.run([tuple(choice)], count=0)
                except InputError as e:
                    raise InputError(f"options.{bid}[{i}]", f"{e.field}: {e.rule}") from None
                except engine.EngineError as e:  # the compile's: it names no design
                    raise InputError(f"options.{bid}[{i}]", str(e)) from None
        return {"method": method, "lanes_bound": bound, "designs": total,
                "largest_design": design_diagram(norm, space, largest(space))}
    stages.planned = bound * replications
    enumerated = 0
    reused: dict[str, Any] = {}
    best_seen: tuple[tuple[int, ...], float, str] | None = None
    closed_values: dict[tuple[int, ...], float] = {}
    if method == "exact":
        assert closed is not None
        chunk = max(1, CHUNK // max(grid_size, 1))
        designs = _all_designs(space)
        costs = sum(np.array([o.cost for o in opts])[designs[:, b]] for b, opts in enumerate(space.options))
        values = np.concatenate([closed.figures(space, designs[k:k + chunk]) for k in range(0, total, chunk)])
        if objective == "pfd_avg":
            values = 1.0 - values
        enumerated = total
        ok = np.nonzero(values >= threshold if higher else values < threshold)[0]
        order = ok[np.lexsort(((-values[ok] if higher else values[ok]), costs[ok]))]
        chosen = [tuple(int(x) for x in designs[k]) for k in order[:top]]
        closed_values = {tuple(int(x) for x in designs[k]): float(values[k]) for k in order[:top]}
        top_k = int(np.argmax(values) if higher else np.argmin(values))
        best_seen = (tuple(int(x) for x in designs[top_k]), float(values[top_k]), "closed form")
        description = (f"exact by enumeration: all {total} designs evaluated in closed form ({reason}); "
                       f"{total - len(ok)} pruned as missing the target, the {len(chosen)} cheapest meeting it "
                       "verified by simulation on common random numbers")
    elif method == "simulated":
        designs_l = [tuple(int(x) for x in d) for d in _all_designs(space)]
        every = sim.run(designs_l)  # at most MAX_SIMULATED: one engine pass
        enumerated = total
        ok = [d for d in designs_l if _meets(sim.cache[d], threshold, higher)]
        ok.sort(key=lambda d: (space.cost(d), -sim.cache[d] if higher else sim.cache[d]))
        chosen = ok[:top]
        top_d = max(designs_l, key=lambda d: sim.cache[d] if higher else -sim.cache[d])
        best_seen = (top_d, sim.cache[top_d], "simulated mean")
        # The verified designs are lanes of that same pass: their rows, not a second run.
        reused = _subset(every, [designs_l.index(d) for d in chosen])
        description = (f"exact by enumeration: no closed form ({reason}), so all {total} designs simulated on "
                       "common random numbers in one engine pass; the cheapest whose mean meets the target wins")
    else:
        if closed is not None:
            def figure(ds: Sequence[tuple[int, ...]]) -> list[float]:
                v = closed.figures(space, np.array(ds, dtype=np.int64))
                return [float(x) for x in (1.0 - v if objective == "pfd_avg" else v)]
            basis = f"the closed form ({reason})"
        else:
            figure = sim.figures
            basis = f"simulation on common random numbers (no closed form: {reason})"
        _, seen = _greedy(space, figure, threshold, higher)
        enumerated = len(seen)
        # The greedy's end point, or a cheaper design met on the way that meets the target too.
        ok = sorted((d for d, v in seen.items() if _meets(v, threshold, higher)),
                    key=lambda d: (space.cost(d), -seen[d] if higher else seen[d]))
        chosen = ok[:top]
        if closed is not None:
            closed_values = {d: seen[d] for d in chosen}
        top_d = max(seen, key=lambda d: seen[d] if higher else -seen[d])
        best_seen = (top_d, seen[top_d], "closed form" if closed is not None else "simulated mean")
        description = (f"heuristic (the space of {total} designs is too large to enumerate): greedy upgrade from "
                       "the cheapest design, each step the option change with the largest gain in the figure per "
                       "unit of extra cost until the target is met, then each block lowered to the cheapest option "
                       f"that keeps it met; figures from {basis}; the result meets the target but need not be the "
                       "cheapest design that does")
    out: dict[str, Any] = {
        "target": {"figure": target["figure"], "value": target["value"], "objective": objective,
                   "threshold": threshold, "rule": "at least" if higher else "below"},
        "method": method,
        "method_description": description,
        "closed_form": {"available": closed is not None, "reason": reason},
        "cost_basis": "the sum of the chosen options' cost (capital, as installed); blocks without options and the "
                      "diagram's running costs are not counted (running_cost, when the diagram has costs, is the "
                      "simulated mean running cost over the horizon, for information)",
        "winner": None,
        "designs": [],
        "replications": replications,
        "seed": seed,
    }
    if not chosen:
        verified = None
    elif method == "simulated":
        verified = reused
    else:
        verified = sim.run(chosen)
    space_counts = {"designs": total, "enumerated": enumerated,
                    "pruned": total - len(chosen) if method == "exact" else total - enumerated if
                    method == "heuristic" else 0,
                    "simulated": sim.lanes}
    out["space"] = space_counts
    out["events"] = sim.events
    if verified is None:
        out["note"] = "no design of the space meets the target" + (
            "" if method != "heuristic" else " along the greedy path (none of its upgrades reaches it)")
        if best_seen is not None:
            # How far off the target the best design evaluated is, and what it costs.
            d, v, basis = best_seen
            out["best_available"] = {"cost": space.cost(d), "choices": space.describe(d), "value": v, "basis": basis}
        return out
    n, cov, means = lanes_of(verified, sim.compared)
    a, b = sim.a, sim.b
    has_costs = verified["lanes"][0]["cost"] is not None
    rows = []
    ratios = []
    for k, d in enumerate(chosen):
        v = a + b * means[k]
        se = abs(b) * math.sqrt(max(cov[k][k], 0.0) / n)
        bound_1 = v - Z_ONE_SIDED * se if higher else v + Z_ONE_SIDED * se
        row: dict[str, Any] = {
            "rank": k + 1,
            "cost": space.cost(d),
            "choices": space.describe(d),
            "closed_form": closed_values.get(d),
            "value": v,
            "std_error": se,
            "interval": [v - Z95 * se, v + Z95 * se],
            "meets_target": _meets(v, threshold, higher),
            "meets_target_with_confidence": _meets(bound_1, threshold, higher),
            "running_cost": verified["lanes"][k]["cost"] if has_costs else None,
        }
        if objective == "pfd_avg":
            row["sil"] = engine.sil_of(v)
        if k > 0:
            w = lane_difference(cov, n, k, 0, means, b)
            row["versus_winner"] = w
            if w["variance_ratio"] is not None:
                ratios.append(w["variance_ratio"])
        rows.append(row)
    out["winner"] = rows[0]
    out["designs"] = rows
    out["crn_variance_ratio_median"] = float(np.median(ratios)) if ratios else None
    return out
