"""Runs "from now" (BlockState) against closed forms: a running block at an age, a failed
block, a block part-way through its repair; refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bathtub.engine import simulate_availability, simulate_mission
from bathtub.errors import InputError

from .engine_diagrams import block, exp_model, parallel, series

N = 20_000


def weibull(alpha: float, beta: float) -> dict:
    return {"distribution_id": "weibull", "params": {"alpha": alpha, "beta": beta}}


def check_curve(est, exact, n: int = N) -> None:
    exact = np.asarray(exact)
    se = np.sqrt(exact * (1 - exact) / n)
    assert np.all(np.abs(np.asarray(est) - exact) <= 3.29 * se + 2.0 / n), (est, exact)


def test_a_running_block_at_an_age_survives_as_its_residual_life():
    alpha, beta, age = 100.0, 2.5, 60.0
    d = series(block("W", weibull(alpha, beta), state={"age": age}))
    res = simulate_mission(d, mission_time=100.0, replications=N, seed=71, grid=6)
    life = stats.weibull_min(beta, scale=alpha)
    check_curve(res.reliability, life.sf(age + res.t) / life.sf(age))


def test_a_failed_block_leaves_its_partner_alone():
    lam = 0.01
    d = parallel(block("A", exp_model(lam)), block("B", exp_model(0.5), state={"failed": True}))
    res = simulate_mission(d, mission_time=200.0, replications=N, seed=72, grid=6)
    check_curve(res.reliability[1:], np.exp(-lam * res.t[1:]))


def test_a_block_down_for_a_while_finishes_its_repair():
    """Repair Weibull(10, 3) begun 5 ago: up by t with chance 1 - S(5 + t)/S(5) (the life
    is so long it does not fail again in the window)."""
    d = series(block("R", exp_model(1e-9), weibull(10.0, 3.0), state={"down": True, "since": 5.0}))
    res = simulate_availability(d, horizon=12.0, replications=N, seed=73, grid=7)
    rep = stats.weibull_min(3.0, scale=10.0)
    expect = 1 - rep.sf(5.0 + res.t) / rep.sf(5.0)
    check_curve(res.availability[1:], expect[1:])
    assert res.availability[0] == 0.0 and res.expected_failures == 1.0


@pytest.mark.parametrize("state,field", [
    ({"failed": True, "down": True}, "state"),
    ({"since": 3.0}, "state.since"),
    ({"down": True, "age": 3.0}, "state.age"),
    ({"age": -1.0}, "state.age"),
    ({"asleep": True}, "state.asleep"),
])
def test_refusals_name_the_field(state, field):
    d = series(block("A", exp_model(0.1), exp_model(1.0), state=state))
    with pytest.raises(InputError) as e:
        simulate_availability(d, horizon=10.0, replications=10)
    assert e.value.field == f"diagram.nodes.A.{field}"


def test_refused_by_run_kind():
    d = series(block("A", exp_model(0.1), exp_model(1.0), state={"failed": True}))
    with pytest.raises(ValueError, match="non-repairable"):
        simulate_availability(d, horizon=10.0, replications=10)
    d = series(block("A", exp_model(0.1), exp_model(1.0), state={"down": True}))
    with pytest.raises(ValueError, match="repairable runs"):
        simulate_mission(d, mission_time=10.0, replications=10)
    with pytest.raises(InputError) as e:
        simulate_availability(series(block("A", exp_model(0.1), instant_repair=True, state={"down": True})),
                              horizon=10.0, replications=10)
    assert e.value.field == "diagram.nodes.A.state.down"
