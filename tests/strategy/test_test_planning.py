"""Test planning solved every way round, checked against identities computed here independently:
the χ²/Poisson law of a constant-rate test (scipy.stats), the binomial law of attribute tests,
exhaustive searches for the plans meeting both risks, Wald's closed forms for the sequential
test's lines, and a simulation of the sequential test for its risks and expected times."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reliability.Reliability_testing import reliability_test_duration
from scipy import stats

from bathtub.errors import InputError
from bathtub.strategy import demonstration_test
from tests.strategy.strategy_helpers import assert_json_ready


def dof(failures: int, termination: str) -> int:
    return 2 * failures if termination == "failure" else 2 * failures + 2


def level(confidence: float, sided: str) -> float:
    return confidence if sided == "one" else (1 + confidence) / 2


CASES = [(1000.0, 0.9, 0, "time", "one"), (250.0, 0.8, 3, "time", "two"), (40.0, 0.95, 2, "failure", "one"),
         (7.5, 0.9, 5, "failure", "two")]


@pytest.mark.parametrize(("mtbf", "confidence", "failures", "termination", "sided"), CASES)
def test_constant_rate_test_time(mtbf, confidence, failures, termination, sided):
    out = demonstration_test(None, confidence, failures=failures, mtbf=mtbf, termination=termination, sided=sided)
    expected = mtbf * stats.chi2.ppf(level(confidence, sided), dof(failures, termination)) / 2
    assert out["total_test_time"] == pytest.approx(expected, rel=1e-12)
    assert out["solve_for"] == "total_test_time" and out["method"] == "mtbf"
    # a population exactly at the requirement passes with probability 1 − C' (Poisson law)
    allowed = failures if termination == "time" else failures - 1
    assert out["consumer_risk"] == pytest.approx(stats.poisson.cdf(allowed, expected / mtbf), rel=1e-9)
    assert out["consumer_risk"] == pytest.approx(1 - level(confidence, sided), rel=1e-9)
    assert_json_ready(out)


@pytest.mark.parametrize(("total", "confidence", "failures", "termination", "sided"),
                         [(5000.0, 0.9, 2, "time", "one"), (5000.0, 0.9, 2, "time", "two"),
                          (120.0, 0.8, 4, "failure", "one"), (120.0, 0.95, 1, "failure", "two"),
                          (800.0, 0.9, 0, "time", "two")])
def test_constant_rate_mtbf_shown(total, confidence, failures, termination, sided):
    out = demonstration_test(None, confidence, failures=failures, total_test_time=total, termination=termination,
                             sided=sided, mission_time=10.0, unit="h")
    lower = 2 * total / stats.chi2.ppf(level(confidence, sided), dof(failures, termination))
    assert out["solve_for"] == "mtbf"
    assert out["demonstrated_mtbf"] == pytest.approx(lower, rel=1e-12)
    assert out["demonstrated_reliability"] == pytest.approx(math.exp(-10.0 / lower), rel=1e-12)
    if sided == "two" and failures > 0:
        assert out["mtbf_upper"] == pytest.approx(2 * total / stats.chi2.ppf((1 - confidence) / 2, 2 * failures),
                                                  rel=1e-12)
    else:
        assert "mtbf_upper" not in out  # no failure: the data set no upper limit


def test_time_and_failure_terminated_differ_as_the_textbook_says():
    """Same data, T = 1000 h and 3 failures: 2T/χ²(0.9; 8) time-terminated, 2T/χ²(0.9; 6) failure-terminated."""
    tt = demonstration_test(None, 0.9, failures=3, total_test_time=1000.0)
    ft = demonstration_test(None, 0.9, failures=3, total_test_time=1000.0, termination="failure")
    assert tt["demonstrated_mtbf"] == pytest.approx(2000 / stats.chi2.ppf(0.9, 8), rel=1e-12)
    assert ft["demonstrated_mtbf"] == pytest.approx(2000 / stats.chi2.ppf(0.9, 6), rel=1e-12)
    assert ft["demonstrated_mtbf"] > tt["demonstrated_mtbf"]


@pytest.mark.parametrize(("mtbf", "total", "failures", "termination", "sided"),
                         [(1000.0, 5000.0, 2, "time", "one"), (1000.0, 5000.0, 2, "time", "two"),
                          (50.0, 400.0, 3, "failure", "one"), (50.0, 1200.0, 6, "failure", "two")])
def test_constant_rate_confidence_reached(mtbf, total, failures, termination, sided):
    out = demonstration_test(None, None, mtbf=mtbf, total_test_time=total, failures=failures,
                             termination=termination, sided=sided, solve_for="confidence")
    one = stats.chi2.cdf(2 * total / mtbf, dof(failures, termination))
    if termination == "time":  # the same number read through the Poisson law
        assert one == pytest.approx(1 - stats.poisson.cdf(failures, total / mtbf), rel=1e-12)
    assert out["confidence"] == pytest.approx(one if sided == "one" else 2 * one - 1, rel=1e-12)
    # round trip: planning at that confidence gives back the test length
    again = demonstration_test(None, out["confidence"], mtbf=mtbf, failures=failures, termination=termination,
                               sided=sided)
    assert again["total_test_time"] == pytest.approx(total, rel=1e-9)


@pytest.mark.parametrize(("mtbf", "total", "confidence", "termination", "sided"),
                         [(1000.0, 9000.0, 0.9, "time", "one"), (1000.0, 9000.0, 0.9, "time", "two"),
                          (20.0, 400.0, 0.8, "failure", "one"), (3.0, 2.4, 0.5, "time", "one")])
def test_constant_rate_failures_allowed(mtbf, total, confidence, termination, sided):
    out = demonstration_test(None, confidence, mtbf=mtbf, total_test_time=total, termination=termination,
                             sided=sided, solve_for="failures")

    def shows(r):
        return 2 * total / stats.chi2.ppf(level(confidence, sided), dof(r, termination)) >= mtbf

    r = out["failures"]
    assert shows(r) and not shows(r + 1)  # brute force: the most failures that still show it
    assert all(shows(k) for k in range(1 if termination == "failure" else 0, r + 1))


def test_a_test_too_short_for_any_plan_is_refused():
    with pytest.raises(InputError) as err:
        demonstration_test(None, 0.9, mtbf=1000.0, total_test_time=2000.0, solve_for="failures")
    assert err.value.field == "total_test_time"
    assert "2302.59" in str(err.value)  # needs θ·(−ln 0.1) = 2302.59 h even with no failure


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3, 1e6])
def test_constant_rate_solves_transform_with_the_time_unit(scale):
    base = demonstration_test(None, 0.9, mtbf=1000.0, failures=2)
    scaled = demonstration_test(None, 0.9, mtbf=1000.0 * scale, failures=2)
    assert scaled["total_test_time"] == pytest.approx(base["total_test_time"] * scale, rel=1e-12)
    conf = demonstration_test(None, None, mtbf=1000.0 * scale, total_test_time=4000.0 * scale, failures=1,
                              solve_for="confidence")
    assert conf["confidence"] == pytest.approx(stats.chi2.cdf(8.0, 4), rel=1e-12)
    shown = demonstration_test(None, 0.9, total_test_time=4000.0 * scale, failures=1)
    assert shown["demonstrated_mtbf"] == pytest.approx(8000.0 * scale / stats.chi2.ppf(0.9, 4), rel=1e-12)


# --- attribute and Weibayes ----------------------------------------------------------------------


@pytest.mark.parametrize(("units", "failures", "multiple", "shape"), [(30, 0, 1.0, None), (50, 2, 1.0, None),
                                                                      (12, 1, 2.0, 1.5)])
def test_attribute_reliability_confidence_and_failures(units, failures, multiple, shape):
    kw = {"units": units, "test_multiple": multiple, "shape": shape, "mission_time": 100.0}
    b = shape or 1.0
    shown = demonstration_test(None, 0.9, failures=failures, **kw)
    assert shown["solve_for"] == "reliability"
    # Clopper–Pearson one-sided upper bound on p, through R^{m^β}
    p_up = stats.beta.ppf(0.9, failures + 1, units - failures)
    assert shown["demonstrated_reliability"] == pytest.approx((1 - p_up) ** (1 / multiple**b), rel=1e-12)
    two = demonstration_test(None, 0.9, failures=failures, sided="two", **kw)
    assert two["demonstrated_reliability"] == pytest.approx(
        (1 - stats.beta.ppf(0.95, failures + 1, units - failures)) ** (1 / multiple**b), rel=1e-12)
    p_lo = 0.0 if failures == 0 else stats.beta.ppf(0.05, failures, units - failures + 1)
    assert two["reliability_upper"] == pytest.approx((1 - p_lo) ** (1 / multiple**b), rel=1e-12)

    r = 0.85
    p = 1 - r ** (multiple**b)
    conf = demonstration_test(r, None, failures=failures, solve_for="confidence", **kw)
    assert conf["confidence"] == pytest.approx(1 - stats.binom.cdf(failures, units, p), rel=1e-12)
    most = demonstration_test(r, 0.5, solve_for="failures", **kw)["failures"]
    assert stats.binom.cdf(most, units, p) <= 0.5 < stats.binom.cdf(most + 1, units, p)


def test_attribute_with_too_few_units_is_refused():
    with pytest.raises(InputError) as err:
        demonstration_test(0.99, 0.9, units=50, test_multiple=1.0, solve_for="failures")
    assert err.value.field == "units" and "230" in str(err.value)  # ln 0.1/ln 0.99 = 229.1 → 230 units


def test_attribute_plan_meeting_both_risks_is_the_first_by_exhaustive_search():
    r, r_design, consumer, producer = 0.9, 0.97, 0.1, 0.1
    out = demonstration_test(r, 1 - consumer, design_reliability=r_design, producer_risk=producer)
    assert out["solve_for"] == "plan"
    best = None
    for f in range(20):
        for n in range(f + 1, 400):
            if stats.binom.cdf(f, n, 1 - r) <= consumer and 1 - stats.binom.cdf(f, n, 1 - r_design) <= producer:
                best = (f, n)
                break
        if best:
            break
    assert (out["failures"], out["units"]) == best
    assert out["consumer_risk"] <= consumer and out["producer_risk"] <= producer
    oc = out["operating_characteristic"]
    assert oc["pass_probability"] == sorted(oc["pass_probability"])  # rises with the true reliability
    i = oc["true_reliability"].index(pytest.approx(r_design))
    assert oc["pass_probability"][i] == pytest.approx(1 - out["producer_risk"], rel=1e-12)


# --- constant-rate plan meeting both risks --------------------------------------------------------


@pytest.mark.parametrize(("required", "design", "consumer", "producer"),
                         [(500.0, 1000.0, 0.1, 0.1), (1000.0, 1500.0, 0.2, 0.1), (1000.0, 2000.0, 0.1, 0.2),
                          (1000.0, 3000.0, 0.05, 0.05)])
def test_both_risks_plan_is_the_first_meeting_both(required, design, consumer, producer):
    out = demonstration_test(None, None, mtbf=required, design_mtbf=design, consumer_risk=consumer,
                             producer_risk=producer)
    assert out["solve_for"] == "plan"

    def risks(f):
        t = required * stats.chi2.ppf(1 - consumer, 2 * f + 2) / 2
        return t, stats.poisson.cdf(f, t / required), 1 - stats.poisson.cdf(f, t / design)

    f = out["failures"]
    t, c_risk, p_risk = risks(f)
    assert out["total_test_time"] == pytest.approx(t, rel=1e-12)
    assert c_risk <= consumer + 1e-12 and p_risk <= producer
    assert out["producer_risk"] == pytest.approx(p_risk, rel=1e-9)
    assert all(risks(k)[2] > producer for k in range(f))  # no plan with fewer failures meets both
    # the peer's duration is the plan one failure short: its producer's risk exceeds the target
    peer = reliability_test_duration(MTBF_required=required, MTBF_design=design, consumer_risk=consumer,
                                     producer_risk=producer, print_results=False, show_plot=False)
    assert peer == pytest.approx(risks(f - 1)[0], rel=1e-9)
    assert risks(f - 1)[2] > producer
    # the operating characteristic: exact Poisson pass chance, 1 − producer's risk at the design MTBF
    oc = out["operating_characteristic"]
    for th, pp in zip(oc["true_mtbf"], oc["pass_probability"], strict=True):
        assert pp == pytest.approx(stats.poisson.cdf(f, t / th), rel=1e-9)
    assert oc["pass_probability"] == sorted(oc["pass_probability"])
    assert design in oc["true_mtbf"] and required in oc["true_mtbf"]


def test_discrimination_ratio_is_the_design_over_required():
    a = demonstration_test(None, 0.9, mtbf=400.0, discrimination_ratio=2.5, producer_risk=0.1)
    b = demonstration_test(None, 0.9, mtbf=400.0, design_mtbf=1000.0, producer_risk=0.1)
    assert a["total_test_time"] == b["total_test_time"] and a["failures"] == b["failures"]


# --- sequential test ------------------------------------------------------------------------------


def simulate_sequential(seq, true_mtbf, runs, rng):
    """Run the truncated sequential test on simulated Poisson failures: (accepted, time on test)."""
    rows = seq["boundaries"]
    r0 = seq["truncation"]["failures"]
    t = np.zeros(runs)
    done = np.zeros(runs, bool)
    accepted = np.zeros(runs, bool)
    length = np.zeros(runs)
    for k in range(r0):
        nxt = t + rng.exponential(true_mtbf, runs)
        acc_at = rows[k]["accept_at"]
        acc = ~done & (nxt >= acc_at)
        accepted[acc], length[acc] = True, acc_at
        done |= acc
        rej_by = rows[k + 1]["reject_if_reached_by"]
        rej = ~done & ((k + 1 == r0) | ((rej_by is not None) & (nxt <= (rej_by if rej_by is not None else -1))))
        length[rej] = nxt[rej]
        done |= rej
        t = nxt
    assert done.all()
    return accepted, length


@pytest.mark.parametrize(("required", "ratio", "consumer", "producer"), [(1000.0, 2.0, 0.1, 0.1),
                                                                         (50.0, 3.0, 0.2, 0.1)])
def test_sequential_lines_are_walds_and_its_figures_match_a_simulation(required, ratio, consumer, producer):
    out = demonstration_test(None, None, method="sequential", mtbf=required, discrimination_ratio=ratio,
                             consumer_risk=consumer, producer_risk=producer, unit="h")
    seq = out["sequential"]
    design = required * ratio
    # Wald: ln LR = r ln d − t (1/θ₁ − 1/θ₀); A = (1 − β)/α, B = β/(1 − α)
    slope = (1 / required - 1 / design) / math.log(ratio)
    assert seq["accept_line"]["slope"] == pytest.approx(slope, rel=1e-12)
    assert seq["reject_line"]["intercept"] == pytest.approx(math.log((1 - consumer) / producer) / math.log(ratio))
    assert seq["accept_line"]["intercept"] == pytest.approx(math.log(consumer / (1 - producer)) / math.log(ratio))
    # truncated at the fixed-length plan of the same risks
    fixed = demonstration_test(None, None, mtbf=required, design_mtbf=design, consumer_risk=consumer,
                               producer_risk=producer)
    assert seq["truncation"]["time"] == pytest.approx(fixed["total_test_time"])
    assert seq["truncation"]["failures"] == fixed["failures"] + 1
    rng = np.random.default_rng(20261123)
    runs = 40_000
    for true, accept, expected in ((design, out["pass_probability"], seq["expected_test_time"]["at_design"]),
                                   (required, out["consumer_risk"], seq["expected_test_time"]["at_required"])):
        acc, length = simulate_sequential(seq, true, runs, rng)
        se_p = math.sqrt(accept * (1 - accept) / runs)
        assert abs(acc.mean() - accept) < 4 * se_p
        assert abs(length.mean() - expected) < 4 * length.std() / math.sqrt(runs)
    # it is shorter on average than the fixed-length test, which is the point of testing sequentially
    assert seq["expected_test_time"]["at_design"] < fixed["total_test_time"]
    assert seq["expected_test_time"]["at_required"] < fixed["total_test_time"]


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"mtbf": 100.0, "design_mtbf": 90.0, "producer_risk": 0.1}, "design_mtbf"),
    ({"mtbf": 100.0, "discrimination_ratio": 1.0, "producer_risk": 0.1}, "discrimination_ratio"),
    ({"mtbf": 100.0, "discrimination_ratio": 0.5, "producer_risk": 0.1, "method": "sequential"},
     "discrimination_ratio"),
    ({"mtbf": 100.0, "design_mtbf": 200.0, "method": "sequential"}, "producer_risk"),
    ({"mtbf": 100.0, "design_mtbf": 200.0, "producer_risk": 0.0}, "producer_risk"),
    ({"mtbf": 100.0, "design_mtbf": 200.0, "consumer_risk": 0.0, "producer_risk": 0.1}, "consumer_risk"),
    ({"mtbf": 100.0, "design_mtbf": 200.0, "producer_risk": 0.1, "method": "sequential", "failures": 2}, "failures"),
    ({"mtbf": 100.0, "total_test_time": 500.0}, "solve_for"),
    ({"mtbf": 100.0, "total_test_time": 500.0, "solve_for": "confidence", "confidence": 0.9}, "confidence"),
    ({"mtbf": 100.0, "failures": 0, "termination": "failure"}, "failures"),
    ({"mtbf": 100.0, "total_test_time": 50.0, "solve_for": "confidence", "sided": "two"}, "sided"),
    ({"solve_for": "mtbf"}, "total_test_time"),
    ({"mtbf": 100.0, "solve_for": "mtbf", "total_test_time": 50.0}, "mtbf"),
    ({"reliability": 0.9, "units": 20, "solve_for": "reliability", "test_multiple": 1.0}, "reliability"),
    ({"reliability": 0.9, "solve_for": "confidence"}, "units"),
    ({"reliability": 0.9, "design_reliability": 0.8, "producer_risk": 0.1}, "design_reliability"),
    ({"reliability": 0.9, "confidence": 0.9, "consumer_risk": 0.2}, "consumer_risk"),
    ({"reliability": 0.9, "termination": "failure"}, "termination"),
])
def test_impossible_or_conflicting_asks_name_the_field(kwargs, field):
    with pytest.raises(InputError) as err:
        demonstration_test(**kwargs)
    assert err.value.field == field
