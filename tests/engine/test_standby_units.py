"""Standby groups of non-identical units (`units`: a primary and differing spares, each its
own life, repair, dormancy and capacity) against closed forms and Markov chains; the
identical-units form equals the `spares` form draw for draw."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, linalg

from bathtub.engine import simulate_availability, simulate_mission
from bathtub.errors import InputError

from .engine_diagrams import exp_model, series

Z99 = 2.5758293035489


def weibull(alpha: float, beta: float) -> dict:
    return {"distribution_id": "weibull", "params": [{"name": "alpha", "value": alpha},
                                                      {"name": "beta", "value": beta}]}


def units_node(*units: dict, **extra) -> dict:
    return {"id": "S", "type": "standby", "units": list(units), **extra}


def check_curve(res, exact) -> None:
    """Every grid point of R(t) within its own binomial 99.9% interval."""
    exact = np.asarray(exact)
    n = res.replications
    se = np.sqrt(exact * (1 - exact) / n)
    assert np.all(np.abs(res.reliability - exact) <= 3.29 * se + 2.0 / n), (res.reliability, exact)


def test_cold_pair_of_different_units_against_the_closed_form():
    """Primary rate a, cold spare rate b: R(t) = e^{-at} + a/(b-a) (e^{-at} - e^{-bt});
    MTTF = 1/a + 1/b."""
    a, b = 0.002, 0.005
    d = series(units_node({"model": exp_model(a)}, {"model": exp_model(b)}, cold=True))
    res = simulate_mission(d, mission_time=1500.0, replications=40_000, seed=81, grid=7)
    t = res.t
    check_curve(res, np.exp(-a * t) + a / (b - a) * (np.exp(-a * t) - np.exp(-b * t)))
    assert abs(res.mttf - (1 / a + 1 / b)) <= Z99 * res.mttf_std_error


def test_each_unit_ages_idle_at_its_own_dormancy():
    """A hot primary (rate a) backed by a warm spare (rate b running, d b idle):
    R(t) = e^{-at} + a e^{-bt} (1 - e^{-ct}) / c with c = a + d b - b."""
    a, b, dorm = 0.002, 0.004, 0.25
    d = series(units_node({"model": exp_model(a)}, {"model": exp_model(b), "dormancy": dorm}))
    res = simulate_mission(d, mission_time=1500.0, replications=40_000, seed=82, grid=7)
    t, c = res.t, a + dorm * b - b
    check_curve(res, np.exp(-a * t) + a * np.exp(-b * t) * -np.expm1(-c * t) / c)


def pair_chain(la: float, ma: float, lb: float, mb: float, switch_back: bool = False) -> np.ndarray:
    """Generator of a cold pair, primary A (la, ma), spare B (lb, mb), a crew for each
    failure, a repaired unit back on the shelf while the other runs (with `switch_back`, a
    repaired A takes over from B at once). States: 0 A runs B idle, 1 B runs A idle, 2 A
    runs B down, 3 B runs A down, 4 both down."""
    q = np.zeros((5, 5))
    q[0, 3] = la
    q[1, 2] = lb
    q[2, 4], q[2, 0] = la, mb
    q[3, 4], q[3, 0 if switch_back else 1] = lb, ma
    q[4, 2], q[4, 3] = ma, mb
    return q - np.diag(q.sum(axis=1))


def pair_mean_availability(q: np.ndarray, horizon: float) -> float:
    return integrate.quad(lambda t: 1.0 - linalg.expm(q * t)[0, 4], 0, horizon, limit=200)[0] / horizon


@pytest.mark.parametrize("switch_back", [False, True])
def test_repairable_pair_against_its_markov_chain(switch_back):
    la, ma, lb, mb, horizon = 0.02, 0.1, 0.05, 0.04, 150.0
    q = pair_chain(la, ma, lb, mb, switch_back)

    def point(t: float) -> float:
        return 1.0 - linalg.expm(q * t)[0, 4]

    node = units_node({"model": exp_model(la), "repair": exp_model(ma)},
                      {"model": exp_model(lb), "repair": exp_model(mb)}, cold=True, switch_back=switch_back)
    res = simulate_availability(series(node), horizon=horizon, replications=20_000, seed=83, grid=6)
    mean = pair_mean_availability(q, horizon)
    assert abs(res.mean_availability - mean) <= Z99 * res.mean_availability_std_error, (res.mean_availability, mean)
    p = np.array([point(t) for t in res.t])
    se = np.sqrt(p * (1 - p) / res.replications)
    assert np.all(np.abs(res.availability - p) <= 3.29 * se + 2.0 / res.replications)


@pytest.mark.parametrize("repairable", [False, True])
def test_identical_units_equal_the_spares_form_at_the_same_seed(repairable):
    life, rep = weibull(100.0, 1.8), exp_model(0.2)
    same = {"model": life, **({"repair": rep} if repairable else {})}
    spares = {"id": "S", "type": "standby", "k": 2, "spares": 2, "dormancy": 0.0, **same}
    units = units_node(*[same] * 4, k=2, dormancy=0.0)
    if repairable:
        a = simulate_availability(series(spares), horizon=300.0, replications=3000, seed=84, grid=11)
        b = simulate_availability(series(units), horizon=300.0, replications=3000, seed=84, grid=11)
        assert a.mean_availability == b.mean_availability and np.array_equal(a.availability, b.availability)
        assert a.blocks == b.blocks
    else:
        a = simulate_mission(series(spares), mission_time=300.0, replications=3000, seed=84, grid=11)
        b = simulate_mission(series(units), mission_time=300.0, replications=3000, seed=84, grid=11)
        assert np.array_equal(a.reliability, b.reliability) and a.mttf == b.mttf


@pytest.mark.parametrize("switch_back", [False, True])
def test_production_of_a_large_pump_backed_by_a_small_one(switch_back):
    """Repairable pair of the chain above, the primary carrying 100, the spare 60: production
    over [0, P] is the integral of 100 P(A runs) + 60 P(B runs) (states 0, 2 and 1, 3); with
    switch-back the primary's return restores full flow at once."""
    la, ma, lb, mb, horizon, period = 0.02, 0.1, 0.05, 0.04, 150.0, 100.0
    q = pair_chain(la, ma, lb, mb, switch_back)
    flow = np.array([100.0, 60.0, 100.0, 60.0, 0.0])
    made = integrate.quad(lambda t: linalg.expm(q * t)[0] @ flow, 0, period, limit=200)[0]
    node = units_node({"model": exp_model(la), "repair": exp_model(ma), "capacity": 100.0},
                      {"model": exp_model(lb), "repair": exp_model(mb), "capacity": 60.0}, cold=True,
                      switch_back=switch_back)
    d = series(node) | {"production": {"demand": 80.0, "period": period}}
    res = simulate_availability(d, horizon=horizon, replications=20_000, seed=87, grid=0)
    p = res.production
    assert abs(p["production"] - made) <= Z99 * p["production_std_error"], (p["production"], made)
    below = integrate.quad(lambda t: 1 - linalg.expm(q * t)[0, [0, 2]].sum(), 0, period, limit=200)[0] / period
    assert abs(p["fraction_below_demand"] - below) <= Z99 * p["fraction_below_demand_std_error"]


