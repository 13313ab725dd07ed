"""Attribute (binomial) and Weibayes demonstration tests, solved for any one unknown.

n units each run m missions; the test passes with at most f failures. A unit whose mission
reliability is R fails such a test with probability p = 1 − R^{m^β} (β the known Weibull shape;
β = 1 and m = 1 is the plain attribute test). Passing demonstrates R at confidence C when

    P(X ≤ f | n, p) ≤ 1 − C,   X ~ Binomial(n, p),

the textbook success-run n = ln(1 − C)/(m^β·ln R) when f = 0. Each function reads that one
condition another way round: units, missions per unit, reliability shown, confidence reached,
failures allowed, or the plan that also meets a producer's risk at a design reliability.
"""

from __future__ import annotations

import math

from scipy import optimize, special

from bathtub.errors import InputError
from bathtub.strategy.guard import checkpoint
from bathtub.strategy.inputs import MAX_FAILURES, SCANNED_FAILURES, boundary

_MAX_UNITS = 10**9


def missions_exponent(test_multiple: float, shape: float) -> float:
    """m^β, refused past the floats (a test of 1e200 missions with shape 3 means nothing)."""
    try:
        power = test_multiple**shape
    except OverflowError:
        power = math.inf
    if not 0.0 < power < math.inf:  # underflow to 0 too: every later step divides by it
        raise InputError("test_multiple", "test_multiple ** shape is beyond floating point")
    return power


def _mission_reliability(p: float, test_multiple: float, shape: float) -> float:
    """(1 − p)^{1/m^β}: 0 when the bound on p rounds to 1 (no reliability is shown)."""
    exponent = missions_exponent(test_multiple, shape)
    if p >= 1.0:
        return 0.0
    return math.exp(math.log1p(-p) / exponent)


def zero_failure_units(reliability: float, confidence: float, test_multiple: float = 1.0,
                       shape: float = 1.0) -> int:
    """Textbook success-run sample size: ceil(ln(1 − C) / (m^β · ln R))."""
    x = math.log1p(-confidence) / (missions_exponent(test_multiple, shape) * math.log(reliability))
    n = math.ceil(x - 1e-9)  # tolerate rounding when x is a whole number
    return max(n, 1)


def p_fail(reliability: float, test_multiple: float, shape: float) -> float:
    """Chance a unit fails a test of m missions when its mission reliability is R: 1 − R^{m^β}."""
    if reliability <= 0.0:  # nothing shown (a bound that rounded to 0): every unit fails
        return 1.0
    return -math.expm1(missions_exponent(test_multiple, shape) * math.log(reliability))


def pass_probability(units: int, failures: int, p: float) -> float:
    """Chance of at most `failures` failures among `units` independent units (binomial cdf)."""
    return float(special.bdtr(failures, units, p))


