"""Reliability demonstration-test planning from the spec's request: any one unknown solved.

Three kinds of test, one request shape:

- Attribute (binomial): n units each run one mission and pass with at most f failures
  (`bathtub.strategy.attribute`). Weibayes: the same with m missions per unit and a known
  Weibull shape β, so a unit fails with p = 1 − R^{m^β}.
- Constant rate (`method` mtbf): total time on test T with at most f failures shows an MTBF
  through the χ²/Poisson identities (`bathtub.strategy.constant_rate`), one- or two-sided,
  time- or failure-terminated.
- Sequential (`method` sequential): Wald's probability-ratio test of the MTBF with MIL-HDBK-781's
  truncation (`bathtub.strategy.sequential`).

`solve_for` names the unknown: units, test_time_per_unit or total_test_time (the test length),
mtbf or reliability (what a test shows), confidence, failures (allowed), or plan (the smallest
plan meeting both the consumer's and the producer's risk). Left out, it is read from what is
missing. Times are in missions when `mission_time` is omitted, otherwise in the mission's unit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from bathtub.errors import InputError
from bathtub.strategy import attribute as att
from bathtub.strategy.constant_rate import chi2_ppf, poisson_cdf
from bathtub.strategy.demonstration_ask import Ask
from bathtub.strategy.guard import answered
from bathtub.strategy.inputs import MAX_FAILURES, integer, number, probability
from bathtub.strategy.rate_plans import fmt as _fmt
from bathtub.strategy.rate_plans import mtbf_test_plan, rate_plan, sequential_plan

__all__ = ["MAX_FAILURES", "chi2_ppf", "demonstration_test", "mtbf_test_plan", "poisson_cdf"]

METHODS = ("binomial", "weibayes", "mtbf", "sequential")
SOLVES = ("units", "test_time_per_unit", "total_test_time", "mtbf", "reliability", "confidence", "failures", "plan")
# Across `shape_interval`, a plan whose needs vary by more than this ratio earns a warning.
SHAPE_WARNING_RATIO = 1.25


@answered
def demonstration_test(
    reliability: Any = None,
    confidence: Any = None,
    mission_time: Any = None,
    failures: Any = None,
    test_multiple: Any = None,
    shape: Any = None,
    units: Any = None,
    method: Any = None,
    mtbf: Any = None,
    design_reliability: Any = None,
    b_life: Any = None,
    shape_interval: Any = None,
    unit: str | None = None,
    design_mtbf: Any = None,
    *,
    solve_for: Any = None,
    total_test_time: Any = None,
    test_time_per_unit: Any = None,
    consumer_risk: Any = None,
    producer_risk: Any = None,
    discrimination_ratio: Any = None,
    sided: Any = "one",
    termination: Any = "time",
) -> dict[str, Any]:
    """Plan or read a reliability demonstration test from the spec's request fields.

    Returns {method, solve_for, units, test_time_per_unit, total_test_time, failures,
    demonstrated_reliability, consumer_risk, summary, assumptions, tradeoff} plus, where they
    apply: `confidence` (used or solved), `time_unit`, `mtbf`, `demonstrated_mtbf` and
    `mtbf_upper` (constant rate), `reliability_upper` (two-sided), `pass_probability` and
    `producer_risk` (with a design value), `operating_characteristic` (chance of passing
    against the true MTBF or reliability), `sequential` (method sequential),
    `shape_sensitivity` and `warning` (with `shape_interval`). `consumer_risk` is the chance
    that a population exactly at the requirement passes.
    """
    ask = _ask(reliability, confidence, mission_time, failures, test_multiple, shape, units, mtbf,
               design_reliability, b_life, shape_interval, unit, design_mtbf, solve_for, total_test_time,
               test_time_per_unit, consumer_risk, producer_risk, discrimination_ratio, sided, termination, method)
    if method not in (None, "auto", *METHODS):
        raise InputError("method", f"must be one of {', '.join(METHODS)}")
    if method in (None, "auto"):
        rate_inputs = (mtbf, design_mtbf, total_test_time, discrimination_ratio)
        method = "mtbf" if any(v is not None for v in rate_inputs) or solve_for == "mtbf" else None
    if method == "sequential":
        return _ordered(sequential_plan(ask))
    if method == "mtbf":
        if ask.shape_interval is not None:
            raise InputError("shape_interval", "applies to Weibull plans, not to method mtbf (constant rate)")
        return _ordered(rate_plan(ask))
    if ask.termination != "time":
        raise InputError("termination", "applies to constant-rate tests (method mtbf)")
    if method == "weibayes" and ask.shape is None:
        raise InputError("shape", "required for method weibayes")
    if ask.design_mtbf is not None:
        raise InputError("design_mtbf", "applies to method mtbf only; use design_reliability")
    return _ordered(_attribute_plan(ask))


def _ask(reliability: Any, confidence: Any, mission_time: Any, failures: Any, test_multiple: Any, shape: Any,
         units: Any, mtbf: Any, design_reliability: Any, b_life: Any, shape_interval: Any, unit: str | None,
         design_mtbf: Any, solve_for: Any, total_test_time: Any, test_time_per_unit: Any, consumer_risk: Any,
         producer_risk: Any, discrimination_ratio: Any, sided: Any, termination: Any, method: Any) -> Ask:
    if solve_for is not None and solve_for not in SOLVES:
        raise InputError("solve_for", f"must be one of {', '.join(SOLVES)}")
    if sided not in ("one", "two"):
        raise InputError("sided", "must be one or two")
    if termination not in ("time", "failure"):
        raise InputError("termination", "must be time or failure")
    c = None if confidence is None else probability(confidence, "confidence")
    if consumer_risk is not None:
        beta = probability(consumer_risk, "consumer_risk")
        if c is not None and abs(c - (1.0 - beta)) > 1e-12:
            raise InputError("consumer_risk", "give confidence or consumer_risk (= 1 − confidence), not both")
        c = 1.0 - beta
    mission = None if mission_time is None else number(mission_time, "mission_time", low=0.0, low_inclusive=False)
    beta_shape = None if shape is None else number(shape, "shape", low=0.0, low_inclusive=False)
    ratio = None
    if discrimination_ratio is not None:
        ratio = number(discrimination_ratio, "discrimination_ratio")
        if ratio <= 1.0:
            raise InputError("discrimination_ratio", "must be above 1 (design MTBF over required MTBF)")
    return Ask(
        reliability=_required_reliability(reliability, b_life),
        confidence=c if c is not None else 0.95,
        confidence_given=c is not None,
        failures=None if failures is None else integer(failures, "failures", high=MAX_FAILURES),
        mission=mission,
        test_multiple=None if test_multiple is None else number(test_multiple, "test_multiple", low=0.0,
                                                                 low_inclusive=False),
        test_time_per_unit=None if test_time_per_unit is None else number(
            test_time_per_unit, "test_time_per_unit", low=0.0, low_inclusive=False),
        units=None if units is None else integer(units, "units", low=1),
        shape=beta_shape,
        mtbf=mtbf,
        design_reliability=None if design_reliability is None else probability(design_reliability,
                                                                                 "design_reliability"),
        design_mtbf=None if design_mtbf is None else number(design_mtbf, "design_mtbf", low=0.0, low_inclusive=False),
        discrimination_ratio=ratio,
        producer_risk=None if producer_risk is None else probability(producer_risk, "producer_risk"),
        total_test_time=None if total_test_time is None else number(total_test_time, "total_test_time", low=0.0,
                                                                     low_inclusive=False),
        solve_for=solve_for,
        sided=sided,
        termination=termination,
        shape_interval=_shape_interval(shape_interval, beta_shape),
        unit=unit,
    )


def _required_reliability(reliability: Any, b_life: Any) -> float | None:
    if b_life is not None:
        b = number(b_life, "b_life", low=0.0, low_inclusive=False, high=100.0, high_inclusive=False)
        if reliability is not None and abs(probability(reliability, "reliability") - (1.0 - b / 100.0)) > 1e-12:
            raise InputError("b_life", "give reliability or b_life, not both")
        return 1.0 - b / 100.0
    return None if reliability is None else probability(reliability, "reliability")


def _shape_interval(value: Any, beta: float | None) -> tuple[float, float] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise InputError("shape_interval", "must be an array of 2 numbers [lower, upper]")
    lo = number(value[0], "shape_interval[0]", low=0.0, low_inclusive=False)
    hi = number(value[1], "shape_interval[1]", low=0.0, low_inclusive=False)
    if not lo < hi:
        raise InputError("shape_interval", "lower must be below upper")
    if beta is None:
        raise InputError("shape", "required with shape_interval (the assumed shape inside it)")
    if not lo <= beta <= hi:
        raise InputError("shape_interval", "must contain shape")
    return lo, hi


# --- attribute and Weibayes tests ---------------------------------------------------------------


def _attribute_solve(ask: Ask, m_given: float | None) -> str:
    if ask.solve_for is not None:
        if ask.solve_for in ("mtbf", "total_test_time"):
            raise InputError("solve_for", f"{ask.solve_for} applies to constant-rate tests (method mtbf)")
        return ask.solve_for
    if ask.producer_risk is not None:
        return "plan"
    if ask.units is not None and m_given is not None:
        if ask.reliability is None:
            return "reliability"
        raise InputError("solve_for", "units, the test length per unit and reliability are all given: say what to "
                                      "solve (confidence or failures)")
    return "units" if ask.units is None else "test_time_per_unit"


def _attribute_plan(ask: Ask) -> dict[str, Any]:
    m_given = ask.test_multiple
    if ask.test_time_per_unit is not None:
        if m_given is not None:
            raise InputError("test_time_per_unit", "give test_multiple or test_time_per_unit, not both")
        m_given = ask.test_time_per_unit / (ask.mission if ask.mission is not None else 1.0)
    solve = _attribute_solve(ask, m_given)
    if m_given is not None and m_given != 1.0 and ask.shape is None:
        raise InputError("shape", "required when the test length per unit is not one mission")
    if solve == "test_time_per_unit":
        ask.given("test_multiple", ask.test_multiple, solve)
        ask.given("test_time_per_unit", ask.test_time_per_unit, solve)
        if ask.units is None:
            raise InputError("units", "required to solve for test time per unit")
        if ask.shape is None:
            raise InputError("shape", "required to solve for test time per unit when units is given "
                                      "(or use method mtbf)")
    if solve in ("units", "plan"):
        ask.given("units", ask.units, solve)
    if solve != "reliability" and ask.reliability is None:
        raise InputError("reliability", "required (or b_life)")
    if solve == "reliability":
        ask.given("reliability", ask.reliability, solve)
    if solve in ("reliability", "confidence", "failures") and ask.units is None:
        raise InputError("units", f"required to solve for {solve}")
    if solve == "confidence" and ask.confidence_given:
        raise InputError("confidence", "is what solve_for confidence asks for; leave it out")
    if solve in ("failures", "plan"):
        ask.given("failures", ask.failures, solve)
    if ask.sided == "two" and solve == "plan":
        raise InputError("sided", "a plan meeting both risks is one-sided (consumer's and producer's risk)")
    b = ask.shape if ask.shape is not None else 1.0
    c1 = ask.confidence if ask.sided == "one" else (1.0 + ask.confidence) / 2.0
    f = ask.failures if ask.failures is not None else 0
    m = m_given if m_given is not None else 1.0
    r = ask.reliability
    n = ask.units
    out: dict[str, Any] = {}
    if solve == "units":
        n = att.binomial_units(r, c1, f, m, b)
    elif solve == "test_time_per_unit":
        if n <= f:
            raise InputError("units", f"must exceed the failures allowed ({f})")
        m = att.test_multiple_for_units(r, c1, n, f, b)
    elif solve == "plan":
        if ask.design_reliability is None:
            raise InputError("design_reliability", "required for a plan meeting both risks")
        if ask.producer_risk is None:
            raise InputError("producer_risk", "required for a plan meeting both risks")
        f, n = att.both_risks_plan(r, ask.design_reliability, 1.0 - ask.confidence, ask.producer_risk, m, b,
                                   max_failures=MAX_FAILURES)
    elif solve == "failures":
        f = att.failures_allowed(n, r, c1, m, b)
    if n is not None and n <= f:
        raise InputError("units", f"must exceed the failures allowed ({f})")
    confidence = ask.confidence
    if solve == "confidence":
        c1 = att.confidence_reached(n, f, r, m, b)
        confidence = c1 if ask.sided == "one" else _two_sided_confidence(c1)
    shown = att.demonstrated_reliability(n, f, c1, m, b)
    if r is None:
        r = shown
    name = "weibayes" if ask.shape is not None and (ask.units is not None or m != 1.0) else "binomial"
    scale = ask.mission if ask.mission is not None else 1.0
    out.update({
        "method": name, "solve_for": solve, "units": n, "test_time_per_unit": m * scale,
        "total_test_time": n * m * scale, "failures": f, "demonstrated_reliability": shown,
        "consumer_risk": att.pass_probability(n, f, att.p_fail(r, m, b)), "confidence": confidence,
        "time_unit": ask.time_unit,
    })
    if ask.sided == "two":
        out["reliability_upper"] = att.reliability_upper(n, f, c1, m, b)
    if ask.design_reliability is not None:
        out["pass_probability"] = att.pass_probability(n, f, att.p_fail(ask.design_reliability, m, b))
        out["producer_risk"] = 1.0 - out["pass_probability"]
    out["operating_characteristic"] = _attribute_oc(n, f, m, b, r, ask.design_reliability)
    out["tradeoff"] = _attribute_tradeoff(ask, solve, r, c1, f, n, m, b, scale)
    if ask.shape_interval is not None:
        _add_shape_sensitivity(out, ask, r, c1, f, n, m, solve)
    out["summary"] = _attribute_summary(out, r, confidence, m, ask)
    out["assumptions"] = _attribute_assumptions(name, b, m, ask)
    return out


def _two_sided_confidence(c1: float) -> float:
    if c1 <= 0.5:
        raise InputError("sided", f"the test shows the requirement only at one-sided confidence {c1:.4g} (< 0.5): "
                                  "no two-sided interval at positive confidence has it as its lower end")
    return 2.0 * c1 - 1.0


def _attribute_oc(n: int, f: int, m: float, b: float, r: float, r_design: float | None) -> dict[str, list[float]]:
    """Chance of passing against the true mission reliability, on a grid of failure probabilities
    from a tenth to ten times the requirement's (plus the requirement and design themselves)."""
    q = 1.0 - r
    grid = {min(max(q * 10 ** (k / 6.0), 1e-12), 1.0 - 1e-12) for k in range(-6, 7)}
    grid.add(q)
    if r_design is not None:
        grid.add(1.0 - r_design)
    rs = sorted(1.0 - x for x in grid)
    return {"true_reliability": rs, "pass_probability": [att.pass_probability(n, f, att.p_fail(x, m, b)) for x in rs]}


