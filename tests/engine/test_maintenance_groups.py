"""Maintenance groups against closed forms: set-up cost per group stop (a member going down
while none is), system outages as stops, renewal by opportunity; refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from bathtub.engine import simulate_availability, simulate_mission
from bathtub.errors import InputError

from .engine_diagrams import block, exp_model, parallel, series

Z99 = 2.5758293035489
H = 500.0


def avail(lam: float, mu: float):
    return lambda t: mu / (lam + mu) + lam / (lam + mu) * np.exp(-(lam + mu) * t)


def setup_mean(res):
    k = res.costs["by_kind"]["set_up"]
    return k["mean"], k["std_error"]


def test_a_stop_is_a_member_going_down_while_none_is():
    """Stops begin at rate (l1 + l2) P(both up): E[set-up] = S (l1 + l2) int A1 A2."""
    (l1, m1), (l2, m2), setup = (0.01, 0.1), (0.02, 0.2), 40.0
    d = parallel(block("A", exp_model(l1), exp_model(m1), maintenance_group="pumps"),
                 block("B", exp_model(l2), exp_model(m2), maintenance_group="pumps"))
    d["maintenance_groups"] = {"pumps": {"setup_cost": setup}}
    res = simulate_availability(d, horizon=H, replications=20_000, seed=91, grid=0)
    a1, a2 = avail(l1, m1), avail(l2, m2)
    exact = setup * (l1 + l2) * integrate.quad(lambda t: a1(t) * a2(t), 0, H)[0]
    mean, se = setup_mean(res)
    assert abs(mean - exact) <= Z99 * se, (mean, exact, se)


def test_system_outages_are_stops_too():
    """A (no group) in series with B (group, system_down): every B failure is a stop, and
    so is every outage A begins while B is up: S (lB int AB + lA int AA AB)."""
    (la, ma), (lb, mb), setup = (0.02, 0.2), (0.01, 0.1), 25.0
    d = series(block("A", exp_model(la), exp_model(ma)),
               block("B", exp_model(lb), exp_model(mb), maintenance_group="line"))
    d["maintenance_groups"] = {"line": {"setup_cost": setup, "system_down": True}}
    res = simulate_availability(d, horizon=H, replications=20_000, seed=92, grid=0)
    aa, ab = avail(la, ma), avail(lb, mb)
    exact = setup * (lb * integrate.quad(ab, 0, H)[0] + la * integrate.quad(lambda t: aa(t) * ab(t), 0, H)[0])
    mean, se = setup_mean(res)
    assert abs(mean - exact) <= Z99 * se, (mean, exact, se)


def test_opportunity_renews_an_old_enough_block_at_a_stop():
    """B never fails (in this window) and is replaced at age T, or at the first stop (A's
    instant renewals) once older than o: cycles o + min(Exp(l), T - o), so replacements
    run at 1 / (o + (1 - exp(-l (T - o))) / l) per unit time."""
    lam, T, o, horizon, n = 0.01, 300.0, 100.0, 60_000.0, 200
    d = series(block("A", exp_model(lam), instant_repair=True, maintenance_group="g"),
               block("B", {"distribution_id": "weibull", "params": {"alpha": 1e9, "beta": 3.0}},
                     instant_repair=True, maintenance_group="g",
                     preventive={"policy": "age", "interval": T, "opportunity": o}))
    d["maintenance_groups"] = {"g": {"setup_cost": 1.0}}
    res = simulate_availability(d, horizon=horizon, replications=n, seed=93, grid=0)
    rate = 1.0 / (o + (1 - math.exp(-lam * (T - o))) / lam)
    assert res.preventive["B"] / horizon == pytest.approx(rate, rel=0.01)
    # Without the opportunity B is replaced at age T only.
    d["nodes"][2]["preventive"] = {"policy": "age", "interval": T}
    res = simulate_availability(d, horizon=horizon, replications=n, seed=93, grid=0)
    assert res.preventive["B"] == horizon // T


@pytest.mark.parametrize("node_extra,groups,field", [
    ({"maintenance_group": "nope"}, {"g": {}}, "nodes.A.maintenance_group"),
    ({"maintenance_group": "g"}, {"g": {"setup_cost": -1}}, "maintenance_groups.g.setup_cost"),
    ({"maintenance_group": "g"}, {"g": {"crew": 2}}, "maintenance_groups.g.crew"),
    ({"preventive": {"interval": 10.0, "opportunity": 5.0}}, {}, "nodes.A.preventive.opportunity"),
    ({"maintenance_group": "g", "preventive": {"interval": 10.0, "opportunity": 50.0}}, {"g": {}},
     "nodes.A.preventive.opportunity"),
    ({"maintenance_group": "g", "preventive": {"policy": "block", "interval": 10.0, "opportunity": 5.0}},
     {"g": {}}, "nodes.A.preventive.opportunity"),
])
def test_refusals_name_the_field(node_extra, groups, field):
    d = series(block("A", exp_model(0.01), instant_repair=True, **node_extra)) | {"maintenance_groups": groups}
    with pytest.raises(InputError) as e:
        simulate_availability(d, horizon=10.0, replications=10)
    assert e.value.field == f"diagram.{field}"


def test_groups_need_a_repairable_run():
    d = series(block("A", exp_model(0.01), maintenance_group="g")) | {"maintenance_groups": {"g": {}}}
    with pytest.raises(InputError, match="repairable"):
        simulate_mission(d, mission_time=10.0, replications=10)
