"""Optimal replacement against reliability's optimal_replacement_time, the Barlow–Proschan
optimality condition, closed forms, and Monte Carlo (fixed seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reliability.Repairable_systems import optimal_replacement_time
from scipy import integrate, stats

from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.strategy import optimal_replacement
from bathtub.strategy.replacement import integral_sf, minimal_repair_weibull_optimum
from tests.strategy.strategy_helpers import assert_json_ready

SPEC_FIELDS = {"distribution", "unit", "mttf", "beneficial", "optimal_time", "optimal_cost_rate",
               "planned_cost", "unplanned_cost"}


def _peer(cp, cu, alpha, beta, q=0):
    return optimal_replacement_time(cp, cu, alpha, beta, q=q, show_time_plot=False, show_ratio_plot=False,
                                    print_results=False)


@pytest.mark.parametrize(("alpha", "beta", "cp", "cu"), [
    (1000.0, 2.5, 100.0, 1000.0),
    (50.0, 4.0, 1.0, 3.0),
    (3000.0, 1.5, 20.0, 500.0),
])
def test_age_replacement_matches_reliability(alpha, beta, cp, cu):
    out = optimal_replacement("weibull", {"alpha": alpha, "beta": beta}, cp, cu, unit="h")
    peer = _peer(cp, cu, alpha, beta)
    assert out["beneficial"] is True
    # The peer minimises on a grid from 1 to 3α with 10000 points: agree within one grid step.
    assert out["optimal_time"] == pytest.approx(peer.ORT, abs=3 * alpha / 10000)
    # Our continuous minimum can only be lower than the peer's grid minimum, and only just.
    assert out["optimal_cost_rate"] <= peer.min_cost * (1 + 1e-12)
    assert out["optimal_cost_rate"] == pytest.approx(peer.min_cost, rel=1e-6)
    assert set(out) >= SPEC_FIELDS
    assert out["unit"] == "h" and out["planned_cost"] == cp and out["unplanned_cost"] == cu
    assert out["mttf"] == pytest.approx(alpha * math.gamma(1 + 1 / beta), rel=1e-12)
    assert_json_ready(out)


@pytest.mark.parametrize(("dist", "params"), [
    ("lognormal", {"mu": 5.0, "sigma": 0.5}),
    ("gamma", {"alpha": 3.0, "beta": 10.0}),
    ("normal", {"mu": 100.0, "sigma": 20.0}),
    ("weibull", {"alpha": 200.0, "beta": 3.0, "gamma": 50.0}),
    ("loglogistic", {"alpha": 100.0, "beta": 5.0}),
    ("expo_weibull", {"alpha": 100.0, "beta": 2.0, "theta": 1.5}),
    ("mixture", {"alpha1": 100.0, "beta1": 4.0, "weight1": 0.7, "alpha2": 300.0, "beta2": 3.0, "weight2": 0.3}),
])
def test_age_optimum_satisfies_barlow_proschan_condition(dist, params):
    """At the optimum, h(T)·∫₀ᵀR − F(T) = Cp/(Cu − Cp) (Barlow & Proschan 1965), checked by quad."""
    cp, cu = 10.0, 100.0
    base = "weibull" if dist == "mixture" else None
    out = optimal_replacement(dist, params, cp, cu, base_distribution_id=base)
    life = Lifetime.from_input(dist, params, base)
    t = out["optimal_time"]
    area = integrate.quad(lambda u: float(life.sf(u)), 0, t, epsabs=0, epsrel=1e-12, limit=200)[0]
    lhs = float(life.hazard(t)) * area - float(life.cdf(t))
    assert lhs == pytest.approx(cp / (cu - cp), rel=1e-5)
    # and the reported cost rate is the formula at that time
    r = float(life.sf(t))
    assert out["optimal_cost_rate"] == pytest.approx((cp * r + cu * (1 - r)) / area, rel=1e-10)
    assert out["optimal_cost_rate"] < out["run_to_failure_cost_rate"]


def test_curve_is_the_cost_rate_formula():
    life = Lifetime.of("weibull", {"alpha": 10.0, "beta": 3.0})
    out = optimal_replacement(lifetime=life, planned_cost=1.0, unplanned_cost=5.0, curve_points=50)
    t, c = out["curve"]["t"], out["curve"]["cost_rate"]
    assert len(t) == len(c) == 50
    for ti, ci in list(zip(t, c, strict=True))[::7]:
        r = math.exp(-((ti / 10.0) ** 3))
        area = integrate.quad(lambda u: math.exp(-((u / 10.0) ** 3)), 0, ti, epsrel=1e-12)[0]
        assert ci == pytest.approx((r + 5.0 * (1 - r)) / area, rel=1e-9)
    assert min(c) >= out["optimal_cost_rate"] * (1 - 1e-12)


def test_saved_model_gives_the_same_answer():
    a = optimal_replacement("weibull", [1000, 2.5], 100, 1000)
    b = optimal_replacement(lifetime=Lifetime.of("weibull", {"alpha": 1000.0, "beta": 2.5}),
                            planned_cost=100, unplanned_cost=1000)
    assert a["optimal_time"] == b["optimal_time"]


@pytest.mark.parametrize(("dist", "params", "cp", "cu", "why"), [
    ("weibull", {"alpha": 100.0, "beta": 0.8}, 1.0, 10.0, "hazard"),
    ("weibull", {"alpha": 100.0, "beta": 1.0}, 1.0, 10.0, "hazard"),
    ("exponential", {"failure_rate": 0.01}, 1.0, 10.0, "hazard"),
    ("weibull", {"alpha": 100.0, "beta": 3.0}, 10.0, 10.0, "unplanned cost"),
    ("weibull", {"alpha": 100.0, "beta": 3.0}, 20.0, 10.0, "unplanned cost"),
])
@pytest.mark.parametrize("policy", ["age", "block"])
def test_replacement_that_cannot_pay(dist, params, cp, cu, why, policy):
    out = optimal_replacement(dist, params, cp, cu, policy=policy)
    assert out["beneficial"] is False
    assert out["optimal_time"] is None
    assert why in out["reason"]
    # best achievable: run to failure at Cu/MTTF
    assert out["optimal_cost_rate"] == pytest.approx(cu / Lifetime.from_input(dist, params).mean(), rel=1e-12)
    assert_json_ready(out)


def test_hazard_that_falls_back_can_still_make_replacement_pointless():
    """A lognormal with sigma = 2 has a hazard that rises briefly then falls to 0; with Cu only 1.5 Cp
    no finite T beats running to failure (C(T) > Cu/MTTF everywhere), so the answer is no."""
    out = optimal_replacement("lognormal", {"mu": 0.0, "sigma": 2.0}, 1.0, 1.5)
    # lognormal hazard rises then falls to 0: with a small cost ratio replacing does not pay
    assert out["beneficial"] is False
    assert "running to failure" in out["reason"]


def test_minimal_repair_textbook_and_the_peer_swap():
    """Minimal repair: C(T) = [Cp + Cu·(T/α)^β]/T (Barlow & Hunter 1960) has its minimum at
    T* = α·(Cp/(Cu(β−1)))^{1/β}. reliability's optimal_replacement_time(q=1) computes
    [Cp·(T/α)^β + Cu]/T — planned and unplanned costs swapped — so its ORT is
    α·(Cu/(Cp(β−1)))^{1/β}. We follow the textbook and check it a second way by Monte Carlo."""
    alpha, beta, cp, cu = 1000.0, 2.5, 100.0, 1000.0
    out = optimal_replacement("weibull", {"alpha": alpha, "beta": beta}, cp, cu, policy="minimal_repair")
    t_star, c_star = minimal_repair_weibull_optimum(alpha, beta, cp, cu)
    assert out["optimal_time"] == pytest.approx(t_star, rel=1e-7)
    assert out["optimal_cost_rate"] == pytest.approx(c_star, rel=1e-12)
    peer = _peer(cp, cu, alpha, beta, q=1)
    swapped = alpha * (cu / (cp * (beta - 1))) ** (1 / beta)
    assert peer.ORT == pytest.approx(swapped, rel=1e-12)
    assert peer.ORT > 2 * t_star  # the swap matters: a very different answer

    # Second method: simulate minimal repair (failures form an NHPP with mean H(T)) and measure
    # the cost rate at the textbook optimum and at the peer's answer.
    rng = np.random.default_rng(20261122)
    reps = 200_000

    def simulated_rate(t):
        n = rng.poisson((t / alpha) ** beta, size=reps)
        costs = (cp + cu * n) / t
        return costs.mean(), costs.std(ddof=1) / math.sqrt(reps)

    m_star, se_star = simulated_rate(t_star)
    assert abs(m_star - c_star) < 4 * se_star
    m_peer, se_peer = simulated_rate(peer.ORT)
    assert m_peer - m_star > 4 * math.hypot(se_star, se_peer)


@pytest.mark.parametrize(("dist", "params"), [
    ("gamma", {"alpha": 3.0, "beta": 10.0}),
    ("lognormal", {"mu": 3.0, "sigma": 0.3}),
    ("mixture", {"alpha1": 100.0, "beta1": 4.0, "weight1": 0.7, "alpha2": 300.0, "beta2": 3.0, "weight2": 0.3}),
])
def test_minimal_repair_optimum_condition(dist, params):
    """d/dT [Cp + Cu·H(T)]/T = 0  ⇔  T·h(T) − H(T) = Cp/Cu (Barlow & Hunter 1960)."""
    cp, cu = 5.0, 100.0
    base = "weibull" if dist == "mixture" else None
    out = optimal_replacement(dist, params, cp, cu, policy="minimal_repair", base_distribution_id=base)
    life = Lifetime.from_input(dist, params, base)
    t = out["optimal_time"]
    h_cum = integrate.quad(lambda u: float(life.hazard(u)), 0, t, epsabs=0, epsrel=1e-12, limit=200)[0]
    assert t * float(life.hazard(t)) - h_cum == pytest.approx(cp / cu, rel=1e-5)


@pytest.mark.parametrize("beta", [1.002, 1.05, 1.5, 4.0, 12.0])
def test_minimal_repair_weibull_closed_form_across_shapes(beta):
    """Even a barely rising hazard has a finite optimum under minimal repair, possibly many lives away."""
    out = optimal_replacement("weibull", {"alpha": 3.0, "beta": beta}, 1.0, 10.0, policy="minimal_repair")
    t_star, c_star = minimal_repair_weibull_optimum(3.0, beta, 1.0, 10.0)
    assert out["beneficial"] is True
    assert out["optimal_time"] == pytest.approx(t_star, rel=1e-6)
    assert out["optimal_cost_rate"] == pytest.approx(c_star, rel=1e-12)


def test_minimal_repair_without_wear_out():
    out = optimal_replacement("weibull", {"alpha": 100.0, "beta": 0.9}, 1.0, 10.0, policy="minimal_repair")
    assert out["beneficial"] is False and "hazard" in out["reason"]


def _gamma2_renewal(t, scale):
    """Renewal function of a gamma with shape 2: M(t) = λt/2 − 1/4 + e^{−2λt}/4, λ = 1/scale."""
    x = t / scale
    return x / 2 - 0.25 + np.exp(-2 * x) / 4


def test_block_replacement_gamma_shape_two_closed_form():
    """Block policy [Cp + Cu·M(T)]/T with the closed-form renewal function of gamma(2)."""
    scale, cp, cu = 50.0, 1.0, 10.0
    out = optimal_replacement("gamma", {"alpha": 2.0, "beta": scale}, cp, cu, policy="block")
    t = np.linspace(0.01, 300.0, 3_000_001)
    c = (cp + cu * _gamma2_renewal(t, scale)) / t
    k = int(np.argmin(c))
    assert out["beneficial"] is True
    assert out["optimal_time"] == pytest.approx(t[k], rel=1e-4)
    assert out["optimal_cost_rate"] == pytest.approx(c[k], rel=1e-7)
    curve_t = np.array(out["curve"]["t"])
    exact = (cp + cu * _gamma2_renewal(curve_t, scale)) / curve_t
    np.testing.assert_allclose(out["curve"]["cost_rate"], exact, rtol=1e-5)


def test_block_replacement_weibull_monte_carlo():
    """Weibull block optimum: the renewal count at T* simulated with a fixed seed agrees with M(T*)."""
    alpha, beta, cp, cu = 1.0, 2.5, 1.0, 10.0
    out = optimal_replacement("weibull", {"alpha": alpha, "beta": beta}, cp, cu, policy="block")
    t = out["optimal_time"]
    m_model = (out["optimal_cost_rate"] * t - cp) / cu
    rng = np.random.default_rng(7)
    reps = 200_000
    clock = np.zeros(reps)
    count = np.zeros(reps)
    alive = np.ones(reps, dtype=bool)
    while alive.any():
        clock[alive] += alpha * rng.weibull(beta, size=int(alive.sum()))
        alive &= clock <= t
        count[alive] += 1
    se = count.std(ddof=1) / math.sqrt(reps)
    assert abs(count.mean() - m_model) < 4 * se
    # block cost at its own optimum is at least the age-replacement optimum (age dominates block)
    age = optimal_replacement("weibull", {"alpha": alpha, "beta": beta}, cp, cu)
    assert out["optimal_cost_rate"] >= age["optimal_cost_rate"]


def test_integral_sf_is_the_truncated_mean():
    """∫₀ᵀ R = E[min(X, T)]; for an exponential, (1 − e^{−λT})/λ."""
    life = Lifetime.of("exponential", {"failure_rate": 0.2})
    assert integral_sf(life, 7.0) == pytest.approx(-math.expm1(-1.4) / 0.2, rel=1e-12)
    w = Lifetime.of("weibull", {"alpha": 3.0, "beta": 2.0, "gamma": 1.0})
    # location: R = 1 on [0, 1]
    ref = 1.0 + integrate.quad(lambda u: stats.weibull_min.sf(u, 2.0, scale=3.0), 0, 4.0, epsrel=1e-12)[0]
    assert integral_sf(w, 5.0) == pytest.approx(ref, rel=1e-10)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"distribution_id": "weibul", "params": [1, 2]}, "distribution_id"),
    ({"params": [1, 2]}, "distribution_id"),
    ({"distribution_id": "weibull"}, "params"),
    ({"distribution_id": "weibull", "params": {"alpha": -1, "beta": 2}}, "params.alpha"),
    ({"distribution_id": "weibull", "params": [1, 2], "planned_cost": -1}, "planned_cost"),
    ({"distribution_id": "weibull", "params": [1, 2], "unplanned_cost": float("nan")}, "unplanned_cost"),
    ({"distribution_id": "weibull", "params": [1, 2], "unplanned_cost": "5"}, "unplanned_cost"),
    ({"distribution_id": "weibull", "params": [1, 2], "policy": "sometimes"}, "policy"),
    ({"distribution_id": "normal", "params": {"mu": 1, "sigma": 2}}, "params"),
])
def test_bad_input_names_the_field(kwargs, field):
    args = {"planned_cost": 1.0, "unplanned_cost": 10.0, **kwargs}
    with pytest.raises(InputError) as err:
        optimal_replacement(**args)
    assert err.value.field == field


def test_missing_costs():
    with pytest.raises(InputError, match="planned_cost"):
        optimal_replacement("weibull", [1, 2], None, 3)
    with pytest.raises(InputError, match="unplanned_cost"):
        optimal_replacement("weibull", [1, 2], 1, None)


@pytest.mark.parametrize("policy", ["age", "block", "minimal_repair"])
def test_failure_free_period_replace_at_its_end(policy):
    """Exponential with location γ: no failure before γ, so replacing at γ costs Cp/γ per unit time;
    when (Cu − Cp)·λ·γ > Cp the cost rate only rises after γ, so T* = γ (derivative of C at γ+)."""
    gamma, lam, cp, cu = 100.0, 0.01, 10.0, 100.0
    out = optimal_replacement("exponential", {"failure_rate": lam, "gamma": gamma}, cp, cu, policy=policy)
    assert out["beneficial"] is True
    # the block policy's renewal grid smooths the kink of F at γ over one grid step
    tol = 1e-4 if policy == "block" else 1e-8
    assert out["optimal_time"] == pytest.approx(gamma, rel=tol)
    assert out["optimal_cost_rate"] == pytest.approx(cp / gamma, rel=tol)
    assert out["run_to_failure_cost_rate"] == pytest.approx(cu / (gamma + 1 / lam))


def test_infinite_mean_life():
    """Log-logistic with shape <= 1 has no mean: running to failure costs nothing per unit time."""
    out = optimal_replacement("loglogistic", {"alpha": 100.0, "beta": 0.8}, 1.0, 10.0)
    assert out["mttf"] is None and out["run_to_failure_cost_rate"] is None
    assert out["beneficial"] is False and out["optimal_cost_rate"] == 0.0
    assert_json_ready(out)


@pytest.mark.parametrize("policy", ["age", "block", "minimal_repair"])
def test_answers_scale_with_the_time_unit(policy):
    """Hours or microseconds: T* scales with α and the cost rate inversely (the search is scale-free)."""
    ref = optimal_replacement("weibull", [{"name": "alpha", "value": 1.0}, {"name": "beta", "value": 2.5}], 1.0,
                              10.0, policy=policy)
    for alpha in (1e-6, 1e9):
        out = optimal_replacement("weibull", {"alpha": alpha, "beta": 2.5}, 1.0, 10.0, policy=policy)
        assert out["optimal_time"] == pytest.approx(alpha * ref["optimal_time"], rel=1e-6)
        assert out["optimal_cost_rate"] == pytest.approx(ref["optimal_cost_rate"] / alpha, rel=1e-8)


@pytest.mark.parametrize("k", [1e-3, 1.0, 1e3, 1e6])
@pytest.mark.parametrize(("beta", "cp", "cu"), [(1.002, 1.0, 10.0), (2.5, 100.0, 1000.0), (7.0, 3.0, 4.0),
                                                 (1.5, 1e-9, 1.0)])
def test_minimal_repair_weibull_is_the_closed_form_at_every_scale(k, beta, cp, cu):
    """Barlow & Hunter (1960): T* = α·(Cp/((β−1)·Cu))^{1/β} exactly, C* = [Cp + Cu·(T*/α)^β]/T*."""
    alpha = 3.0 * k
    out = optimal_replacement("weibull", {"alpha": alpha, "beta": beta}, cp, cu, policy="minimal_repair")
    t_star = alpha * (cp / ((beta - 1.0) * cu)) ** (1.0 / beta)
    c_star = (cp + cu * (t_star / alpha) ** beta) / t_star
    assert out["beneficial"] is True
    assert out["optimal_time"] == pytest.approx(t_star, rel=1e-10)
    assert out["optimal_cost_rate"] == pytest.approx(c_star, rel=1e-10)


@pytest.mark.parametrize("k", [1e-3, 1.0, 1e3, 1e6])
@pytest.mark.parametrize(("dist", "params", "cp", "cu"), [
    ("gamma", lambda k: {"alpha": 3.0, "beta": 10.0 * k}, 5.0, 100.0),
    ("gamma", lambda k: {"alpha": 3.0, "beta": 10.0 * k}, 1e-10, 1.0),  # the root lies before the quantile grid
    ("lognormal", lambda k: {"mu": 3.0 + math.log(k), "sigma": 0.3}, 5.0, 100.0),
    ("weibull", lambda k: {"alpha": 20.0 * k, "beta": 3.0, "gamma": 5.0 * k}, 5.0, 100.0),
])
def test_minimal_repair_search_is_a_sharp_root_at_every_scale(k, dist, params, cp, cu):
    """No closed form: the optimum is the root of T·h(T) − H(T) = Cp/Cu (Barlow & Hunter 1960),
    checked with H by quadrature of the hazard; times scale with the model (T* → k·T*)."""
    out = optimal_replacement(dist, params(k), cp, cu, policy="minimal_repair")
    ref = optimal_replacement(dist, params(1.0), cp, cu, policy="minimal_repair")
    life = Lifetime.from_input(dist, params(k))
    t = out["optimal_time"]
    lo = params(k).get("gamma", 0.0)
    h_cum = integrate.quad(lambda u: float(life.hazard(u)), lo, t, epsabs=0, epsrel=1e-13, limit=200)[0]
    assert t * float(life.hazard(t)) - h_cum == pytest.approx(cp / cu, rel=1e-9)
    assert t == pytest.approx(k * ref["optimal_time"], rel=1e-10)
    assert out["optimal_cost_rate"] == pytest.approx(ref["optimal_cost_rate"] / k, rel=1e-10)