def _attribute_tradeoff(ask: Ask, solve: str, r: float, c1: float, f: int, n: int, m: float, b: float,
                        scale: float) -> dict[str, Any]:
    fails = list(range(max(4, f + 3)))
    tu = ask.time_unit

    def column(ff: int) -> dict[str, Any]:
        """The same question asked with ff failures allowed: the plan or what the test shows."""
        if solve in ("units", "plan"):
            nn, mm = att.binomial_units(r, c1, ff, m, b), m
        elif ask.units is not None and ask.units <= ff:
            return {}
        elif solve == "test_time_per_unit":
            nn, mm = n, att.test_multiple_for_units(r, c1, n, ff, b)
        else:
            nn, mm = n, m
        col = {"units": nn, "per_unit": mm * scale, "total": nn * mm * scale,
               "shown": att.demonstrated_reliability(nn, ff, c1, mm, b),
               "confidence": att.confidence_reached(nn, ff, r, mm, b)}
        if ask.design_reliability is not None:
            col["design"] = att.pass_probability(nn, ff, att.p_fail(ask.design_reliability, mm, b))
        return col

    cols = [column(ff) for ff in fails]
    labels = {"units": "Units needed", "plan": "Units needed",
              "test_time_per_unit": f"Test time per unit ({tu})"}
    rows = []
    if solve in labels:
        key = "units" if solve != "test_time_per_unit" else "per_unit"
        rows.append({"label": labels[solve], "values": [col.get(key) for col in cols]})
        rows.append({"label": f"Total test time ({tu})", "values": [col.get("total") for col in cols]})
    else:
        rows.append({"label": "Reliability shown", "values": [col.get("shown") for col in cols]})
        rows.append({"label": "Confidence reached at the required reliability",
                     "values": [col.get("confidence") for col in cols]})
    if ask.design_reliability is not None:
        rows.append({"label": f"Chance of passing at design reliability {_fmt(ask.design_reliability)}",
                     "values": [col.get("design") for col in cols]})
    return {"failures": fails, "rows": rows}


