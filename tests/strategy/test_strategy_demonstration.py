"""Demonstration-test planning against textbook formulas, published success-run tables, reliability's
sample_size_no_failures / reliability_test_planner / reliability_test_duration, and Monte Carlo."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reliability.Reliability_testing import (
    reliability_test_duration,
    reliability_test_planner,
    sample_size_no_failures,
)
from scipy import stats

from bathtub.errors import InputError
from bathtub.strategy import demonstration_test, mtbf_test_plan
from tests.strategy.strategy_helpers import assert_json_ready

SPEC_FIELDS = ["method", "solve_for", "units", "test_time_per_unit", "total_test_time", "failures",
               "demonstrated_reliability", "consumer_risk", "summary", "assumptions", "tradeoff"]


@pytest.mark.parametrize("reliability", [0.8, 0.9, 0.95, 0.99, 0.999])
@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.9, 0.95, 0.99])
def test_zero_failure_textbook(reliability, confidence):
    """Success run: n = ceil(ln(1 − C)/ln R)."""
    out = demonstration_test(reliability, confidence)
    assert out["units"] == math.ceil(math.log(1 - confidence) / math.log(reliability) - 1e-9)
    assert out["method"] == "binomial" and out["solve_for"] == "units"
    assert out["consumer_risk"] <= 1 - confidence + 1e-12
    assert out["demonstrated_reliability"] >= reliability
    assert list(out)[: len(SPEC_FIELDS)] == SPEC_FIELDS
    assert_json_ready(out)


@pytest.mark.parametrize(("reliability", "confidence", "expected"), [
    # Published success-run / binomial attribute tables (e.g. Kececioglu, Reliability & Life Testing
    # Handbook; O'Connor, Practical Reliability Engineering): units for 0, 1, 2, 3 failures allowed.
    (0.90, 0.90, [22, 38, 52, 65]),
    (0.95, 0.95, [59, 93, 124, 153]),
    (0.99, 0.90, [230, 388, 531, 667]),
    (0.99, 0.95, [299, 473, 628, 773]),
])
def test_attribute_tests_with_failures_match_published_tables(reliability, confidence, expected):
    out = demonstration_test(reliability, confidence, failures=1)
    assert out["units"] == expected[1]
    assert out["tradeoff"]["failures"] == [0, 1, 2, 3]
    assert out["tradeoff"]["rows"][0]["values"] == expected
    # brute force: the smallest n whose chance of passing at exactly R is at most 1 − C
    for f, n in enumerate(expected):
        assert stats.binom.cdf(f, n, 1 - reliability) <= 1 - confidence
        assert stats.binom.cdf(f, n - 1, 1 - reliability) > 1 - confidence


@pytest.mark.parametrize(("reliability", "confidence", "multiple", "shape"), [
    (0.9, 0.9, 2.0, 2.0), (0.95, 0.95, 1.5, 3.0), (0.99, 0.9, 3.0, 1.2), (0.9, 0.95, 0.5, 2.0),
])
def test_weibayes_zero_failure_extension(reliability, confidence, multiple, shape):
    """n = ceil(ln(1 − C)/(m^β ln R)); also reliability's sample_size_no_failures."""
    out = demonstration_test(reliability, confidence, mission_time=100.0, test_multiple=multiple, shape=shape,
                             unit="h")
    textbook = math.ceil(math.log(1 - confidence) / (multiple**shape * math.log(reliability)) - 1e-9)
    peer = sample_size_no_failures(reliability, confidence, lifetimes=multiple, weibull_shape=shape,
                                   print_results=False)
    assert out["units"] == textbook == peer
    assert out["method"] == "weibayes"
    assert out["test_time_per_unit"] == pytest.approx(100.0 * multiple)
    assert out["total_test_time"] == pytest.approx(100.0 * multiple * textbook)


@pytest.mark.parametrize(("units", "failures", "shape"), [(10, 0, 2.0), (20, 2, 1.5), (5, 0, 3.0)])
def test_solving_for_test_time_per_unit(units, failures, shape):
    r, c, mission = 0.9, 0.9, 200.0
    out = demonstration_test(r, c, mission_time=mission, failures=failures, units=units, shape=shape)
    m = out["test_time_per_unit"] / mission
    assert out["solve_for"] == "test_time_per_unit" and out["units"] == units
    # the consumer's risk at exactly R is 1 − C: the plan is exact, not rounded
    assert stats.binom.cdf(failures, units, 1 - r ** (m**shape)) == pytest.approx(1 - c, rel=1e-9)
    assert out["demonstrated_reliability"] == pytest.approx(r, rel=1e-12)
    if failures == 0:
        # closed form: m = (ln(1 − C)/(n ln R))^{1/β}
        assert m == pytest.approx((math.log(1 - c) / (units * math.log(r))) ** (1 / shape), rel=1e-10)


