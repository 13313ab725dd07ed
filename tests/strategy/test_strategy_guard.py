"""Every strategy answer finite, every calculation bounded (issue 26, items 5 and 9).

An answer beyond floating point is refused naming the input of most extreme magnitude (never
inf, which the service would write as null); a plan needing more failures than a test may allow
is refused after a bracketed search, not a scan of every count; and under a CPU budget the
calculators' loops stop and refuse naming the inputs."""

from __future__ import annotations

import math
from typing import Any

import pytest
from scipy import special

from bathtub.errors import InputError
from bathtub.strategy import attribute as att
from bathtub.strategy import constant_rate as cr
from bathtub.strategy import demonstration_test, failure_finding_interval
from bathtub.strategy.guard import NON_FINITE_RULE, OVER_BUDGET_RULE, answered, cpu_budget

# the audit's reproducers
OVERFLOW = {"reliability": 5e-324, "mission_time": 1.737784883802288e308,
            "discrimination_ratio": 2.1950569344829018e307}
TINY_PRODUCER_RISK = {"producer_risk": 1e-323, "method": "binomial", "reliability": 0.4335, "consumer_risk": 0.1447,
                      "design_reliability": 0.4974}
# an exponentiated Weibull whose median underflows (F(t) ≈ t^(5e-6) near 0): its quadrature
# sits at the subdivision limit on every call (about 20 CPU-seconds before a budget)
DEGENERATE_EXPO_WEIBULL = {"distribution_id": "expo_weibull", "params": {"alpha": 1.0, "beta": 5.0, "theta": 1e-6},
                           "target_availability": 1e-6}


def test_design_mtbf_past_the_floats_is_refused_naming_the_ratio():
    with pytest.raises(InputError) as err:
        demonstration_test(**OVERFLOW)
    assert err.value.field == "discrimination_ratio" and "beyond floating point" in err.value.rule


def test_design_mtbf_from_a_design_reliability_past_the_floats_is_refused():
    with pytest.raises(InputError) as err:
        demonstration_test(reliability=0.5, design_reliability=1 - 1e-16, mission_time=1e300, producer_risk=0.1,
                           method="mtbf")
    assert err.value.field == "design_reliability" and "beyond floating point" in err.value.rule


def test_any_non_finite_answer_is_refused_naming_the_most_extreme_input():
    @answered
    def calc(size: float, share: float, label: str = "x") -> dict[str, Any]:
        return {"ok": 1.0, "rows": [{"values": [2.0, size * 1e300]}], "label": label}

    assert calc(1.0, 0.5) == {"ok": 1.0, "rows": [{"values": [2.0, 1e300]}], "label": "x"}
    with pytest.raises(InputError) as err:
        calc(1e10, share=0.5)
    assert err.value.field == "size"
    assert err.value.rule.startswith(f"{NON_FINITE_RULE}: rows[0].values[1] would be inf")
    with pytest.raises(InputError) as err:  # a probability is extreme near 1 as near 0
        calc(size=1e10, share=1 - 1e-15)
    assert err.value.field == "share" and "size 10000000000.0" in err.value.rule


def test_a_plan_needing_more_failures_than_allowed_is_refused_without_scanning_them(monkeypatch):
    """The audit's 7-18 CPU-s refusal: every count up to 100 000 was tried. Now the scan stops at a
    bound computed from the inputs (counted: a handful of unit searches, not one per count)."""
    calls = 0
    units = att.binomial_units

    def counted(*args: Any, **kwargs: Any) -> int:
        nonlocal calls
        calls += 1
        return units(*args, **kwargs)

    monkeypatch.setattr(att, "binomial_units", counted)
    with pytest.raises(InputError) as err:
        demonstration_test(**TINY_PRODUCER_RISK)
    assert err.value.field == "design_reliability" and "more than 1000 failures needed" in err.value.rule
    assert calls <= 2 * 64


def test_a_producer_risk_below_1e_16_is_met_exactly_not_by_rounding():
    """1 − P(pass) rounds to 0 once P is within 1e-16 of 1, which used to 'meet' a producer's risk
    of 1e-323 with a plan whose real risk is far above it."""
    with pytest.raises(InputError) as err:
        demonstration_test(producer_risk=1e-323, mtbf=100.0, discrimination_ratio=1.5, consumer_risk=0.1)
    assert err.value.field == "design_mtbf" and "more than 1000 failures needed" in err.value.rule
    out = demonstration_test(producer_risk=1e-30, mtbf=100.0, discrimination_ratio=20.0, consumer_risk=0.1)
    real = special.pdtrc(out["failures"], out["total_test_time"] / out["design_mtbf"])
    assert 0.0 < real <= 1e-30