def binomial_units(reliability: float, confidence: float, failures: int = 0, test_multiple: float = 1.0,
                   shape: float = 1.0) -> int:
    """Smallest n with P(at most f failures | n, 1 − R^{m^β}) ≤ 1 − C."""
    p = p_fail(reliability, test_multiple, shape)
    target = 1.0 - confidence
    if p <= 0.0:
        raise InputError("reliability", "too close to 1 to be demonstrated with this test length")
    hi = max(failures + 1, 1)
    while pass_probability(hi, failures, p) > target:
        hi *= 2
        if hi > _MAX_UNITS:
            raise InputError("reliability", f"needs more than {_MAX_UNITS} units; relax reliability or confidence")
    lo = max(failures, hi // 2)  # pass_probability(lo) > target or lo == failures (certain pass)
    return boundary(lo, hi, lambda n: pass_probability(n, failures, p) > target) + 1


def upper_failure_probability(units: int, failures: int, confidence: float) -> float:
    """One-sided upper Clopper–Pearson bound on a unit's failure probability: Beta⁻¹(C; f + 1, n − f)."""
    return float(special.betaincinv(failures + 1, units - failures, confidence))


def lower_failure_probability(units: int, failures: int, confidence: float) -> float:
    """One-sided lower Clopper–Pearson bound: Beta⁻¹(1 − C; f, n − f + 1), 0 with no failure."""
    if failures == 0:
        return 0.0
    return float(special.betaincinv(failures, units - failures + 1, 1.0 - confidence))


def test_multiple_for_units(reliability: float, confidence: float, units: int, failures: int = 0,
                            shape: float = 1.0) -> float:
    """Missions per unit m so that n units with at most f failures demonstrate R at confidence C."""
    p = upper_failure_probability(units, failures, confidence)
    if p >= 1.0:  # the bound rounds to certain failure: no test length shows any reliability
        raise InputError("units", f"{units} units with {failures} failures show no reliability at this confidence; "
                                  "test more units or allow fewer failures")
    return (math.log1p(-p) / math.log(reliability)) ** (1.0 / shape)


def demonstrated_reliability(units: int, failures: int, confidence: float, test_multiple: float = 1.0,
                             shape: float = 1.0) -> float:
    """Lower confidence bound on mission reliability shown by passing: (1 − p*)^{1/m^β}."""
    # 1 − p* directly, Beta⁻¹(1 − C; n − f, f + 1) by the beta's symmetry: near p* = 1 the
    # difference would round to 0 while the bound is a tiny positive number.
    survive = float(special.betaincinv(units - failures, failures + 1, 1.0 - confidence))
    if survive <= 0.0:
        return 0.0
    return math.exp(math.log(survive) / missions_exponent(test_multiple, shape))


def reliability_upper(units: int, failures: int, confidence: float, test_multiple: float = 1.0,
                      shape: float = 1.0) -> float:
    """Upper confidence bound on mission reliability: (1 − p_*)^{1/m^β}, p_* the lower bound on p."""
    return _mission_reliability(lower_failure_probability(units, failures, confidence), test_multiple, shape)


def confidence_reached(units: int, failures: int, reliability: float, test_multiple: float = 1.0,
                       shape: float = 1.0) -> float:
    """The confidence at which passing (at most f of n fail) shows R: 1 − P(X ≤ f | n, p)."""
    return 1.0 - pass_probability(units, failures, p_fail(reliability, test_multiple, shape))


def failures_allowed(units: int, reliability: float, confidence: float, test_multiple: float = 1.0,
                     shape: float = 1.0) -> int:
    """The most failures among n units that still show R at C (P(X ≤ f) grows with f: bisection)."""
    p = p_fail(reliability, test_multiple, shape)
    target = 1.0 - confidence
    if pass_probability(units, 0, p) > target:
        needed = binomial_units(reliability, confidence, 0, test_multiple, shape)
        raise InputError("units", f"too few for any plan: showing reliability {reliability:.6g} at this confidence "
                                  f"needs at least {needed} units with no failure")
    # pass_probability(units, units, p) = 1 > target
    return boundary(0, units, lambda f: pass_probability(units, f, p) <= target)


def both_risks_plan(reliability: float, design_reliability: float, consumer_risk: float, producer_risk: float,
                    test_multiple: float = 1.0, shape: float = 1.0, max_failures: int = MAX_FAILURES
                    ) -> tuple[int, int]:
    """The smallest (f, then n) meeting P(pass | R) ≤ β and P(pass | R_design) ≥ 1 − α exactly.

    For each f the fewest units meeting the consumer's risk is binomial_units (more units only
    lower the design's chance of passing), so the plan is the first f whose design passes with
    probability at least 1 − α at that n. The first SCANNED_FAILURES counts are tried one by one;
    past them the scan starts where the plan first becomes possible (`_fewest_failures`), so a
    plan needing thousands of failures, or more than `max_failures`, costs milliseconds, not a
    scan of every count. The producer's risk is the binomial's upper tail computed directly:
    1 − P(pass) cannot resolve a risk below 1e-16 and would accept far too small a plan."""
    if design_reliability <= reliability:
        raise InputError("design_reliability", "must exceed reliability (the requirement)")
    p_design = p_fail(design_reliability, test_multiple, shape)
    p_required = p_fail(reliability, test_multiple, shape)
    start = 0
    while start <= max_failures:
        for f in range(start, min(start + SCANNED_FAILURES, max_failures + 1)):
            checkpoint()
            n = binomial_units(reliability, 1.0 - consumer_risk, f, test_multiple, shape)
            if float(special.bdtrc(f, n, p_design)) <= producer_risk:
                return f, n
        start += SCANNED_FAILURES
        if start <= max_failures:
            start = max(start, _fewest_failures(p_required, p_design, consumer_risk, producer_risk, start,
                                                max_failures) - 1)
    raise InputError("design_reliability", f"too close to reliability: more than {max_failures} failures needed")


def _fewest_failures(p_required: float, p_design: float, consumer_risk: float, producer_risk: float, low: int,
                     high: int) -> int:
    """The least f in [low, high] at which a plan meeting both risks can exist (high + 1: none).

    P(X ≤ f | n, p) = I_{1−p}(n − f, f + 1) continues to real n, falling as n grows; at its real
    root ñ(f) of P = β (the consumer's risk) the producer's risk I_{p_d}(f + 1, ñ − f) is below
    that of the integer plan, whose n ≥ ñ (the producer's risk rises with n). Along that curve
    the producer's risk falls as f grows (a longer test tells the two reliabilities apart
    better), so bisection finds where it first reaches α."""
    def possible(f: int) -> bool:
        checkpoint()
        extra = _real_extra_units(p_required, f, consumer_risk)
        return float(special.betainc(f + 1, extra, p_design)) <= producer_risk

    if not possible(high):
        return high + 1
    if possible(low):
        return low
    return boundary(low, high, lambda f: not possible(f)) + 1


def _real_extra_units(p: float, failures: int, target: float) -> float:
    """n − f at the real n where I_{1−p}(n − f, f + 1) = target, rounded down (a lower bound)."""
    def excess(a: float) -> float:
        return float(special.betainc(a, failures + 1, 1.0 - p)) - target

    hi = 1.0
    while excess(hi) > 0.0:  # I falls from 1 (a → 0) to 0 (a → ∞): doubling ends within the floats
        hi *= 2.0
        if math.isinf(hi):
            return math.inf
    lo = hi / 2.0 if hi > 1.0 else 1e-300
    if excess(lo) <= 0.0:
        return lo
    root = float(optimize.brentq(excess, lo, hi, xtol=1e-12, rtol=1e-12))
    return root * (1.0 - 1e-9)  # below the root: the producer's risk there is a lower bound
