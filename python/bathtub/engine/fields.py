"""The diagram's fields lowered to the engine's form, one function each, errors naming the field's
path. A sub-object is checked by its declaration (`bathtub.engine.schema`: the same check, words
and published schema as the stored diagram's); what is checked here is only what needs the node
or diagram around it (a proof test only on a component, a phase's votes naming knodes), and the
lowering itself (defaults filled in, a discount rate turned into the engine's rate). What each
field means to the simulator is told here; `bathtub.engine.diagram` assembles the fields into
the engine's form of a diagram and `bathtub.engine.runs` runs it.

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

Imperfect switching (`switch` on a standby node): when a running unit is lost, the switch
starts the first idle spare unless it fails: on demand with chance `p_fail` (one draw per
demand, none when p_fail is 0), or because its own `life` (time from the start, or from its
last repair) is over. A failed switch stays failed, so the group stays short of running
units; in a repairable run it is repaired with its group: when a repaired unit brings the
group back to k running units (a unit back from repair takes over without the switch). With
a `switchover` time, a repairable run has the group down for that time before the spare runs
(a unit repaired meanwhile takes the place, and the spare goes back on the shelf); a mission
waits through it (the group is not lost, the spare's running life starts when it is over,
and it does not age meanwhile). No switch: a perfect, instant one, drawing nothing.

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

from bathtub.distributions import MIXTURE
from bathtub.engine.binding import ENGINE_VERSION
from bathtub.engine.models import lower_model
from bathtub.engine.schema import (
    BLOCK_COSTS,
    CAPACITY,
    CCF_GROUP,
    DIAGRAM_COSTS,
    MAINTENANCE_GROUPS,
    NETWORK,
    PHASES,
    PREVENTIVE,
    PRODUCTION,
    PROOF_TEST,
    REPAIR_QUALITY,
    SWITCH,
    ccf_rules,
)
from bathtub.errors import InputError
from bathtub.units import years_per_unit
from bathtub.validate import (
    check_array,
    check_boolean,
    check_keys,
    check_number,
    is_integer,
)

__all__ = [
    "MAX_STANDBY_UNITS",
    "check_member",
    "check_state",
    "lower_block_costs",
    "lower_capacity",
    "lower_ccf",
    "lower_diagram_costs",
    "lower_inspection",
    "lower_maintenance_groups",
    "lower_network",
    "lower_phases",
    "lower_preventive",
    "lower_production",
    "lower_repair_quality",
    "lower_standby_units",
    "lower_switch",
]

MAX_STANDBY_UNITS = 1000


def lower_inspection(t: Any, kind: str, field: str) -> dict[str, Any]:
    """A ProofTest (PROOF_TEST), on a component block."""
    if kind != "component":
        raise InputError(field, "proof tests are for component blocks")
    return PROOF_TEST(t, field)  # type: ignore[no-any-return]


def lower_preventive(p: Any, node: Mapping[str, Any], field: str) -> dict[str, Any]:
    """A Preventive (PREVENTIVE), the policy filled in (age): on a component block, not with
    inspection; an opportunity only for a block in a maintenance group."""
    if node.get("type") != "component":
        raise InputError(field, "planned replacement is for component blocks")
    if node.get("inspection") is not None:
        raise InputError(field, "not together with inspection")
    out: dict[str, Any] = {"policy": "age", **PREVENTIVE(p, field)}
    if "opportunity" in out and node.get("maintenance_group") is None:
        raise InputError(f"{field}.opportunity", "needs the block in a maintenance_group")
    return out


def lower_repair_quality(r: Any, node: Mapping[str, Any], model: Mapping[str, Any] | None,
                         field: str) -> dict[str, Any]:
    """A RepairQuality (REPAIR_QUALITY), q filled in (0) for the Kijima models: on a component
    block, not with inspection (not simulated together), nor condition-replaced, nor a
    mixture life."""
    if node.get("type") != "component":
        raise InputError(field, "repair quality is for component blocks")
    if node.get("inspection") is not None:
        raise InputError(field, f"not simulated together with inspection by engine {ENGINE_VERSION}")
    if (node.get("preventive") or {}).get("policy") == "condition":
        raise InputError(field, "not on a condition-replaced block")
    if model is not None and model["distribution_id"] == MIXTURE:
        raise InputError(field, "refused with a mixture life")
    v = REPAIR_QUALITY(r, field)
    if v["model"] == "perfect":
        return {"model": "perfect"}
    return {"model": v["model"], "q": v.get("q", 0.0),
            **({"replace_after": v["replace_after"]} if "replace_after" in v else {})}


def lower_block_costs(k: Any, kind: str, field: str) -> dict[str, Any]:
    """BlockCosts (BLOCK_COSTS): repair/replace per failure (a number or a CostRange drawn
    uniformly when charged), downtime per unit time the block is down, acquisition once."""
    if kind not in ("component", "standby"):
        raise InputError(field, "costs are for component blocks and standby groups")
    return BLOCK_COSTS(k, field)  # type: ignore[no-any-return]


def lower_capacity(v: Any, kind: str, field: str) -> float | list[dict[str, float]]:
    """A block's capacity (CAPACITY): a number > 0, or levels drawn once per replication."""
    if kind not in ("component", "series", "parallel", "standby"):
        raise InputError(field, "capacity is for blocks (component, series, parallel, standby)")
    return CAPACITY(v, field)  # type: ignore[no-any-return]