@pytest.mark.parametrize(("required", "design", "consumer", "producer"),
                         [(0.5, 0.6, 0.2, 1e-6), (0.8, 0.85, 0.05, 0.1), (0.5, 0.58, 0.1, 1e-4)])
def test_bracketed_attribute_plan_is_the_first_count_meeting_both(required, design, consumer, producer):
    """Plans past the one-by-one scan (more than 64 failures): the same plan an exhaustive scan finds."""
    f, n = att.both_risks_plan(required, design, consumer, producer)
    assert f > 64
    p_design = 1 - design
    for k in range(f):
        assert special.bdtrc(k, att.binomial_units(required, 1 - consumer, k), p_design) > producer
    assert n == att.binomial_units(required, 1 - consumer, f)
    assert special.bdtrc(f, n, p_design) <= producer


@pytest.mark.parametrize(("ratio", "consumer", "producer"), [(1.3, 0.1, 0.1), (1.5, 0.05, 1e-8)])
def test_bracketed_rate_plan_is_the_first_count_meeting_both(ratio, consumer, producer):
    r, t = cr.both_risks_plan(100.0, 100.0 * ratio, consumer, producer)
    assert r > 64
    for k in range(r):
        assert special.pdtrc(k, cr.test_time(100.0, 1 - consumer, k) / (100.0 * ratio)) > producer
    assert t == cr.test_time(100.0, 1 - consumer, r)


def test_without_a_budget_nothing_is_checked():
    out = failure_finding_interval("weibull", {"alpha": 100.0, "beta": 2.0}, 0.99)
    assert math.isfinite(out["interval"])


@pytest.mark.parametrize("call", [
    lambda: failure_finding_interval(**DEGENERATE_EXPO_WEIBULL),
    lambda: demonstration_test(method="sequential", producer_risk=0.1, mtbf=100.0, discrimination_ratio=1.2,
                               consumer_risk=0.1),
    lambda: demonstration_test(**{**TINY_PRODUCER_RISK, "producer_risk": 0.05}),
])
def test_a_spent_budget_refuses_naming_the_inputs(call):
    with cpu_budget(0.0), pytest.raises(InputError) as err:
        call()
    assert err.value.rule.startswith(OVER_BUDGET_RULE)


def test_the_budget_names_the_most_extreme_input():
    with cpu_budget(0.0), pytest.raises(InputError) as err:
        failure_finding_interval(**DEGENERATE_EXPO_WEIBULL)
    assert err.value.field == "params.theta" and "target_availability 1e-06" in err.value.rule


def test_a_sequential_test_at_a_confidence_that_rounds_away_is_refused_not_500():
    """1 − 5e-324 is 1.0: Wald's reject line ln((1 − β)/α) was ln 0, a ValueError (500)."""
    with pytest.raises(InputError) as err:
        demonstration_test(method="sequential", mtbf=1e-6, confidence=5e-324, producer_risk=0.999999999,
                           discrimination_ratio=1e300)
    assert err.value.field == "confidence" and "too close to 0" in err.value.rule


def test_units_of_a_mission_that_underflows_are_refused_not_500():
    """test_multiple × mission_time = 5e-324² is 0: the units needed divided by it (ZeroDivisionError)."""
    with pytest.raises(InputError) as err:
        demonstration_test(mission_time=5e-324, mtbf=1e-30, design_mtbf=2.0, test_multiple=5e-324,
                           consumer_risk=0.999999999)
    assert err.value.field == "mission_time" and "too short for this test" in err.value.rule


def test_an_arithmetic_error_on_the_way_is_refused_naming_the_most_extreme_input():
    @answered
    def calc(size: float, count: int) -> dict[str, Any]:
        return {"x": count / (size * size)}

    with pytest.raises(InputError) as err:
        calc(5e-324, 3)
    assert err.value.field == "size" and err.value.rule.startswith(f"{NON_FINITE_RULE}: ZeroDivisionError")


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # numpy's, on the way to the inf
def test_an_optimal_replacement_cost_rate_past_the_floats_is_refused():
    """A sibling of item 5: minimal repair at a rate of 1e300 failures per unit time, each costing
    1e300, has cost rate Cu·λ = inf (answered as inf, written as null)."""
    from bathtub.strategy import optimal_replacement

    with pytest.raises(InputError) as err:
        optimal_replacement("exponential", {"failure_rate": 1e300}, planned_cost=0.0, unplanned_cost=1e300,
                            policy="minimal_repair")
    assert err.value.field == "params.failure_rate"
    assert err.value.rule.startswith(f"{NON_FINITE_RULE}: optimal_cost_rate would be inf")
