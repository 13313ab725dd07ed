"""Standby groups with an imperfect switch (`switch`: failure on demand, the switch's own life
while waiting, a switch-over time) against closed forms, each within the run's own interval at
a fixed seed; a switch that never fails and takes no time draws nothing (the same numbers as
no switch); bit-identical on 1 and 2 threads; bad values refused naming the field."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from bathtub.engine import simulate_availability, simulate_mission
from bathtub.errors import InputError

from .engine_diagrams import exp_model, series

Z999 = 3.2905267314919


def standby(rate: float, spares: int = 1, repair: float | None = None, **extra: object) -> dict:
    node = {"id": "S", "type": "standby", "model": exp_model(rate), "spares": spares, "cold": True, **extra}
    if repair is not None:
        node["repair"] = exp_model(repair)
    return node


def check_curve(res, exact) -> None:
    """Every grid point of R(t) within its own binomial 99.9% interval."""
    exact = np.asarray(exact)
    n = res.replications
    se = np.sqrt(exact * (1 - exact) / n)
    assert np.all(np.abs(res.reliability - exact) <= Z999 * se + 2.0 / n), (res.reliability, exact)


def test_switch_failing_on_demand_against_the_closed_form():
    """Cold pair, rate λ, switch success p = 1 - p_fail: the system survives t if the first
    unit does (e^{-λt}), or it failed at x < t, the switch worked (p) and the spare lives the
    rest: ∫_0^t λe^{-λx} p e^{-λ(t-x)} dx = pλt e^{-λt}. So R(t) = e^{-λt}(1 + pλt)."""
    lam, p = 0.001, 0.8
    d = series(standby(lam, switch={"p_fail": 1 - p}))
    res = simulate_mission(d, mission_time=3000.0, replications=40_000, seed=301, grid=7)
    t = res.t
    check_curve(res, np.exp(-lam * t) * (1 + p * lam * t))
    # MTTF = 1/λ + p/λ
    assert abs(res.mttf - (1 + p) / lam) <= Z999 * res.mttf_std_error


def test_switch_with_its_own_life_against_the_closed_form():
    """The switch also fails while waiting, at rate ν (a failed switch cannot switch): it works
    at the demand x with chance p e^{-νx}, so R(t) = e^{-λt} + ∫_0^t λe^{-λx} p e^{-νx}
    e^{-λ(t-x)} dx = e^{-λt}(1 + pλ(1 - e^{-νt})/ν)."""
    lam, nu, p = 0.001, 0.0005, 0.9
    d = series(standby(lam, switch={"p_fail": 1 - p, "life": exp_model(nu)}))
    res = simulate_mission(d, mission_time=3000.0, replications=40_000, seed=302, grid=7)
    t = res.t
    check_curve(res, np.exp(-lam * t) * (1 + p * lam * -np.expm1(-nu * t) / nu))


def test_mission_mttf_with_a_switch_over_time_by_the_renewal_argument():
    """Cold group of n = 3 units, rate λ, switch success p, switch-over τ (the mission waits
    through it; the spare's life starts when it is over). Let T_j be the time to failure with
    j units left, the first running. The running unit lives X ~ Exp(λ); then, if a spare is
    left, the switch works with chance p (independently: a switch fails only on a demand
    that ends the mission), the system waits τ and starts afresh with j - 1 units:
        T_j = X + [switch works] (τ + T_{j-1}),  T_1 = X,
    so E[T_j] = 1/λ + p (τ + E[T_{j-1}]), and E[T_3] = (1 + p + p²)/λ + (p + p²) τ."""
    lam, p, tau = 0.01, 0.7, 40.0
    d = series(standby(lam, spares=2, switch={"p_fail": 1 - p, "switchover": tau}))
    res = simulate_mission(d, mission_time=500.0, replications=40_000, seed=303, grid=3)
    exact = (1 + p + p * p) / lam + (p + p * p) * tau
    assert abs(res.mttf - exact) <= Z999 * res.mttf_std_error, (res.mttf, exact, res.mttf_std_error)


def _semi_markov_availability(lam: float, mu: float, tau: float) -> float:
    """Cold pair, rate λ each, repair Exp(μ) at once, perfect switch with switch-over τ. States:
    S0 one runs and the other waits (up, sojourn 1/λ) → W; W the spare being switched in while
    the failed unit is repaired (down, sojourn E[min(τ, R)] = (1 - e^{-μτ})/μ): the repair ends
    first (chance 1 - e^{-μτ}) and that unit runs → S0, else the spare runs → S1; S1 one runs,
    one in repair (up, 1/(λ + μ)) → S0 (μ) or S2 (λ); S2 both in repair (down, 1/(2μ)) → S1
    (the first repaired runs at once: no demand on the switch). Availability = Σ_up π_i m_i /
    Σ π_i m_i with π the embedded chain's stationary law."""
    q = math.exp(-mu * tau)
    P = np.array([[0, 1, 0, 0], [1 - q, 0, q, 0], [mu / (lam + mu), 0, 0, lam / (lam + mu)], [0, 0, 1, 0]])
    m = np.array([1 / lam, (1 - q) / mu, 1 / (lam + mu), 1 / (2 * mu)])
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1))])
    pi /= pi.sum()
    return float((pi[0] * m[0] + pi[2] * m[2]) / (pi @ m))