@pytest.mark.parametrize(("mtbf", "confidence", "failures"), [(1000.0, 0.9, 0), (500.0, 0.8, 3), (20.0, 0.95, 7)])
def test_chi_squared_mtbf_test(mtbf, confidence, failures):
    """T = MTBF·χ²_{C, 2f+2}/2 (time-terminated), equal to reliability_test_planner's duration."""
    out = demonstration_test(None, confidence, failures=failures, method="mtbf", mtbf=mtbf)
    textbook = mtbf * stats.chi2.ppf(confidence, 2 * failures + 2) / 2
    peer = reliability_test_planner(MTBF=mtbf, number_of_failures=failures, CI=confidence, print_results=False)
    assert out["total_test_time"] == pytest.approx(textbook, rel=1e-12)
    assert out["total_test_time"] == pytest.approx(peer.test_duration, rel=1e-12)
    assert out["consumer_risk"] == pytest.approx(1 - confidence, rel=1e-9)
    assert out["method"] == "mtbf" and out["solve_for"] == "total_test_time"
    assert_json_ready(out)


def test_mtbf_from_reliability_and_units():
    """With mission_time, R ⇒ MTBF = −t/ln R; with units, the total splits evenly."""
    out = demonstration_test(0.99, 0.9, mission_time=10.0, method="mtbf", units=8, unit="h")
    theta = -10.0 / math.log(0.99)
    assert out["mtbf"] == pytest.approx(theta)
    assert out["total_test_time"] == pytest.approx(theta * stats.chi2.ppf(0.9, 2) / 2)
    assert out["test_time_per_unit"] == pytest.approx(out["total_test_time"] / 8)
    assert out["demonstrated_reliability"] == pytest.approx(0.99)


def test_mtbf_plans_meeting_both_risks_where_the_peer_does_not():
    """reliability_test_duration returns the test length for one failure fewer than needed, so its
    producer's risk exceeds the target (its loop steps back one failure after crossing the target).
    Textbook (MIL-HDBK-781 style): the smallest f with producer's risk ≤ α at T = θ_r·χ²_{1−β,2f+2}/2.
    Checked a second way: a Monte Carlo of the test at the design MTBF (fixed seed)."""
    th_r, th_d, consumer, producer = 500.0, 1500.0, 0.05, 0.10
    ours = mtbf_test_plan(th_r, th_d, consumer, producer)
    assert ours["producer_risk"] <= producer
    assert ours["consumer_risk"] == pytest.approx(consumer, rel=1e-9)
    # brute force over f, directly from Poisson probabilities
    for f in range(ours["failures"]):
        t = th_r * stats.chi2.ppf(1 - consumer, 2 * f + 2) / 2
        assert 1 - stats.poisson.cdf(f, t / th_d) > producer
    peer = reliability_test_duration(th_r, th_d, consumer, producer, show_plot=False, print_results=False)
    peer_f = ours["failures"] - 1
    assert peer == pytest.approx(th_r * stats.chi2.ppf(1 - consumer, 2 * peer_f + 2) / 2, rel=1e-12)
    peer_risk = 1 - stats.poisson.cdf(peer_f, peer / th_d)
    assert peer_risk > producer

    rng = np.random.default_rng(781)
    reps = 400_000

    def simulated_reject_rate(total, allowed):
        failures = rng.poisson(total / th_d, size=reps)  # exponential lives, repaired: Poisson count
        rejected = failures > allowed
        return rejected.mean(), rejected.std(ddof=1) / math.sqrt(reps)

    ours_mc, se = simulated_reject_rate(ours["total_test_time"], ours["failures"])
    assert abs(ours_mc - ours["producer_risk"]) < 4 * se and ours_mc < producer
    peer_mc, se = simulated_reject_rate(peer, peer_f)
    assert peer_mc - producer > 4 * se


def test_b_life_is_reliability():
    a = demonstration_test(None, 0.9, b_life=10, mission_time=1000.0)
    b = demonstration_test(0.9, 0.9, mission_time=1000.0)
    assert a["units"] == b["units"] == 22
    with pytest.raises(InputError) as err:
        demonstration_test(0.95, 0.9, b_life=10)
    assert err.value.field == "b_life"


