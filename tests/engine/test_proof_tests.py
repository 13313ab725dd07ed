"""Proof-tested blocks against closed forms (fixed seeds, each run's own 99% interval):
PFDavg of an exponential block, the partial-coverage split formula, a first-test offset,
test off-line time; PFD(t), SIL bands and the refusals that name the field."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate

from bathtub.engine import merge, sil_of, simulate_availability, simulate_mission
from bathtub.errors import InputError

from .engine_diagrams import block, exp_model, series

Z99 = 2.5758293035489


def proof_tested(lam: float, **inspection) -> dict:
    return block("V", exp_model(lam), instant_repair=True, inspection=inspection)


def within(res, expected: float) -> None:
    s = res.safety
    assert abs(s.pfd_avg - expected) <= Z99 * s.pfd_avg_std_error, (s.pfd_avg, expected, s.pfd_avg_std_error)


def test_exponential_block_pfd_avg_and_curve():
    lam, T = 1e-4, 1000.0
    d = series(proof_tested(lam, interval=T)) | {"safety_function": True, "target_sil": 1}
    res = simulate_availability(d, horizon=10 * T, replications=20_000, seed=1, grid=41)
    x = lam * T
    within(res, 1 - (1 - math.exp(-x)) / x)  # IEC 61508-6: ~ lam T / 2 for small lam T
    # PFD(t) restarts at every test: 1 - exp(-lam (t mod T)); at a test's time the curve is
    # read just before it (the saw-tooth peak, 1 - exp(-lam T)), not after it (~0).
    t = res.t
    p = 1 - np.exp(-lam * np.where((t % T == 0) & (t > 0), T, t % T))
    se = np.sqrt(p * (1 - p) / res.replications)
    assert np.all(np.abs(np.asarray(res.safety.pfd) - p) <= Z99 * se + 2.0 / res.replications)
    assert res.safety.sil == 1 and res.safety.sil_claimed == 1 and res.safety.target_met is True
    body = res.to_dict()
    assert body["safety"]["target_sil"] == 1 and len(body["safety"]["pfd"]) == 41


@pytest.mark.parametrize("coverage,m", [(0.6, 4), (0.0, 3)])
def test_partial_coverage_split_formula(coverage, m):
    """Covered part c*lam renewed every T, the rest (1-c)*lam only at full tests every mT."""
    lam, T = 1e-4, 1000.0
    d = series(proof_tested(lam, interval=T, coverage=coverage, full_test=m * T)) | {"safety_function": True}
    res = simulate_availability(d, horizon=2 * m * T, replications=20_000, seed=2, grid=0)

    def pfd(t):
        return 1 - math.exp(-coverage * lam * (t % T) - (1 - coverage) * lam * (t % (m * T)))

    exact = integrate.quad(pfd, 0, m * T, points=[i * T for i in range(1, m)], limit=200)[0] / (m * T)
    within(res, exact)
    # The textbook approximation is close for small lam T (relative error ~ lam m T / 3).
    assert abs(exact - (coverage * lam * T / 2 + (1 - coverage) * lam * m * T / 2)) < lam * m * T / 2 * exact


def test_offset_moves_the_first_test():
    lam, T, off, H = 2e-4, 1000.0, 400.0, 3400.0
    d = series(proof_tested(lam, interval=T, offset=off)) | {"safety_function": True}
    res = simulate_availability(d, horizon=H, replications=20_000, seed=3, grid=0)
    tests = [0.0] + [off + j * T for j in range(10) if off + j * T < H] + [H]

    exact = sum(integrate.quad(lambda t, a=a: 1 - math.exp(-lam * (t - a)), a, b)[0]
                for a, b in itertools.pairwise(tests)) / H
    within(res, exact)


def test_test_duration_takes_the_block_off_line():
    """Down during each test [jT, jT + d]; what it found is renewed at its end."""
    lam, T, dur, n = 1e-4, 1000.0, 50.0, 5
    d = series(proof_tested(lam, interval=T, duration=dur)) | {"safety_function": True}
    res = simulate_availability(d, horizon=n * T, replications=20_000, seed=4, grid=0)
    first = T - (1 - math.exp(-lam * T)) / lam
    later = dur + (T - dur) - (1 - math.exp(-lam * (T - dur))) / lam
    within(res, (first + (n - 1) * later) / (n * T))


def test_repair_after_detection_counts_in_pfd():
    """One crew, exponential repair: PFD ~ lam T / 2 + lam MTTR (IEC 61508-6, single channel)."""
    lam, T, mttr = 1e-4, 1000.0, 8.0
    node = block("V", exp_model(lam), exp_model(1 / mttr), inspection={"interval": T})
    res = simulate_availability(series(node) | {"safety_function": True}, horizon=20 * T, replications=10_000,
                                seed=5, grid=0, crews=1)
    x = lam * T
    approx = 1 - (1 - math.exp(-x)) / x + (1 - math.exp(-x)) * mttr / T
    assert abs(res.safety.pfd_avg - approx) <= Z99 * res.safety.pfd_avg_std_error + 0.03 * approx


def test_sil_bands():
    assert [sil_of(p) for p in (0.2, 0.1, 0.05, 0.01, 5e-3, 1e-3, 5e-4, 1e-4, 5e-5, 1e-6)] == [
        0, 0, 1, 1, 2, 2, 3, 3, 4, 4]


def test_runs_merge_and_ignore_threads():
    d = series(proof_tested(1e-3, interval=100.0, coverage=0.5, full_test=300.0, duration=5.0))
    kw = {"horizon": 900.0, "seed": 7, "grid": 11}
    whole = simulate_availability(d, replications=300, threads=1, **kw)
    assert simulate_availability(d, replications=300, threads=2, **kw).state == whole.state
    a = simulate_availability(d, replications=120, **kw)
    b = simulate_availability(d, replications=180, replication_start=120, **kw)
    assert merge(a, b).state == whole.state


@pytest.mark.parametrize("inspection,field", [
    ({"interval": 0}, "inspection.interval"),
    ({"duration": 1}, "inspection.interval"),
    ({"interval": 10, "duration": 10}, "inspection.duration"),
    ({"interval": 10, "offset": -1}, "inspection.offset"),
    ({"interval": 10, "coverage": 0.5}, "inspection.full_test"),
    ({"interval": 10, "coverage": 1.5}, "inspection.coverage"),
    ({"interval": 10, "coverage": 0.5, "full_test": 25}, "inspection.full_test"),
    ({"interval": 10, "cost": -5}, "inspection.cost"),
    ({"interval": 10, "cost": {"min": 5, "max": 1}}, "inspection.cost.max"),
    ({"interval": 10, "every": 5}, "inspection.every"),
])
def test_refusals_name_the_field(inspection, field):
    d = series(block("V", exp_model(1e-3), instant_repair=True, inspection=inspection))
    with pytest.raises(InputError) as e:
        simulate_availability(d, horizon=100.0, replications=10)
    assert e.value.field == f"diagram.nodes.V.{field}"


def test_refusals_of_kind_run_and_settings():
    par = series({"id": "P", "type": "parallel", "n": 2, "model": exp_model(1e-3), "instant_repair": True,
                  "inspection": {"interval": 10}})
    with pytest.raises(InputError, match="component"):
        simulate_availability(par, horizon=100.0, replications=10)
    d = series(proof_tested(1e-3, interval=10.0))
    with pytest.raises(ValueError, match="repairable"):
        simulate_mission(d, mission_time=100.0, replications=10)
    with pytest.raises(InputError) as e:
        simulate_availability(d | {"target_sil": 2}, horizon=100.0, replications=10)
    assert e.value.field == "diagram.target_sil"


def test_costs_of_tests_and_of_what_they_find():
    """A test costs its price (a range at its mean) at every test; each failure found is
    repaired at the block's repair cost: tests = H / T, failures ~ lam H (instant renewal)."""
    lam, T, n = 1e-3, 100.0, 4000
    node = block("V", exp_model(lam), instant_repair=True, inspection={"interval": T, "cost": {"min": 5, "max": 15}},
                 costs={"repair": 200.0})
    res = simulate_availability(series(node), horizon=10 * T, replications=n, seed=8, grid=0)
    by = res.costs["by_kind"]
    assert abs(by["inspection"]["mean"] - 10 * 10.0) <= Z99 * by["inspection"]["std_error"]
    # Failures while hidden wait for the next test, so the block runs a little less: count
    # them from the run itself and check the price per failure.
    assert by["repair"]["mean"] == pytest.approx(200.0 * res.blocks[0].failures)
    assert res.blocks[0].failures < lam * 10 * T
