"""Non-repairable missions against closed forms, within each run's own 99% interval."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from bathtub.engine import simulate_mission

from .engine_diagrams import block, bridge, exp_model, parallel, series

Z99 = 2.5758293035489


def weib(alpha: float, beta: float) -> dict:
    return {"distribution_id": "weibull", "params": {"alpha": alpha, "beta": beta}}


def assert_curve(res, exact, skip_ends: bool = True) -> None:
    """Every grid point within the binomial 99% interval of the run (plus a tiny floor)."""
    n = res.replications
    p = np.asarray(exact(res.t))
    se = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(res.reliability - p) <= Z99 * se + 2.0 / n), np.max(np.abs(res.reliability - p) / (se + 1e-12))


def test_weibull_series():
    d = series(block("A", weib(1000.0, 2.0)), block("B", weib(1500.0, 3.0)), block("C", weib(800.0, 1.2)))
    res = simulate_mission(d, mission_time=600.0, replications=20_000, seed=1, grid=7)

    def r(t):
        return np.exp(-((t / 1000.0) ** 2) - (t / 1500.0) ** 3 - (t / 800.0) ** 1.2)

    assert_curve(res, r)
    mttf = integrate.quad(r, 0, np.inf)[0]
    assert abs(res.mttf - mttf) <= Z99 * res.mttf_std_error
    pf = 1 - r(600.0)
    assert res.probability_of_failure_interval[0] - 0.005 <= pf <= res.probability_of_failure_interval[1] + 0.005
    assert abs(res.probability_of_failure - pf) <= Z99 * np.sqrt(pf * (1 - pf) / res.replications)


def test_weibull_parallel_and_parallel_node():
    d = parallel(block("A", weib(1000.0, 2.0)), block("B", weib(500.0, 0.8)))
    res = simulate_mission(d, mission_time=1500.0, replications=20_000, seed=2, grid=6)
    assert_curve(res, lambda t: 1 - (1 - np.exp(-((t / 1000.0) ** 2))) * (1 - np.exp(-((t / 500.0) ** 0.8))))
    # A `parallel` node: n identical units sharing one model.
    node = {"id": "P", "type": "parallel", "n": 3, "model": exp_model(0.01)}
    res = simulate_mission(series(node), mission_time=300.0, replications=20_000, seed=3, grid=6)
    assert_curve(res, lambda t: 1 - (1 - np.exp(-0.01 * t)) ** 3)
    mttf = (1 + 1 / 2 + 1 / 3) / 0.01
    assert abs(res.mttf - mttf) <= Z99 * res.mttf_std_error


def test_series_node_of_n_units():
    node = {"id": "S", "type": "series", "n": 4, "model": weib(100.0, 1.5)}
    res = simulate_mission(series(node), mission_time=100.0, replications=20_000, seed=4, grid=6)
    assert_curve(res, lambda t: np.exp(-4 * (t / 100.0) ** 1.5))


def test_cold_standby_pair():
    lam = 0.002
    node = {"id": "S", "type": "standby", "k": 1, "spares": 1, "cold": True, "model": exp_model(lam)}
    res = simulate_mission(series(node), mission_time=2000.0, replications=40_000, seed=5, grid=9)
    assert_curve(res, lambda t: np.exp(-lam * t) * (1 + lam * t))
    assert abs(res.mttf - 2 / lam) <= Z99 * res.mttf_std_error


def test_warm_standby_pair():
    # Active rate lam, idle spare ages at dormancy d (rate d*lam):
    # R(t) = e^{-lam t} + (lam / (d lam)) (e^{-lam t} - e^{-(lam + d lam) t}).
    lam, dorm = 0.002, 0.3
    node = {"id": "S", "type": "standby", "spares": 1, "dormancy": dorm, "model": exp_model(lam)}
    res = simulate_mission(series(node), mission_time=2000.0, replications=40_000, seed=6, grid=9)
    ls = dorm * lam
    assert_curve(res, lambda t: np.exp(-lam * t) + lam / ls * (np.exp(-lam * t) - np.exp(-(lam + ls) * t)))


def test_hot_standby_is_parallel():
    lam = 0.002
    node = {"id": "S", "type": "standby", "spares": 1, "cold": False, "model": exp_model(lam)}
    res = simulate_mission(series(node), mission_time=1500.0, replications=30_000, seed=7, grid=6)
    assert_curve(res, lambda t: 1 - (1 - np.exp(-lam * t)) ** 2)


def test_bridge_by_decomposition():
    rates = {"A": 0.001, "B": 0.002, "C": 0.0015, "D": 0.001, "E": 0.003}
    d = bridge(*(block(k, exp_model(v)) for k, v in rates.items()))
    res = simulate_mission(d, mission_time=800.0, replications=100_000, seed=1, grid=9)

    def r(t):
        ra, rb, rc, rd, re = (np.exp(-rates[k] * t) for k in "ABCDE")
        # Condition on the bridge element E (pivotal decomposition).
        with_e = (1 - (1 - ra) * (1 - rb)) * (1 - (1 - rc) * (1 - rd))
        without_e = 1 - (1 - ra * rc) * (1 - rb * rd)
        return re * with_e + (1 - re) * without_e

    assert_curve(res, r)


def test_subsystem_inline():
    inner = parallel(block("x", exp_model(0.01)), block("y", exp_model(0.02)))
    d = series(block("A", exp_model(0.001)), {"id": "sub", "type": "subsystem", "diagram": inner})
    res = simulate_mission(d, mission_time=100.0, replications=20_000, seed=9, grid=6)
    assert_curve(res, lambda t: np.exp(-0.001 * t) * (1 - (1 - np.exp(-0.01 * t)) * (1 - np.exp(-0.02 * t))))
    assert set(res.block_shares) == {"A", "sub/x", "sub/y"}


def test_block_shares_of_series_failures():
    # In a series of exponentials the first failure is block i's with probability lam_i / sum.
    d = series(block("A", exp_model(0.001)), block("B", exp_model(0.003)))
    res = simulate_mission(d, mission_time=1000.0, replications=20_000, seed=10, grid=2)
    k = res.probability_of_failure * res.replications
    for name, lam in (("A", 0.001), ("B", 0.003)):
        p = lam / 0.004
        assert abs(res.block_shares[name] - p) <= Z99 * np.sqrt(p * (1 - p) / k)


@pytest.mark.parametrize("beta", [0.7, 3.0])
def test_knode_two_of_three_weibull(beta):
    blocks = [block(f"u{i}", weib(100.0, beta)) for i in range(3)]
    res = simulate_mission(parallel(*blocks, need=2), mission_time=150.0, replications=20_000, seed=11, grid=6)

    def r(t):
        p = np.exp(-((t / 100.0) ** beta))
        return 3 * p**2 - 2 * p**3

    assert_curve(res, r)
