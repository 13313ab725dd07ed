"""Decisions on a diagram: what to improve, and the best maintenance interval.

Both run every candidate design inside the engine on common random numbers
(`bathtub_engine::decisions`): replication r of every design draws from the same random
stream, so the difference between two designs is a mean of paired per-replication
differences. Its interval is much tighter than that of two independent runs' difference;
each answer reports the ratio (independent variance over paired variance).

Objectives ("the run's own"): `availability` (time-average over the horizon, higher is
better), `pfd_avg` (mean unavailability of a safety function, lower), `cost_rate` (expected
cost over the horizon per unit time, lower) for repairable diagrams; `reliability` (at the
mission end, higher) for non-repairable ones. Intervals are normal 95% intervals of means
over replications (the central limit theorem; each mean is over >= 100 replications).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bathtub import engine
from bathtub.engine import RunControl, binding, call_engine
from bathtub.errors import InputError
from bathtub.validate import check_integer, check_number

Z95 = 1.959963984540054
OBJECTIVES = {True: ("availability", "pfd_avg", "cost_rate"), False: ("reliability",)}
# Whether a higher value of the objective is better.
HIGHER_IS_BETTER = {"availability": True, "reliability": True, "pfd_avg": False, "cost_rate": False}
CHANGES = {"mtbf_doubled": "doubling the MTBF of", "mttr_halved": "halving the MTTR of"}
MIN_REPLICATIONS = 100
KNOBS = ("preventive", "proof_test")
MAX_CANDIDATES = 200
MAX_CHANGES = 199  # the engine's lanes per run, less the base design


def default_objective(diagram: Mapping[str, Any], repairable: bool) -> str:
    """pfd_avg for a safety function, availability for other repairable diagrams,
    reliability for non-repairable ones."""
    if not repairable:
        return "reliability"
    return "pfd_avg" if diagram.get("safety_function") else "availability"


def _check_objective(objective: str | None, diagram: Mapping[str, Any], repairable: bool) -> str:
    obj = default_objective(diagram, repairable) if objective is None else objective
    if obj not in OBJECTIVES[repairable]:
        kind = "repairable" if repairable else "non-repairable"
        raise InputError("objective", f"must be one of {', '.join(OBJECTIVES[repairable])} for a {kind} diagram")
    return obj


def objective_transform(objective: str, time: float) -> tuple[str, float, float]:
    """(compared value, a, b): the objective of a lane is a + b * (mean compared value)."""
    if objective == "cost_rate":
        return "cost", 0.0, 1.0 / time
    if objective == "pfd_avg":
        return "up", 1.0, -1.0
    return "up", 0.0, 1.0


def check_run_args(diagram: Any, repairable: bool, horizon: float | None, mission_time: float | None,
              replications: int, seed: int) -> tuple[str, str, float]:
    # checked, not cleaned: the callers hand these on to the engine as they came
    check_integer(replications, "replications", MIN_REPLICATIONS, 10_000_000, whole_floats=False)
    check_integer(seed, "seed", 0, 2**63 - 1, whole_floats=False)
    field, time = ("horizon", horizon) if repairable else ("mission_time", mission_time)
    time = check_number(time, field, 0.0, lo_open=True)
    norm = engine.check_run_kind(diagram, repairable=repairable)
    own = norm.get("costs", {}).get("horizon")
    if repairable and own is not None and own != float(time):
        raise InputError("diagram.costs.horizon", f"is {own:g} but the run's horizon is {float(time):g}; "
                                                  "give the same (or omit it)")
    if not repairable and engine.phases_end(norm) is not None:
        raise InputError("diagram.phases", "decisions are for one-phase missions (remove the phases)")
    return json.dumps(norm), "availability" if repairable else "mission", float(time)


def lane_difference(cov: Sequence[Sequence[float]], n: int, i: int, j: int, means: Sequence[float],
                    b: float) -> dict[str, Any]:
    """Lane i minus lane j in objective units: paired (common random numbers) and what two
    independent runs of n replications each would give."""
    paired = max(cov[i][i] + cov[j][j] - 2.0 * cov[i][j], 0.0)
    indep = cov[i][i] + cov[j][j]
    d = b * (means[i] - means[j])
    se = abs(b) * math.sqrt(paired / n)
    return {"difference": d, "std_error": se, "interval": [d - Z95 * se, d + Z95 * se],
            "variance_ratio": indep / paired if paired > 0 else None}


def engine_refusal(e: engine.EngineError) -> InputError:
    """The engine's refusal, under the request field it names (else the diagram's)."""
    if e.path and e.path[0] in ("objective", "blocks", "intervals"):
        return InputError(str(e.path[0]), e.below(1))
    return InputError("diagram", str(e))


def _sentence(objective: str, change: str, block: str, w: Mapping[str, Any]) -> str:
    lo, hi = w["interval"]
    verb = "raises" if w["difference"] >= 0 else "lowers"
    what = CHANGES[change]
    return (f"{what[0].upper()}{what[1:]} {block} {verb} {objective.replace('_', ' ')} by "
            f"{abs(w['difference']):.4g} (95% interval {lo:.4g} to {hi:.4g}) to {w['value']:.6g}.")


def lanes_of(summary: dict[str, Any], compared: str) -> tuple[int, list[list[float]], list[float]]:
    """(replications, covariance of the lanes' per-replication means, each lane's mean of the
    compared quantity: cost, or time up) from a CRN run's summary."""
    means = [lane["cost"] if compared == "cost" else lane["up"] for lane in summary["lanes"]]
    return summary["replications"], summary["covariance"], means


