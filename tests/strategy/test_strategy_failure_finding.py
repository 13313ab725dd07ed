"""Failure-finding interval: the exact exponential form 1 − (1 − e^{−λT})/(λT), the Weibull closed
form through the incomplete gamma function, and the classic T ≈ 2(1 − A)/λ approximation."""

from __future__ import annotations

import math

import pytest
from scipy import optimize, special

from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.strategy import failure_finding_interval
from bathtub.strategy.failure_finding import exponential_mean_unavailability
from tests.strategy.strategy_helpers import assert_json_ready

SPEC_FIELDS = ["distribution", "unit", "mttf", "target_availability", "interval", "method", "note"]


@pytest.mark.parametrize(("rate", "target"), [(1e-3, 0.99), (1e-4, 0.999), (0.5, 0.9), (2.0, 0.5)])
def test_exponential_exact_form(rate, target):
    out = failure_finding_interval("exponential", {"failure_rate": rate}, target, unit="h")
    # independent solve of the closed form
    ref = optimize.brentq(lambda t: 1 - (1 - math.exp(-rate * t)) / (rate * t) - (1 - target), 1e-9 / rate,
                          100 / rate, xtol=1e-15, rtol=1e-15)
    assert out["interval"] == pytest.approx(ref, rel=1e-10)
    assert exponential_mean_unavailability(rate, out["interval"]) == pytest.approx(1 - target, rel=1e-10)
    assert out["method"] == "exact_exponential"
    assert "2(1 − A)/λ" in out["note"]
    assert out["approximate_interval"] == pytest.approx(2 * (1 - target) / rate, rel=1e-12)
    assert list(out)[: len(SPEC_FIELDS)] == SPEC_FIELDS
    assert out["unit"] == "h" and out["mttf"] == pytest.approx(1 / rate)
    assert_json_ready(out)


def test_classic_approximation_is_close_only_for_high_availability():
    high = failure_finding_interval("exponential", [1e-3], 0.9999)
    assert high["interval"] == pytest.approx(high["approximate_interval"], rel=1e-4)
    low = failure_finding_interval("exponential", [1e-3], 0.8)
    assert low["interval"] > 1.1 * low["approximate_interval"]


@pytest.mark.parametrize(("alpha", "beta", "target"), [(1000.0, 2.0, 0.999), (500.0, 0.7, 0.95),
                                                       (10.0, 3.5, 0.9)])
def test_weibull_closed_form(alpha, beta, target):
    """∫₀ᵀ exp(−(t/α)^β) dt = (α/β)·Γ(1/β)·P(1/β, (T/α)^β), P the regularised lower gamma."""
    out = failure_finding_interval("weibull", {"alpha": alpha, "beta": beta}, target)
    t = out["interval"]
    area = alpha / beta * special.gamma(1 / beta) * special.gammainc(1 / beta, (t / alpha) ** beta)
    assert 1 - area / t == pytest.approx(1 - target, rel=1e-9)
    assert out["method"] == "exact_mean_unavailability"


def test_failure_free_period_and_saved_model():
    life = Lifetime.of("weibull", {"alpha": 100.0, "beta": 2.0, "gamma": 50.0})
    out = failure_finding_interval(lifetime=life, target_availability=0.99)
    assert out["interval"] > 50.0
    assert out["mean_unavailability"] == pytest.approx(0.01, rel=1e-9)
    assert out["distribution"] == "weibull"


@pytest.mark.parametrize(("target", "field"), [(1.0, "target_availability"), (0.0, "target_availability"),
                                               (-0.2, "target_availability"), ("0.9", "target_availability"),
                                               (None, "target_availability")])
def test_bad_target(target, field):
    with pytest.raises(InputError) as err:
        failure_finding_interval("exponential", [0.1], target)
    assert err.value.field == field


def test_unknown_distribution():
    with pytest.raises(InputError) as err:
        failure_finding_interval("bathtubby", [0.1], 0.9)
    assert err.value.field == "distribution_id"


def test_shape_below_one_has_no_quadrature_warnings():
    """R with an infinite slope at 0 (Weibull beta 0.5): still exact, and no warning escapes
    (pytest turns warnings into errors). ∫₀ᵀ R = 2α·γ(2, √(T/α)) for beta = 1/2."""
    out = failure_finding_interval("weibull", {"alpha": 100.0, "beta": 0.5}, 0.9)
    t = out["interval"]
    area = 2 * 100.0 * special.gammainc(2, math.sqrt(t / 100.0))
    assert 1 - area / t == pytest.approx(0.1, rel=1e-8)
    assert failure_finding_interval("loglogistic", {"alpha": 100.0, "beta": 0.8}, 0.9)["mttf"] is None