def test_availability_with_a_switch_over_time_against_its_semi_markov_process():
    lam, mu, tau = 0.01, 0.05, 5.0
    d = series(standby(lam, repair=mu, switch={"p_fail": 0.0, "switchover": tau}))
    res = simulate_availability(d, horizon=20_000.0, replications=400, seed=304, grid=2)
    exact = _semi_markov_availability(lam, mu, tau)
    assert abs(res.mean_availability - exact) <= Z999 * res.mean_availability_std_error + 1e-4, \
        (res.mean_availability, exact, res.mean_availability_std_error)
    # the switch-over alone costs availability: the perfect instant switch is the τ = 0 chain
    assert exact < _semi_markov_availability(lam, mu, 0.0)


def test_a_switch_that_always_fails_leaves_the_spare_idle():
    """p_fail = 1: the spare never runs (the switch fails at each demand and is repaired with
    the group), so the pair is one repairable unit: A = μ/(λ + μ)."""
    lam, mu = 0.01, 0.1
    d = series(standby(lam, repair=mu, switch={"p_fail": 1.0}))
    res = simulate_availability(d, horizon=20_000.0, replications=200, seed=305, grid=2)
    exact = mu / (lam + mu)
    assert abs(res.mean_availability - exact) <= Z999 * res.mean_availability_std_error + 1e-4


def _same(a, b) -> None:
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y), f.name
        else:
            assert x == y, f.name


@pytest.mark.parametrize("switch", [{"p_fail": 0.0}, {"p_fail": 0, "switchover": 0}])
def test_a_perfect_instant_switch_gives_todays_numbers_for_a_seed(switch):
    # p = 1 and no switch-over draws nothing: every number as without a switch, both runs.
    for repair in (None, 0.05):
        plain, with_switch = series(standby(0.01, spares=2, repair=repair)), \
            series(standby(0.01, spares=2, repair=repair, switch=switch))
        if repair is None:
            _same(simulate_mission(plain, mission_time=300.0, replications=2000, seed=7, grid=5),
                  simulate_mission(with_switch, mission_time=300.0, replications=2000, seed=7, grid=5))
        else:
            _same(simulate_availability(plain, horizon=2000.0, replications=200, seed=7, grid=5),
                  simulate_availability(with_switch, horizon=2000.0, replications=200, seed=7, grid=5))


def test_bit_identical_on_one_and_two_threads():
    sw = {"p_fail": 0.2, "life": exp_model(0.002), "switchover": 3.0}
    d = series(standby(0.01, spares=2, repair=0.05, switch=sw))
    _same(simulate_availability(d, horizon=2000.0, replications=300, seed=9, grid=5, threads=1),
          simulate_availability(d, horizon=2000.0, replications=300, seed=9, grid=5, threads=2))
    m = series(standby(0.01, spares=2, switch=sw))
    _same(simulate_mission(m, mission_time=300.0, replications=3000, seed=9, grid=5, threads=1),
          simulate_mission(m, mission_time=300.0, replications=3000, seed=9, grid=5, threads=2))


@pytest.mark.parametrize(("switch", "field"), [
    ({"p_fail": 1.5}, "diagram.nodes.S.switch.p_fail"),
    ({"p_fail": -0.1}, "diagram.nodes.S.switch.p_fail"),
    ({}, "diagram.nodes.S.switch.p_fail"),
    ({"p_fail": 0.1, "switchover": -1}, "diagram.nodes.S.switch.switchover"),
    ({"p_fail": 0.1, "lag": 1}, "diagram.nodes.S.switch.lag"),
    ({"p_fail": 0.1, "life": {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": -1}]}},
     "diagram.nodes.S.switch.life.params"),
])
def test_bad_switch_values_are_refused_naming_the_field(switch, field):
    with pytest.raises(InputError) as e:
        simulate_mission(series(standby(0.01, switch=switch)), mission_time=10.0, replications=10)
    assert e.value.field.startswith(field), e.value.field


def test_a_switch_is_for_standby_groups():
    d = series({"id": "S", "type": "component", "model": exp_model(0.01), "switch": {"p_fail": 0.1}})
    with pytest.raises(InputError) as e:
        simulate_mission(d, mission_time=10.0, replications=10)
    assert e.value.field == "diagram.nodes.S.switch"