def lower_production(p: Any, field: str) -> dict[str, float]:
    """Production (PRODUCTION): demand and period (0 = the horizon); the unit is a label only."""
    v = PRODUCTION(p, field)
    return {key: v[key] for key in ("demand", "period") if key in v}


def lower_diagram_costs(k: Any, unit: Any, field: str) -> dict[str, float]:
    """DiagramCosts (DIAGRAM_COSTS): downtime_rate per unit time the system is down, horizon
    (must be the run's; 0 = not given), discount_rate (percent per year) as the engine's
    continuous rate per diagram unit (calendar units only)."""
    v = DIAGRAM_COSTS(k, field)
    out: dict[str, float] = {}
    if "downtime_rate" in v:
        out["downtime_rate"] = v["downtime_rate"]
    if v.get("horizon"):
        out["horizon"] = v["horizon"]
    if v.get("discount_rate"):
        years = years_per_unit(unit)
        if years is None:
            raise InputError(f"{field}.discount_rate", "needs a calendar time unit (seconds, minutes, hours, days, "
                                                       f"weeks, months, years); the diagram's unit is {unit!r}")
        # (1 + r)^-years as exp(-discount * t), t in the diagram unit.
        out["discount"] = math.log1p(v["discount_rate"] / 100.0) * years
    return out


def lower_network(v: Any, nodes: Sequence[Mapping[str, Any]], field: str) -> bool | dict[str, str]:
    """Network mode (NETWORK): true, or {source, target} node ids (default the input and output)."""
    ends = NETWORK(v, field)
    if isinstance(ends, bool):
        return ends
    ids = {n["id"] for n in nodes}
    for key, node_id in ends.items():
        if node_id not in ids:
            raise InputError(f"{field}.{key}", f"no node with id {node_id!r}")
    return dict(ends)


def lower_phases(phases: Any, nodes: Sequence[Mapping[str, Any]], edges: Sequence[Mapping[str, str]],
                 field: str) -> list[dict[str, Any]]:
    """MissionPhases (PHASES), not_needed and votes filled in (empty): not_needed names blocks
    or subsystems of this diagram; votes map knode ids to 1..(inputs feeding it)."""
    kinds = {n["id"]: n["type"] for n in nodes}
    inputs = {k: sum(1 for e in edges if e["target"] == k) for k, t in kinds.items() if t == "knode"}
    out = []
    for i, ph in enumerate(PHASES(phases, field)):
        f = f"{field}[{i}]"
        not_needed = ph.get("not_needed", [])
        for j, b in enumerate(not_needed):
            if kinds.get(b) in (None, "input", "output", "knode"):
                raise InputError(f"{f}.not_needed[{j}]", f"no block with id {b!r}")
        votes = ph.get("votes", {})
        for k, n in votes.items():
            if k not in inputs:
                raise InputError(f"{f}.votes.{k}", f"no knode with id {k!r}")
            if not 1 <= n <= inputs[k]:
                raise InputError(f"{f}.votes.{k}", f"must be an integer from 1 to {inputs[k]} (inputs feeding it)")
        out.append({"name": ph["name"], "duration": ph["duration"], "not_needed": not_needed, "votes": votes})
    return out


def check_member(node: Mapping[str, Any], groups: Any, depth: int, field: str) -> str:
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


def lower_maintenance_groups(groups: Any, field: str) -> dict[str, dict[str, Any]]:
    """MaintenanceGroups (MAINTENANCE_GROUP by name): setup_cost per group stop, system_down."""
    return MAINTENANCE_GROUPS(groups, field)  # type: ignore[no-any-return]


