"""Each block's share of system downtime follows the documented rule (an outage, stretch by
stretch, is shared equally among the blocks down whose restoration alone would restore the
system, else among every block down), with a 95% interval across replications; and a run
says when calendar replacements of redundant blocks coincide. Fixed seeds; closed forms
for independent exponential blocks, checked within each run's own 99% interval."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import integrate

from bathtub.engine import simulate_availability
from bathtub.rbd.analysis import analyze

from .engine_diagrams import block, exp_model, parallel, series

Z99 = 2.5758293035489
Z95 = 1.959963984540054


def weibull(alpha: float, beta: float) -> dict:
    return {"distribution_id": "weibull", "params": {"alpha": alpha, "beta": beta}}


def pumps(intervals: tuple[float, float, float]) -> dict:
    """Three identical pumps in a 2-of-3, each replaced on the calendar (`block` policy) in 24 h."""
    return parallel(*(block(f"P{i + 1}", weibull(5000.0, 2.0), exp_model(1 / 24),
                            preventive={"policy": "block", "interval": t, "duration": 24.0})
                      for i, t in enumerate(intervals)), need=2)


def expected_charges(rates: list[tuple[float, float]], works, horizon: float) -> np.ndarray:
    """Independent exponential blocks (failure rate, repair rate), all new at 0: block i's
    expected charge over [0, horizon] under the rule, the integral over t of the sum over
    the sets S of blocks down of P(S down at t) x (1 / |C(S)| if i is in C(S)), C(S) the
    blocks of S whose restoration alone makes `works(set of blocks down)` true, or S itself
    when there are none."""
    n = len(rates)

    def q(i: int, t: float) -> float:
        lam, mu = rates[i]
        return lam / (lam + mu) * (1.0 - math.exp(-(lam + mu) * t))

    def charge(i: int, t: float) -> float:
        total = 0.0
        for k in range(1, n + 1):
            for down in itertools.combinations(range(n), k):
                if i not in down or works(set(down)):
                    continue
                restore = [j for j in down if works(set(down) - {j})] or list(down)
                if i in restore:
                    p = math.prod(q(j, t) if j in down else 1.0 - q(j, t) for j in range(n))
                    total += p / len(restore)
        return total

    return np.array([integrate.quad(lambda t, i=i: charge(i, t), 0, horizon, limit=200)[0] for i in range(n)])


def assert_shares(res, expected: np.ndarray) -> None:
    shares = expected / expected.sum()
    for b, want in zip(res.blocks, shares, strict=True):
        se = b.share_of_system_downtime_std_error
        assert se > 0
        assert abs(b.share_of_system_downtime - want) <= Z99 * se, (b.id, b.share_of_system_downtime, want, se)
        lo, hi = b.share_of_system_downtime_interval
        assert lo == max(0.0, b.share_of_system_downtime - Z95 * se)
        assert hi == min(1.0, b.share_of_system_downtime + Z95 * se)
    assert abs(sum(b.share_of_system_downtime for b in res.blocks) - 1.0) < 1e-12


def test_identical_pumps_with_coinciding_replacements_get_equal_shares():
    """A common PM stops all three pumps at once: the outage is theirs alike (before the
    rule, the pump whose stop took the system down got it all: 0.7% / 99.3% / 0.04% at this
    seed). Exchangeable pumps: each true share is 1/3."""
    res = simulate_availability(pumps((2000.0, 2000.0, 2000.0)), horizon=20_000.0, replications=400, seed=7,
                                grid=0)
    assert res.planned_downtime > 0.9 * (1 - res.mean_availability) * res.horizon
    for b in res.blocks:
        se = b.share_of_system_downtime_std_error
        assert se > 0
        assert abs(b.share_of_system_downtime - 1 / 3) <= Z99 * se, (b.id, b.share_of_system_downtime, se)
    assert abs(sum(b.share_of_system_downtime for b in res.blocks) - 1.0) < 1e-12
    assert res.coinciding_preventive == (("P1", "P2", "P3"),)


def test_series_shares_follow_the_blocks_unavailabilities():
    """Series: a lone block down is the one whose restoration restores the system; blocks
    down together share alike. With small unavailabilities q_i the shares are close to
    the ratios int q_i / sum_j int q_j."""
    rates = [(0.01, 0.5), (0.02, 0.4), (0.005, 0.2)]
    horizon = 2000.0
    d = series(*(block(f"b{i}", exp_model(lam), exp_model(mu)) for i, (lam, mu) in enumerate(rates)))
    res = simulate_availability(d, horizon=horizon, replications=2000, seed=11, grid=0)
    expected = expected_charges(rates, lambda down: False, horizon)
    assert_shares(res, expected)
    # The whole charge is the system's downtime: every series outage has a block down.
    down = horizon - integrate.quad(lambda t: math.prod(
        mu / (lam + mu) + lam / (lam + mu) * math.exp(-(lam + mu) * t) for lam, mu in rates), 0, horizon,
        limit=200)[0]
    assert abs(expected.sum() - down) < 1e-6 * down
    ratios = [integrate.quad(lambda t, lam=lam, mu=mu: lam / (lam + mu) * (1 - math.exp(-(lam + mu) * t)),
                             0, horizon)[0] for lam, mu in rates]
    np.testing.assert_allclose(expected / expected.sum(), np.array(ratios) / sum(ratios), atol=0.01)


def test_a_down_standby_is_not_charged_for_its_partners_outage():
    """(A parallel B) in series with C: while C is down with A, C alone restores the system,
    so the stretch is C's, not A's; A and B share their joint outages; all three share a
    stretch that needs two restorations. Checked against the closed form of the rule."""
    rates = [(0.05, 0.2), (0.05, 0.2), (0.01, 0.1)]
    horizon = 1000.0
    a, b, c = (block(n, exp_model(lam), exp_model(mu)) for n, (lam, mu) in zip("ABC", rates, strict=True))
    d = {"nodes": [{"id": "in", "type": "input"}, a, b, c, {"id": "out", "type": "output"}],
         "edges": [{"source": "in", "target": "A"}, {"source": "in", "target": "B"},
                   {"source": "A", "target": "C"}, {"source": "B", "target": "C"},
                   {"source": "C", "target": "out"}]}
    res = simulate_availability(d, horizon=horizon, replications=2000, seed=12, grid=0)

    def works(down: set[int]) -> bool:
        return 2 not in down and not {0, 1} <= down

    assert_shares(res, expected_charges(rates, works, horizon))
    # Were a down partner charged for C's outages, A and B would hold far more.
    share = {blk.id: blk.share_of_system_downtime for blk in res.blocks}
    assert share["C"] > share["A"] + share["B"]


def _diagram(d: dict) -> dict:
    return {"name": "pumps", "unit": "h", "repairable": True, **d}


def test_a_run_warns_when_redundant_blocks_are_replaced_together():
    out = analyze(_diagram(pumps((2000.0, 2000.0, 2000.0))), horizon=20_000.0, replications=200, seed=3, grid=2)
    res = out["results"]
    assert res["coinciding_preventive"] == [["P1", "P2", "P3"]]
    (w,) = out["warnings"]
    down = (1 - res["mean_availability"]) * 20_000.0
    assert "P1, P2, P3" in w
    assert f"{res['planned_downtime']:.4g} h of system downtime per 20000 h" in w
    assert f"({100 * res['planned_downtime'] / down:.3g}% of the system's downtime)" in w


def test_no_warning_for_staggered_replacements_or_a_series_block():
    out = analyze(_diagram(pumps((2000.0, 2100.0, 2200.0))), horizon=20_000.0, replications=200, seed=3, grid=2)
    assert out["results"]["coinciding_preventive"] == [] and out["warnings"] == []
    # Two blocks in series on one calendar: each stops the system alone, no redundancy lost.
    pm = {"policy": "block", "interval": 2000.0, "duration": 24.0}
    d = series(*(block(n, weibull(5000.0, 2.0), exp_model(1 / 24), preventive=pm) for n in ("V1", "V2")))
    out = analyze(_diagram(d), horizon=20_000.0, replications=200, seed=3, grid=2)
    assert out["results"]["coinciding_preventive"] == [] and out["warnings"] == []
