"""Imperfect (Kijima) repair against closed forms: q = 0 is perfect renewal (the very same
draws), q = 1 is minimal repair, an NHPP with E[N(T)] = (T/alpha)^beta for a Weibull
block; replace_after renews at the N-th failure (checked through its costs); refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from bathtub.engine import simulate_availability
from bathtub.errors import InputError

from .engine_diagrams import block, exp_model, series

Z99 = 2.5758293035489


def weibull(alpha: float, beta: float) -> dict:
    return {"distribution_id": "weibull", "params": {"alpha": alpha, "beta": beta}}


@pytest.mark.parametrize("model", ["kijima1", "kijima2"])
@pytest.mark.parametrize("instant", [True, False])
def test_q0_is_perfect_renewal(model, instant):
    repair = None if instant else exp_model(0.05)
    extra = {"instant_repair": True} if instant else {}
    kw = {"horizon": 5000.0, "replications": 300, "seed": 31, "grid": 11}
    perfect = simulate_availability(series(block("W", weibull(500.0, 2.5), repair, **extra)), **kw)
    aged = simulate_availability(series(block("W", weibull(500.0, 2.5), repair, **extra,
                                              repair_quality={"model": model, "q": 0.0})), **kw)
    assert aged.state == perfect.state


@pytest.mark.parametrize("model", ["kijima1", "kijima2"])
def test_q1_is_minimal_repair(model):
    alpha, beta, horizon, n = 400.0, 2.0, 2000.0, 4000
    node = block("W", weibull(alpha, beta), instant_repair=True, repair_quality={"model": model, "q": 1.0})
    res = simulate_availability(series(node), horizon=horizon, replications=n, seed=32, grid=0)
    h = (horizon / alpha) ** beta  # failures of a minimally repaired block: Poisson(H(T))
    assert abs(res.blocks[0].failures - h) <= Z99 * math.sqrt(h / n), (res.blocks[0].failures, h)


def test_partial_repair_lies_between():
    """0 < q < 1 with an ageing block: more failures than renewal, fewer than minimal."""
    kw = {"horizon": 3000.0, "replications": 2000, "seed": 33, "grid": 0}
    counts = []
    for rq in ({"model": "kijima1", "q": 0.0}, {"model": "kijima1", "q": 0.5}, {"model": "kijima1", "q": 1.0}):
        node = block("W", weibull(400.0, 3.0), instant_repair=True, repair_quality=rq)
        counts.append(simulate_availability(series(node), **kw).blocks[0].failures)
    assert counts[0] < counts[1] < counts[2]


def test_replace_after_renews_at_the_nth_failure():
    """Exponential block: failures are Poisson(lam T) whatever the repair; every 2nd one is
    a replacement (charged `replace`), the others repairs."""
    lam, horizon, n = 2e-3, 2000.0, 20_000
    node = block("E", exp_model(lam), instant_repair=True,
                 repair_quality={"model": "kijima2", "q": 0.7, "replace_after": 2},
                 costs={"repair": 10.0, "replace": 100.0})
    res = simulate_availability(series(node), horizon=horizon, replications=n, seed=34, grid=0)
    k = np.arange(0, 200)
    pmf = stats.poisson(lam * horizon).pmf(k)
    replacements = float(np.sum(pmf * (k // 2)))
    repairs = lam * horizon - replacements
    by = res.costs["by_kind"]
    assert abs(by["replacement"]["mean"] - 100.0 * replacements) <= Z99 * by["replacement"]["std_error"]
    assert abs(by["repair"]["mean"] - 10.0 * repairs) <= Z99 * by["repair"]["std_error"]


@pytest.mark.parametrize("instant", [True, False])
def test_q0_with_age_replacement_is_age_replacement(instant):
    repair = None if instant else exp_model(0.05)
    extra = {"instant_repair": True} if instant else {}
    pm = {"policy": "age", "interval": 300.0, "duration": 5.0}
    kw = {"horizon": 5000.0, "replications": 300, "seed": 35, "grid": 11}
    perfect = simulate_availability(series(block("W", weibull(500.0, 2.5), repair, preventive=pm, **extra)), **kw)
    aged = simulate_availability(series(block("W", weibull(500.0, 2.5), repair, preventive=pm, **extra,
                                              repair_quality={"model": "kijima1", "q": 0.0})), **kw)
    assert aged.state == perfect.state


def test_block_replacement_with_minimal_repair():
    """Barlow-Hunter periodic replacement: renewed every T, minimally repaired between, so
    failures per period are Poisson(H(T)) = (T/alpha)^beta."""
    alpha, beta, T, periods, n = 400.0, 2.0, 300.0, 10, 2000
    node = block("W", weibull(alpha, beta), instant_repair=True, repair_quality={"model": "kijima1", "q": 1.0},
                 preventive={"policy": "block", "interval": T})
    res = simulate_availability(series(node), horizon=periods * T, replications=n, seed=36, grid=0)
    h = periods * (T / alpha) ** beta
    assert abs(res.blocks[0].failures - h) <= Z99 * math.sqrt(h / n), (res.blocks[0].failures, h)
    assert res.preventive["W"] == periods


@pytest.mark.parametrize("rq,extra,field", [
    ({"model": "kijima3"}, {}, "repair_quality.model"),
    ({"model": "kijima1", "q": 1.5}, {}, "repair_quality.q"),
    ({"model": "kijima1", "q": 0.5, "replace_after": 0}, {}, "repair_quality.replace_after"),
    ({"model": "kijima1", "q": 0.0, "replace_after": 3}, {}, "repair_quality.replace_after"),
    ({"model": "perfect", "q": 0.5}, {}, "repair_quality.q"),
    ({"model": "kijima1", "q": 0.5}, {"preventive": {"policy": "condition", "interval": 10.0, "threshold": 0.1}},
     "repair_quality"),
    ({"model": "kijima1", "q": 0.5}, {"inspection": {"interval": 10.0}}, "repair_quality"),
])
def test_refusals_name_the_field(rq, extra, field):
    d = series(block("W", weibull(100.0, 2.0), instant_repair=True, repair_quality=rq, **extra))
    with pytest.raises(InputError) as e:
        simulate_availability(d, horizon=100.0, replications=10)
    assert e.value.field == f"diagram.nodes.W.{field}"


def test_refused_with_a_mixture_life():
    mix = {"distribution_id": "mixture", "base_distribution_id": "weibull",
           "params": {"alpha1": 10.0, "beta1": 1.0, "weight1": 0.5, "alpha2": 100.0, "beta2": 3.0, "weight2": 0.5}}
    d = series(block("W", mix, instant_repair=True, repair_quality={"model": "kijima1", "q": 0.5}))
    with pytest.raises(InputError, match="mixture"):
        simulate_availability(d, horizon=100.0, replications=10)