def what_to_improve(
    diagram: Any,
    *,
    check_only: bool = False,
    repairable: bool,
    horizon: float | None = None,
    mission_time: float | None = None,
    objective: str | None = None,
    replications: int = 2000,
    seed: int = 1,
    crews: int = 0,
    blocks: Sequence[str] | None = None,
    threads: int | None = None,
    control: RunControl | None = None,
) -> dict[str, Any]:
    """Per block: importance measures of the base design (Birnbaum, criticality,
    Fussell-Vesely, RAW, RRW, share of system downtime and of cost, or of mission failures)
    and "what if" gains: the objective if the block's MTBF doubled (every life stretched
    by 2) or, repairable, its MTTR halved, each as a difference from the base with its 95%
    interval on common random numbers. Blocks ranked by their best gain; `top` the three
    best changes in words. `blocks` limits the what-if changes to those blocks (at most
    MAX_CHANGES changes a run; importance is measured for every block). `diagram` is an
    engine-form diagram (resolved models).
    `check_only` refuses what the run would refuse (every design compiled) and runs nothing."""
    obj = _check_objective(objective, diagram, repairable)
    text, kind, time = check_run_args(diagram, repairable, horizon, mission_time, replications, seed)
    compared, a, b = objective_transform(obj, time)
    count = 0 if check_only else replications
    chosen = None if blocks is None else list(blocks)
    if chosen is not None:
        if not chosen or len(set(chosen)) != len(chosen):
            raise InputError("blocks", "name each block once, at least one")
        for i, name in enumerate(chosen):
            if _block_node(json.loads(text), name) is None:
                raise InputError(f"blocks[{i}]", f"{name!r} is no block of the diagram")
    try:
        plan = {"kind": kind, "time": time, "crews": crews, "compared": compared, "seed": seed,
                "replication_start": 0, "replications": count, "threads": threads}
        out = call_engine(lambda ctl: binding.what_to_improve(text, plan, chosen, control=ctl), control)
    except engine.EngineError as e:
        raise engine_refusal(e) from None
    if check_only:
        return {}
    s = out["summary"]
    n, cov, means = lanes_of(s, compared)
    base_se = abs(b) * math.sqrt(max(cov[0][0], 0.0) / n)
    base_value = a + b * means[0]
    sign = 1.0 if HIGHER_IS_BETTER[obj] else -1.0
    shares = _shares(s, repairable)
    rows: dict[str, dict[str, Any]] = {}
    for imp in s["importance"]["blocks"]:
        bid = imp["id"]
        rows[bid] = {"id": bid, **{k: v for k, v in imp.items() if k != "id"}, **shares.get(bid, {}),
                     "what_if": {"mtbf_doubled": None, "mttr_halved": None}, "best_gain": None}
    changes = []
    for lane, ch in enumerate(out["changes"], start=1):
        w = lane_difference(cov, n, lane, 0, means, b)
        w["value"] = a + b * means[lane]
        w["gain"] = sign * w["difference"]
        rows[ch["block"]]["what_if"][ch["change"]] = w
        changes.append((w["gain"], ch["change"], ch["block"], w))
    for blk in rows.values():
        gains = [w["gain"] for w in blk["what_if"].values() if w is not None]
        blk["best_gain"] = max(gains) if gains else None
    ranked = sorted(rows.values(), key=lambda x: -(x["best_gain"] if x["best_gain"] is not None else -math.inf))
    changes.sort(key=lambda c: -c[0])
    top = [_sentence(obj, change, block, w) for gain, change, block, w in changes[:3]]
    if not any(w["interval"][0] > 0 or w["interval"][1] < 0 for _, _, _, w in changes[:3]):
        top.append("No change shown is distinguishable from zero at 95%: run more replications.")
    ratios = [w["variance_ratio"] for _, _, _, w in changes if w["variance_ratio"] is not None]
    return {
        "objective": obj,
        "higher_is_better": HIGHER_IS_BETTER[obj],
        "base": {"value": base_value, "std_error": base_se,
                 "interval": [base_value - Z95 * base_se, base_value + Z95 * base_se]},
        "blocks": ranked,
        "top": top,
        "replications": n,
        "seed": seed,
        "events": s["events"],
        "crn_variance_ratio_median": float(np.median(ratios)) if ratios else None,
        "method": "every design simulated on common random numbers in one engine pass; differences are paired "
                  "per replication; importance from the structure function on the simulated block states",
    }


