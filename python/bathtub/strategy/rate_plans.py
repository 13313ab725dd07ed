"""The answer records of constant-rate (method mtbf) and sequential demonstration tests.

`bathtub.strategy.demonstration` checks the request and hands the constant-rate and sequential
cases here; the mathematics is in `constant_rate` and `sequential`.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from bathtub.errors import InputError
from bathtub.strategy import constant_rate as cr
from bathtub.strategy import sequential as sq
from bathtub.strategy.demonstration_ask import Ask
from bathtub.strategy.inputs import MAX_FAILURES, number, probability

LENGTH_SOLVES = ("units", "test_time_per_unit", "total_test_time")
CONFIDENCE_ROUNDS_RULE = "too close to 0 for a sequential test"


def fmt(x: float) -> str:
    return f"{x:.4g}"


def mtbf_test_plan(mtbf_required: float, mtbf_design: float, consumer_risk: float,
                   producer_risk: float, max_failures: int = 100_000) -> dict[str, Any]:
    """Time-terminated constant-rate test meeting both risks (textbook, e.g. MIL-HDBK-781).

    The smallest f for which the test of length T = θ_req·χ²_{1−β, 2f+2}/2 passes a design of
    MTBF θ_design with probability at least 1 − α (producer's risk ≤ α). Returns {failures,
    total_test_time, consumer_risk, producer_risk}.
    """
    th_r = number(mtbf_required, "mtbf_required", low=0.0, low_inclusive=False)
    th_d = number(mtbf_design, "mtbf_design", low=0.0, low_inclusive=False)
    beta = probability(consumer_risk, "consumer_risk")
    alpha = probability(producer_risk, "producer_risk")
    if th_d <= th_r:
        raise InputError("mtbf_design", "must exceed mtbf_required")
    f, t = cr.both_risks_plan(th_r, th_d, beta, alpha, max_failures)
    return {"failures": f, "total_test_time": t, "consumer_risk": cr.pass_probability(f, t, th_r),
            "producer_risk": 1.0 - cr.pass_probability(f, t, th_d)}


def _required_mtbf(ask: Ask) -> float | None:
    if ask.mtbf is not None:
        return number(ask.mtbf, "mtbf", low=0.0, low_inclusive=False)
    if ask.reliability is not None and ask.mission is not None:
        log_r = math.log(ask.reliability)  # 0 when a b_life of 5e-324 leaves R = 1 - b/100 at 1.0
        theta = -ask.mission / log_r if log_r < 0.0 else math.inf  # R = e^{-t/θ}
        if not (math.isfinite(theta) and theta > 0):
            raise InputError("mission_time", "with this reliability gives no finite, positive MTBF")
        return theta
    return None


def _design_mtbf(ask: Ask, theta: float | None) -> float | None:
    if ask.design_mtbf is not None:
        return ask.design_mtbf
    if ask.design_reliability is not None:
        if ask.mission is None:
            raise InputError("mission_time", "required with design_reliability for method mtbf")
        # a design reliability near 1 over a long mission: t/(-ln R) can pass the largest float
        theta_d = -ask.mission / math.log(ask.design_reliability)
        _representable(theta_d, "design_reliability", "the design MTBF")
        return theta_d
    if ask.discrimination_ratio is not None and theta is not None:
        # a ratio of 1e307 on a required MTBF of 1e305 is no float: refused here, not answered as null
        theta_d = ask.discrimination_ratio * theta
        _representable(theta_d, "discrimination_ratio", "the design MTBF")
        return theta_d
    return None


def _given_total(ask: Ask) -> float | None:
    if ask.test_time_per_unit is not None:
        if ask.total_test_time is not None:
            raise InputError("test_time_per_unit", "give total_test_time, or units with test_time_per_unit, not both")
        if ask.units is None:
            raise InputError("units", "required with test_time_per_unit (the total is units × time per unit)")
        return ask.units * ask.test_time_per_unit
    return ask.total_test_time


def _rate_solve(ask: Ask, theta: float | None, total: float | None) -> str:
    if ask.solve_for is not None:
        return ask.solve_for
    if ask.producer_risk is not None:
        return "plan"
    if total is not None:
        if theta is None:
            return "mtbf"
        raise InputError("solve_for", "mtbf and the test length are both given: say what to solve "
                                      "(confidence or failures)")
    if ask.units is not None:
        return "test_time_per_unit"
    return "units" if ask.mission is not None else "total_test_time"


def rate_plan(ask: Ask) -> dict[str, Any]:
    """Constant-rate test: solve the one unknown, then report the plan, its OC and trade-off."""
    theta = _required_mtbf(ask)
    total = _given_total(ask)
    solve = _rate_solve(ask, theta, total)
    theta_d = _design_mtbf(ask, theta)
    if ask.design_mtbf is not None and ask.discrimination_ratio is not None:
        raise InputError("discrimination_ratio", "give design_mtbf or discrimination_ratio, not both")
    if solve in ("mtbf", "reliability"):
        if ask.mtbf is not None:
            raise InputError("mtbf", f"is what solve_for {solve} asks for; leave it out")
        if solve == "reliability" and ask.mission is None:
            raise InputError("mission_time", "required to solve for the reliability shown over a mission")
        theta = None
    elif theta is None:
        raise InputError("mtbf", "required with method mtbf (or give reliability with mission_time)")
    if solve in ("mtbf", "reliability", "confidence", "failures") and total is None:
        raise InputError("total_test_time", f"required to solve for {solve}")
    if solve in (*LENGTH_SOLVES, "plan") and ask.total_test_time is not None:
        raise InputError("total_test_time", f"is what solve_for {solve} asks for; leave it out")
    if solve == "confidence" and ask.confidence_given:
        raise InputError("confidence", "is what solve_for confidence asks for; leave it out")
    if solve in ("failures", "plan"):
        ask.given("failures", ask.failures, solve)
    if ask.test_multiple is not None and ask.units is not None:
        raise InputError("test_multiple", "give units or test_multiple, not both: with units the test time is solved")
    c = ask.confidence
    f = ask.failures if ask.failures is not None else (1 if ask.termination == "failure" else 0)
    term, sided = ask.termination, ask.sided
    upper = None
    if solve in LENGTH_SOLVES:
        total = cr.test_time(theta, c, f, term, sided)
    elif solve == "plan":
        if theta_d is None:
            raise InputError("design_mtbf", "required for a plan meeting both risks (or discrimination_ratio, "
                                            "or design_reliability with mission_time)")
        if ask.producer_risk is None:
            raise InputError("producer_risk", "required for a plan meeting both risks")
        if term != "time" or sided != "one":
            raise InputError("termination" if term != "time" else "sided",
                             "a plan meeting both risks is a one-sided, time-terminated test")
        f, total = cr.both_risks_plan(theta, theta_d, 1.0 - c, ask.producer_risk, MAX_FAILURES)
    elif solve in ("mtbf", "reliability"):
        theta, upper = cr.mtbf_bounds(total, f, c, term, sided)
    elif solve == "confidence":
        c = cr.confidence_reached(theta, total, f, term, sided)
    elif solve == "failures":
        f = cr.failures_allowed(theta, total, c, term, sided)
    assert theta is not None and total is not None
    _representable(theta, "mtbf" if solve not in ("mtbf", "reliability") else "total_test_time", "the MTBF")
    _representable(total, "total_test_time" if ask.total_test_time is not None else "mtbf", "the test time")
    allowed = f if term == "time" else f - 1  # a failure-terminated test passes with fewer than f by T
    n, per = _split(ask, total)
    out: dict[str, Any] = {
        "method": "mtbf", "solve_for": solve, "units": n, "test_time_per_unit": per, "total_test_time": total,
        "failures": f,
        "demonstrated_reliability": math.exp(-ask.mission / theta) if ask.mission is not None else None,
        "consumer_risk": cr.pass_probability(allowed, total, theta),
        "confidence": c, "time_unit": ask.unit or "time units", "mtbf": theta, "demonstrated_mtbf": theta,
    }
    if upper is not None:
        out["mtbf_upper"] = upper
    if theta_d is not None:
        out["design_mtbf"] = theta_d
        out["pass_probability"] = cr.pass_probability(allowed, total, theta_d)
        out["producer_risk"] = 1.0 - out["pass_probability"]
    out["operating_characteristic"] = cr.operating_characteristic(allowed, total, cr.oc_grid(theta, theta_d))
    out["tradeoff"] = _rate_tradeoff(ask, solve, theta, theta_d, total, f, c)
    out["summary"] = _rate_summary(out, ask, theta_d)
    out["assumptions"] = _rate_assumptions(ask)
    return out


def _representable(value: float, field: str, what: str) -> None:
    """Extreme inputs (an MTBF of 1e308, a confidence of 1e-300) can leave floating point: say so."""
    # a subnormal value (an MTBF of 5e-324) is as unusable as 0: its ratios divide by zero
    if not (math.isfinite(value) and value >= sys.float_info.min):
        raise InputError(field, f"gives {what} {value!r}, beyond floating point; check the magnitude")


def _split(ask: Ask, total: float) -> tuple[int | None, float | None]:
    """How the total time splits over units: given units share it; with a mission, whole units of
    test_multiple missions each."""
    if ask.units is not None:
        return ask.units, total / ask.units
    if ask.mission is not None:
        per = (ask.test_multiple if ask.test_multiple is not None else 1.0) * ask.mission
        units = total / per if per > 0.0 else math.inf  # test_multiple × mission_time can underflow to 0
        if not math.isfinite(units) or units > 1e15:
            raise InputError("mission_time", "is too short for this test: the units needed leave floating point")
        n = max(math.ceil(units - 1e-9), 1)
        return n, total / n
    return None, None


def _rate_tradeoff(ask: Ask, solve: str, theta: float, theta_d: float | None, total: float, f: int,
                   c: float) -> dict[str, Any]:
    term, sided = ask.termination, ask.sided
    first = 1 if term == "failure" else 0
    fails = list(range(first, max(first + 4, f + 3)))
    tu = ask.unit or "time units"
    rows: list[dict[str, Any]] = []
    if solve in (*LENGTH_SOLVES, "plan"):
        c_plan = c
        times = [cr.test_time(theta, c_plan, ff, term, sided) for ff in fails]
        rows.append({"label": f"Total test time ({tu})", "values": times})
        splits = [_split(ask, t) for t in times]
        if ask.units is not None:
            rows.append({"label": f"Test time per unit ({tu})", "values": [s[1] for s in splits]})
        elif ask.mission is not None:
            rows.append({"label": "Units needed", "values": [s[0] for s in splits]})
    else:
        times = [total] * len(fails)
        rows.append({"label": f"MTBF shown ({tu})", "values": [cr.mtbf_bounds(total, ff, c, term, sided)[0]
                                                              for ff in fails]})
        if solve != "mtbf" and solve != "reliability":
            rows.append({"label": "Confidence reached", "values": [
                cr.chi2_cdf(2.0 * total / theta, cr.lower_dof(ff, term)) if sided == "one" else
                max(2.0 * cr.chi2_cdf(2.0 * total / theta, cr.lower_dof(ff, term)) - 1.0, 0.0) for ff in fails]})
    allowed = [ff if term == "time" else ff - 1 for ff in fails]
    marks = sorted({theta / 2.0, theta, *([theta_d] if theta_d is not None else []),
                    2.0 * max(theta, theta_d or theta)})
    for th in marks:
        what = "required" if th == theta else ("design" if th == theta_d else "true")
        rows.append({"label": f"Chance of passing at {what} MTBF {fmt(th)}",
                     "values": [cr.pass_probability(a, t, th) for a, t in zip(allowed, times, strict=True)]})
    return {"failures": fails, "rows": rows}


def _rate_summary(out: dict[str, Any], ask: Ask, theta_d: float | None) -> str:
    tu = out["time_unit"]
    f = out["failures"]
    side = "" if ask.sided == "one" else " (two-sided)"
    c = out["confidence"]
    if ask.termination == "failure":
        rule = f"run until failure {f}; pass if it comes after {fmt(out['total_test_time'])} {tu}"
    else:
        allowed = "no failures" if f == 0 else f"at most {f} failure" + ("s" if f > 1 else "")
        rule = f"accumulate {fmt(out['total_test_time'])} {tu} of test time in total with {allowed}"
    solve = out["solve_for"]
    if solve in ("mtbf", "reliability"):
        text = (f"A test of {fmt(out['total_test_time'])} {tu} with {f} failure{'s' if f != 1 else ''} shows MTBF of "
                f"at least {fmt(out['mtbf'])} at {fmt(100 * c)}% confidence{side}")
        if "mtbf_upper" in out:
            text += f" (at most {fmt(out['mtbf_upper'])})"
    elif solve == "confidence":
        text = (f"A test of {fmt(out['total_test_time'])} {tu} with {f} failure{'s' if f != 1 else ''} shows MTBF "
                f"{fmt(out['mtbf'])} at {fmt(100 * c)}% confidence{side}")
    elif solve == "failures":
        text = (f"In {fmt(out['total_test_time'])} {tu}, at most {f} failure{'s' if f != 1 else ''} still show MTBF "
                f"{fmt(out['mtbf'])} at {fmt(100 * c)}% confidence{side}")
    else:
        text = (f"{rule[0].upper()}{rule[1:]}: passing shows MTBF of at least {fmt(out['mtbf'])} at "
                f"{fmt(100 * c)}% confidence{side}")
    if out["demonstrated_reliability"] is not None:
        text += f" (mission reliability at least {fmt(out['demonstrated_reliability'])})"
    text += "."
    if out["units"] is not None and solve not in ("mtbf", "reliability", "confidence", "failures"):
        text += f" With {out['units']} units that is {fmt(out['test_time_per_unit'])} {tu} each."
    if theta_d is not None:
        text += f" A design at MTBF {fmt(theta_d)} passes with probability {fmt(out['pass_probability'])}."
    if solve == "plan":
        text += (f" This is the shortest fixed-length plan meeting both risks: consumer's "
                 f"{fmt(out['consumer_risk'])}, producer's {fmt(out['producer_risk'])}.")
    return text


def _rate_assumptions(ask: Ask) -> list[str]:
    tu = ask.unit or "time units"
    out = ["Constant failure rate (exponential lives): only total time on test matters, not how it is split."]
    if ask.termination == "failure":
        out += ["Failure-terminated test: it stops at the given failure; MTBF lower bound 2T/χ²(C, 2·failures).",
                f"Planned as: pass if that failure comes after T = MTBF·χ²(C, 2·failures)/2; times in {tu}."]
    else:
        out += ["Time-terminated test; failed units are repaired or replaced and testing continues.",
                f"Test time T = MTBF·χ²(C, 2·failures + 2)/2; times in {tu}."]
    if ask.sided == "two":
        out.append("Two-sided: the interval's lower end is a one-sided bound at (1 + confidence)/2; "
                   "upper end 2T/χ²((1 − C)/2, 2·failures).")
    return out


def sequential_plan(ask: Ask) -> dict[str, Any]:
    """Wald's sequential test with MIL-HDBK-781 truncation, its exact risks and expected times."""
    for field, value in (("failures", ask.failures), ("total_test_time", ask.total_test_time),
                         ("units", ask.units), ("test_time_per_unit", ask.test_time_per_unit),
                         ("test_multiple", ask.test_multiple)):
        if value is not None:
            raise InputError(field, "does not apply to a sequential test (its length depends on the failures seen)")
    if ask.solve_for not in (None, "plan"):
        raise InputError("solve_for", "a sequential test solves its plan (accept and reject lines)")
    if ask.sided != "one" or ask.termination != "time":
        raise InputError("sided" if ask.sided != "one" else "termination",
                         "a sequential test is one-sided and ends by its own rule")
    theta1 = _required_mtbf(ask)
    if theta1 is None:
        raise InputError("mtbf", "required for a sequential test (or give reliability with mission_time)")
    if ask.design_mtbf is not None and ask.discrimination_ratio is not None:
        raise InputError("discrimination_ratio", "give design_mtbf or discrimination_ratio, not both")
    theta0 = _design_mtbf(ask, theta1)
    if theta0 is None:
        raise InputError("design_mtbf", "required for a sequential test (or discrimination_ratio)")
    if theta0 <= theta1:
        raise InputError("design_mtbf" if ask.design_mtbf is not None else "design_reliability",
                         "must exceed the required mtbf (discrimination ratio above 1)")
    if ask.producer_risk is None:
        raise InputError("producer_risk", "required for a sequential test")
    beta, alpha = 1.0 - ask.confidence, ask.producer_risk
    if beta >= 1.0:  # a confidence below 1e-16 leaves a consumer's risk of 1: Wald's ln((1 − β)/α) is ln 0
        raise InputError("confidence", f"{CONFIDENCE_ROUNDS_RULE} (the consumer's risk 1 − confidence rounds to 1)")
    p = sq.plan(theta1, theta0, beta, alpha)
    acc0, e0 = sq.exact_performance(p, theta0)
    acc1, e1 = sq.exact_performance(p, theta1)
    grid = sorted({*cr.oc_grid(theta1, theta0, points=9)})
    perf = [sq.exact_performance(p, th) for th in grid]
    table = sq.boundary_table(p)
    tu = ask.unit or "time units"
    out: dict[str, Any] = {
        "method": "sequential", "solve_for": "plan", "units": None, "test_time_per_unit": None,
        "total_test_time": p.truncation_time, "failures": p.truncation_failures - 1,
        "demonstrated_reliability": math.exp(-ask.mission / theta1) if ask.mission is not None else None,
        "consumer_risk": acc1, "confidence": ask.confidence, "time_unit": tu, "mtbf": theta1,
        "design_mtbf": theta0, "discrimination_ratio": theta0 / theta1,
        "pass_probability": acc0, "producer_risk": 1.0 - acc0,
        "sequential": {
            "accept_line": {"intercept": p.accept_intercept, "slope": p.slope},
            "reject_line": {"intercept": p.reject_intercept, "slope": p.slope},
            "nominal_risks": {"consumer": beta, "producer": alpha},
            "truncation": {"time": p.truncation_time, "failures": p.truncation_failures,
                           "rule": "MIL-HDBK-781: truncated at the fixed-length plan of the same risks; reject at "
                                   f"failure {p.truncation_failures}, accept at {fmt(p.truncation_time)} {tu}"},
            "expected_test_time": {"at_required": e1, "at_design": e0},
            "boundaries": table,
        },
        "operating_characteristic": {"true_mtbf": grid, "pass_probability": [a for a, _ in perf],
                                     "expected_test_time": [e for _, e in perf]},
    }
    out["tradeoff"] = {"failures": [row["failures"] for row in table], "rows": [
        {"label": f"Reject if this failure comes by ({tu})", "values": [row["reject_if_reached_by"] for row in table]},
        {"label": f"Accept at ({tu}) with this many failures", "values": [row["accept_at"] for row in table]},
    ]}
    out["summary"] = (
        f"Test until a line is crossed: accept when time on test reaches {fmt(p.slope ** -1)} {tu} per failure "
        f"plus {fmt(-p.accept_intercept / p.slope)} {tu}; reject when failures reach {fmt(p.reject_intercept)} + "
        f"{fmt(p.slope)} per {tu}. Truncated at {fmt(p.truncation_time)} {tu} (accept) or failure "
        f"{p.truncation_failures} (reject). Expected time on test {fmt(e0)} {tu} at the design MTBF {fmt(theta0)} and "
        f"{fmt(e1)} {tu} at the required {fmt(theta1)}, against {fmt(p.truncation_time)} {tu} for the fixed-length "
        f"plan. Exact risks of the truncated test: consumer's {fmt(acc1)}, producer's {fmt(1.0 - acc0)}."
    )
    out["assumptions"] = [
        "Constant failure rate (exponential lives); failed units are repaired or replaced and testing continues.",
        f"Wald's boundaries A = (1 − β)/α and B = β/(1 − α) with β = {fmt(beta)}, α = {fmt(alpha)}.",
        "Risks and expected times are computed exactly for the truncated test (no simulation, no Wald "
        "approximation), so they can differ slightly from the nominal risks.",
    ]
    return out