def check_state(st: Any, node: Mapping[str, Any], field: str) -> dict[str, Any]:
    """BlockState, checked: failed (non-repairable runs) or down with since >= 0 (in repair
    for that long; repairable runs, a repair model) or running with age >= 0; component,
    series or parallel blocks, not with preventive, inspection or repair_quality."""
    check_keys(st, ("failed", "down", "since", "age"), field)
    if node.get("type") not in ("component", "series", "parallel"):
        raise InputError(field, "is for component, series and parallel blocks")
    for key in ("preventive", "inspection", "repair_quality"):
        if node.get(key) is not None:
            raise InputError(field, f"not simulated together with {key} by engine {ENGINE_VERSION}")
    out: dict[str, Any] = {}
    for key in ("failed", "down"):
        if st.get(key) is not None:
            out[key] = check_boolean(st[key], f"{field}.{key}")
    for key in ("since", "age"):
        if st.get(key) is not None:
            out[key] = check_number(st[key], f"{field}.{key}", 0.0)
    if out.get("failed") and out.get("down"):
        raise InputError(field, "failed or down, not both")
    if "since" in out and not out.get("down"):
        raise InputError(f"{field}.since", "goes with down")
    if "age" in out and (out.get("failed") or out.get("down")):
        raise InputError(f"{field}.age", "is for a running block")
    if out.get("down") and node.get("repair") is None:
        raise InputError(f"{field}.down", "needs a repair model")
    return out


def lower_switch(v: Any, node: Mapping[str, Any], field: str) -> dict[str, Any]:
    """A standby group's Switch (SWITCH): p_fail, its own life lowered (`lower_model`), the
    switch-over time; not with switch_back."""
    if node.get("type") != "standby":
        raise InputError(field, "is for standby groups")
    if node.get("switch_back"):
        raise InputError(field, "not with switch_back (a unit back from repair takes over without the switch)")
    out = SWITCH(v, field)
    if "life" in out:
        out["life"] = lower_model(out["life"], f"{field}.life")
    return out  # type: ignore[no-any-return]


def lower_standby_units(units: Any, node: Mapping[str, Any], field: str) -> list[dict[str, Any]]:
    """A standby group's non-identical units, in order of preference (the first k run):
    each {model, repair?, dormancy? (default the node's), capacity? (number > 0)}; instead of
    the node's model, repair and spares; every unit a repair model or none, a capacity or none."""
    if node.get("type") != "standby":
        raise InputError(field, "is for standby groups")
    for key in ("model", "repair", "spares"):
        if node.get(key) is not None:
            raise InputError(f"{field}", f"each unit has its own model and repair: not with the node's {key}")
    check_array(units, field, 1, MAX_STANDBY_UNITS)
    k = node.get("k", 1)
    if is_integer(k) and len(units) < k:
        raise InputError(field, f"at least k = {k} units (the running ones), then the spares")
    out = []
    for i, u in enumerate(units):
        f = f"{field}[{i}]"
        check_keys(u, ("model", "repair", "dormancy", "capacity"), f)
        if u.get("model") is None:
            raise InputError(f"{f}.model", "required (the unit's life model)")
        entry: dict[str, Any] = {"model": lower_model(u["model"], f"{f}.model")}
        if u.get("repair") is not None:
            entry["repair"] = lower_model(u["repair"], f"{f}.repair")
        if u.get("dormancy") is not None:
            d = check_number(u["dormancy"], f"{f}.dormancy", 0.0, 1.0)
            if 0.0 < d < 1.0 and k != 1:
                raise InputError(f"{f}.dormancy", "warm spares (0 < dormancy < 1) need k = 1")
            entry["dormancy"] = d
        if u.get("capacity") is not None:
            entry["capacity"] = check_number(u["capacity"], f"{f}.capacity", 0.0, lo_open=True)
        out.append(entry)
    for key, what in (("repair", "a repair model"), ("capacity", "a capacity")):
        given = [key in e for e in out]
        if any(given) and not all(given):
            raise InputError(f"{field}[{given.index(False)}].{key}", f"give every unit {what}, or none")
    if any("capacity" in e for e in out) and node.get("capacity") is not None:
        raise InputError(f"{field}[0].capacity", "not with the node's capacity (that is each unit's when units "
                                                 "give none)")
    return out


def lower_ccf(groups: Any, nodes: Sequence[Mapping[str, Any]], field: str) -> list[dict[str, Any]]:
    """Common-cause groups (CCF_GROUP), an id filled in (ccf-1, ccf-2, ... by position) and the
    basis (rate): members component blocks of this diagram, each in one group."""
    kinds = {n["id"]: n["type"] for n in nodes}
    seen: dict[str, str] = {}
    out = []
    for i, g in enumerate(check_array(groups, field, 0, 1000)):
        f = f"{field}[{i}]"
        if isinstance(g, Mapping) and g.get("id") is None:
            g = {**g, "id": f"ccf-{i + 1}"}
        entry: dict[str, Any] = {"basis": "rate", **CCF_GROUP(g, f)}
        ccf_rules(entry, f)
        for j, m in enumerate(entry["members"]):
            if m not in kinds:
                raise InputError(f"{f}.members[{j}]", f"no block with id {m!r}")
            if kinds[m] != "component":
                raise InputError(f"{f}.members[{j}]", f"{m!r} is a {kinds[m]}; members must be component blocks")
            if m in seen:
                raise InputError(f"{f}.members[{j}]", f"{m!r} is already in common-cause group {seen[m]!r}")
            seen[m] = entry["id"]
        out.append(entry)
    return out
