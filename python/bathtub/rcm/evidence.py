"""The evidence check of one decision, as a pure function of the decision, the cited item (plain
data, or None when the user has no such item) and whether the item changed since the decision
was written. Run on every read; the answer is a `check` {state, reason, ...}.

States: `supported` (the evidence backs the decision), `contradicted` (it argues against it),
`stale` (the item was refitted or re-saved after the decision was written: review, then send the
decision again), `missing` (no such item of the user's), `wrong_type` (the item is not evidence
of the kind this decision needs, or cannot be read as such). Each comes with a one-line reason.

Rules (JA1011 practice, read off the saved items):
- rtf (random) cites a `model`: supported when the hazard is not significantly increasing — a
  Weibull life model whose β interval includes or lies below 1, an exponential model (constant
  hazard), a gamma model whose shape interval does so too, or a recurrent model whose growth
  verdict is not `deteriorating`; contradicted otherwise.
- fixed_interval cites an optimal-replacement `strategy_analysis`: supported when replacement
  pays (beneficial) and the decision's interval is near the optimum. "Near" is judged on cost,
  the quantity the analysis minimises: the cost rate at the decision's interval (read off the
  saved cost-rate curve) is within 5% of the optimal cost rate. Where the interval lies beyond
  the saved curve, it is near when within ±20% of the optimal age.
- failure_finding cites a failure-finding `strategy_analysis`: supported when the decision's
  interval is at most the analysis's interval (the longest meeting its availability target).
- rtf (uneconomic) cites an optimal-replacement `strategy_analysis`: supported when the analysis
  says preventive replacement does not pay (beneficial false).
- on_condition cites a `degradation_model`: supported when the P–F interval the model implies
  (the lower end of its `ci` when it has one: the P–F interval all but the fastest-degrading
  units exceed, `bathtub.degradation.pf_interval`) is longer than the inspection interval,
  contradicted when it is not.
Intervals convert between hours, days, weeks, months (30.44 d) and years (365.25 d); other units
compare only with themselves, and where units cannot be compared the check says so.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

from bathtub.rcm.units import convert
from bathtub.rcm.worksheet import evidence_type_for

STATES = ("supported", "contradicted", "stale", "missing", "wrong_type")
COST_TOLERANCE = 0.05  # the cost rate at the interval within 5% of the optimum
AGE_TOLERANCE = 0.20  # beyond the saved curve: the interval within ±20% of the optimal age
SHAPE = {"weibull": "beta", "gamma": "alpha"}  # the shape parameter: hazard rises iff it exceeds 1
KIND_NAMES = {"model": "a model", "strategy_analysis": "a strategy analysis", "degradation_model":
              "a degradation model", "dataset": "a dataset", "rbd": "a reliability block diagram",
              "rcm_study": "an RCM study", "fleet": "a fleet", "rbd_run": "an RBD run"}


def _out(state: str, reason: str, **extra: Any) -> dict[str, Any]:
    return {"state": state, "reason": reason, **extra}


def _g(x: float) -> str:
    return f"{x:.4g}"


def _is_degradation(item: Mapping[str, Any]) -> bool:
    # Degradation models may be stored as their own kind or as models of body kind `degradation`.
    return item.get("kind") == "degradation_model" or (
        item.get("kind") == "model" and (item.get("body") or {}).get("kind") == "degradation")


def _kind_fits(etype: str, item: Mapping[str, Any]) -> bool:
    if etype == "degradation_model":
        return _is_degradation(item)
    if etype == "model":
        return item.get("kind") == "model" and not _is_degradation(item)
    return item.get("kind") == etype


def check_evidence(decision: Mapping[str, Any], item: Mapping[str, Any] | None, changed: bool) -> dict[str, Any]:
    """The check of `decision`'s evidence. `item`: {kind (the store's kind), body, name?} or None;
    `changed`: the item was updated after the decision was written."""
    evidence = decision["evidence"]
    etype, eid = evidence["type"], evidence["id"]
    if item is None:
        return _out("missing", f"you have no {etype.replace('_', ' ')} {eid}: it was deleted, or the id is wrong")
    if not _kind_fits(etype, item):
        what = "a degradation model" if _is_degradation(item) else KIND_NAMES.get(item.get("kind", ""), "another item")
        return _out("wrong_type", f"{eid} is {what}, not {etype.replace('_', ' ')} evidence")
    if evidence_type_for(decision) != etype:  # written before the rules changed; the write refuses it now
        return _out("wrong_type", f"a {decision['outcome']} decision is not backed by {etype.replace('_', ' ')} "
                                  "evidence")
    verdict = _judge(decision, item.get("body") or {})
    if changed:
        return _out("stale", f"{eid} changed after this decision was written (refitted or re-saved): review the "
                             "decision and send it again to re-take the evidence", current=verdict)
    return verdict


def _judge(decision: Mapping[str, Any], body: Mapping[str, Any]) -> dict[str, Any]:
    outcome = decision["outcome"]
    if outcome == "rtf" and decision.get("rtf_basis") == "random":
        return _hazard(body)
    if outcome == "on_condition":
        return _pf(decision, body)
    calculator = body.get("calculator")
    want = "failure_finding" if outcome == "failure_finding" else "optimal_replacement"
    if calculator != want:
        return _out("wrong_type", f"the analysis is a {str(calculator).replace('_', ' ')}; a {_label(decision)} "
                                  f"decision needs a {want.replace('_', ' ')} analysis")
    result = body.get("result") or {}
    if outcome == "failure_finding":
        return _failure_finding(decision, result)
    if outcome == "fixed_interval":
        return _fixed_interval(decision, result)
    if result.get("beneficial"):
        return _out("contradicted", f"the analysis finds preventive replacement pays (cost rate "
                                    f"{_g(result['optimal_cost_rate'])} at age {_g(result['optimal_time'])} vs "
                                    f"{_g(result['run_to_failure_cost_rate'])} running to failure)")
    why = result.get("reason") or "no replacement age costs less than running to failure"
    return _out("supported", f"the analysis finds preventive replacement does not pay: {why}")


def _label(decision: Mapping[str, Any]) -> str:
    return f"rtf ({decision['rtf_basis']})" if decision["outcome"] == "rtf" else decision["outcome"]


def _param(body: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    return next((p for p in body.get("params") or () if p.get("name") == name), None)


def _hazard(body: Mapping[str, Any]) -> dict[str, Any]:
    kind = body.get("kind")
    if kind == "recurrent":
        growth = body.get("growth") or {}
        verdict = growth.get("verdict")
        if verdict == "deteriorating":
            return _out("contradicted", f"the recurrent model shows deterioration ({growth.get('on')} interval "
                                        f"{_interval(growth)} lies above {_one(growth)}): failures crowd in with age")
        if verdict in ("improving", "no evidence"):
            return _out("supported", f"the recurrent model shows no deterioration ({growth.get('on')} interval "
                                     f"{_interval(growth)}): {growth.get('reading')}")
        return _out("wrong_type", f"a {body.get('distribution')} recurrent model gives no growth verdict: fit "
                                  "crow_amsaa or loglinear to test for deterioration")
    if kind != "distribution":
        return _out("wrong_type", f"a {kind} model says nothing about the hazard of this failure mode")
    dist = body.get("distribution")
    if dist == "exponential":
        return _out("supported", "the exponential model has a constant hazard: no age-based task helps")
    name = SHAPE.get(str(dist))
    p = None if name is None else _param(body, name)
    if p is None:
        return _out("wrong_type", f"a {dist} model cannot show whether the hazard rises: fit a weibull or "
                                  "exponential life model, or a recurrent model")
    ci = p.get("ci")
    symbol = "β" if dist == "weibull" else "the gamma shape"
    if not ci or ci[0] is None:
        return _out("contradicted", f"{symbol} = {_g(p['value'])} has no interval, so the data cannot show the "
                                    "hazard is not rising")
    lo, hi = ci[0], ci[1]
    if lo <= 1:
        return _out("supported", f"{symbol} interval [{_g(lo)}, {_g(hi)}] reaches 1 or below: the hazard is not "
                                 "significantly increasing")
    return _out("contradicted", f"{symbol} interval [{_g(lo)}, {_g(hi)}] lies above 1: the hazard rises with age "
                                "(wear-out), so an age-based task may pay")


def _interval(growth: Mapping[str, Any]) -> str:
    iv = growth.get("interval") or [None, None]
    return "[" + ", ".join("?" if v is None else _g(v) for v in iv) + "]"


def _one(growth: Mapping[str, Any]) -> str:
    return "0" if growth.get("on") == "g1" else "1"


def _in_unit(decision: Mapping[str, Any], unit: str | None) -> float | None:
    return convert(float(decision["interval"]), decision["interval_unit"], unit)


def _units(decision: Mapping[str, Any], unit: str | None, what: str) -> dict[str, Any]:
    return _out("wrong_type", f"the {what} is in {unit or 'no stated unit'} and the interval in "
                              f"{decision['interval_unit']}: these units cannot be compared")


def _fixed_interval(decision: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    if not result.get("beneficial") or result.get("optimal_time") is None:
        why = result.get("reason") or "no replacement age costs less than running to failure"
        return _out("contradicted", f"the analysis finds scheduled replacement does not pay: {why}")
    unit = result.get("unit")
    t = _in_unit(decision, unit)
    if t is None:
        return _units(decision, unit, "analysis")
    t_opt, c_opt = float(result["optimal_time"]), float(result["optimal_cost_rate"])
    where = f"{_g(decision['interval'])} {decision['interval_unit']}"
    optimum = f"the optimum {_g(t_opt)} {unit}"
    curve = result.get("curve") or {}
    ts, cs = list(curve.get("t") or ()), list(curve.get("cost_rate") or ())
    if len(ts) >= 2 and len(ts) == len(cs) and ts[0] <= t <= ts[-1]:
        k = min(max(bisect.bisect_left(ts, t), 1), len(ts) - 1)
        w = (t - ts[k - 1]) / (ts[k] - ts[k - 1]) if ts[k] > ts[k - 1] else 0.0
        c = cs[k - 1] + w * (cs[k] - cs[k - 1])
        excess = c / c_opt - 1.0
        extra = {"cost_rate": c, "optimal_cost_rate": c_opt, "excess": excess}
        if excess <= COST_TOLERANCE:
            return _out("supported", f"replacing every {where} costs {100 * excess:.1f}% more per unit time than "
                                     f"{optimum} (within 5%)", **extra)
        return _out("contradicted", f"replacing every {where} costs {100 * excess:.1f}% more per unit time than "
                                    f"{optimum} (more than 5%)", **extra)
    ratio = t / t_opt - 1.0
    if abs(ratio) <= AGE_TOLERANCE:
        return _out("supported", f"{where} is within ±20% of {optimum} (beyond the saved cost curve)")
    return _out("contradicted", f"{where} is {100 * abs(ratio):.0f}% {'above' if ratio > 0 else 'below'} {optimum}, "
                                "beyond the saved cost curve")


def _failure_finding(decision: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    target = result.get("target_availability")
    limit = result.get("interval")
    if limit is None:
        return _out("contradicted", f"the analysis finds no test interval that meets availability {target}")
    unit = result.get("unit")
    t = _in_unit(decision, unit)
    if t is None:
        return _units(decision, unit, "analysis")
    where = f"{_g(decision['interval'])} {decision['interval_unit']}"
    if t <= float(limit) * (1 + 1e-9):
        return _out("supported", f"testing every {where} meets availability {target} (longest interval "
                                 f"{_g(limit)} {unit})")
    return _out("contradicted", f"testing every {where} misses availability {target}: test at most every "
                                f"{_g(limit)} {unit}")


def _pf(decision: Mapping[str, Any], body: Mapping[str, Any]) -> dict[str, Any]:
    pf = body.get("pf_interval")
    if isinstance(pf, (int, float)) and not isinstance(pf, bool):
        pf = {"value": pf}
    if isinstance(pf, Mapping) and pf.get("value") is None and pf.get("potential_failure") is not None:
        # fitted with a P level, but half the units never get there under the fitted rates
        return _out("wrong_type", "the degradation model's P–F interval has no finite median (most units never "
                                  "reach the threshold under the fitted rates)")
    if not isinstance(pf, Mapping) or pf.get("value") is None:
        return _out("wrong_type", "the degradation model implies no P–F interval (it has no potential-failure "
                                  "level): refit it with one (potential_failure)")
    ci = pf.get("ci") if isinstance(pf.get("ci"), list) and len(pf["ci"]) == 2 else [pf.get("lower"), None]
    lower = ci[0]
    value = lower if lower is not None else pf["value"]
    unit = pf.get("unit") or body.get("unit")
    t = _in_unit(decision, unit)
    if t is None:
        return _units(decision, unit, "degradation model")
    where = f"{_g(decision['interval'])} {decision['interval_unit']}"
    if lower is not None:
        spread = f", {100 * float(pf['confidence']):g}% of units between {_g(lower)} and {_g(ci[1])} {unit}" if (
            pf.get("confidence") and ci[1] is not None) else ""
        which = f"the P–F interval's lower bound {_g(lower)} {unit} (median {_g(pf['value'])} {unit}{spread})"
    else:
        which = f"the P–F interval ({_g(value)} {unit})"
    if float(value) > t:
        return _out("supported", f"inspecting every {where} is shorter than {which}: a defect is caught before it "
                                 "fails", pf_interval=float(value))
    return _out("contradicted", f"inspecting every {where} is not shorter than {which}: a defect can fail between "
                                "inspections", pf_interval=float(value))
