"""A repairable run's figures mean what their names say (fixed seeds, each run's own 99%
interval against closed forms): failures are counted apart from planned replacements and
proof tests, MTBF/MTTR are about failures only, an instantly repaired block's failures
count at block and system level, and PFD(t) shows the saw-tooth peak just before each
proof test (never the value just after it)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from bathtub.engine import simulate_availability

from .engine_diagrams import block, exp_model, parallel, series

Z99 = 2.5758293035489


def weibull(alpha: float, beta: float) -> dict:
    return {"distribution_id": "weibull", "params": {"alpha": alpha, "beta": beta}}


def near(mean: float, se: float, expected: float, slack: float = 0.0) -> None:
    assert abs(mean - expected) <= Z99 * se + slack, (mean, expected, se)


def test_age_replaced_weibull_block_counts_failures_apart_from_replacements():
    """Weibull(1000, 3) replaced at age T = 400 (5 h off-line), repaired in 10 h on average.
    Renewal-reward over one cycle of mean length L = int_0^T R + d R(T) + m F(T): failures
    per unit time F(T) / L, replacements R(T) / L, MTBF = int_0^T R / F(T) (uptime per
    failure, ~6,300 h: not the ~400 h between any two stops), MTTR = m."""
    alpha, beta, T, d, m = 1000.0, 3.0, 400.0, 5.0, 10.0
    pm = {"policy": "age", "interval": T, "duration": d}
    node = block("P", weibull(alpha, beta), exp_model(1 / m), preventive=pm)
    horizon = 300 * T
    res = simulate_availability(series(node), horizon=horizon, replications=200, seed=31, grid=0)
    life = stats.weibull_min(beta, scale=alpha)
    up = integrate.quad(life.sf, 0, T)[0]
    cycle = up + d * life.sf(T) + m * life.cdf(T)
    # Started new, the count over [0, H] is H / L plus less than one cycle's worth.
    near(res.expected_failures, res.expected_failures_std_error, horizon * life.cdf(T) / cycle, slack=1.0)
    rel = Z99 * res.expected_failures_std_error / res.expected_failures
    assert res.mtbf == pytest.approx(up / life.cdf(T), rel=rel + 0.01)
    assert res.mtbf > 10 * T
    assert res.mttr == pytest.approx(m, rel=rel + 0.01)
    assert res.expected_preventive_replacements == pytest.approx(horizon * life.sf(T) / cycle, rel=0.01)
    assert res.expected_proof_tests == 0.0
    # Every replacement stops the (single-block) system: a planned outage, not a failure.
    assert res.expected_planned_outages == res.expected_preventive_replacements
    assert abs(res.planned_downtime - d * res.expected_preventive_replacements) <= d
    assert res.unplanned_downtime + res.planned_downtime == pytest.approx((1 - res.mean_availability) * horizon)
    assert res.preventive == {"P": res.expected_preventive_replacements}
    # A single-block system: its block's row says the same.
    (b,) = res.blocks
    assert b.failures == pytest.approx(res.expected_failures, rel=1e-12)
    assert b.preventive_replacements == res.expected_preventive_replacements and b.proof_tests == 0.0
    assert b.planned_downtime == pytest.approx(res.planned_downtime, rel=1e-9)
    assert b.unplanned_downtime == pytest.approx(res.unplanned_downtime, rel=1e-9)
    assert b.downtime == pytest.approx(b.planned_downtime + b.unplanned_downtime, rel=1e-12)
    assert b.mtbf == pytest.approx(res.mtbf, rel=1e-9) and b.mttr == pytest.approx(res.mttr, rel=1e-9)
    assert b.share_of_system_downtime == pytest.approx(1.0)


def renewal_availability(lam: float, mu: float, t: float) -> float:
    """Integral over [0, t] of an alternating renewal unit's availability, started new."""
    return mu / (lam + mu) * t + lam / (lam + mu) ** 2 * (1 - math.exp(-(lam + mu) * t))