def test_a_smaller_spare_carries_its_own_capacity():
    """Primary (rate a, 100 per unit time) backed by a cold spare (rate b, 60): read at P,
    E[capacity] = 100 e^{-aP} + 60 (R(P) - e^{-aP}) with R the pair's reliability above."""
    a, b, period, n = 0.01, 0.02, 60.0, 20_000
    d = series(units_node({"model": exp_model(a), "capacity": 100.0}, {"model": exp_model(b), "capacity": 60.0},
                          cold=True))
    d["production"] = {"demand": 80.0, "period": period}
    res = simulate_mission(d, mission_time=100.0, replications=n, seed=85, grid=0)
    first = np.exp(-a * period)
    spare_runs = a / (b - a) * (np.exp(-a * period) - np.exp(-b * period))
    p = res.production
    assert abs(p["expected_capacity"] - (100 * first + 60 * spare_runs)) <= Z99 * p["expected_capacity_std_error"]
    below = 1 - first  # the spare alone is below the demand of 80
    assert abs(p["probability_below_demand"] - below) <= Z99 * np.sqrt(below * (1 - below) / n)


@pytest.mark.parametrize("node,field", [
    (units_node({"model": exp_model(0.1)}, model=exp_model(0.1)), "units"),
    (units_node({"model": exp_model(0.1)}, spares=1), "units"),
    (units_node({"model": exp_model(0.1)}, k=2), "units"),
    (units_node({"model": exp_model(0.1)}, {"repair": exp_model(1.0)}), "units[1].model"),
    (units_node({"model": exp_model(0.1)}, {"model": exp_model(0.1), "dormancy": 1.5}), "units[1].dormancy"),
    (units_node({"model": exp_model(0.1), "dormancy": 0.5}, {"model": exp_model(0.1)}, k=2), "units[0].dormancy"),
    (units_node({"model": exp_model(0.1), "capacity": 5.0}, {"model": exp_model(0.1)}), "units[1].capacity"),
    (units_node({"model": exp_model(0.1), "capacity": 0.0}), "units[0].capacity"),
    (units_node({"model": exp_model(0.1), "capacity": 5.0}, capacity=3.0), "units[0].capacity"),
    (units_node({"model": exp_model(0.1), "colour": "red"}), "units[0].colour"),
    (units_node({"model": {"distribution_id": "weibull", "params": [{"name": "alpha", "value": -1.0},
                                                                    {"name": "beta", "value": 1.0}]}}),
     "units[0].model.params.alpha"),
    ({"id": "S", "type": "component", "units": [{"model": exp_model(0.1)}]}, "units"),
    ({"id": "S", "type": "standby", "spares": 1, "model": exp_model(0.1), "switch_back": True}, "switch_back"),
])
def test_refusals_name_the_field(node, field):
    with pytest.raises(InputError) as e:
        simulate_mission(series(node), mission_time=10.0, replications=10)
    assert e.value.field == f"diagram.nodes.S.{field}"


def test_repairs_on_every_unit_or_none():
    node = units_node({"model": exp_model(0.1), "repair": exp_model(1.0)}, {"model": exp_model(0.1)})
    with pytest.raises(InputError) as e:
        simulate_availability(series(node), horizon=10.0, replications=10)
    assert e.value.field == "diagram.nodes.S.units[1].repair"