def _shares(s: Mapping[str, Any], repairable: bool) -> dict[str, dict[str, Any]]:
    """Each block's share of system downtime and of cost (repairable), or of mission
    failures it caused (non-repairable), from the base design's run."""
    out: dict[str, dict[str, Any]] = {}
    if repairable:
        base = s["base_availability"]
        costs = base.get("costs")
        total = sum(c["total"] for c in costs["by_block"]) + costs["system_downtime"] if costs else 0.0
        by_cost = {c["id"]: c["total"] for c in costs["by_block"]} if costs else {}
        for blk in base["blocks"]:
            out[blk["id"]] = {"share_of_downtime": blk["share_of_system_downtime"],
                              "share_of_cost": by_cost[blk["id"]] / total if costs and total > 0 else None}
    else:
        for bid, share in s["base_mission"]["blocks"]:
            out[bid] = {"share_of_failures": share}
    return out


def candidate_intervals(low: float, high: float, points: int) -> list[float]:
    """`points` intervals spread evenly from `low` to `high`."""
    return [float(x) for x in np.linspace(low, high, points)]


def _crossing(x: Sequence[float], y: Sequence[float], target: float) -> float | None:
    """First x where the piecewise-linear curve y(x) reaches `target` (None if it never does)."""
    for k in range(len(x) - 1):
        y0, y1 = y[k] - target, y[k + 1] - target
        if y0 == 0.0:
            return x[k]
        if y0 * y1 < 0.0:
            return x[k] + (x[k + 1] - x[k]) * y0 / (y0 - y1)
    return x[-1] if y[-1] == target else None


def _block_node(diagram: Mapping[str, Any], block_id: str) -> Mapping[str, Any] | None:
    """The node of block `block_id` (`outer/inner` inside subsystems) of an engine-form diagram."""
    head, _, rest = block_id.partition("/")
    for n in diagram.get("nodes", []):
        if n.get("id") == head:
            if not rest:
                return n if "model" in n or "units" in n else None
            return _block_node(n["diagram"], rest) if n.get("type") == "subsystem" and "diagram" in n else None
    return None


def check_blocks(diagram: Mapping[str, Any], blocks: Sequence[str], knob: str) -> None:
    """Each block exists and already has the policy whose interval is searched."""
    if not blocks:
        raise InputError("blocks", "name at least one block")
    if len(set(blocks)) != len(blocks):
        raise InputError("blocks", "each block once")
    key, what = ("preventive", "a preventive policy (policy, cost)") if knob == "preventive" \
        else ("inspection", "a proof test (inspection)")
    for i, b in enumerate(blocks):
        node = _block_node(diagram, b)
        if node is None:
            raise InputError(f"blocks[{i}]", f"{b!r} is no block of the diagram")
        if key not in node:
            raise InputError(f"blocks[{i}]", f"{b!r} has no {what} whose interval to search: give it one first")


def group_blocks(diagram: Mapping[str, Any], group: str) -> list[str]:
    """The blocks of maintenance group `group` of an engine-form diagram (its top diagram's
    blocks naming it), in diagram order."""
    groups = diagram.get("maintenance_groups") or {}
    if group not in groups:
        known = ", ".join(sorted(groups)) or "none"
        raise InputError("group", f"no maintenance group {group!r} in the diagram (it has: {known})")
    members = [n["id"] for n in diagram.get("nodes", []) if n.get("maintenance_group") == group]
    if not members:
        raise InputError("group", f"maintenance group {group!r} has no blocks")
    return members