def _add_shape_sensitivity(out: dict[str, Any], ask: Ask, r: float, c: float, f: int, n: int, m: float,
                           solve: str) -> None:
    assert ask.shape_interval is not None and ask.shape is not None
    lo, hi = ask.shape_interval
    beta = ask.shape
    shapes = sorted({lo, math.sqrt(lo * beta), beta, math.sqrt(beta * hi), hi})
    plan: Callable[[float], tuple[int, float]]
    if solve == "test_time_per_unit":
        def plan(s: float) -> tuple[int, float]:
            return n, att.test_multiple_for_units(r, c, n, f, s)
    else:
        def plan(s: float) -> tuple[int, float]:
            return att.binomial_units(r, c, f, m, s), m
    rows = []
    for s in shapes:
        nn, mm = plan(s)
        # what the plan as designed would really show if the shape were s
        rows.append({"shape": s, "units": nn, "test_multiple": mm,
                     "demonstrated_reliability": att.demonstrated_reliability(n, f, c, m, s)})
    out["shape_sensitivity"] = rows
    key = "test_multiple" if solve == "test_time_per_unit" else "units"
    needs = [row[key] for row in rows]
    ratio = max(needs) / min(needs)
    worst_row = min(rows, key=lambda x: x["demonstrated_reliability"])
    if ratio > SHAPE_WARNING_RATIO:
        what = "test time per unit" if solve == "test_time_per_unit" else "units needed"
        out["warning"] = (
            f"The shape is too poorly known for this plan: across shapes {_fmt(lo)}–{_fmt(hi)} the {what} "
            f"varies by a factor {ratio:.2f}, and if the shape is {_fmt(worst_row['shape'])} "
            f"a pass shows only reliability {_fmt(worst_row['demonstrated_reliability'])} instead of {_fmt(r)}. "
            "Test at one mission per unit (test_multiple 1, where the shape does not matter) or narrow the shape."
        )


