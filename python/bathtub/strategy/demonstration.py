"""Reliability demonstration-test planning: attribute (binomial), Weibayes and constant-rate tests.

- Attribute test: n units each run one mission; the test passes with at most f failures. It
  demonstrates reliability R at confidence C when Σ_{i≤f} C(n,i)(1−R)^i R^{n−i} ≤ 1 − C; with
  f = 0 this is the textbook n = ln(1 − C)/ln R (rounded up).
- Weibayes (Weibull, shape β known): a unit run m missions survives with R^{m^β} if the mission
  reliability is R, so the same binomial condition holds with p = 1 − R^{m^β}; with f = 0,
  n = ln(1 − C)/(m^β·ln R). Given n units instead, the test length per unit m solves
  R^{m^β} = 1 − p*, p* the one-sided upper Clopper–Pearson bound Beta⁻¹(C; f + 1, n − f).
- Constant-rate (method `mtbf`, time-terminated): total time T = MTBF·χ²_{C, 2f+2}/2
  (MIL-HDBK-781); the test passes with at most f failures in T.

Times are in missions when `mission_time` is omitted, otherwise in the mission's unit.
"""

from __future__ import annotations

import math
from typing import Any

from scipy import special

from bathtub.errors import InputError
from bathtub.strategy.inputs import integer, number, probability

METHODS = ("binomial", "weibayes", "mtbf")
# Across `shape_interval`, a plan whose needs vary by more than this ratio earns a warning.
SHAPE_WARNING_RATIO = 1.25
_MAX_UNITS = 10**9
MAX_FAILURES = 1000  # the trade-off table lists every count up to failures + 2


def zero_failure_units(reliability: float, confidence: float, test_multiple: float = 1.0,
                       shape: float = 1.0) -> int:
    """Textbook success-run sample size: ceil(ln(1 − C) / (m^β · ln R))."""
    x = math.log1p(-confidence) / (_missions_exponent(test_multiple, shape) * math.log(reliability))
    n = math.ceil(x - 1e-9)  # tolerate rounding when x is a whole number
    return max(n, 1)


def _missions_exponent(test_multiple: float, shape: float) -> float:
    """m^β, refused past the floats (a test of 1e200 missions with shape 3 means nothing)."""
    try:
        return test_multiple**shape
    except OverflowError:
        raise InputError("test_multiple", "test_multiple ** shape is beyond floating point") from None


def _p_fail(reliability: float, test_multiple: float, shape: float) -> float:
    """Chance a unit fails a test of m missions when its mission reliability is R: 1 − R^{m^β}."""
    return -math.expm1(_missions_exponent(test_multiple, shape) * math.log(reliability))


def pass_probability(units: int, failures: int, p_fail: float) -> float:
    """Chance of at most `failures` failures among `units` independent units (binomial cdf)."""
    return float(special.bdtr(failures, units, p_fail))


