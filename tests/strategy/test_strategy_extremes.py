"""Strategy calculators at the ends of their ranges (found by the OpenAPI fuzz, issue 11): a target
whose unavailability 1 − A is a few ulps, one whose availability is 1e-300, and a model whose
parameters leave floating point. Each is solved exactly in closed-form-bracketed time or refused
naming target_availability; none may search without end or answer 500."""

from __future__ import annotations

import math

import pytest

from bathtub.errors import InputError
from bathtub.strategy import demonstration_test, failure_finding_interval, shut_plan


def test_unavailability_of_a_few_ulps_keeps_its_digits():
    """Exponential, U(T) = x/2 − x²/6 + … with x = λT: for 1 − A = 2⁻⁵³ the interval is 2(1 − A)/λ
    to 1e-15, which 1 − ∫R/T (cancelling to noise) could not give."""
    a = 1.0 - 2.0**-53
    out = failure_finding_interval("exponential", [2.0], a)
    assert out["interval"] == pytest.approx(2.0 * 2.0**-53 / 2.0, rel=1e-9)
    assert out["mean_unavailability"] == pytest.approx(2.0**-53, rel=1e-9)


def test_availability_of_1e_300_is_met_far_out():
    """(1/T)∫₀ᵀ e^{−λt} dt = (1 − e^{−λT})/(λT) = 1/(λT) once λT is huge: T = 1/(λA)."""
    out = failure_finding_interval("exponential", [1.0], 1e-300)
    assert out["interval"] == pytest.approx(1e300, rel=1e-9)


def test_heavy_tail_low_target():
    """Log-logistic beta 1/2 (no finite mean): (1/T)∫₀ᵀ R = 2(√T − ln(1 + √T))/T for alpha 1."""
    out = failure_finding_interval("loglogistic", [1.0, 0.5], 0.01)
    t = out["interval"]
    assert 2.0 * (math.sqrt(t) - math.log1p(math.sqrt(t))) / t == pytest.approx(0.01, rel=1e-8)


def test_parameters_past_floating_point_are_refused_naming_the_target():
    with pytest.raises(InputError) as err:
        failure_finding_interval("gamma", [7.024618409181005e-295, 5e-324], 5e-324)
    assert err.value.field == "target_availability"


def test_demonstration_bound_near_certain_failure_keeps_its_digits():
    """n = f + 1 units: the upper bound on p is C^{1/(f+1)}, so the reliability shown is
    1 − C^{1/1001} = −expm1(ln C / 1001), about 2⁻⁵³/1001 — not 0, and not a math domain error."""
    c = 1.0 - 2.0**-53
    out = demonstration_test(units=1001, failures=1000, confidence=c, solve_for="reliability")
    assert out["demonstrated_reliability"] == pytest.approx(-math.expm1(math.log1p(-(2.0**-53)) / 1001), rel=1e-9)


def test_demonstration_missions_underflowing_are_refused():
    with pytest.raises(InputError) as err:
        demonstration_test(reliability=0.9, units=5, test_multiple=1e-200, shape=2.0, solve_for="confidence")
    assert err.value.field == "test_multiple"


def test_shut_every_past_the_calendar_is_just_beyond_the_horizon():
    """A shut every 1e16 days (found by the fuzz: a 500 from date arithmetic overflowing) falls
    once, on its start, within the horizon; the next would be past year 9999."""
    out = shut_plan(distribution_id="weibull", params=[1000.0, 2.0], current_age=0.0, usage_rate=24.0,
                    horizon_days=365.0, failure_cost=1e4, today="2026-01-01",
                    shuts=[{"name": "rare", "every": 1e16, "cost": 100.0, "start": "2026-02-01"}])
    assert [p["date"] for p in out["plan"]] == ["2026-02-01"]


def test_shut_plan_figures_past_floating_point_are_refused():
    """Found by the OpenAPI fuzz: finite costs of ~1e308 on several shuts summed to inf, and the
    answer published a non-number as expected_cost. Each overflow is refused naming its field."""
    base = {"distribution_id": "weibull", "params": [1000.0, 2.0], "current_age": 0.0, "horizon_days": 3650.0,
            "today": "2026-01-01"}
    dear = [{"name": f"s{i}", "dates": [f"202{6 + i}-06-01"], "cost": 1.7e308} for i in range(3)]
    with pytest.raises(InputError) as e:
        shut_plan(**base, usage_rate=24.0, failure_cost=1.7e308, shuts=dear)
    assert e.value.field == "shuts.cost"
    with pytest.raises(InputError) as e:
        shut_plan(**base, usage_rate=1e306, failure_cost=1.0,
                  shuts=[{"name": "s", "dates": ["2026-06-01"], "cost": 1.0}])
    assert e.value.field == "usage_rate"
    out = shut_plan(**base, usage_rate=24.0, failure_cost=1e4, shuts=[{"name": "s", "dates": ["2026-06-01"],
                                                                       "cost": 100.0}])
    assert all(math.isfinite(out[k]) for k in ("expected_cost", "expected_failures", "planned_cost"))


@pytest.mark.parametrize(("request_", "field"), [
    # the fuzz's 500s: a b_life of 5e-324 leaves R = 1 - b/100 at 1.0 (log R = 0, a division by zero)...
    ({"b_life": 5e-324, "design_mtbf": 5e-324, "mission_time": 5e-324, "producer_risk": 5e-324}, "mission_time"),
    ({"b_life": 5e-324, "mission_time": 36525.0, "method": "mtbf", "shape": 5.27e307, "units": 12687},
     "mission_time"),
    # ...and a subnormal MTBF put θ/4 at 0 in the operating characteristic's grid (geomspace from 0)
    ({"design_mtbf": 1.67e308, "reliability": 5e-324, "producer_risk": 0.947, "mission_time": 1.11e-308}, "mtbf"),
    ({"mtbf": 5e-324, "units": 3}, "mtbf"),
])
def test_demonstration_magnitudes_past_floating_point_are_refused_naming_the_field(request_, field):
    with pytest.raises(InputError) as e:
        demonstration_test(**request_)
    assert e.value.field == field


def test_demonstration_smallest_normal_mtbf_still_plans():
    out = demonstration_test(mtbf=1e-300, confidence=0.9)
    # zero failures at 90%: T = θ ln 10 (chi-square with 2 degrees of freedom / 2)
    assert out["total_test_time"] == pytest.approx(1e-300 * math.log(10.0), rel=1e-12)
    assert all(math.isfinite(p) for p in out["operating_characteristic"]["pass_probability"])