def test_design_reliability_chance_of_passing_monte_carlo():
    """A Weibull design whose mission reliability is R_d is tested m missions per unit; the share of
    simulated tests with at most f failures matches the reported pass probability."""
    r, c, f, m, shape, mission, r_design = 0.9, 0.9, 1, 1.5, 2.0, 100.0, 0.97
    out = demonstration_test(r, c, mission_time=mission, failures=f, test_multiple=m, shape=shape,
                             design_reliability=r_design)
    n = out["units"]
    alpha = mission / (-math.log(r_design)) ** (1 / shape)  # Weibull scale with R(mission) = R_d
    rng = np.random.default_rng(5)
    reps = 100_000
    lives = alpha * rng.weibull(shape, size=(reps, n))
    passed = (lives < m * mission).sum(axis=1) <= f
    se = passed.std(ddof=1) / math.sqrt(reps)
    assert abs(passed.mean() - out["pass_probability"]) < 4 * se
    assert out["producer_risk"] == pytest.approx(1 - out["pass_probability"])
    # and a population exactly at the requirement passes with the consumer's risk, at most 1 − C
    alpha_req = mission / (-math.log(r)) ** (1 / shape)
    lives = alpha_req * rng.weibull(shape, size=(reps, n))
    passed = (lives < m * mission).sum(axis=1) <= f
    assert abs(passed.mean() - out["consumer_risk"]) < 4 * passed.std(ddof=1) / math.sqrt(reps)
    assert out["consumer_risk"] <= 1 - c
    assert out["tradeoff"]["rows"][2]["values"][f] == pytest.approx(out["pass_probability"])


def test_shape_interval_sensitivity_and_warning():
    out = demonstration_test(0.9, 0.9, mission_time=100.0, test_multiple=2.0, shape=2.0, shape_interval=[1.5, 3.0])
    rows = out["shape_sensitivity"]
    assert rows[0]["shape"] == 1.5 and rows[-1]["shape"] == 3.0
    # fewer units suffice when the shape is higher (m > 1): units fall along the rows
    units = [row["units"] for row in rows]
    assert units == sorted(units, reverse=True) and units[0] > units[-1]
    for row in rows:
        n = math.ceil(math.log(0.1) / (2.0 ** row["shape"] * math.log(0.9)) - 1e-9)
        assert row["units"] == n
    # if the true shape is the lower end, the planned test demonstrates less than 0.9
    assert rows[0]["demonstrated_reliability"] < 0.9 < rows[-1]["demonstrated_reliability"]
    assert "warning" in out and "shape" in out["warning"]

    calm = demonstration_test(0.9, 0.9, mission_time=100.0, shape=2.0, shape_interval=[1.9, 2.1])
    assert "warning" not in calm  # one mission per unit: the shape does not matter
    assert {row["units"] for row in calm["shape_sensitivity"]} == {22}


def test_summary_and_assumptions_speak_plainly():
    out = demonstration_test(0.95, 0.9, mission_time=500.0, unit="h", failures=1, test_multiple=2.0, shape=1.5)
    assert f"Test {out['units']} units" in out["summary"] and "1000 h" in out["summary"]
    assert any("Weibull" in a for a in out["assumptions"])
    mt = demonstration_test(None, 0.9, method="mtbf", mtbf=100.0, mission_time=5.0, unit="h")
    assert any("Constant failure rate" in a for a in mt["assumptions"])
    assert "MTBF of at least 100" in mt["summary"]


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"confidence": 1.0}, "confidence"),
    ({"confidence": 0.0}, "confidence"),
    ({"confidence": 1.5}, "confidence"),
    ({"reliability": 1.0}, "reliability"),
    ({"reliability": None}, "reliability"),
    ({"failures": -1}, "failures"),
    ({"failures": 1.5}, "failures"),
    ({"test_multiple": 2.0}, "shape"),
    ({"test_multiple": -1.0, "shape": 2.0}, "test_multiple"),
    ({"units": 5, "shape": 2.0, "failures": 5}, "units"),
    ({"units": 0, "shape": 2.0}, "units"),
    ({"units": 5}, "shape"),
    # units, test length and reliability all given: which unknown is meant must be said
    ({"units": 5, "shape": 2.0, "test_multiple": 2.0}, "solve_for"),
    ({"method": "bayesian"}, "method"),
    ({"method": "mtbf"}, "mtbf"),
    ({"method": "mtbf", "mtbf": -5.0}, "mtbf"),
    ({"method": "weibayes"}, "shape"),
    ({"shape": 2.0, "shape_interval": [3.0, 1.0]}, "shape_interval"),
    ({"shape": 2.0, "shape_interval": [2.5, 3.0]}, "shape_interval"),
    ({"shape_interval": [1.0, 3.0]}, "shape"),
    ({"shape": 2.0, "shape_interval": [1.0]}, "shape_interval"),
    ({"design_reliability": 1.2}, "design_reliability"),
    ({"b_life": 120, "reliability": None}, "b_life"),
    ({"mission_time": 0.0}, "mission_time"),
    ({"method": "mtbf", "mtbf": 10.0, "design_reliability": 0.99}, "mission_time"),
])
def test_bad_input_names_the_field(kwargs, field):
    args = {"reliability": 0.9, **kwargs}
    with pytest.raises(InputError) as err:
        demonstration_test(**args)
    assert err.value.field == field