def binomial_units(reliability: float, confidence: float, failures: int = 0, test_multiple: float = 1.0,
                   shape: float = 1.0) -> int:
    """Smallest n with P(at most f failures | n, 1 − R^{m^β}) ≤ 1 − C."""
    p = _p_fail(reliability, test_multiple, shape)
    target = 1.0 - confidence
    if p <= 0.0:
        raise InputError("reliability", "too close to 1 to be demonstrated with this test length")
    hi = max(failures + 1, 1)
    while pass_probability(hi, failures, p) > target:
        hi *= 2
        if hi > _MAX_UNITS:
            raise InputError("reliability", f"needs more than {_MAX_UNITS} units; relax reliability or confidence")
    lo = max(failures, hi // 2)  # pass_probability(lo) > target or lo == failures (certain pass)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pass_probability(mid, failures, p) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def upper_failure_probability(units: int, failures: int, confidence: float) -> float:
    """One-sided upper bound on a unit's failure probability after `failures` in `units`."""
    return float(special.betaincinv(failures + 1, units - failures, confidence))


def test_multiple_for_units(reliability: float, confidence: float, units: int, failures: int = 0,
                            shape: float = 1.0) -> float:
    """Missions per unit m so that n units with at most f failures demonstrate R at confidence C."""
    p = upper_failure_probability(units, failures, confidence)
    return (math.log1p(-p) / math.log(reliability)) ** (1.0 / shape)


def demonstrated_reliability(units: int, failures: int, confidence: float, test_multiple: float = 1.0,
                             shape: float = 1.0) -> float:
    """Lower confidence bound on mission reliability shown by passing: (1 − p*)^{1/m^β}."""
    p = upper_failure_probability(units, failures, confidence)
    return math.exp(math.log1p(-p) / _missions_exponent(test_multiple, shape))


def chi_squared_test_time(mtbf: float, confidence: float, failures: int = 0) -> float:
    """Total time on test to show MTBF at confidence C allowing f failures: MTBF·χ²_{C,2f+2}/2."""
    return mtbf * chi2_ppf(confidence, 2 * failures + 2) / 2.0


# scipy.special's ufuncs: the same functions as scipy.stats' chi2.ppf / poisson.cdf without the
# per-call overhead of the distribution objects (about 100x).
def chi2_ppf(q: float, df: float) -> float:
    """Quantile of the chi-squared distribution: 2·P⁻¹(df/2, q), P the regularised lower gamma."""
    return 2.0 * float(special.gammaincinv(df / 2.0, q))


def poisson_cdf(k: int, mean: float) -> float:
    """P(N <= k) for N ~ Poisson(mean)."""
    return float(special.pdtr(k, mean))


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
    for f in range(max_failures + 1):
        t = chi_squared_test_time(th_r, 1.0 - beta, f)
        risk = 1.0 - float(poisson_cdf(f, t / th_d))
        if risk <= alpha:
            return {"failures": f, "total_test_time": t, "consumer_risk": float(poisson_cdf(f, t / th_r)),
                    "producer_risk": risk}
    raise InputError("mtbf_design", f"too close to mtbf_required: more than {max_failures} failures needed")


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def demonstration_test(
    reliability: Any = None,
    confidence: Any = 0.95,
    mission_time: Any = None,
    failures: Any = 0,
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
) -> dict[str, Any]:
    """Plan a reliability demonstration test from the spec's request fields.

    Returns {method, solve_for, units, test_time_per_unit, total_test_time, failures,
    demonstrated_reliability, consumer_risk, summary, assumptions, tradeoff} plus, where they
    apply: `time_unit` (the unit of the times: `unit` or "missions"), `mtbf` and
    `demonstrated_mtbf` (method mtbf), `pass_probability` and `producer_risk` (with
    `design_reliability` or `design_mtbf`), `shape_sensitivity` and `warning` (with
    `shape_interval`). `consumer_risk` is the chance that a population exactly at the required
    reliability passes; `demonstrated_reliability` the lower bound shown at `confidence` by a
    pass, at least the requirement because units come in whole numbers.
    """
    c = probability(confidence if confidence is not None else 0.95, "confidence")
    f = integer(failures if failures is not None else 0, "failures")
    if f > MAX_FAILURES:
        raise InputError("failures", f"must be <= {MAX_FAILURES}")
    mission = None if mission_time is None else number(mission_time, "mission_time", low=0.0, low_inclusive=False)
    if method not in (None, "auto", *METHODS):
        raise InputError("method", f"must be one of {', '.join(METHODS)}")
    if mtbf is not None and method in (None, "auto"):
        method = "mtbf"
    r_req = _required_reliability(reliability, b_life, method, mission, mtbf)
    beta = None if shape is None else number(shape, "shape", low=0.0, low_inclusive=False)
    m_given = None if test_multiple is None else number(test_multiple, "test_multiple", low=0.0,
                                                        low_inclusive=False)
    n_given = None if units is None else integer(units, "units", low=1)
    r_design = None if design_reliability is None else probability(design_reliability, "design_reliability")
    interval = _shape_interval(shape_interval, beta)
    time_unit = unit if (unit and mission is not None) else ("missions" if mission is None else "time units")
    if method == "mtbf":
        if interval is not None:
            raise InputError("shape_interval", "applies to Weibull plans, not to method mtbf (constant rate)")
        return _mtbf_plan(r_req, c, f, mission, m_given, n_given, mtbf, r_design, design_mtbf, unit, time_unit)
    if method == "weibayes" and beta is None:
        raise InputError("shape", "required for method weibayes")
    if m_given is not None and m_given != 1.0 and beta is None:
        raise InputError("shape", "required when test_multiple is not 1")
    if n_given is not None and m_given is not None:
        raise InputError("test_multiple", "give units or test_multiple, not both: with units the test time is solved")
    if n_given is not None and beta is None:
        raise InputError("shape", "required to solve for test time per unit when units is given (or use method mtbf)")
    if design_mtbf is not None:
        raise InputError("design_mtbf", "applies to method mtbf only; use design_reliability")
    assert r_req is not None
    return _attribute_plan(r_req, c, f, mission, m_given, n_given, beta, r_design, interval, unit, time_unit)


def _required_reliability(reliability: Any, b_life: Any, method: Any, mission: float | None,
                          mtbf: Any) -> float | None:
    if b_life is not None:
        b = number(b_life, "b_life", low=0.0, low_inclusive=False, high=100.0, high_inclusive=False)
        if reliability is not None and abs(probability(reliability, "reliability") - (1.0 - b / 100.0)) > 1e-12:
            raise InputError("b_life", "give reliability or b_life, not both")
        return 1.0 - b / 100.0
    if reliability is None:
        if method == "mtbf" and mtbf is not None:
            return None
        raise InputError("reliability", "required (or b_life)")
    return probability(reliability, "reliability")


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


def _attribute_plan(r: float, c: float, f: int, mission: float | None, m_given: float | None,
                    n_given: int | None, beta: float | None, r_design: float | None,
                    interval: tuple[float, float] | None, unit: str | None, time_unit: str) -> dict[str, Any]:
    b = beta if beta is not None else 1.0
    name = "weibayes" if beta is not None and (n_given is not None or (m_given or 1.0) != 1.0) else "binomial"
    scale = mission if mission is not None else 1.0

    def plan(ff: int, bb: float) -> tuple[int, float]:
        """(units, missions per unit) for f failures allowed under shape bb."""
        if n_given is None:
            mm = m_given if m_given is not None else 1.0
            return binomial_units(r, c, ff, mm, bb), mm
        if n_given <= ff:
            raise InputError("units", f"must exceed the failures allowed ({ff})")
        return n_given, test_multiple_for_units(r, c, n_given, ff, bb)

    n, m = plan(f, b)
    ttpu = m * scale
    out: dict[str, Any] = {
        "method": name,
        "solve_for": "units" if n_given is None else "test_time_per_unit",
        "units": n,
        "test_time_per_unit": ttpu,
        "total_test_time": n * ttpu,
        "failures": f,
        "demonstrated_reliability": demonstrated_reliability(n, f, c, m, b),
        "consumer_risk": pass_probability(n, f, _p_fail(r, m, b)),
        "time_unit": time_unit,
    }
    if r_design is not None:
        out["pass_probability"] = pass_probability(n, f, _p_fail(r_design, m, b))
        out["producer_risk"] = 1.0 - out["pass_probability"]
    fails = list(range(max(4, f + 3)))
    needs, totals, chances = [], [], []
    for ff in fails:
        if n_given is not None and n_given <= ff:
            needs.append(None)
            totals.append(None)
            chances.append(None)
            continue
        nn, mm = plan(ff, b)
        needs.append(nn if n_given is None else mm * scale)
        totals.append(nn * mm * scale)
        if r_design is not None:
            chances.append(pass_probability(nn, ff, _p_fail(r_design, mm, b)))
    rows = [{"label": "Units needed" if n_given is None else f"Test time per unit ({time_unit})", "values": needs},
            {"label": f"Total test time ({time_unit})", "values": totals}]
    if r_design is not None:
        rows.append({"label": f"Chance of passing at design reliability {_fmt(r_design)}", "values": chances})
    out["tradeoff"] = {"failures": fails, "rows": rows}
    if interval is not None:
        _add_shape_sensitivity(out, interval, b, plan, f, r, c, n, m, n_given)
    out["summary"] = _attribute_summary(out, r, c, m, mission, time_unit)
    out["assumptions"] = _attribute_assumptions(name, b, m, mission, unit)
    return _ordered(out)


def _add_shape_sensitivity(out: dict[str, Any], interval: tuple[float, float], beta: float, plan, f: int,
                           r: float, c: float, n: int, m: float, n_given: int | None) -> None:
    lo, hi = interval
    shapes = sorted({lo, math.sqrt(lo * beta), beta, math.sqrt(beta * hi), hi})
    rows = []
    for s in shapes:
        nn, mm = plan(f, s)
        rows.append({
            "shape": s,
            "units": nn,
            "test_multiple": mm,
            # what the plan as designed would really show if the shape were s
            "demonstrated_reliability": demonstrated_reliability(n, f, c, m, s),
        })
    out["shape_sensitivity"] = rows
    key = "units" if n_given is None else "test_multiple"
    needs = [row[key] for row in rows]
    ratio = max(needs) / min(needs)
    worst_row = min(rows, key=lambda x: x["demonstrated_reliability"])
    worst = worst_row["demonstrated_reliability"]
    if ratio > SHAPE_WARNING_RATIO:
        what = "units needed" if n_given is None else "test time per unit"
        out["warning"] = (
            f"The shape is too poorly known for this plan: across shapes {_fmt(lo)}–{_fmt(hi)} the {what} "
            f"varies by a factor {ratio:.2f}, and if the shape is {_fmt(worst_row['shape'])} "
            f"a pass shows only reliability {_fmt(worst)} instead of {_fmt(r)}. Test at one mission per unit "
            "(test_multiple 1, where the shape does not matter) or narrow the shape."
        )


def _attribute_summary(out: dict[str, Any], r: float, c: float, m: float, mission: float | None,
                       time_unit: str) -> str:
    each = f"{_fmt(out['test_time_per_unit'])} {time_unit}" if mission is not None else \
        f"{_fmt(m)} mission{'s' if m != 1 else ''}"
    allowed = "no failures" if out["failures"] == 0 else f"at most {out['failures']} failure" + \
        ("s" if out["failures"] > 1 else "")
    text = (f"Test {out['units']} units for {each} each with {allowed}. Passing shows mission reliability of "
            f"at least {_fmt(r)} at {_fmt(100 * c)}% confidence (exactly {_fmt(out['demonstrated_reliability'])}).")
    if "pass_probability" in out:
        text += f" A design of the given reliability passes with probability {_fmt(out['pass_probability'])}."
    if "warning" in out:
        text += " Warning: the plan depends strongly on the assumed shape."
    return text


def _attribute_assumptions(name: str, beta: float, m: float, mission: float | None, unit: str | None) -> list[str]:
    out = ["Units are independent and alike; each either survives its test or fails (pass/fail).",
           "Test conditions reproduce the mission's stresses."]
    if name == "weibayes":
        out.append(f"Weibull life with known shape {_fmt(beta)}: surviving {_fmt(m)} missions counts as "
                   f"surviving with reliability R^{_fmt(_missions_exponent(m, beta))} (R^(m^shape)).")
    if mission is None:
        out.append("Times are in missions (no mission_time given).")
    elif unit:
        out.append(f"Times are in {unit}.")
    return out


def _mtbf_plan(r_req: float | None, c: float, f: int, mission: float | None, m_given: float | None,
               n_given: int | None, mtbf: Any, r_design: float | None, design_mtbf: Any,
               unit: str | None, time_unit: str) -> dict[str, Any]:
    if mtbf is not None:
        theta = number(mtbf, "mtbf", low=0.0, low_inclusive=False)
    elif r_req is not None and mission is not None:
        theta = -mission / math.log(r_req)  # R = e^{-t/θ}
        if not (math.isfinite(theta) and theta > 0):
            raise InputError("mission_time", "with this reliability gives no finite, positive MTBF")
    else:
        raise InputError("mtbf", "required with method mtbf (or give reliability with mission_time)")
    if m_given is not None and n_given is not None:
        raise InputError("test_multiple", "give units or test_multiple, not both: with units the test time is solved")
    theta_d = None
    if design_mtbf is not None:
        theta_d = number(design_mtbf, "design_mtbf", low=0.0, low_inclusive=False)
    elif r_design is not None:
        if mission is None:
            raise InputError("mission_time", "required with design_reliability for method mtbf")
        theta_d = -mission / math.log(r_design)
    tu = unit or "time units"

    def plan(ff: int) -> tuple[float, int | None, float | None]:
        total = chi_squared_test_time(theta, c, ff)
        # Extreme inputs (an MTBF of 1e308, a confidence of 1e-300) leave floating point: say so.
        if not (math.isfinite(total) and total > 0):
            raise InputError("mtbf", "gives no finite, positive test time at this confidence")
        if n_given is not None:
            return total, n_given, total / n_given
        if mission is not None:
            per = (m_given if m_given is not None else 1.0) * mission
            units = total / per
            if not units <= _MAX_UNITS:  # also NaN and infinity
                raise InputError("mission_time", f"the plan needs more than {_MAX_UNITS} units; test longer per unit")
            nn = max(1, math.ceil(units - 1e-9))
            return total, nn, total / nn
        return total, None, None

    total, n, ttpu = plan(f)
    solve_for = "test_time_per_unit" if n_given is not None else ("units" if mission is not None else "total_test_time")
    out: dict[str, Any] = {
        "method": "mtbf",
        "solve_for": solve_for,
        "units": n,
        "test_time_per_unit": ttpu,
        "total_test_time": total,
        "failures": f,
        "demonstrated_reliability": math.exp(-mission / theta) if mission is not None else None,
        "consumer_risk": float(poisson_cdf(f, total / theta)),
        "time_unit": tu,
        "mtbf": theta,
        "demonstrated_mtbf": theta,
    }
    if theta_d is not None:
        out["pass_probability"] = float(poisson_cdf(f, total / theta_d))
        out["producer_risk"] = 1.0 - out["pass_probability"]
    fails = list(range(max(4, f + 3)))
    plans = [plan(ff) for ff in fails]
    rows: list[dict[str, Any]] = [{"label": f"Total test time ({tu})", "values": [p[0] for p in plans]}]
    if solve_for == "units":
        rows.append({"label": "Units needed", "values": [p[1] for p in plans]})
    elif solve_for == "test_time_per_unit":
        rows.append({"label": f"Test time per unit ({tu})", "values": [p[2] for p in plans]})
    if theta_d is not None:
        chances = [float(poisson_cdf(ff, p[0] / theta_d)) for ff, p in zip(fails, plans, strict=True)]
        rows.append({"label": f"Chance of passing at design MTBF {_fmt(theta_d)}", "values": chances})
    out["tradeoff"] = {"failures": fails, "rows": rows}
    allowed = "no failures" if f == 0 else f"at most {f} failure" + ("s" if f > 1 else "")
    text = (f"Accumulate {_fmt(total)} {tu} of test time in total with {allowed}: passing shows MTBF of at least "
            f"{_fmt(theta)} at {_fmt(100 * c)}% confidence")
    if mission is not None:
        text += f" (mission reliability at least {_fmt(out['demonstrated_reliability'])})"
    text += "."
    if n is not None:
        text += f" With {n} units that is {_fmt(ttpu)} {tu} each."
    if "pass_probability" in out:
        text += f" A design at MTBF {_fmt(theta_d)} passes with probability {_fmt(out['pass_probability'])}."
    out["summary"] = text
    out["assumptions"] = [
        "Constant failure rate (exponential lives): only total time on test matters, not how it is split.",
        "Time-terminated test; failed units are repaired or replaced and testing continues.",
        f"Test time T = MTBF·χ²(confidence, 2·failures + 2)/2; times in {tu}.",
    ]
    return _ordered(out)


_ORDER = ("method", "solve_for", "units", "test_time_per_unit", "total_test_time", "failures",
          "demonstrated_reliability", "consumer_risk", "summary", "assumptions", "tradeoff")


def _ordered(out: dict[str, Any]) -> dict[str, Any]:
    """Spec fields first, in the spec's order, then the documented extras."""
    return {**{k: out[k] for k in _ORDER}, **{k: v for k, v in out.items() if k not in _ORDER}}