def test_instant_repair_failures_count_in_a_series_system():
    """I (exponential lam, instant repair) in series with B (lam_b, repair mu): R(H) =
    exp(-(lam + lam_b) H); system failures are the failures of either while B is up,
    (lam + lam_b) int_0^H a_B; I fails lam H times, never down, MTBF 1 / lam, MTTR 0."""
    lam, lam_b, mu, horizon = 1e-3, 2e-4, 0.05, 2000.0
    d = series(block("I", exp_model(lam), instant_repair=True), block("B", exp_model(lam_b), exp_model(mu)))
    res = simulate_availability(d, horizon=horizon, replications=20_000, seed=32, grid=0)
    r = math.exp(-(lam + lam_b) * horizon)
    lo, hi = res.reliability_interval
    assert lo <= r <= hi and abs(res.reliability - r) <= Z99 * math.sqrt(r * (1 - r) / res.replications)
    near(res.expected_failures, res.expected_failures_std_error,
         (lam + lam_b) * renewal_availability(lam_b, mu, horizon))
    i, b = res.blocks
    assert abs(i.failures - lam * horizon) <= Z99 * math.sqrt(lam * horizon / res.replications)
    assert i.downtime == 0.0 and i.unplanned_downtime == 0.0 and i.mttr == 0.0
    assert i.mtbf == pytest.approx(horizon / i.failures)
    assert i.share_of_system_downtime == 0.0 and b.share_of_system_downtime == pytest.approx(1.0)
    # The system's downtime is B's, spread over all system failures (I's last no time).
    assert res.unplanned_downtime == pytest.approx(b.downtime, rel=1e-9)
    assert res.mttr == pytest.approx(b.downtime / res.expected_failures, rel=1e-9)
    assert res.expected_planned_outages == 0.0 and res.planned_downtime == 0.0


def test_instant_repair_in_parallel_fails_the_system_only_while_the_other_is_down():
    """I instant in parallel with B: the system fails (for no time) when I fails while B is
    down, lam int_0^H (1 - a_B); it is never down."""
    lam, lam_b, mu, horizon = 2e-3, 5e-3, 0.02, 3000.0
    d = parallel(block("I", exp_model(lam), instant_repair=True), block("B", exp_model(lam_b), exp_model(mu)))
    res = simulate_availability(d, horizon=horizon, replications=4000, seed=33, grid=0)
    near(res.expected_failures, res.expected_failures_std_error,
         lam * (horizon - renewal_availability(lam_b, mu, horizon)))
    assert res.mean_availability == 1.0 and res.expected_failures > 0.5
    assert res.mttr == 0.0 and res.mtbf == pytest.approx(horizon / res.expected_failures)


def test_a_shared_failure_of_instantly_repaired_members_fails_the_system():
    """1oo2 of instantly repaired exponential members with a beta factor (rate basis):
    alone a member's failure never stops the system, a shared event (rate beta lam) takes
    both at once, so system failures are Poisson(beta lam H) and R(H) = exp(-beta lam H)."""
    lam, beta, horizon = 1e-3, 0.2, 5000.0
    d = parallel(*(block(f"M{i}", exp_model(lam), instant_repair=True) for i in range(2)))
    d["ccf"] = [{"members": ["M0", "M1"], "beta": beta}]
    res = simulate_availability(d, horizon=horizon, replications=4000, seed=34, grid=0)
    near(res.expected_failures, res.expected_failures_std_error, beta * lam * horizon)
    r = math.exp(-beta * lam * horizon)
    assert abs(res.reliability - r) <= Z99 * math.sqrt(r * (1 - r) / res.replications)
    assert res.mean_availability == 1.0