def sil_target(sil: Any, diagram: Mapping[str, Any], objective: str) -> float:
    """The PFDavg target of SIL `sil` (IEC 61508 low demand): the upper bound of its band, as
    SIL n holds while PFDavg < 10^-n. For a safety function, objective pfd_avg."""
    sil = check_integer(sil, "target_sil", 1, len(engine.SIL_UPPER))
    if not diagram.get("safety_function"):
        raise InputError("target_sil", "a SIL target is for a safety function (set safety_function on the diagram)")
    if objective != "pfd_avg":
        raise InputError("objective", "a SIL target is met on pfd_avg (give objective pfd_avg, or omit it)")
    return engine.SIL_UPPER[sil - 1]


def _vertex(x: Sequence[float], y: Sequence[float], k: int) -> float:
    """The vertex of the parabola through the best grid point and its neighbours (the grid
    point itself at an edge or where the three are not convex), kept between the neighbours."""
    if k == 0 or k == len(x) - 1:
        return x[k]
    (x0, x1, x2), (y0, y1, y2) = x[k - 1:k + 2], y[k - 1:k + 2]
    den = (x0 - x1) * (x0 - x2) * (x1 - x2)
    a = (x2 * (y1 - y0) + x1 * (y0 - y2) + x0 * (y2 - y1)) / den
    b = (x2 * x2 * (y0 - y1) + x1 * x1 * (y2 - y0) + x0 * x0 * (y1 - y2)) / den
    if a == 0.0 or (a < 0) != (y1 > y0):  # not a vertex on the best side
        return x[k]
    return min(max(-b / (2 * a), x0), x2)


