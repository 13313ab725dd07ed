"""A(t) as the mean availability over each interval of the grid: each point is the share of its
interval the system was up, averaged over replications, so the curve's length-weighted
time-average is the run's mean availability — a PM window between two reading times shows in it,
where the point curve (read just before the events at each grid time) never sees it.

Closed form for one repairable exponential block from new (rates lam, mu): A(t) = mu/(lam+mu) +
lam/(lam+mu) e^{-(lam+mu) t}, whose mean over [a, b] is mu/(lam+mu) + lam (e^{-(lam+mu)a} -
e^{-(lam+mu)b}) / ((lam+mu)^2 (b - a)); each interval mean is checked within its own 99.9%
interval (ten intervals at one fixed seed)."""

from __future__ import annotations

import math

import numpy as np

from bathtub.engine import simulate_availability

from .engine_diagrams import block, exp_model, parallel, series

Z95 = 1.959963984540054
Z999 = 3.2905267314918945
LAM, MU = 1e-3, 0.05


def pm_pumps() -> dict:
    """The share pages' example: a 2-of-3 of pumps, each replaced on the calendar every 100 h in 4 h."""
    return parallel(*(block(f"P{i}", exp_model(LAM), exp_model(MU),
                            preventive={"policy": "block", "interval": 100.0, "duration": 4.0})
                      for i in (1, 2, 3)), need=2)


def time_average(res) -> float:
    t = np.asarray(res.t)
    return float(np.sum(res.interval_availability * np.diff(t)) / (t[-1] - t[0]))


def test_pm_windows_show_and_the_curve_averages_to_the_mean() -> None:
    res = simulate_availability(pm_pumps(), horizon=1000.0, replications=4000, seed=11, grid=41)
    lo, hi = res.mean_availability_interval
    average = time_average(res)
    assert abs(average - res.mean_availability) < 1e-9
    assert lo <= average <= hi
    # the three pumps stop together for 4 h every 100 h: the system's mean is near 96%, and the
    # point curve, read just before each PM start (grid every 25 h), misses every window
    assert 0.955 < res.mean_availability < 0.965
    points = np.asarray(res.availability)
    point_average = float(np.trapezoid(points, res.t) / res.horizon)
    assert point_average > hi + 0.02
    # the intervals holding a PM window ([100k, 100k + 25]) read about 1 - 4/25
    t = np.asarray(res.t)
    starts = t[:-1]
    window = np.isclose(np.mod(starts, 100.0), 0.0) & (starts > 0)
    assert np.all(np.abs(res.interval_availability[window] - (1 - 4 / 25)) < 0.01)
    assert np.all(res.interval_availability[~window] > 0.99)
    assert np.all(res.interval_lower <= res.interval_availability)
    assert np.all(res.interval_availability <= res.interval_upper)


def test_one_block_matches_the_closed_form_interval_means() -> None:
    lam, mu = 0.01, 0.1
    res = simulate_availability(series(block("A", exp_model(lam), exp_model(mu))), horizon=200.0,
                                replications=20_000, seed=3, grid=11)
    t = np.asarray(res.t)
    s = lam + mu
    for k in range(t.size - 1):
        a, b = t[k], t[k + 1]
        exact = mu / s + lam * (math.exp(-s * a) - math.exp(-s * b)) / (s * s * (b - a))
        se = (res.interval_upper[k] - res.interval_lower[k]) / (2 * Z95)
        assert abs(res.interval_availability[k] - exact) <= Z999 * se, (k, exact)
    assert abs(time_average(res) - res.mean_availability) < 1e-9


def test_interval_means_do_not_depend_on_threads() -> None:
    one = simulate_availability(pm_pumps(), horizon=500.0, replications=300, seed=5, grid=11, threads=1)
    two = simulate_availability(pm_pumps(), horizon=500.0, replications=300, seed=5, grid=11, threads=2)
    assert np.array_equal(one.interval_availability, two.interval_availability)
    assert one.to_dict()["curve"]["interval_mean"]["start"] == one.t[:-1].tolist()