@pytest.mark.parametrize("grid", [101, 7])
def test_pfd_peaks_are_read_just_before_each_proof_test(grid):
    """1oo1 exponential channel, tests every tau, instant repair: PFD(t) = 1 - exp(-lam (t mod
    tau)) rising to 1 - exp(-lam tau) just before each test; PFDavg = 1 - (1 - e^-x) / x.
    A grid on the test times (101 points over 10 tau) reads the left limits, a coarse one (7)
    gets the test instants added: pfd_max is the peak either way, never ~0."""
    lam, tau = 2e-5, 4380.0
    node = block("V", exp_model(lam), instant_repair=True, inspection={"interval": tau})
    horizon = 10 * tau
    res = simulate_availability(series(node) | {"safety_function": True}, horizon=horizon, replications=4000,
                                seed=35, grid=grid)
    x = lam * tau
    peak = 1 - math.exp(-x)
    s = res.safety
    near(s.pfd_avg, s.pfd_avg_std_error, 1 - (1 - math.exp(-x)) / x)
    n = res.replications
    t = np.asarray(res.t)
    tests = tau * np.arange(1, 11)
    assert np.all(np.isin(tests, t))
    pfd = np.asarray(s.pfd)
    at = pfd[np.isin(t, tests)]
    sd = math.sqrt(peak * (1 - peak) / n)
    assert np.all(np.abs(at - peak) <= 3.29 * sd), (at, peak)  # ten peaks: a 99.9% band each
    # The maximum of ten readings of the peak: within the band of the largest of them.
    assert peak - Z99 * sd <= s.pfd_max <= peak + 3.5 * sd
    expect = 1 - np.exp(-lam * np.where(np.isin(t, tests), tau, t % tau))
    assert np.all(np.abs(pfd - expect) <= 3.29 * np.sqrt(expect * (1 - expect) / n) + 2.0 / n)
    assert res.expected_proof_tests == 10.0 and res.blocks[0].proof_tests == 10.0
    assert res.expected_planned_outages == 0.0  # tests in no time stop nothing


def test_plant_figures_add_up():
    """A series plant with an age-replaced pump (off-line replacements), a proof-tested
    valve (off-line tests) and an instantly repaired sensor: each field of the run record is
    consistent with the others and with the per-block table."""
    tau, horizon = 500.0, 20_000.0
    pump = block("P", weibull(2000.0, 2.5), exp_model(0.05), preventive={"interval": 800.0, "duration": 8.0})
    valve = block("V", exp_model(2e-4), exp_model(0.1), inspection={"interval": tau, "duration": 4.0})
    sensor = block("S", exp_model(5e-4), instant_repair=True)
    res = simulate_availability(series(pump, valve, sensor), horizon=horizon, replications=400, seed=36, grid=51)
    p, v, s = res.blocks
    down = (1 - res.mean_availability) * horizon
    assert res.unplanned_downtime + res.planned_downtime == pytest.approx(down, rel=1e-9)
    assert res.planned_downtime > 0 and res.unplanned_downtime > 0
    assert sum(b.share_of_system_downtime for b in res.blocks) == pytest.approx(1.0)
    for b in res.blocks:
        assert b.downtime == pytest.approx(b.planned_downtime + b.unplanned_downtime, rel=1e-9, abs=1e-9)
        assert b.mtbf == pytest.approx((horizon - b.downtime) / b.failures, rel=1e-9)
        assert b.mttr == pytest.approx(b.unplanned_downtime / b.failures, rel=1e-9, abs=1e-12)
    assert res.expected_preventive_replacements == p.preventive_replacements > 0
    assert res.expected_proof_tests == v.proof_tests == horizon // tau
    # A test is a planned stop when the valve worked (no hidden failure since the last,
    # ~exp(-lam tau)); the one at the horizon ends the run at once.
    assert v.planned_downtime == pytest.approx(4.0 * (v.proof_tests - 1) * math.exp(-2e-4 * tau), rel=0.03)
    assert p.planned_downtime == pytest.approx(8.0 * p.preventive_replacements, abs=8.0)
    assert s.downtime == 0.0 and s.mttr == 0.0
    assert abs(s.failures - 5e-4 * horizon) <= Z99 * math.sqrt(5e-4 * horizon / res.replications)
    # Each outage is begun by one event: a failure (some of the sensor's last no time) or a
    # planned stop of a block that worked.
    assert res.expected_failures <= p.failures + v.failures + s.failures
    assert res.expected_failures > s.failures * res.mean_availability * 0.9
    assert res.expected_planned_outages <= p.preventive_replacements + v.proof_tests
    assert res.expected_planned_outages > 0.9 * (p.preventive_replacements + v.proof_tests)
    assert res.mtbf == pytest.approx(res.mean_availability * horizon / res.expected_failures, rel=1e-9)
    assert res.mttr == pytest.approx(res.unplanned_downtime / res.expected_failures, rel=1e-9)
    body = res.to_dict()
    for key in ("expected_planned_outages", "unplanned_downtime", "planned_downtime",
                "expected_preventive_replacements", "expected_proof_tests"):
        assert body[key] == getattr(res, key)
    assert body["blocks"][1]["proof_tests"] == v.proof_tests
    assert np.all(np.isin(tau * np.arange(1, 41), res.t))