def interval_search(
    diagram: Any,
    *,
    check_only: bool = False,
    blocks: Sequence[str] | None = None,
    group: str | None = None,
    knob: str,
    intervals: Sequence[float],
    horizon: float,
    objective: str | None = None,
    target: float | None = None,
    target_sil: int | None = None,
    replications: int = 2000,
    seed: int = 1,
    crews: int = 0,
    threads: int | None = None,
    control: RunControl | None = None,
) -> dict[str, Any]:
    """The best planned-replacement (`knob` preventive) or proof-test (`proof_test`)
    interval for `blocks` or for the blocks of maintenance group `group` (all on one
    interval: a group interval), every candidate simulated in one engine pass on common
    random numbers over [0, horizon]. `objective` defaults to cost_rate (pfd_avg with a SIL).

    Without `target`: the candidate with the best objective (least cost rate, least
    PFDavg or most availability); its uncertainty: the candidates whose paired difference
    from it is not significant at 95% (`indistinguishable_from`), widened by one grid step
    each side (`range`: nothing between grid points was simulated); `estimate` the vertex of
    the parabola through the best candidate and its neighbours. With `target` (objective availability:
    at least it; pfd_avg: at most it): among candidates whose mean meets it, the one of
    least cost rate when the diagram has costs, else the longest interval (the least
    maintenance); and where the mean curve crosses the target, the interval there (linear
    interpolation) with the range where the 95% band crosses it. `target_sil` (1 to 4, a
    safety function) is the PFDavg target at the upper bound of that SIL's band. `check_only`
    as in `what_to_improve`."""
    if knob not in KNOBS:
        raise InputError("knob", f"must be one of {', '.join(KNOBS)}")
    if objective is None:
        objective = "pfd_avg" if target_sil is not None else "cost_rate"
    if (blocks is None) == (group is None):
        raise InputError("blocks", "give blocks or group (exactly one)")
    if target_sil is not None:
        if target is not None:
            raise InputError("target", "give target or target_sil, not both")
        target = sil_target(target_sil, diagram, objective)
    if objective not in OBJECTIVES[True]:
        raise InputError("objective", f"must be one of {', '.join(OBJECTIVES[True])}")
    xs = [float(x) for x in intervals]
    if not 2 <= len(xs) <= MAX_CANDIDATES or any(not (math.isfinite(x) and x > 0) for x in xs):
        raise InputError("intervals", f"2 to {MAX_CANDIDATES} finite numbers > 0")
    if sorted(set(xs)) != xs:
        raise InputError("intervals", "must increase strictly")
    if target is not None:
        if objective == "cost_rate":
            raise InputError("target", "a target is for objective availability or pfd_avg")
        if not (isinstance(target, (int, float)) and 0.0 < target < 1.0):
            raise InputError("target", "must be a number in (0, 1)")
    text, kind, time = check_run_args(diagram, True, horizon, None, replications, seed)
    norm = json.loads(text)
    if group is None:
        blocks = list(blocks or [])
        check_blocks(norm, blocks, knob)
    else:
        blocks = group_blocks(norm, group)
        try:
            check_blocks(norm, blocks, knob)
        except InputError as e:
            raise InputError("group", f"member {e.rule}") from None
    compared, a, b = objective_transform(objective, time)
    count = 0 if check_only else replications
    try:
        plan = {"kind": kind, "time": time, "crews": crews, "compared": compared, "seed": seed,
                "replication_start": 0, "replications": count, "threads": threads}
        s = call_engine(lambda ctl: binding.interval_search(text, list(blocks), knob, xs, plan, control=ctl),
                        control)
    except engine.EngineError as e:
        raise engine_refusal(e) from None
    if check_only:
        return {}
    n, cov, means = lanes_of(s, compared)
    values = [a + b * m for m in means]
    ses = [abs(b) * math.sqrt(max(cov[k][k], 0.0) / n) for k in range(len(xs))]
    has_costs = s["lanes"][0]["cost"] is not None
    cost_rates = [lane["cost"] / time if has_costs else None for lane in s["lanes"]]
    curve = [{"interval": x, "value": v, "std_error": se, "interval_95": [v - Z95 * se, v + Z95 * se],
              "cost_rate": cr} for x, v, se, cr in zip(xs, values, ses, cost_rates, strict=True)]
    sign = 1.0 if HIGHER_IS_BETTER[objective] else -1.0
    out: dict[str, Any] = {"knob": knob, "blocks": list(blocks), "group": group, "objective": objective,
                           "target": target, "target_sil": target_sil, "curve": curve, "replications": n,
                           "seed": seed, "events": s["events"]}
    if target is None:
        best = max(range(len(xs)), key=lambda k: sign * values[k])
        diffs = [lane_difference(cov, n, k, best, means, b) for k in range(len(xs))]
        tied = [k for k in range(len(xs)) if k == best or diffs[k]["interval"][0] <= 0.0 <= diffs[k]["interval"][1]]
        k1, k2 = min(tied), max(tied)
        out["optimum"] = {"interval": xs[best], "value": values[best], "std_error": ses[best],
                          "interval_95": curve[best]["interval_95"],
                          "indistinguishable_from": [xs[k1], xs[k2]],
                          # Between grid points nothing was simulated: the optimum lies within
                          # one step of the candidates not significantly worse than the best.
                          "range": [xs[max(k1 - 1, 0)], xs[min(k2 + 1, len(xs) - 1)]],
                          "estimate": _vertex(xs, values, best),
                          "at_edge": best in (0, len(xs) - 1)}
        out["versus_optimum"] = [{"interval": x, **d} for x, d in zip(xs, diffs, strict=True)]
        ratios = [d["variance_ratio"] for k, d in enumerate(diffs) if k != best and d["variance_ratio"] is not None]
        out["crn_variance_ratio_median"] = float(np.median(ratios)) if ratios else None
        return out
    meets = [k for k in range(len(xs)) if sign * (values[k] - target) >= 0.0]
    if meets:
        choose = min(meets, key=lambda k: cost_rates[k]) if has_costs else max(meets, key=lambda k: xs[k])
        out["optimum"] = {"interval": xs[choose], "value": values[choose], "std_error": ses[choose],
                          "interval_95": curve[choose]["interval_95"], "cost_rate": cost_rates[choose],
                          "rule": "least cost rate meeting the target" if has_costs
                          else "longest interval meeting the target"}
    else:
        out["optimum"] = None
    ref = xs.index(out["optimum"]["interval"]) if meets else 0
    ratios = [d["variance_ratio"] for k in range(len(xs)) if k != ref
              for d in [lane_difference(cov, n, k, ref, means, b)] if d["variance_ratio"] is not None]
    out["crn_variance_ratio_median"] = float(np.median(ratios)) if ratios else None
    mid = _crossing(xs, values, target)
    lo_c = _crossing(xs, [v - Z95 * se for v, se in zip(values, ses, strict=True)], target)
    hi_c = _crossing(xs, [v + Z95 * se for v, se in zip(values, ses, strict=True)], target)
    # Where the 95% band crosses the target (None when a band edge stays on one side).
    band = sorted([lo_c, hi_c]) if lo_c is not None and hi_c is not None else None
    out["interval_at_target"] = None if mid is None else {"interval": mid, "range_95": band}
    return out
