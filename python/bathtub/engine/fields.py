"""The diagram's fields, one normaliser each: type-checked, BlockModels resolved to validated
params (`bathtub.distributions`), errors naming the field's path. What each field means to the
simulator is told here; `bathtub.engine_diagram` assembles the fields into the engine's form of a
diagram and `bathtub.engine` runs it.

Proof tests (`inspection` on a repairable component): a failure is hidden (the block does
not work, nobody knows) until a test finds it; repair (or `instant_repair`) starts then.
Tests run at `offset + j*interval` (j >= 0, none at time 0), full ones where j is a multiple
of `full_test / interval`. With `coverage` c < 1 the block has two independent failure modes,
hazard c*h(t) found by every test and (1 - c)*h(t) found only by full tests; a repair renews
what was found (the split formula's model). A test with a `duration` takes the block
off-line for that long; what it found is repaired from its end.

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

import math
from collections.abc import Mapping, Sequence
from typing import Any

from bathtub import _engine
from bathtub._engine import EngineError
from bathtub.distributions import MIXTURE, params_from_mean, parse_params
from bathtub.errors import InputError, prefixed
from bathtub.units import years_per_unit

# Named in the refusals of what this engine does not simulate.
engine_version: str = _engine.__version__

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
