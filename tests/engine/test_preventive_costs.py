"""Planned replacement and costs against closed forms (fixed seeds, each run's own 99%
interval): age replacement of a Weibull block vs the renewal-reward cost rate, block
replacement of an exponential block, condition-based replacement, off-line time, cost
ranges, discounted downtime vs the annuity, and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from bathtub.engine import merge, simulate_availability, simulate_mission
from bathtub.errors import InputError

from .engine_diagrams import block, exp_model, series

Z99 = 2.5758293035489


def weibull(alpha: float, beta: float) -> dict:
    return {"distribution_id": "weibull", "params": {"alpha": alpha, "beta": beta}}


def check(mean: float, se: float, expected: float, slack: float = 0.0) -> None:
    assert abs(mean - expected) <= Z99 * se + slack, (mean, expected, se)


def test_age_replacement_cost_rate_is_the_renewal_reward_formula():
    """Weibull(1000, 3), replaced at age T = 500 for Cp, renewed at failure for Cu (both
    instant): cost per unit time -> [Cp R(T) + Cu F(T)] / int_0^T R(t) dt."""
    alpha, beta, T, cp, cu = 1000.0, 3.0, 500.0, 100.0, 1000.0
    node = block("P", weibull(alpha, beta), instant_repair=True,
                 preventive={"policy": "age", "interval": T, "cost": cp}, costs={"replace": cu})
    horizon = 1000 * T  # ~1000 renewals: the start-up transient is far below the interval
    res = simulate_availability(series(node), horizon=horizon, replications=400, seed=21, grid=0)
    life = stats.weibull_min(beta, scale=alpha)
    rate = (cp * life.sf(T) + cu * life.cdf(T)) / integrate.quad(life.sf, 0, T)[0]
    c = res.costs
    check(c["total"] / horizon, c["total_std_error"] / horizon, rate)
    assert c["by_kind"]["preventive"]["mean"] > 0 and c["by_kind"]["replacement"]["mean"] > 0
    assert c["by_block"]["P"]["total"] == pytest.approx(c["total"])
    # Replacements per unit time: R(T) / int_0^T R.
    per_time = res.preventive["P"] / horizon
    assert per_time == pytest.approx(life.sf(T) / integrate.quad(life.sf, 0, T)[0], rel=0.01)


def test_age_replacement_off_line_time_and_availability():
    """A = int_0^T R / (int_0^T R + d R(T) + MTTR F(T)) in the long run."""
    alpha, beta, T, d, mttr = 1000.0, 2.5, 600.0, 20.0, 50.0
    node = block("P", weibull(alpha, beta), exp_model(1 / mttr), preventive={"interval": T, "duration": d})
    horizon = 500 * T
    res = simulate_availability(series(node), horizon=horizon, replications=300, seed=22, grid=0)
    life = stats.weibull_min(beta, scale=alpha)
    up = integrate.quad(life.sf, 0, T)[0]
    a = up / (up + d * life.sf(T) + mttr * life.cdf(T))
    check(res.mean_availability, res.mean_availability_std_error, a, slack=2 * (d + mttr) / horizon)


def test_block_replacement_of_an_exponential_block():
    """Failures do not move the calendar: expected cost = Cu lam H + Cp H / T (the block is
    always running with instant repair); a cost range is charged at its mean."""
    lam, T, horizon = 1e-3, 250.0, 10_000.0
    node = block("B", exp_model(lam), instant_repair=True,
                 preventive={"policy": "block", "interval": T, "cost": {"min": 10.0, "max": 30.0}},
                 costs={"repair": 100.0, "acquisition": 5000.0})
    res = simulate_availability(series(node), horizon=horizon, replications=4000, seed=23, grid=0)
    c = res.costs
    assert res.preventive["B"] == horizon / T
    check(c["by_kind"]["repair"]["mean"], c["by_kind"]["repair"]["std_error"], 100.0 * lam * horizon)
    check(c["by_kind"]["preventive"]["mean"], c["by_kind"]["preventive"]["std_error"], 20.0 * horizon / T)
    assert c["by_kind"]["acquisition"]["mean"] == 5000.0
    check(c["total"], c["total_std_error"], 5000.0 + 100.0 * lam * horizon + 20.0 * horizon / T)


@pytest.mark.parametrize("threshold,replaced", [(0.05, True), (0.2, False)])
def test_condition_policy_on_an_exponential_block(threshold, replaced):
    """Memoryless life: the chance of failing before the next inspection is 1 - exp(-lam I)
    (= 0.095 here) at any age, so every inspection replaces it, or none does."""
    lam, interval, horizon = 1e-3, 100.0, 5000.0
    node = block("C", exp_model(lam), instant_repair=True,
                 preventive={"policy": "condition", "interval": interval, "threshold": threshold,
                             "inspection_cost": 2.0})
    res = simulate_availability(series(node), horizon=horizon, replications=200, seed=24, grid=0)
    n = horizon / interval
    assert res.preventive["C"] == (n if replaced else 0.0)
    assert res.costs["by_kind"]["inspection"]["mean"] == pytest.approx(2.0 * n)


def test_condition_policy_replaces_an_ageing_block_before_it_fails():
    """Weibull beta = 4: replaced at the first inspection where the conditional chance of
    failing before the next exceeds the threshold, i.e. at a fixed age when every renewal
    falls on an inspection (instant repair on failure breaks that, so few failures)."""
    alpha, beta, interval, th = 1000.0, 4.0, 50.0, 0.1
    life = stats.weibull_min(beta, scale=alpha)
    ages = np.arange(0, 2000, interval)
    p = 1 - life.sf(ages + interval) / life.sf(ages)
    age = ages[np.argmax(p > th)]  # replacement age from a renewal at an inspection
    node = block("C", weibull(alpha, beta), instant_repair=True,
                 preventive={"policy": "condition", "interval": interval, "threshold": th})
    res = simulate_availability(series(node), horizon=float(age), replications=4000, seed=25, grid=0)
    # Over [0, age] from new: one replacement if it survived to age, else at most a failure.
    assert res.preventive["C"] == pytest.approx(life.sf(age), abs=Z99 * math.sqrt(0.25 / 4000))


def test_discounted_constant_downtime_is_the_annuity():
    """A block down from (almost) t = 0 to the end: rate c discounted at r per year over H
    years = c (1 - (1 + r)^-H) / ln(1 + r)."""
    c, r, years = 1000.0, 5.0, 10.0
    node = block("D", exp_model(1e9), exp_model(1e-12), costs={"downtime": c})
    d = series(node) | {"unit": "years", "costs": {"discount_rate": r}}
    res = simulate_availability(d, horizon=years, replications=10, seed=26, grid=0)
    annuity = c * (1 - (1 + r / 100) ** -years) / math.log1p(r / 100)
    assert res.costs["by_kind"]["downtime"]["mean"] == pytest.approx(annuity, rel=1e-6)
    # The same in hours: the diagram unit converts to years.
    d = series(node) | {"unit": "hours", "costs": {"discount_rate": r, "horizon": years * 8766}}
    res = simulate_availability(d, horizon=years * 8766, replications=10, seed=26, grid=0)
    assert res.costs["by_kind"]["downtime"]["mean"] == pytest.approx(annuity * 8766, rel=1e-6)


def test_discounted_system_downtime_of_a_repairable_block():
    """c * int_0^H U(t) (1 + r)^-t dt with U(t) = l/(l+m) (1 - exp(-(l+m) t))."""
    lam, mu, c, r, years = 2.0, 20.0, 500.0, 8.0, 5.0
    d = series(block("A", exp_model(lam), exp_model(mu))) | {"unit": "year",
                                                            "costs": {"downtime_rate": c, "discount_rate": r}}
    res = simulate_availability(d, horizon=years, replications=20_000, seed=27, grid=0)
    delta = math.log1p(r / 100)
    exact = integrate.quad(lambda t: c * lam / (lam + mu) * (1 - math.exp(-(lam + mu) * t)) * math.exp(-delta * t),
                           0, years)[0]
    k = res.costs["by_kind"]["downtime"]
    check(k["mean"], k["std_error"], exact)
    assert res.costs["system_downtime"] == pytest.approx(k["mean"])
    assert res.to_dict()["costs"]["total"] == res.costs["total"]


def test_cost_runs_merge_exactly():
    node = block("B", weibull(100.0, 2.0), exp_model(0.1), preventive={"interval": 60.0, "duration": 2.0,
                                                                     "cost": {"min": 1.0, "max": 9.0}},
                 costs={"repair": {"min": 10.0, "max": 20.0}, "downtime": 3.0})
    d = series(node) | {"unit": "days", "costs": {"downtime_rate": 7.0, "discount_rate": 3.0}}
    kw = {"horizon": 1000.0, "seed": 5, "grid": 5}
    whole = simulate_availability(d, replications=200, threads=2, **kw)
    assert simulate_availability(d, replications=200, threads=1, **kw).state == whole.state
    a = simulate_availability(d, replications=77, **kw)
    b = simulate_availability(d, replications=123, replication_start=77, **kw)
    assert merge(a, b).state == whole.state and merge(a, b).costs == whole.costs


@pytest.mark.parametrize("node_extra,field", [
    ({"preventive": {"interval": 0}}, "nodes.B.preventive.interval"),
    ({"preventive": {"policy": "calendar", "interval": 5}}, "nodes.B.preventive.policy"),
    ({"preventive": {"policy": "condition", "interval": 5}}, "nodes.B.preventive.threshold"),
    ({"preventive": {"policy": "age", "interval": 5, "threshold": 0.1}}, "nodes.B.preventive.threshold"),
    ({"preventive": {"policy": "block", "interval": 5, "duration": 5}}, "nodes.B.preventive.duration"),
    ({"preventive": {"interval": 5, "opportunity": 1}}, "nodes.B.preventive.opportunity"),
    ({"preventive": {"interval": 5}, "inspection": {"interval": 5}}, "nodes.B.preventive"),
    ({"costs": {"repair": -1}}, "nodes.B.costs.repair"),
    ({"costs": {"replace": {"min": 1}}}, "nodes.B.costs.replace.max"),
    ({"costs": {"fuel": 1}}, "nodes.B.costs.fuel"),
])
def test_refusals_name_the_field(node_extra, field):
    d = series(block("B", exp_model(1e-3), instant_repair=True, **node_extra))
    with pytest.raises(InputError) as e:
        simulate_availability(d, horizon=100.0, replications=10)
    assert e.value.field == f"diagram.{field}"


def test_diagram_cost_refusals():
    d = series(block("B", exp_model(1e-3), instant_repair=True))
    with pytest.raises(InputError, match="calendar") as e:
        simulate_availability(d | {"unit": "cycles", "costs": {"discount_rate": 5}}, horizon=100.0, replications=10)
    assert e.value.field == "diagram.costs.discount_rate"
    with pytest.raises(InputError) as e:
        simulate_availability(d | {"costs": {"horizon": 50}}, horizon=100.0, replications=10)
    assert e.value.field == "diagram.costs.horizon"
    with pytest.raises(InputError, match="repairable"):
        simulate_mission(d | {"costs": {"downtime_rate": 1}}, mission_time=100.0, replications=10)
    with pytest.raises(ValueError, match="repairable"):
        simulate_mission(series(block("B", exp_model(1e-3), preventive={"interval": 5})), mission_time=100.0,
                         replications=10)