def _attribute_summary(out: dict[str, Any], r: float, c: float, m: float, ask: Ask) -> str:
    each = f"{_fmt(out['test_time_per_unit'])} {ask.time_unit}" if ask.mission is not None else \
        f"{_fmt(m)} mission{'s' if m != 1 else ''}"
    allowed = "no failures" if out["failures"] == 0 else f"at most {out['failures']} failure" + \
        ("s" if out["failures"] > 1 else "")
    side = "" if ask.sided == "one" else " (two-sided)"
    text = f"Test {out['units']} units for {each} each with {allowed}. "
    if out["solve_for"] == "reliability":
        text += (f"Passing shows mission reliability of at least {_fmt(out['demonstrated_reliability'])} at "
                 f"{_fmt(100 * c)}% confidence{side}.")
    else:
        text += (f"Passing shows mission reliability of at least {_fmt(r)} at {_fmt(100 * c)}% confidence{side} "
                 f"(exactly {_fmt(out['demonstrated_reliability'])}).")
    if out["solve_for"] == "failures":
        text += " That is the most failures these units may see and still show it."
    if "pass_probability" in out:
        text += f" A design of the given reliability passes with probability {_fmt(out['pass_probability'])}."
    if out["solve_for"] == "plan":
        text += (f" This is the smallest plan meeting both risks: consumer's {_fmt(out['consumer_risk'])}, "
                 f"producer's {_fmt(out['producer_risk'])}.")
    if "warning" in out:
        text += " Warning: the plan depends strongly on the assumed shape."
    return text


def _attribute_assumptions(name: str, beta: float, m: float, ask: Ask) -> list[str]:
    out = ["Units are independent and alike; each either survives its test or fails (pass/fail).",
           "Test conditions reproduce the mission's stresses."]
    if name == "weibayes":
        out.append(f"Weibull life with known shape {_fmt(beta)}: surviving {_fmt(m)} missions counts as "
                   f"surviving with reliability R^{_fmt(m**beta)} (R^(m^shape)).")
    if ask.sided == "two":
        out.append("Two-sided: the interval's lower end is a one-sided bound at (1 + confidence)/2.")
    if ask.mission is None:
        out.append("Times are in missions (no mission_time given).")
    elif ask.unit:
        out.append(f"Times are in {ask.unit}.")
    return out


_ORDER = ("method", "solve_for", "units", "test_time_per_unit", "total_test_time", "failures",
          "demonstrated_reliability", "consumer_risk", "summary", "assumptions", "tradeoff")


def _ordered(out: dict[str, Any]) -> dict[str, Any]:
    """Spec fields first, in the spec's order, then the documented extras."""
    return {**{k: out[k] for k in _ORDER}, **{k: v for k, v in out.items() if k not in _ORDER}}
