"""Typed Python face of the Rust engine (`bathtub._engine`).

Diagrams are the spec's plain JSON form, `{"nodes": [...], "edges": [...]}`, with each
block's `model`/`repair` a BlockModel (`distribution_id`, `params` as [{name, value}] or
{name: value}, optional `base_distribution_id`, or `mean` + `given`). Models are resolved
and validated here (`bathtub.distributions`), then the engine compiles the diagram, runs
the replications with the GIL released and returns exactly mergeable statistics.

A subsystem node carries its embedded diagram inline under the key `diagram`.
Times are in the diagram's unit throughout. A run is defined by (diagram, options, seed,
replication range): the same inputs give bit-identical numbers on any thread count, and
`merge(run over [a, b), run over [b, c))` equals the run over [a, c).

Simulation conventions: blocks age and fail whether or not the system is up (independent
alternating renewal, as the textbook closed forms assume); a repair renews a unit as new;
`instant_repair` renews it in no time: its failures count, and one that takes the system
down is a system failure of no length (no downtime); standby
switching is perfect and a repaired standby unit goes back on the shelf as a spare.

Proof tests (`inspection` on a repairable component): a failure is hidden (the block does
not work, nobody knows) until a test finds it; repair (or `instant_repair`) starts then.
Tests run at `offset + j*interval` (j >= 0, none at time 0), full ones where j is a multiple
of `full_test / interval`. With `coverage` c < 1 the block has two independent failure modes,
hazard c*h(t) found by every test and (1 - c)*h(t) found only by full tests; a repair renews
what was found (the split formula's model). A test with a `duration` takes the block
off-line for that long; what it found is repaired from its end. A `safety_function` diagram
reports PFD(t) = 1 - A(t), PFDavg (mean unavailability over the horizon) and the IEC 61508
low-demand SIL.

Common cause (`ccf` on the diagram: members, beta, basis, mgl): component members only.
Rate basis: each member keeps (1 - beta) of its hazard (S^(1-beta)); shared events, each
taking k members chosen at random (multiple Greek letters; beta factor: all of them),
renew with the shared share of the hazard of the members' common life model (S^beta for
the beta factor: the textbook model, exact for any life without repair), or, for members
with different models, arrive as a Poisson process at beta times their mean 1/MTTF.
Probability basis: each independent failure of a member takes k - 1 others with it, with
the MGL probabilities (beta of failures are shared).

Planned replacement (`preventive`, component): age (at that age since renewal; a failure
restarts the clock), block (at every multiple of the interval, if running) or condition
(inspected every interval in no time, replaced when 1 - S(a + I)/S(a) > threshold at age a);
`duration` off-line per replacement, then as new. Imperfect repair (`repair_quality`):
Kijima I/II virtual age, the next life the residual life at that age; as new at the
`replace_after`-th failure since renewal.

Costs (`costs` on blocks, `costs` on the diagram), per replication over [0, horizon]: a
perfect repair charges `repair` and `replace` at each failure; with Kijima repair a failure
charges `repair`, or `replace` when it renews the block; a CostRange is drawn uniformly at
each charge; `downtime` per unit time the block is down, `downtime_rate` per unit time the
system is down; `acquisition` once at 0; preventive `cost` per replacement,
`inspection_cost` per condition inspection, inspection `cost` per proof test. With
`discount_rate` (percent per year, calendar diagram unit) a cost at t counts (1 + r)^-years(t).

Maintenance groups (`maintenance_groups` on the diagram, `maintenance_group` on component
blocks): a group stops when a member goes down for maintenance (a repair, a planned
replacement) while none is down, or, with `system_down`, when the system goes down; each
stop is charged `setup_cost` (to the block that began it) and renews members on the age
policy that are at least `opportunity` old.

Capacity: a working block carries its capacity (a parallel block its capacity per unit
times units up, a standby group per running unit); a node carries the least of its blocks
and the sum of what flows into it. A flow once limited may not split over several
successors (refused: that needs a max-flow), so the figures are exact where given. A
CapacityLevel list is drawn once per replication. `production` compares the flow with
`demand` and sums it over [0, period] (0 = the horizon); in a non-repairable run the
capacity is read at `period`.

Standby groups of non-identical units (`units` on a standby node, instead of its model,
repair and spares; e.g. a large pump backed by a smaller one): units in order of preference,
the first k running and a failed running unit replaced by the first idle one; each unit its
own life, repair (every unit one, or none), idle ageing rate (`dormancy`, default the
node's) and `capacity` (every unit one, or none: a running unit carries its own). A repaired
unit goes back on the shelf while k others run, as in identical groups, unless `switch_back`:
then it takes over from the least preferred running unit after it in the list, which goes
back on the shelf keeping its age (the large pump back in duty once repaired).

Initial states (`state`): running at an `age`, `failed` (non-repairable runs), or `down`
for `since` already (repairable runs: the rest of its repair). Standby groups with
`repair_one_at_a_time` have their own single repairer. Phased missions (`phases`,
non-repairable runs): see `simulate_mission`.

Network mode (`network` true or {source, target}): edges are undirected links, blocks are
nodes that pass while they work; the system works while working nodes join source and
target (two-terminal reliability). Knodes, subsystems and capacity are refused there.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from bathtub import _engine
from bathtub._engine import EngineError
from bathtub.control import Cancelled, RunControl, call_engine
from bathtub.distributions import MIXTURE, params_from_mean, parse_params
from bathtub.errors import InputError, prefixed
from bathtub.units import years_per_unit

__all__ = [
    "AvailabilityResult",
    "BlockFigures",
    "Cancelled",
    "Distribution",
    "EngineError",
    "MissionResult",
    "RunControl",
    "SafetyFigures",
    "check_run_kind",
    "check_state",
    "compile_diagram",
    "engine_version",
    "merge",
    "normalize_diagram",
    "phases_end",
    "simulate_availability",
    "simulate_mission",
]

engine_version: str = _engine.__version__

NODE_TYPES = ("input", "output", "component", "series", "parallel", "knode", "standby", "subsystem")
COST_KINDS = ("repair", "replacement", "preventive", "inspection", "set_up", "downtime", "acquisition")
MAX_U64 = 2**64 - 1
# IEC 61508 low-demand bands: SIL n while PFDavg < SIL_UPPER[n - 1].
SIL_UPPER = (1e-1, 1e-2, 1e-3, 1e-4)


# ---------------------------------------------------------------------------------------
# Distributions evaluated by the engine (the same code the simulator samples from).


@dataclass(frozen=True)
class Distribution:
    """A validated distribution evaluated in Rust; functions take arrays of times (or
    probabilities for `quantile`/`isf`) and return float arrays."""

    distribution_id: str
    params: Mapping[str, float]
    base_distribution_id: str | None = None

    @classmethod
    def from_input(cls, distribution_id: str, params: Any, base_distribution_id: str | None = None) -> Distribution:
        values = parse_params(distribution_id, params, base_distribution_id=base_distribution_id)
        return cls(distribution_id, values, base_distribution_id)

    def _eval(self, function: str, x: Any) -> np.ndarray:
        xs = np.asarray(x, dtype=float)
        out = _engine.dist_eval(
            self.distribution_id, dict(self.params), function, xs.ravel().tolist(), self.base_distribution_id
        )
        return np.asarray(out, dtype=float).reshape(xs.shape)

    def sf(self, t: Any) -> np.ndarray:
        return self._eval("sf", t)

    def cdf(self, t: Any) -> np.ndarray:
        return self._eval("cdf", t)

    def pdf(self, t: Any) -> np.ndarray:
        return self._eval("pdf", t)

    def hazard(self, t: Any) -> np.ndarray:
        return self._eval("hazard", t)

    def cumulative_hazard(self, t: Any) -> np.ndarray:
        return self._eval("cumulative_hazard", t)

    def quantile(self, p: Any) -> np.ndarray:
        return self._eval("quantile", p)

    def isf(self, q: Any) -> np.ndarray:
        return self._eval("isf", q)

    def mean(self) -> float:
        return float(_engine.dist_mean(self.distribution_id, dict(self.params), self.base_distribution_id))

    def sample(self, n: int, *, seed: int = 0, stream: int = 0, age: float | None = None) -> np.ndarray:
        """n lives from the engine's stream (seed, stream); with `age`, remaining lives of
        units that have survived to `age`."""
        out = _engine.dist_sample(
            self.distribution_id, dict(self.params), int(n), int(seed), int(stream), age, self.base_distribution_id
        )
        return np.asarray(out, dtype=float)


# ---------------------------------------------------------------------------------------
# Diagram normalisation: BlockModels resolved, fields type-checked, paths in errors.


def _model(model: Any, field: str) -> dict[str, Any]:
    if not isinstance(model, Mapping):
        raise InputError(field, "must be an object (BlockModel)")
    if model.get("saved_model_id") is not None:
        raise InputError(f"{field}.saved_model_id", "resolve saved models to distribution_id + params first")
    if model.get("path") is not None:
        base = _model({k: v for k, v in model.items() if k != "path"}, field)
        return {**base, "path": _path(model["path"], f"{field}.path")}
    dist_id = model.get("distribution_id")
    if not isinstance(dist_id, str):
        raise InputError(f"{field}.distribution_id", "required (a distribution id)")
    if dist_id in (TABLE, STEPS):
        return _table(model, field)
    base = model.get("base_distribution_id")
    try:
        if model.get("mean") is not None:
            if model.get("params") is not None:
                raise InputError("mean", "give params or mean, not both")
            params = params_from_mean(dist_id, model["mean"], model.get("given"))
            base = None
        else:
            if "params" not in model:
                raise InputError("params", "required (or mean + given)")
            params = parse_params(dist_id, model["params"], base_distribution_id=base)
    except InputError as e:
        raise prefixed(field, e) from None
    try:
        # Built as the simulator will build it: a family the library knows but the engine
        # does not sample is refused here, naming the field, not deep in the compile.
        _engine.dist_eval(dist_id, params, "sf", [], base if dist_id == MIXTURE else None)
    except EngineError as e:
        which = "base_distribution_id" if dist_id == MIXTURE else "distribution_id"
        raise InputError(f"{field}.{which}", f"not simulated by engine {engine_version} ({e})") from None
    out: dict[str, Any] = {"distribution_id": dist_id, "params": params}
    if dist_id == MIXTURE:
        out["base_distribution_id"] = base
    return out


TABLE = "table"  # a life as [t, F] knots (a joint unit's conditional life); the engine checks the knots
STEPS = "steps"  # the same knots read as a step distribution function (a Cox model's Breslow survival)
TABLE_MAX_KNOTS = 100_000
PATH_SCALES = ("hazard", "time")
PATH_MAX_SEGMENTS = 100_000


def _path(path: Any, field: str) -> dict[str, Any]:
    """A covariate path (`bathtub.rbd.covariate_life` makes it from covariate_schedules): segment
    starts, a factor per segment, optional period, scale hazard | time; the engine checks the rest."""
    if not isinstance(path, Mapping):
        raise InputError(field, "must be an object {starts, factors, period?, scale}")
    for k in path:
        if k not in ("starts", "factors", "period", "scale"):
            raise InputError(f"{field}.{k}", "unknown field; a path has starts, factors, period, scale")
    out: dict[str, Any] = {}
    for key in ("starts", "factors"):
        v = path.get(key)
        if not isinstance(v, list) or not 1 <= len(v) <= PATH_MAX_SEGMENTS:
            raise InputError(f"{field}.{key}", f"1 to {PATH_MAX_SEGMENTS} numbers")
        out[key] = [_finite(x, f"{field}.{key}") for x in v]
    if path.get("scale") not in PATH_SCALES:
        raise InputError(f"{field}.scale", f"must be one of {', '.join(PATH_SCALES)}")
    out["scale"] = path["scale"]
    if path.get("period") is not None:
        out["period"] = _finite(path["period"], f"{field}.period")
    return out


def _table(model: Mapping[str, Any], field: str) -> dict[str, Any]:
    dist_id = model["distribution_id"]
    for k in model:
        if k not in ("distribution_id", "table"):
            raise InputError(f"{field}.{k}", f"not with the {dist_id} distribution (its knots are in table)")
    knots = model.get("table")
    least = 1 if dist_id == STEPS else 2
    if not isinstance(knots, list) or not least <= len(knots) <= TABLE_MAX_KNOTS:
        raise InputError(f"{field}.table", f"{least} to {TABLE_MAX_KNOTS} [t, F] knots")
    for i, k in enumerate(knots):
        if (not isinstance(k, (list, tuple)) or len(k) != 2
                or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in k)):
            raise InputError(f"{field}.table.{i}", "must be a [t, F] pair of numbers")
    return {"distribution_id": dist_id, "params": {}, "table": [[float(a), float(b)] for a, b in knots]}


def _int(node: Mapping[str, Any], key: str, field: str, low: int) -> int | None:
    v = node.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or (not isinstance(v, int) and not (isinstance(v, float) and v.is_integer())):
        raise InputError(f"{field}.{key}", "must be an integer")
    if int(v) < low or int(v) > 100_000:
        raise InputError(f"{field}.{key}", f"must be between {low} and 100000")
    return int(v)


def _num(node: Mapping[str, Any], key: str, field: str) -> float | None:
    v = node.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise InputError(f"{field}.{key}", "must be a finite number")
    return float(v)


def _bool(node: Mapping[str, Any], key: str, field: str) -> bool | None:
    v = node.get(key)
    if v is None:
        return None
    if not isinstance(v, bool):
        raise InputError(f"{field}.{key}", "must be true or false")
    return v


def _finite(v: Any, field: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise InputError(field, "must be a finite number")
    return float(v)


INSPECTION_KEYS = ("interval", "duration", "cost", "offset", "coverage", "full_test")


def _inspection(t: Any, kind: str, field: str) -> dict[str, float]:
    """A ProofTest, checked: interval > 0; 0 <= duration, offset < interval; coverage in
    [0, 1], below 1 with full_test a whole multiple of the interval."""
    if kind != "component":
        raise InputError(field, "proof tests are for component blocks")
    if not isinstance(t, Mapping):
        raise InputError(field, "must be an object (ProofTest)")
    for key in t:
        if key not in INSPECTION_KEYS:
            raise InputError(f"{field}.{key}", f"unknown field; expected {', '.join(INSPECTION_KEYS)}")
    if t.get("interval") is None:
        raise InputError(f"{field}.interval", "required")
    interval = _finite(t["interval"], f"{field}.interval")
    if interval <= 0:
        raise InputError(f"{field}.interval", "must be > 0")
    out: dict[str, Any] = {"interval": interval}
    if t.get("cost") is not None:
        out["cost"] = _cost(t["cost"], f"{field}.cost")
    for key in ("duration", "offset"):
        if t.get(key) is not None:
            v = _finite(t[key], f"{field}.{key}")
            if not 0 <= v < interval:
                raise InputError(f"{field}.{key}", "must be >= 0 and below the interval")
            out[key] = v
    coverage = 1.0
    if t.get("coverage") is not None:
        coverage = _finite(t["coverage"], f"{field}.coverage")
        if not 0 <= coverage <= 1:
            raise InputError(f"{field}.coverage", "must be between 0 and 1")
        out["coverage"] = coverage
    if t.get("full_test") is not None:
        full = _finite(t["full_test"], f"{field}.full_test")
        m = round(full / interval)
        if full <= 0 or m < 1 or abs(full - m * interval) > 1e-9 * full:
            raise InputError(f"{field}.full_test", "must be a whole multiple of the interval")
        out["full_test"] = full
    elif coverage < 1:
        raise InputError(f"{field}.full_test", "required when coverage is below 1")
    return out


def _cost(v: Any, field: str) -> float | dict[str, float]:
    """A cost: a number >= 0, or a CostRange {min, max} (drawn uniformly when charged)."""
    if isinstance(v, Mapping):
        for key in v:
            if key not in ("min", "max"):
                raise InputError(f"{field}.{key}", "unknown field; a CostRange has min and max")
        for key in ("min", "max"):
            if v.get(key) is None:
                raise InputError(f"{field}.{key}", "required")
        lo, hi = _finite(v["min"], f"{field}.min"), _finite(v["max"], f"{field}.max")
        if lo < 0 or hi < lo:
            raise InputError(field, "needs 0 <= min <= max")
        return {"min": lo, "max": hi}
    x = _finite(v, field)
    if x < 0:
        raise InputError(field, "must be >= 0")
    return x


def _nonneg(v: Any, field: str) -> float:
    x = _finite(v, field)
    if x < 0:
        raise InputError(field, "must be >= 0")
    return x


def _keys(d: Any, allowed: tuple[str, ...], field: str, what: str) -> Mapping[str, Any]:
    if not isinstance(d, Mapping):
        raise InputError(field, f"must be an object ({what})")
    for key in d:
        if key not in allowed:
            raise InputError(f"{field}.{key}", f"unknown field; expected {', '.join(allowed)}")
    return d


PREVENTIVE_KEYS = ("policy", "interval", "duration", "cost", "threshold", "inspection_cost", "opportunity")


def _preventive(p: Any, node: Mapping[str, Any], field: str) -> dict[str, Any]:
    """A Preventive, checked: component, not with inspection; interval > 0; duration >= 0
    (block: below the interval); threshold in [0, 1] for condition only; inspection_cost
    for condition only; opportunity (0 to interval) for the age policy in a maintenance group."""
    if node.get("type") != "component":
        raise InputError(field, "planned replacement is for component blocks")
    if node.get("inspection") is not None:
        raise InputError(field, "not together with inspection")
    _keys(p, PREVENTIVE_KEYS, field, "Preventive")
    policy = p.get("policy", "age")
    if policy not in ("age", "block", "condition"):
        raise InputError(f"{field}.policy", "must be age, block or condition")
    if p.get("interval") is None:
        raise InputError(f"{field}.interval", "required")
    interval = _finite(p["interval"], f"{field}.interval")
    if interval <= 0:
        raise InputError(f"{field}.interval", "must be > 0")
    out: dict[str, Any] = {"policy": policy, "interval": interval}
    if p.get("opportunity") is not None:
        o = _nonneg(p["opportunity"], f"{field}.opportunity")
        if policy != "age" or node.get("maintenance_group") is None:
            raise InputError(f"{field}.opportunity", "is for the age policy of a block in a maintenance group")
        if o > interval:
            raise InputError(f"{field}.opportunity", "must be at most the interval")
        out["opportunity"] = o
    if p.get("duration") is not None:
        out["duration"] = _nonneg(p["duration"], f"{field}.duration")
        if policy == "block" and out["duration"] >= interval:
            raise InputError(f"{field}.duration", "must be below the interval for block replacement")
    if p.get("cost") is not None:
        out["cost"] = _cost(p["cost"], f"{field}.cost")
    if policy == "condition":
        if p.get("threshold") is None:
            raise InputError(f"{field}.threshold", "required for the condition policy")
        th = _finite(p["threshold"], f"{field}.threshold")
        if not 0 <= th <= 1:
            raise InputError(f"{field}.threshold", "must be between 0 and 1")
        out["threshold"] = th
        if p.get("inspection_cost") is not None:
            out["inspection_cost"] = _cost(p["inspection_cost"], f"{field}.inspection_cost")
    else:
        for key in ("threshold", "inspection_cost"):
            if p.get(key) is not None:
                raise InputError(f"{field}.{key}", "only with the condition policy")
    return out


def _repair_quality(r: Any, node: Mapping[str, Any], model: Mapping[str, Any] | None, field: str) -> dict[str, Any]:
    """RepairQuality, checked: component (not with inspection: not simulated together; not
    condition-replaced), not a mixture life; model perfect | kijima1 | kijima2, q in [0, 1],
    replace_after an integer 1..1000 with q > 0."""
    if node.get("type") != "component":
        raise InputError(field, "repair quality is for component blocks")
    _keys(r, ("model", "q", "replace_after"), field, "RepairQuality")
    if node.get("inspection") is not None:
        raise InputError(field, f"not simulated together with inspection by engine {engine_version}")
    if (node.get("preventive") or {}).get("policy") == "condition":
        raise InputError(field, "not on a condition-replaced block")
    if model is not None and model["distribution_id"] == MIXTURE:
        raise InputError(field, "refused with a mixture life")
    kind = r.get("model", "perfect")
    if kind not in ("perfect", "kijima1", "kijima2"):
        raise InputError(f"{field}.model", "must be perfect, kijima1 or kijima2")
    out: dict[str, Any] = {"model": kind}
    if kind == "perfect":
        for key in ("q", "replace_after"):
            if r.get(key) is not None:
                raise InputError(f"{field}.{key}", "only with the kijima models")
        return out
    q = _finite(r.get("q", 0.0), f"{field}.q")
    if not 0 <= q <= 1:
        raise InputError(f"{field}.q", "must be between 0 and 1")
    out["q"] = q
    n = _int(r, "replace_after", field, 1)
    if n is not None:
        if n > 1000:
            raise InputError(f"{field}.replace_after", "must be between 1 and 1000")
        if q == 0:
            raise InputError(f"{field}.replace_after", "needs q > 0 (q = 0 renews at every repair)")
        out["replace_after"] = n
    return out


def _block_costs(k: Any, kind: str, field: str) -> dict[str, Any]:
    """BlockCosts, checked: repair/replace numbers or CostRanges (per failure), downtime
    (per unit time the block is down) and acquisition (once) numbers >= 0."""
    if kind not in ("component", "standby"):
        raise InputError(field, "costs are for component blocks and standby groups")
    _keys(k, ("repair", "replace", "downtime", "acquisition"), field, "BlockCosts")
    out: dict[str, Any] = {}
    for key in ("repair", "replace"):
        if k.get(key) is not None:
            out[key] = _cost(k[key], f"{field}.{key}")
    for key in ("downtime", "acquisition"):
        if k.get(key) is not None:
            out[key] = _nonneg(k[key], f"{field}.{key}")
    return out


def _diagram_costs(k: Any, unit: Any, field: str) -> dict[str, float]:
    """DiagramCosts: downtime_rate (per unit time the system is down), horizon (must be the
    run's), discount_rate (percent per year, continuous equivalent per diagram unit)."""
    _keys(k, ("downtime_rate", "horizon", "discount_rate"), field, "DiagramCosts")
    out: dict[str, float] = {}
    if k.get("downtime_rate") is not None:
        out["downtime_rate"] = _nonneg(k["downtime_rate"], f"{field}.downtime_rate")
    if k.get("horizon"):
        out["horizon"] = _nonneg(k["horizon"], f"{field}.horizon")
    if k.get("discount_rate"):
        rate = _finite(k["discount_rate"], f"{field}.discount_rate")
        if not 0 <= rate <= 100:
            raise InputError(f"{field}.discount_rate", "must be between 0 and 100 (percent per year)")
        years = years_per_unit(unit)
        if years is None:
            raise InputError(f"{field}.discount_rate", "needs a calendar diagram unit (seconds, minutes, hours, days, "
                                                       "weeks, months, years)")
        # (1 + r)^-years as exp(-discount * t), t in the diagram unit.
        out["discount"] = math.log1p(rate / 100.0) * years
    return out


def _network(v: Any, nodes: Sequence[Mapping[str, Any]], field: str) -> bool | dict[str, str]:
    """Network mode: true, or {source, target} node ids (default the input and output)."""
    if v is True:
        return True
    _keys(v, ("source", "target"), field, "NetworkTerminals or true")
    ids = {n["id"] for n in nodes}
    out = {}
    for key in ("source", "target"):
        if v.get(key) is not None:
            if not isinstance(v[key], str) or v[key] not in ids:
                raise InputError(f"{field}.{key}", f"no node with id {v[key]!r}")
            out[key] = v[key]
    return out


def _phases(phases: Any, nodes: Sequence[Mapping[str, Any]], edges: Sequence[Mapping[str, str]],
            field: str) -> list[dict[str, Any]]:
    """MissionPhases, checked: at most 50; distinct names; duration >= 0; not_needed ids of
    blocks or subsystems of this diagram; votes map knode ids to 1..(inputs feeding it)."""
    if not isinstance(phases, Sequence) or isinstance(phases, (str, bytes)) or len(phases) > 50:
        raise InputError(field, "must be an array of at most 50 phases")
    kinds = {n["id"]: n["type"] for n in nodes}
    inputs = {k: sum(1 for e in edges if e["target"] == k) for k, t in kinds.items() if t == "knode"}
    names: set[str] = set()
    out = []
    for i, ph in enumerate(phases):
        f = f"{field}[{i}]"
        _keys(ph, ("name", "duration", "not_needed", "votes"), f, "MissionPhase")
        name = ph.get("name")
        if not isinstance(name, str) or not name:
            raise InputError(f"{f}.name", "required (a non-empty string)")
        if name in names:
            raise InputError(f"{f}.name", f"{name!r} is used twice")
        names.add(name)
        if ph.get("duration") is None:
            raise InputError(f"{f}.duration", "required")
        entry: dict[str, Any] = {"name": name, "duration": _nonneg(ph["duration"], f"{f}.duration")}
        nn = ph.get("not_needed") or []
        if not isinstance(nn, Sequence) or isinstance(nn, (str, bytes)):
            raise InputError(f"{f}.not_needed", "must be an array of block ids")
        for j, b in enumerate(nn):
            if not isinstance(b, str) or kinds.get(b) in (None, "input", "output", "knode"):
                raise InputError(f"{f}.not_needed[{j}]", f"no block with id {b!r}")
        entry["not_needed"] = list(nn)
        votes = ph.get("votes") or {}
        if not isinstance(votes, Mapping):
            raise InputError(f"{f}.votes", "must be an object mapping knode ids to integers")
        for k, v in votes.items():
            if k not in inputs:
                raise InputError(f"{f}.votes.{k}", f"no knode with id {k!r}")
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= inputs[k]:
                raise InputError(f"{f}.votes.{k}", f"must be an integer from 1 to {inputs[k]} (inputs feeding it)")
        entry["votes"] = dict(votes)
        out.append(entry)
    return out


def _member(node: Mapping[str, Any], groups: Any, depth: int, field: str) -> str:
    """A block's maintenance group: a name of the top diagram's maintenance_groups; a
    component without proof tests."""
    name = node["maintenance_group"]
    f = f"{field}.maintenance_group"
    if depth > 0:
        raise InputError(f, "maintenance groups are for blocks of the top diagram")
    if not isinstance(name, str) or not isinstance(groups, Mapping) or name not in groups:
        raise InputError(f, f"no maintenance group {name!r} in the diagram's maintenance_groups")
    if node.get("type") != "component" or node.get("inspection") is not None:
        raise InputError(f, "maintenance groups are for component blocks without proof tests")
    return name


def _maintenance_groups(groups: Any, field: str) -> dict[str, dict[str, Any]]:
    """MaintenanceGroups: name -> {setup_cost >= 0 (per group stop), system_down}."""
    if not isinstance(groups, Mapping):
        raise InputError(field, "must be an object mapping names to MaintenanceGroups")
    out = {}
    for name, g in groups.items():
        f = f"{field}.{name}"
        _keys(g, ("setup_cost", "system_down"), f, "MaintenanceGroup")
        entry: dict[str, Any] = {}
        if g.get("setup_cost") is not None:
            entry["setup_cost"] = _nonneg(g["setup_cost"], f"{f}.setup_cost")
        v = _bool(g, "system_down", f)
        if v is not None:
            entry["system_down"] = v
        out[str(name)] = entry
    return out


def check_state(st: Any, node: Mapping[str, Any], field: str) -> dict[str, Any]:
    """BlockState, checked: failed (non-repairable runs) or down with since >= 0 (in repair
    for that long; repairable runs, a repair model) or running with age >= 0; component,
    series or parallel blocks, not with preventive, inspection or repair_quality."""
    _keys(st, ("failed", "down", "since", "age"), field, "BlockState")
    if node.get("type") not in ("component", "series", "parallel"):
        raise InputError(field, "is for component, series and parallel blocks")
    for key in ("preventive", "inspection", "repair_quality"):
        if node.get(key) is not None:
            raise InputError(field, f"not simulated together with {key} by engine {engine_version}")
    out: dict[str, Any] = {}
    for key in ("failed", "down"):
        v = _bool(st, key, field)
        if v is not None:
            out[key] = v
    for key in ("since", "age"):
        if st.get(key) is not None:
            out[key] = _nonneg(st[key], f"{field}.{key}")
    if out.get("failed") and out.get("down"):
        raise InputError(field, "failed or down, not both")
    if "since" in out and not out.get("down"):
        raise InputError(f"{field}.since", "goes with down")
    if "age" in out and (out.get("failed") or out.get("down")):
        raise InputError(f"{field}.age", "is for a running block")
    if out.get("down") and node.get("repair") is None:
        raise InputError(f"{field}.down", "needs a repair model")
    return out


MAX_STANDBY_UNITS = 1000


def _standby_units(units: Any, node: Mapping[str, Any], field: str) -> list[dict[str, Any]]:
    """A standby group's non-identical units, in order of preference (the first k run):
    each {model, repair?, dormancy? (default the node's), capacity? (number > 0)}; instead of
    the node's model, repair and spares; every unit a repair model or none, a capacity or none."""
    if node.get("type") != "standby":
        raise InputError(field, "is for standby groups")
    for key in ("model", "repair", "spares"):
        if node.get(key) is not None:
            raise InputError(f"{field}", f"each unit has its own model and repair: not with the node's {key}")
    if not isinstance(units, Sequence) or isinstance(units, (str, bytes)) \
            or not 1 <= len(units) <= MAX_STANDBY_UNITS:
        raise InputError(field, f"must be an array of 1 to {MAX_STANDBY_UNITS} units")
    k = node.get("k", 1)
    if isinstance(k, int) and len(units) < k:
        raise InputError(field, f"at least k = {k} units (the running ones), then the spares")
    out = []
    for i, u in enumerate(units):
        f = f"{field}[{i}]"
        _keys(u, ("model", "repair", "dormancy", "capacity"), f, "StandbyUnit")
        if u.get("model") is None:
            raise InputError(f"{f}.model", "required (the unit's life model)")
        entry: dict[str, Any] = {"model": _model(u["model"], f"{f}.model")}
        if u.get("repair") is not None:
            entry["repair"] = _model(u["repair"], f"{f}.repair")
        if u.get("dormancy") is not None:
            d = _finite(u["dormancy"], f"{f}.dormancy")
            if not 0.0 <= d <= 1.0:
                raise InputError(f"{f}.dormancy", "must be between 0 and 1")
            if 0.0 < d < 1.0 and k != 1:
                raise InputError(f"{f}.dormancy", "warm spares (0 < dormancy < 1) need k = 1")
            entry["dormancy"] = d
        if u.get("capacity") is not None:
            c = _finite(u["capacity"], f"{f}.capacity")
            if c <= 0:
                raise InputError(f"{f}.capacity", "must be > 0")
            entry["capacity"] = c
        out.append(entry)
    for key, what in (("repair", "a repair model"), ("capacity", "a capacity")):
        given = [key in e for e in out]
        if any(given) and not all(given):
            raise InputError(f"{field}[{given.index(False)}].{key}", f"give every unit {what}, or none")
    if any("capacity" in e for e in out) and node.get("capacity") is not None:
        raise InputError(f"{field}[0].capacity", "not with the node's capacity (that is each unit's when units "
                                                 "give none)")
    return out


def _capacity(v: Any, kind: str, field: str) -> float | list[dict[str, float]]:
    """A block's capacity: a number > 0, or CapacityLevels {value > 0, probability in (0, 1]}
    whose probabilities add to 1 (one level drawn per replication)."""
    if kind not in ("component", "series", "parallel", "standby"):
        raise InputError(field, "capacity is for blocks (component, series, parallel, standby)")
    if isinstance(v, Sequence) and not isinstance(v, (str, bytes)):
        if not v:
            raise InputError(field, "give a number or at least one level")
        out = []
        for i, lvl in enumerate(v):
            f = f"{field}[{i}]"
            _keys(lvl, ("value", "probability"), f, "CapacityLevel")
            for key in ("value", "probability"):
                if lvl.get(key) is None:
                    raise InputError(f"{f}.{key}", "required")
            value, prob = _finite(lvl["value"], f"{f}.value"), _finite(lvl["probability"], f"{f}.probability")
            if value <= 0:
                raise InputError(f"{f}.value", "must be > 0")
            if not 0 < prob <= 1:
                raise InputError(f"{f}.probability", "must be in (0, 1]")
            out.append({"value": value, "probability": prob})
        if abs(sum(lvl["probability"] for lvl in out) - 1.0) > 1e-9:
            raise InputError(field, "level probabilities must add to 1")
        return out
    x = _finite(v, field)
    if x <= 0:
        raise InputError(field, "must be > 0")
    return x


def _production(p: Any, field: str) -> dict[str, float]:
    """Production: demand >= 0, unit (label, at most 20 chars), period >= 0 (0 = horizon)."""
    _keys(p, ("demand", "unit", "period"), field, "Production")
    if p.get("unit") is not None and (not isinstance(p["unit"], str) or len(p["unit"]) > 20):
        raise InputError(f"{field}.unit", "must be a string of at most 20 characters")
    return {key: _nonneg(p[key], f"{field}.{key}") for key in ("demand", "period") if p.get(key) is not None}


def _ccf(groups: Any, nodes: Sequence[Mapping[str, Any]], field: str) -> list[dict[str, Any]]:
    """Common-cause groups, checked: members distinct component ids of this diagram, each in
    one group; 0 < beta < 1; basis rate | probability; mgl [gamma] (3) or [gamma, delta] (4)."""
    if not isinstance(groups, Sequence) or isinstance(groups, (str, bytes)):
        raise InputError(field, "must be an array of common-cause groups")
    kinds = {n["id"]: n["type"] for n in nodes}
    seen: dict[str, str] = {}
    out = []
    for i, g in enumerate(groups):
        f = f"{field}[{i}]"
        if not isinstance(g, Mapping):
            raise InputError(f, "must be an object {members, beta, basis, mgl, id}")
        for key in g:
            if key not in ("id", "members", "beta", "basis", "mgl"):
                raise InputError(f"{f}.{key}", "unknown field; expected id, members, beta, basis, mgl")
        gid = g.get("id", f"ccf-{i + 1}")
        if not isinstance(gid, str) or not gid:
            raise InputError(f"{f}.id", "must be a non-empty string")
        members = g.get("members")
        if not isinstance(members, Sequence) or isinstance(members, (str, bytes)) or len(members) < 2:
            raise InputError(f"{f}.members", "must be an array of at least 2 block ids")
        for j, m in enumerate(members):
            if not isinstance(m, str) or m not in kinds:
                raise InputError(f"{f}.members[{j}]", f"no block with id {m!r}")
            if kinds[m] != "component":
                raise InputError(f"{f}.members[{j}]", f"{m!r} is a {kinds[m]}; members must be component blocks")
            if m in seen:
                raise InputError(f"{f}.members[{j}]", f"{m!r} is already in common-cause group {seen[m]!r}")
            seen[m] = gid
        if g.get("beta") is None:
            raise InputError(f"{f}.beta", "required")
        beta = _finite(g["beta"], f"{f}.beta")
        if not 0 < beta < 1:
            raise InputError(f"{f}.beta", "must be between 0 and 1 (exclusive)")
        basis = g.get("basis", "rate")
        if basis not in ("rate", "probability"):
            raise InputError(f"{f}.basis", "must be rate or probability")
        entry: dict[str, Any] = {"id": gid, "members": list(members), "beta": beta, "basis": basis}
        if g.get("mgl") is not None:
            mgl = g["mgl"]
            if not isinstance(mgl, Sequence) or isinstance(mgl, (str, bytes)):
                raise InputError(f"{f}.mgl", "must be an array of numbers")
            if len(members) not in (3, 4) or len(mgl) != len(members) - 2:
                raise InputError(f"{f}.mgl", "give [gamma] for 3 members or [gamma, delta] for 4")
            vals = [_finite(v, f"{f}.mgl[{j}]") for j, v in enumerate(mgl)]
            for j, v in enumerate(vals):
                if not 0 <= v <= 1:
                    raise InputError(f"{f}.mgl[{j}]", "must be between 0 and 1")
            entry["mgl"] = vals
        out.append(entry)
    return out


def normalize_diagram(diagram: Any, field: str = "diagram", _depth: int = 0) -> dict[str, Any]:
    """The engine's form of a spec diagram: models resolved to validated params, fields
    type-checked; raises InputError naming the node by its id and the field (e.g.
    `diagram.nodes.pump-a.model.params.beta`; a node without a usable id by its index)."""
    if _depth > 16:
        raise InputError(field, "subsystems nested more than 16 deep")
    if not isinstance(diagram, Mapping):
        raise InputError(field, "must be an object with nodes and edges")
    nodes, edges = diagram.get("nodes"), diagram.get("edges")
    if not isinstance(nodes, Sequence) or isinstance(nodes, (str, bytes)) or not nodes:
        raise InputError(f"{field}.nodes", "must be a non-empty array")
    if not isinstance(edges, Sequence) or isinstance(edges, (str, bytes)):
        raise InputError(f"{field}.edges", "must be an array")
    out_nodes = []
    for i, node in enumerate(nodes):
        f = f"{field}.nodes[{i}]"
        if not isinstance(node, Mapping):
            raise InputError(f, "must be an object")
        nid, kind = node.get("id"), node.get("type")
        if not isinstance(nid, str) or not nid:
            raise InputError(f"{f}.id", "required (a non-empty string)")
        f = f"{field}.nodes.{nid}"  # users know their nodes by id, not by position
        if kind not in NODE_TYPES:
            raise InputError(f"{f}.type", f"must be one of {', '.join(NODE_TYPES)}")
        if node.get("covariate_schedules"):
            raise InputError(f"{f}.covariate_schedules", "resolve it with its saved model first "
                                                         "(bathtub.rbd.engine_form makes it the model's path)")
        out: dict[str, Any] = {"id": nid, "type": kind}
        if node.get("model") is not None:
            out["model"] = _model(node["model"], f"{f}.model")
        if node.get("repair") is not None:
            out["repair"] = _model(node["repair"], f"{f}.repair")
        if node.get("units") is not None:
            out["units"] = _standby_units(node["units"], node, f"{f}.units")
        for key, low in (("n", 1), ("k", 1), ("spares", 0)):
            v = _int(node, key, f, low)
            if v is not None:
                out[key] = v
        for key in ("dormancy", "crew_priority"):
            v = _num(node, key, f)
            if v is not None:
                out[key] = v
        if out.get("dormancy") is not None and not 0.0 <= out["dormancy"] <= 1.0:
            raise InputError(f"{f}.dormancy", "must be between 0 and 1")
        for key in ("cold", "instant_repair", "repair_one_at_a_time", "switch_back"):
            v = _bool(node, key, f)
            if v is not None:
                out[key] = v
        if out.get("switch_back") and "units" not in out:
            raise InputError(f"{f}.switch_back", "is for standby groups of non-identical units (units)")
        if node.get("inspection") is not None:
            out["inspection"] = _inspection(node["inspection"], kind, f"{f}.inspection")
        if node.get("preventive") is not None:
            out["preventive"] = _preventive(node["preventive"], node, f"{f}.preventive")
        if node.get("costs") is not None:
            out["costs"] = _block_costs(node["costs"], kind, f"{f}.costs")
        if out.get("repair_one_at_a_time"):
            if kind != "standby":
                raise InputError(f"{f}.repair_one_at_a_time", "is for standby groups")
            if node.get("costs") is not None:
                raise InputError(f"{f}.costs", "no costs on a group with its own repairer (repair_one_at_a_time)")
        if node.get("state") is not None:
            out["state"] = check_state(node["state"], node, f"{f}.state")
        if node.get("maintenance_group") is not None:
            out["maintenance_group"] = _member(node, diagram.get("maintenance_groups"), _depth, f)
        if node.get("capacity") is not None:
            out["capacity"] = _capacity(node["capacity"], kind, f"{f}.capacity")
        if node.get("repair_quality") is not None:
            out["repair_quality"] = _repair_quality(node["repair_quality"], node, out.get("model"),
                                                    f"{f}.repair_quality")
        if kind == "subsystem":
            if node.get("diagram") is None:
                raise InputError(f"{f}.diagram", "the embedded diagram is required (resolve subsystem_rbd_id first)")
            out["diagram"] = normalize_diagram(node["diagram"], f"{f}.diagram", _depth + 1)
        out_nodes.append(out)
    out_edges = []
    for i, e in enumerate(edges):
        if not isinstance(e, Mapping) or not isinstance(e.get("source"), str) or not isinstance(e.get("target"), str):
            raise InputError(f"{field}.edges[{i}]", "must be an object {source, target} of node ids")
        out_edges.append({"source": e["source"], "target": e["target"]})
    for key in ("safety_function", "target_sil"):
        if _depth > 0 and diagram.get(key):
            raise InputError(f"{field}.{key}", "a setting of the top diagram, not of a subsystem")
    out = {"nodes": out_nodes, "edges": out_edges}
    if diagram.get("ccf"):
        out["ccf"] = _ccf(diagram["ccf"], out_nodes, f"{field}.ccf")
    if diagram.get("maintenance_groups"):
        if _depth > 0:
            raise InputError(f"{field}.maintenance_groups", "a setting of the top diagram, not of a subsystem")
        out["maintenance_groups"] = _maintenance_groups(diagram["maintenance_groups"], f"{field}.maintenance_groups")
    if diagram.get("network") not in (None, False):
        if _depth > 0:
            raise InputError(f"{field}.network", "a setting of the top diagram, not of a subsystem")
        out["network"] = _network(diagram["network"], out_nodes, f"{field}.network")
    if diagram.get("phases"):
        if _depth > 0:
            raise InputError(f"{field}.phases", "a setting of the top diagram, not of a subsystem")
        out["phases"] = _phases(diagram["phases"], out_nodes, out_edges, f"{field}.phases")
    if diagram.get("production") and any(diagram["production"].get(k) for k in ("demand", "period")):
        if _depth > 0:
            raise InputError(f"{field}.production", "a setting of the top diagram, not of a subsystem")
        out["production"] = _production(diagram["production"], f"{field}.production")
        if not _has_capacity(out):
            raise InputError(f"{field}.production", "needs at least one block with a capacity")
    if diagram.get("costs"):
        if _depth > 0:
            raise InputError(f"{field}.costs", "a setting of the top diagram, not of a subsystem")
        out["costs"] = _diagram_costs(diagram["costs"], diagram.get("unit"), f"{field}.costs")
    return out


def _has_capacity(d: Mapping[str, Any]) -> bool:
    return any("capacity" in n or any("capacity" in u for u in n.get("units", ()))
               or ("diagram" in n and _has_capacity(n["diagram"])) for n in d["nodes"])


def _safety_settings(diagram: Any) -> tuple[bool, int]:
    """(safety_function, target_sil) of a diagram, checked (target 0 = none)."""
    if not isinstance(diagram, Mapping):
        return False, 0
    sf = diagram.get("safety_function")
    if sf is not None and not isinstance(sf, bool):
        raise InputError("diagram.safety_function", "must be true or false")
    target = diagram.get("target_sil")
    if target is not None and (isinstance(target, bool) or not isinstance(target, int) or not 0 <= target <= 4):
        raise InputError("diagram.target_sil", "must be an integer from 0 to 4")
    if target and not sf:
        raise InputError("diagram.target_sil", "needs safety_function true")
    return bool(sf), int(target or 0)


def check_run_kind(diagram: Any, *, repairable: bool) -> dict[str, Any]:
    """The normalised diagram, refused where a setting needs the other kind of run
    (availability for repairable, mission for non-repairable): the rules both simulators
    apply, in one place so a caller can check a diagram before any run is asked for."""
    norm = normalize_diagram(diagram)
    if repairable:
        if norm.get("phases"):
            raise InputError("diagram.phases", "phased missions are simulated by simulate_mission (non-repairable)")
        _safety_settings(diagram)
        return norm
    if norm.get("costs"):
        raise InputError("diagram.costs", "costs need a repairable (availability) run")
    if any("maintenance_group" in n for n in norm["nodes"]):
        raise InputError("diagram.maintenance_groups", "maintenance groups need a repairable (availability) run")
    if _safety_settings(diagram)[0]:
        raise InputError("diagram.safety_function", "PFD needs a repairable (availability) run with proof tests")
    return norm


def compile_diagram(diagram: Any) -> list[str]:
    """Validate a diagram as the engine compiles it; returns its block ids (subsystem
    blocks as `outer/inner`). Raises InputError (bad fields) or EngineError (bad shape)."""
    return list(_engine.compile_diagram(json.dumps(normalize_diagram(diagram))))


# ---------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class BlockFigures:
    """One block, per replication on average: failures (failures only: planned
    replacements and proof tests are counted apart), downtime (diagram unit) =
    `unplanned_downtime` (failed, found or not, and in repair) + `planned_downtime`
    (off-line for a replacement, or for a proof test it entered working, until the stop
    ends or the block fails), its share of the system's downtime (the block whose event
    took the system down), MTBF (time working per failure) and MTTR (unplanned downtime
    per failure; 0 with instant repair); None without failures."""

    id: str
    failures: float
    downtime: float
    share_of_system_downtime: float
    unplanned_downtime: float
    planned_downtime: float
    preventive_replacements: float
    proof_tests: float
    condition_inspections: float
    mtbf: float | None
    mttr: float | None


def sil_of(pfd_avg: float) -> int:
    """IEC 61508 low-demand SIL a PFDavg reaches: 4 below 1e-4, 3 in [1e-4, 1e-3), 2 in
    [1e-3, 1e-2), 1 in [1e-2, 1e-1), 0 from 1e-1 up."""
    sil = 0
    for n, upper in enumerate(SIL_UPPER, start=1):
        if pfd_avg < upper:
            sil = n
    return sil


@dataclass(frozen=True)
class SafetyFigures:
    """A safety function's figures: PFD(t) = 1 - A(t) on the run's curve times (the grid
    and, just before it, each proof test: the saw-tooth peaks), `pfd_max` the highest of
    them (None when the run read no curve: grid 0 and no proof test), PFDavg over
    [0, horizon] with its 95% interval, the SIL PFDavg reaches and the SIL its interval's
    upper end still reaches (the one to claim); `target_met` compares the latter with
    `target_sil` (None without a target). Take the horizon a whole number of full-test
    intervals for the textbook PFDavg."""

    pfd_avg: float
    pfd_avg_std_error: float
    pfd_avg_interval: tuple[float, float]
    pfd_max: float | None
    sil: int
    sil_claimed: int
    target_sil: int | None
    target_met: bool | None
    pfd: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pfd_avg_interval"] = list(self.pfd_avg_interval)
        d["pfd"] = list(self.pfd)
        return d


def _safety(a: float, se: float, lo: float, hi: float, curve: np.ndarray, target: int) -> SafetyFigures:
    pfd, upper = 1.0 - a, 1.0 - lo
    claimed = sil_of(upper)
    return SafetyFigures(
        pfd_avg=pfd,
        pfd_avg_std_error=se,
        pfd_avg_interval=(max(0.0, 1.0 - hi), upper),
        pfd_max=float(np.max(1.0 - curve)) if curve.size else None,
        sil=sil_of(pfd),
        sil_claimed=claimed,
        target_sil=target or None,
        target_met=None if not target else claimed >= target,
        pfd=tuple(float(x) for x in 1.0 - curve),
    )


@dataclass(frozen=True)
class AvailabilityResult:
    """A repairable run over [0, horizon]. Intervals are 95%; `*_std_error` lets callers
    form others. Curves are numpy arrays at the times `t`: the grid's points and, with proof
    tests, each test's instant; A(t) is read just before the events at t (the left limit).

    Per replication on average: the system is down for a plan while it would work were
    every block that is stopped only for a plan (a replacement, or a proof test it entered
    working and did not fail in) working, and down for failures otherwise;
    `unplanned_downtime` + `planned_downtime` = (1 - mean availability) * horizon.
    `expected_failures` counts system failures only: turns from up or planned-down to
    failed (a failure during a planned stop that would have stopped the system counts; so
    does an instantly repaired block's failure that takes the system down, with no
    downtime); `expected_planned_outages` the outages that begin planned. MTBF = uptime per
    failure, MTTR = unplanned downtime per failure. `expected_preventive_replacements` (any
    policy, opportunities included), `expected_proof_tests` and
    `expected_condition_inspections` count those events (all blocks; per block in
    `blocks`)."""

    mean_availability: float
    mean_availability_std_error: float
    mean_availability_interval: tuple[float, float]
    relative_half_width: float | None
    target_half_width: float | None
    target_reached: bool | None
    t: np.ndarray
    availability: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    reliability: float
    reliability_interval: tuple[float, float]
    expected_failures: float
    expected_failures_std_error: float
    mtbf: float | None
    mttr: float | None
    expected_planned_outages: float
    unplanned_downtime: float
    planned_downtime: float
    expected_preventive_replacements: float
    expected_proof_tests: float
    expected_condition_inspections: float
    blocks: tuple[BlockFigures, ...]
    events: int
    replications: int
    replication_start: int
    seed: int
    horizon: float
    engine_version: str
    state: str = field(repr=False)
    safety: SafetyFigures | None = None
    costs: dict[str, Any] | None = None
    preventive: dict[str, float] | None = None
    production: dict[str, Any] | None = None

    def to_dict(self, include_curve: bool = True) -> dict[str, Any]:
        """JSON-ready: floats, lists and plain dicts (the accumulator state left out)."""
        apart = ("state", "t", "availability", "lower", "upper", "safety", "costs", "preventive", "production")
        d = {k: v for k, v in asdict(self).items() if k not in apart}
        for key in ("costs", "preventive", "production"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        if self.safety is not None:
            d["safety"] = self.safety.to_dict()
            if not include_curve:
                del d["safety"]["pfd"]
        d["mean_availability_interval"] = list(self.mean_availability_interval)
        d["reliability_interval"] = list(self.reliability_interval)
        d["blocks"] = [asdict(b) for b in self.blocks]
        if include_curve:
            d["curve"] = {
                "t": self.t.tolist(),
                "availability": self.availability.tolist(),
                "lower": self.lower.tolist(),
                "upper": self.upper.tolist(),
            }
        return d


@dataclass(frozen=True)
class MissionResult:
    """A non-repairable run: R(t) over [0, mission_time] with a 95% band, MTTF (each
    replication runs to system failure), probability of failure by the mission end, and
    each block's share of those failures."""

    t: np.ndarray
    reliability: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    mttf: float
    mttf_std_error: float
    probability_of_failure: float
    probability_of_failure_interval: tuple[float, float]
    block_shares: dict[str, float]
    events: int
    replications: int
    replication_start: int
    seed: int
    mission_time: float
    engine_version: str
    state: str = field(repr=False)
    phases: tuple[dict[str, Any], ...] | None = None
    production: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        extra: dict[str, Any] = {} if self.phases is None else {"phases": [dict(p) for p in self.phases]}
        if self.production is not None:
            extra["production"] = dict(self.production)
        return extra | {
            "curve": {k: getattr(self, k).tolist() for k in ("t", "reliability", "lower", "upper")},
            "mttf": self.mttf,
            "mttf_std_error": self.mttf_std_error,
            "probability_of_failure": self.probability_of_failure,
            "probability_of_failure_interval": list(self.probability_of_failure_interval),
            "block_shares": dict(self.block_shares),
            "events": self.events,
            "replications": self.replications,
            "replication_start": self.replication_start,
            "seed": self.seed,
            "mission_time": self.mission_time,
            "engine_version": self.engine_version,
        }


def _availability_result(
    state: str, summary: str, target: float | None, safety: tuple[bool, int] = (False, 0)
) -> AvailabilityResult:
    s = json.loads(summary)
    opts = json.loads(state)["options"]
    rel = s["relative_half_width"]
    figures = None
    if safety[0]:
        figures = _safety(s["mean_availability"], s["mean_availability_std_error"], s["mean_availability_lower"],
                          s["mean_availability_upper"], np.asarray(s["availability"], dtype=float), safety[1])
    return AvailabilityResult(
        mean_availability=s["mean_availability"],
        mean_availability_std_error=s["mean_availability_std_error"],
        mean_availability_interval=(s["mean_availability_lower"], s["mean_availability_upper"]),
        relative_half_width=rel,
        target_half_width=target,
        target_reached=None if target is None else (rel is not None and rel <= target),
        t=np.asarray(s["t"], dtype=float),
        availability=np.asarray(s["availability"], dtype=float),
        lower=np.asarray(s["lower"], dtype=float),
        upper=np.asarray(s["upper"], dtype=float),
        reliability=s["reliability"],
        reliability_interval=(s["reliability_lower"], s["reliability_upper"]),
        expected_failures=s["expected_failures"],
        expected_failures_std_error=s["expected_failures_std_error"],
        mtbf=s["mtbf"],
        mttr=s["mttr"],
        expected_planned_outages=s["expected_planned_outages"],
        unplanned_downtime=s["unplanned_downtime"],
        planned_downtime=s["planned_downtime"],
        expected_preventive_replacements=s["expected_preventive_replacements"],
        expected_proof_tests=s["expected_proof_tests"],
        expected_condition_inspections=s["expected_condition_inspections"],
        blocks=tuple(BlockFigures(**b) for b in s["blocks"]),
        events=int(s["events"]),
        replications=int(s["replications"]),
        replication_start=int(s["replication_start"]),
        seed=int(opts["seed"]),
        horizon=float(opts["horizon"]),
        engine_version=engine_version,
        state=state,
        safety=figures,
        costs=_costs(s["costs"]) if s.get("costs") else None,
        preventive=dict(s["preventive"]) if s.get("preventive") else None,
        production=_production_result(s["production"]) if s.get("production") else None,
    )


def _production_result(p: Mapping[str, Any]) -> dict[str, Any]:
    """Throughput figures, per replication on average (capacity units; production over the
    period with its 95% interval; time and fraction of the period below demand)."""
    out = dict(p)
    out["production_interval"] = [out.pop("production_lower"), out.pop("production_upper")]
    return out


def _costs(c: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's cost summary as plain JSON: expected totals per replication (discounted
    to time 0 when a discount rate is set) by kind and by block; system downtime apart."""
    return {
        "total": c["total"],
        "total_std_error": c["total_std_error"],
        "total_interval": [c["total_lower"], c["total_upper"]],
        "by_kind": {k["kind"]: {"mean": k["mean"], "std_error": k["std_error"]} for k in c["by_kind"]},
        "by_block": {b["id"]: {"total": b["total"], **dict(b["by_kind"])} for b in c["by_block"]},
        "system_downtime": c["system_downtime"],
    }


def _mission_result(state: str, summary: str) -> MissionResult:
    s = json.loads(summary)
    opts = json.loads(state)["options"]
    return MissionResult(
        t=np.asarray(s["t"], dtype=float),
        reliability=np.asarray(s["reliability"], dtype=float),
        lower=np.asarray(s["lower"], dtype=float),
        upper=np.asarray(s["upper"], dtype=float),
        # JSON has no infinity: the engine's infinite MTTF (a system that may never fail) comes
        # back as null, its standard error (NaN) likewise
        mttf=math.inf if s["mttf"] is None else s["mttf"],
        mttf_std_error=math.nan if s["mttf_std_error"] is None else s["mttf_std_error"],
        probability_of_failure=s["probability_of_failure"],
        probability_of_failure_interval=(s["probability_of_failure_lower"], s["probability_of_failure_upper"]),
        block_shares={k: v for k, v in s["blocks"]},
        events=int(s["events"]),
        replications=int(s["replications"]),
        replication_start=int(s["replication_start"]),
        seed=int(opts["seed"]),
        mission_time=float(opts["mission_time"]),
        engine_version=engine_version,
        state=state,
        phases=tuple(s["phases"]) if s.get("phases") else None,
        production=_mission_production(s["production"]) if s.get("production") else None,
    )


def _mission_production(p: Mapping[str, Any]) -> dict[str, Any]:
    """Capacity of the non-repairable system read at the production period (else the
    mission end; 0 once failed), and the chance it is then below demand (95% interval)."""
    out = dict(p)
    out["probability_below_demand_interval"] = [out.pop("probability_below_demand_lower"),
                                                out.pop("probability_below_demand_upper")]
    return out


def _check_int(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(name, f"must be an integer between {low} and {high}")
    return value


def _check_threads(threads: int | None) -> int | None:
    return None if threads is None else _check_int(threads, "threads", 1, 1024)


def simulate_availability(
    diagram: Any,
    *,
    horizon: float,
    replications: int | None = None,
    target_half_width: float | None = None,
    max_replications: int = 100_000,
    seed: int = 0,
    grid: int = 101,
    crews: int = 0,
    replication_start: int = 0,
    threads: int | None = None,
    control: RunControl | None = None,
    cluster: Any = None,
) -> AvailabilityResult:
    """Repairable Monte Carlo over [0, horizon] (diagram unit).

    Give `replications`, or `target_half_width`: the relative half-width of the 95%
    interval on mean unavailability to reach, run in growing batches up to
    `max_replications` (neither: 1000 replications). `crews` = 0 repairs every failure at
    once; otherwise failures wait for one of `crews` crews, higher `crew_priority` first,
    then first come. `grid` points of A(t) over [0, horizon]. `threads` None uses every core.
    A diagram with `safety_function` true gets `safety` figures (PFD, SIL vs `target_sil`).
    `control` (a RunControl) cancels the run from another thread (raising Cancelled) and
    counts replications done; Ctrl-C on the main thread cancels it too.
    `cluster` (a dask `distributed.Client`, cluster object or scheduler address) spreads the
    replications over a cluster in chunks (`bathtub.scaleout`): the same numbers to the bit.
    """
    if replications is not None and target_half_width is not None:
        raise InputError("replications", "give replications or target_half_width, not both")
    if replications is None and target_half_width is None:
        replications = 1000
    if replications is not None:
        _check_int(replications, "replications", 1, 100_000_000)
    if target_half_width is not None and not (
        isinstance(target_half_width, (int, float)) and 0.0 < target_half_width < 1.0
    ):
        raise InputError("target_half_width", "must be a number in (0, 1) (relative to unavailability)")
    _check_int(max_replications, "max_replications", 2, 100_000_000)
    _check_int(seed, "seed", 0, MAX_U64)
    _check_int(grid, "grid", 0, 100_000)
    _check_int(crews, "crews", 0, 1_000_000)
    _check_int(replication_start, "replication_start", 0, MAX_U64 // 2)
    if isinstance(horizon, bool) or not isinstance(horizon, (int, float)) or not 0 < horizon < math.inf:
        raise InputError("horizon", "must be a finite number > 0")
    norm = check_run_kind(diagram, repairable=True)
    own = norm.get("costs", {}).get("horizon")
    if own is not None and own != float(horizon):
        raise InputError("diagram.costs.horizon", f"is {own:g} but the run's horizon is {float(horizon):g}; "
                                                  "give the same (or omit it)")
    text = json.dumps(norm)
    safety = _safety_settings(diagram)
    target = None if target_half_width is None else float(target_half_width)
    if cluster is not None:
        from bathtub import scaleout  # dask is imported only when a cluster is given

        state, summary = call_engine(lambda ctl: scaleout.availability(
            cluster, text, float(horizon), grid, crews, seed, replication_start, replications, target,
            max_replications, ctl), control)
    else:
        state, summary = call_engine(lambda ctl: _engine.simulate_availability(
            text, float(horizon), grid, crews, seed, replication_start, replications=replications,
            target_half_width=target, max_replications=max_replications, threads=_check_threads(threads),
            control=ctl,
        ), control)
    return _availability_result(
        state, summary, None if target_half_width is None else float(target_half_width), safety
    )


def simulate_mission(
    diagram: Any,
    *,
    mission_time: float,
    replications: int = 10_000,
    seed: int = 0,
    grid: int = 101,
    replication_start: int = 0,
    threads: int | None = None,
    control: RunControl | None = None,
    cluster: Any = None,
) -> MissionResult:
    """Non-repairable Monte Carlo: every replication runs to system failure (repair models
    are ignored); R(t) on `grid` points over [0, mission_time] (diagram unit).

    With `phases` on the diagram, each phase's not-needed blocks and knode votes hold from
    its start to its end (the last phase's past its end); `phases` in the result gives
    reliability through each phase's end and given its start. A block failed while not
    needed fails the system when a phase needs it again. With block capacities, `production`
    gives the capacity read at the diagram's production period (else at mission_time).
    With phases, `mission_time` must be the phases' total duration (`phases_end`): the
    per-phase table and the mission's reliability then describe one mission.
    `control` and `cluster` as in `simulate_availability`."""
    _check_int(replications, "replications", 1, 100_000_000)
    _check_int(seed, "seed", 0, MAX_U64)
    _check_int(grid, "grid", 0, 100_000)
    _check_int(replication_start, "replication_start", 0, MAX_U64 // 2)
    if isinstance(mission_time, bool) or not isinstance(mission_time, (int, float)) or not 0 < mission_time < math.inf:
        raise InputError("mission_time", "must be a finite number > 0")
    norm = check_run_kind(diagram, repairable=False)
    end = phases_end(norm)
    if end is not None and float(mission_time) != end:
        raise InputError("mission_time", f"must equal the phases' total duration {end:g} (got {float(mission_time):g})")
    text = json.dumps(norm)
    if cluster is not None:
        from bathtub import scaleout

        state, summary = call_engine(lambda ctl: scaleout.mission(
            cluster, text, float(mission_time), grid, seed, replication_start, replications, ctl), control)
    else:
        state, summary = call_engine(lambda ctl: _engine.simulate_mission(
            text, float(mission_time), grid, seed, replication_start, replications, threads=_check_threads(threads),
            control=ctl,
        ), control)
    return _mission_result(state, summary)


def phases_end(diagram: Mapping[str, Any]) -> float | None:
    """End of a phased mission (the sum of the phase durations, added in order as the
    engine adds them, so the value is the engine's to the bit); None without phases."""
    phases = diagram.get("phases") or []
    if not phases:
        return None
    end = 0.0
    for p in phases:
        end += float(p["duration"])
    return end


def merge(a: AvailabilityResult | MissionResult, b: AvailabilityResult | MissionResult):
    """Two runs of the same diagram, options and seed over adjacent replication ranges as
    one run: exactly the numbers the run over the joined range gives."""
    if isinstance(a, AvailabilityResult) and isinstance(b, AvailabilityResult):
        state, summary = _engine.merge_availability(a.state, b.state)
        target = a.target_half_width if a.target_half_width == b.target_half_width else None
        safety = (a.safety is not None, (a.safety.target_sil or 0) if a.safety is not None else 0)
        return _availability_result(state, summary, target, safety)
    if isinstance(a, MissionResult) and isinstance(b, MissionResult):
        return _mission_result(*_engine.merge_mission(a.state, b.state))
    raise InputError("merge", "both runs must be of the same kind (availability or mission)")