def test_condition_inspections_and_replacements_are_not_failures():
    """Exponential block inspected every I (in no time), replaced at each inspection (its
    chance of failing before the next, 1 - exp(-lam I) = 0.095, exceeds 0.05), instant
    repair: inspections H / I, replacements the same (it always runs), failures still
    Poisson(lam H) (memoryless), MTBF 1 / lam, no planned outage."""
    lam, interval, horizon = 1e-3, 100.0, 10_000.0
    node = block("C", exp_model(lam), instant_repair=True,
                 preventive={"policy": "condition", "interval": interval, "threshold": 0.05})
    res = simulate_availability(series(node), horizon=horizon, replications=2000, seed=37, grid=0)
    (b,) = res.blocks
    assert res.expected_condition_inspections == b.condition_inspections == horizon / interval
    assert res.expected_preventive_replacements == b.preventive_replacements == horizon / interval
    assert res.expected_proof_tests == 0.0 and res.expected_planned_outages == 0.0
    near(res.expected_failures, res.expected_failures_std_error, lam * horizon)
    assert b.failures == pytest.approx(res.expected_failures, rel=1e-12)
    assert res.mtbf == pytest.approx(1 / lam, rel=Z99 * res.expected_failures_std_error / res.expected_failures)
    assert b.mtbf == pytest.approx(res.mtbf, rel=1e-9) and res.mttr == 0.0


def test_planned_and_unplanned_downtime_of_overlapping_stops_and_failures():
    """Series: A stopped for d at every multiple of T (block replacement; A itself never
    fails in practice), B exponential lam with repair mu. The system is down for failures
    while B is down, and for a plan while A is stopped and B works: so its unplanned
    downtime is B's downtime, its failures are B's (a failure of B during a stop of A would
    have stopped the system too), and its planned downtime is the time A is stopped with B
    working, sum over the stops of int a_B(t) dt over [kT, kT + d], whichever began the
    outage and whichever ends first."""
    lam, mu, T, d = 2e-3, 0.05, 200.0, 10.0
    horizon = 100.5 * T  # no stop cut short by the horizon
    a = block("A", exp_model(1e-12), instant_repair=True, preventive={"policy": "block", "interval": T, "duration": d})
    res = simulate_availability(series(a, block("B", exp_model(lam), exp_model(mu))), horizon=horizon,
                                replications=1000, seed=38, grid=0)
    pa, b = res.blocks
    assert res.expected_failures == pytest.approx(b.failures, rel=1e-12)
    assert res.unplanned_downtime == pytest.approx(b.downtime, rel=1e-9)
    assert res.mttr == pytest.approx(b.mttr, rel=1e-9)
    assert pa.planned_downtime == pytest.approx(100 * d) and pa.unplanned_downtime == pytest.approx(0.0, abs=1e-9)
    assert b.planned_downtime == 0.0
    s = lam + mu
    stops = T * np.arange(1, 101)
    # int of a_B(t) = mu/s + lam/s e^(-s t) over [kT, kT + d], summed over the stops.
    up_in_stops = np.sum(mu / s * d + lam / s**2 * (np.exp(-s * stops) - np.exp(-s * (stops + d))))
    assert res.planned_downtime == pytest.approx(up_in_stops, rel=0.01)
    assert res.unplanned_downtime + res.planned_downtime == pytest.approx((1 - res.mean_availability) * horizon)
    assert res.expected_preventive_replacements == 100.0
    # A stop that finds B working opens a planned outage (~a_B of them).
    assert res.expected_planned_outages == pytest.approx(100 * mu / s, rel=0.01)


def test_pfd_max_is_none_without_a_curve():
    """No grid and no proof test: nothing was read at a time, so no maximum is claimed
    (PFDavg alone; it used to be reported as the maximum)."""
    d = series(block("V", exp_model(1e-4), exp_model(0.1))) | {"safety_function": True}
    res = simulate_availability(d, horizon=1000.0, replications=200, seed=39, grid=0)
    assert res.safety.pfd_max is None and res.safety.pfd_avg > 0 and res.to_dict()["safety"]["pfd_max"] is None
