"""Kaplan–Meier and Turnbull against closed forms and the peers (lifelines, reliability, surpyval, scipy).

Peers' results are compared, their code never enters ours. Where conventions differ the test
says which and why.
"""

from __future__ import annotations

import math

import numpy as np
import orjson
import pytest
from lifelines import KaplanMeierFitter
from lifelines.fitters.npmle import npmle
from lifelines.utils import qth_survival_time, restricted_mean_survival_time
from reliability.Nonparametric import KaplanMeier as ReliabilityKM
from scipy import optimize, stats
from surpyval.univariate.nonparametric import turnbull as surpyval_turnbull
from surpyval.utils.data_formats import xcnt_handler

from bathtub.errors import InputError
from bathtub.life.nonparametric import kaplan_meier, turnbull

# ----------------------------------------------------------------------------- data


def _tied_censored(seed: int = 1, size: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rounded Weibull times (so there are ties, failures and suspensions at one time), counts."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.weibull(1.5, size) * 100.0)
    c = (rng.random(size) < 0.3).astype(int)
    n = rng.integers(1, 4, size)
    return x, c, n


def _continuous_censored(seed: int = 2, size: int = 60) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.weibull(1.5, size) * 100.0
    c = (rng.random(size) < 0.3).astype(int)
    return x, c


def _inspection_data(seed: int = 3, size: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Two inspections per unit at random times: left-, interval- and right-censored rows."""
    rng = np.random.default_rng(seed)
    life = rng.weibull(2.0, size) * 10.0
    a = rng.uniform(0.0, 8.0, size)
    b = a + rng.uniform(0.5, 6.0, size)
    xl = np.where(life <= a, 0.0, np.where(life <= b, a, b))
    xr = np.where(life <= a, a, np.where(life <= b, b, np.inf))
    return xl, xr


def _on_grid(grid: np.ndarray, values: np.ndarray, t: np.ndarray) -> np.ndarray:
    """values read at times t that must all be points of grid."""
    idx = np.searchsorted(grid, t)
    assert np.all(idx < grid.size) and np.array_equal(grid[idx], t), "times off the estimate's grid"
    return values[idx]


def _json_plain(value: object) -> bool:
    """True when only JSON's own Python types appear (no numpy scalars or arrays)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_plain(v) for v in value)
    return value is None or type(value) in (bool, int, float, str)


# ----------------------------------------------------------------------- Kaplan–Meier


def test_km_hand_case_closed_form():
    # x = 1F 2F 2S 3F 4S: S(1) = 4/5, S(2) = 4/5·3/4, S(3) = 0.6·1/2, S(4) = 0.3.
    km = kaplan_meier([1, 2, 2, 3, 4], [0, 0, 1, 0, 1])
    np.testing.assert_allclose(km.time, [1, 2, 3, 4])
    np.testing.assert_allclose(km.sf, [0.8, 0.6, 0.3, 0.3], rtol=1e-15)
    np.testing.assert_allclose(km.at_risk, [5, 4, 2, 1])
    np.testing.assert_allclose(km.events, [1, 1, 1, 0])
    np.testing.assert_allclose(km.censored, [0, 1, 0, 1])
    g = np.cumsum([1 / (5 * 4), 1 / (4 * 3), 1 / (2 * 1), 0.0])  # Greenwood's sum d/(r(r-d))
    np.testing.assert_allclose(km.variance, km.sf**2 * g, rtol=1e-14)
    z = stats.norm.ppf(0.975)
    theta = np.log(-np.log(0.6)) + z * math.sqrt(g[1]) / -math.log(0.6)
    assert km.lower[1] == pytest.approx(math.exp(-math.exp(theta)), rel=1e-14)
    assert km.median == 3.0 and km.b10 == 1.0
    # Restricted mean to t = 4: 1·1 + 0.8·1 + 0.6·1 + 0.3·1.
    assert km.mttf == pytest.approx(2.7, rel=1e-14)
    assert km.restricted and km.horizon == 4.0


@pytest.mark.parametrize(("confidence", "counted"), [(0.95, True), (0.9, True), (0.95, False)])
def test_km_matches_lifelines_with_ties_and_counts(confidence, counted):
    # Without counts the rows are tallied by a different path (sorted runs, no argsort).
    x, c, n = _tied_censored()
    n = n if counted else np.ones_like(n)
    km = kaplan_meier(x, c, n if counted else None, confidence=confidence)
    ref = KaplanMeierFitter(alpha=1 - confidence).fit(x, event_observed=1 - c, weights=n)
    # lifelines' timeline starts at 0 with S = 1; ours starts at the first observed time.
    assert ref.timeline[0] == 0.0 and km.time[0] > 0
    np.testing.assert_array_equal(km.time, ref.timeline[1:])
    np.testing.assert_allclose(km.sf, ref.survival_function_.to_numpy()[1:, 0], rtol=0, atol=1e-10)
    bounds = ref.confidence_interval_.to_numpy()[1:]
    np.testing.assert_allclose(km.lower, bounds[:, 0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(km.upper, bounds[:, 1], rtol=0, atol=1e-10)
    table = ref.event_table.to_numpy()[1:]  # removed, observed, censored, entrance, at_risk
    np.testing.assert_allclose(km.events, table[:, 1])
    np.testing.assert_allclose(km.censored, table[:, 2])
    np.testing.assert_allclose(km.at_risk, table[:, 4])
    assert km.median == ref.median_survival_time_
    assert km.b10 == qth_survival_time(0.9, ref.survival_function_)
    assert km.mttf == pytest.approx(restricted_mean_survival_time(ref, t=km.horizon), rel=1e-12)


def test_km_plain_bounds_match_reliability():
    # reliability works row by row and its sort is not stable: compare on data without ties.
    x, c = _continuous_censored()
    km = kaplan_meier(x, c, ci="plain")
    ref = ReliabilityKM(failures=x[c == 0], right_censored=x[c == 1], show_plot=False, print_results=False)
    np.testing.assert_array_equal(km.time, ref.results["Failure times"].to_numpy())
    np.testing.assert_allclose(km.sf, ref.results["Kaplan-Meier Estimate"].to_numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(km.lower, ref.results["Lower CI bound"].to_numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(km.upper, ref.results["Upper CI bound"].to_numpy(), rtol=0, atol=1e-10)


def test_km_tied_failures_match_reliability_row_by_row():
    # reliability multiplies (r-1)/r row by row; over a group of d tied failures that
    # telescopes to (r-d)/r and its Greenwood terms to d/(r(r-d)): equal at each group's last row.
    x = np.array([1.0, 2, 2, 2, 3, 5, 5, 7, 8, 9])
    km = kaplan_meier(x, ci="plain", confidence=0.9)
    ref = ReliabilityKM(failures=x, show_plot=False, print_results=False, CI=0.9)
    last_rows = np.r_[np.flatnonzero(np.diff(x)), x.size - 1]
    np.testing.assert_allclose(km.sf, ref.results["Kaplan-Meier Estimate"].to_numpy()[last_rows], atol=1e-12)
    np.testing.assert_allclose(km.lower, ref.results["Lower CI bound"].to_numpy()[last_rows], atol=1e-12)
    np.testing.assert_allclose(km.upper, ref.results["Upper CI bound"].to_numpy()[last_rows], atol=1e-12)


@pytest.mark.parametrize("ci", ["log-log", "plain"])
def test_km_bounds_cover_the_true_survival_at_the_nominal_rate(ci):
    # Monte Carlo, fixed seed: exponential(1) lives, exponential(3) censoring (~25%), n = 100.
    # The 95% bounds at t = ln 2 (true S = 0.5) should cover in 95% of runs, within the run's
    # own binomial 3-sigma band.
    rng = np.random.default_rng(2024)
    runs, covered, t = 1000, 0, math.log(2.0)
    for _ in range(runs):
        life, cens = rng.exponential(1.0, 100), rng.exponential(3.0, 100)
        km = kaplan_meier(np.minimum(life, cens), (cens < life).astype(int), ci=ci)
        j = np.searchsorted(km.time, t, side="right") - 1
        covered += km.lower[j] <= 0.5 <= km.upper[j]
    assert abs(covered / runs - 0.95) < 3 * math.sqrt(0.95 * 0.05 / runs)


def test_km_complete_data_is_the_empirical_distribution():
    # No censoring: S is the empirical survival function and the mean is the sample mean.
    rng = np.random.default_rng(7)
    x = rng.gamma(2.0, 3.0, 40)
    km = kaplan_meier(x)
    np.testing.assert_allclose(km.sf, 1.0 - np.arange(1, 41) / 40, atol=1e-12)
    assert km.mttf == pytest.approx(x.mean(), rel=1e-12)
    assert not km.restricted
    assert km.median == pytest.approx(np.sort(x)[19])  # first time with S <= 0.5: the 20th of 40
    # Where S = 0, Greenwood is undefined: variance null, bounds [0, 0] (as in both peers).
    assert np.isnan(km.variance[-1]) and km.lower[-1] == 0.0 and km.upper[-1] == 0.0
    assert km.to_record()["curve"]["variance"][-1] is None


def test_km_all_suspended_has_no_median():
    km = kaplan_meier([5.0, 6.0, 7.0], [1, 1, 1])
    assert km.median is None and km.b10 is None
    np.testing.assert_array_equal(km.sf, [1, 1, 1])
    np.testing.assert_array_equal(km.lower, [1, 1, 1])
    assert km.mttf == 7.0 and km.restricted


def test_km_reliability_at_and_curves():
    km = kaplan_meier([1, 2, 2, 3, 4], [0, 0, 1, 0, 1])
    assert km.reliability_at(0.5)["reliability"] == 1.0
    at = km.reliability_at(2.0)  # right-continuous: the drop at 2 is included
    assert at["reliability"] == pytest.approx(0.6) and at["failure"] == pytest.approx(0.4)
    assert at["cumulative_hazard"] == pytest.approx(-math.log(0.6))
    assert at["hazard"] is None and at["density"] is None and "step function" in at["null_reason"]["hazard"]
    assert km.reliability_at(100.0)["reliability"] == pytest.approx(0.3)
    curves = km.curves()
    assert curves["x"] == [0.0, 1.0, 2.0, 3.0, 4.0]
    np.testing.assert_allclose(curves["sf"], [1, 0.8, 0.6, 0.3, 0.3])
    np.testing.assert_allclose(curves["ff"], [0, 0.2, 0.4, 0.7, 0.7])
    np.testing.assert_allclose(curves["Hf"], -np.log([1, 0.8, 0.6, 0.3, 0.3]))
    assert curves["hf"] is None and curves["df"] is None
    dead = kaplan_meier([1.0, 2.0]).reliability_at(3.0)
    assert dead["reliability"] == 0.0 and dead["cumulative_hazard"] is None


def test_km_record_shape_is_json_ready():
    x, c, n = _tied_censored()
    record = kaplan_meier(x, c, n).to_record()
    assert record["params"] == [] and record["gof"] == [] and record["kind"] == "nonparametric"
    assert set(record["metrics"]) == {"median", "mttf", "b10"}
    assert {"time", "sf", "lower", "upper", "at_risk", "events"} <= set(record["curve"])
    assert record["n"] == int(n.sum())
    assert _json_plain(record)
    orjson.dumps(record)


@pytest.mark.parametrize(
    ("kwargs", "field", "rule"),
    [
        ({"x": [1.0, -2.0]}, "x[1]", ">= 0"),
        ({"x": [1.0, float("nan")]}, "x[1]", ">= 0"),
        ({"x": [1.0, float("inf")]}, "x[1]", "finite"),
        ({"x": []}, "x", "at least one"),
        ({"x": [1.0, 2.0], "c": [0, 2]}, "c[1]", "Turnbull"),
        ({"x": [1.0, 2.0], "c": [0]}, "c", "one code per row"),
        ({"x": [1.0, 2.0], "c": [True, False]}, "c", "not booleans"),
        ({"x": [1.0, 2.0], "n": [1, 1.5]}, "n[1]", "whole number"),
        ({"x": [1.0, 2.0], "n": [0, 0]}, "n", "add up to 0"),
        ({"x": [1.0, 2.0], "confidence": 1.0}, "confidence", "(0, 1)"),
        ({"x": [1.0, 2.0], "ci": "arcsine"}, "ci", "log-log"),
    ],
)
def test_km_refuses_bad_input(kwargs, field, rule):
    with pytest.raises(InputError) as err:
        kaplan_meier(**kwargs)
    assert err.value.field == field and rule in err.value.rule


# --------------------------------------------------------------------------- Turnbull


def test_turnbull_hand_case_closed_form():
    # Sets (1,5], (2,3], (3,6], (1,8], (9,10]. Innermost intervals (2,3], (3,5], (9,10].
    # L = pa·pb·(pa+pb)²·pc is maximised at pc = 1/5 (only (9,10] holds it) and pa = pb = 2/5.
    fit = turnbull([1, 2, 3, 1, 9], [5, 3, 6, 8, 10], bootstrap=0)
    np.testing.assert_array_equal(fit.left, [2, 3, 9])
    np.testing.assert_array_equal(fit.right, [3, 5, 10])
    np.testing.assert_allclose(fit.mass, [0.4, 0.4, 0.2], atol=1e-12)
    assert fit.log_likelihood == pytest.approx(math.log(0.4**2 * 0.8**2 * 0.2), rel=1e-12)
    np.testing.assert_array_equal(fit.time, [1, 2, 3, 5, 6, 8, 9, 10])
    np.testing.assert_allclose(fit.sf, [1, 1, 0.6, 0.2, 0.2, 0.2, 0.2, 0], atol=1e-12)
    np.testing.assert_allclose(fit.sf_left, [1, 0.6, 0.2, 0.2, 0.2, 0.2, 0, 0], atol=1e-12)
    # Uniform within intervals: F reaches 0.5 a quarter into (3,5]; midpoints 2.5, 4, 9.5.
    assert fit.median == pytest.approx(3.5) and fit.b10 == pytest.approx(2.25)
    assert fit.mttf == pytest.approx(0.4 * 2.5 + 0.4 * 4 + 0.2 * 9.5)
    assert fit.reliability_at(4.0)["reliability_range"] == pytest.approx([0.2, 0.6])


def test_turnbull_shared_endpoints_follow_the_half_open_convention():
    # Rows: exact 2, (1,2], (2,3], (0,2], (4,inf). An exact 2 lies in (1,2] and (0,2] but not
    # in (2,3]: innermost [2,2], (2,3], (4,inf); L = p1^3·p2·p3, so p = (3/5, 1/5, 1/5).
    fit = turnbull([2, 1, 2, 0, 4], [2, 2, 3, 2, math.inf], bootstrap=0)
    np.testing.assert_array_equal(fit.left, [2, 2, 4])
    np.testing.assert_array_equal(fit.right, [2, 3, math.inf])
    np.testing.assert_allclose(fit.mass, [0.6, 0.2, 0.2], atol=1e-12)
    np.testing.assert_allclose(fit.sf, [1, 1, 0.4, 0.2, 0.2], atol=1e-12)  # at 0, 1, 2, 3, 4
    assert fit.restricted and fit.mttf == pytest.approx(0.6 * 2 + 0.2 * 2.5 + 0.2 * 4)


def test_turnbull_current_status_is_isotonic_regression():
    # One inspection per unit: the NPMLE of F at the inspection times is the isotonic
    # (pool-adjacent-violators) regression of the failed-by-then indicators (Groeneboom & Wellner 1992).
    rng = np.random.default_rng(11)
    insp = np.sort(rng.uniform(0.0, 4.0, 80))
    failed = rng.random(80) < stats.expon.cdf(insp, scale=2.0)
    fit = turnbull(np.where(failed, 0.0, insp), np.where(failed, insp, np.inf), bootstrap=0)
    expected = optimize.isotonic_regression(failed.astype(float)).x
    np.testing.assert_allclose(1.0 - _on_grid(fit.time, fit.sf, insp), expected, atol=1e-9)
    assert fit.converged and abs(fit.kkt_gap) < 1e-9


def test_turnbull_reduces_to_kaplan_meier():
    # Exact and right-censored rows only: every innermost interval is a point, the NPMLE is KM.
    x, c, n = _tied_censored(seed=5)
    km = kaplan_meier(x, c, n)
    fit = turnbull(x, np.where(c == 1, np.inf, x), n, bootstrap=0)
    np.testing.assert_allclose(_on_grid(fit.time, fit.sf, km.time), km.sf, atol=1e-10)
    assert fit.median == km.median and fit.b10 == km.b10
    assert fit.mttf == pytest.approx(km.mttf, rel=1e-10)


def test_turnbull_matches_surpyval_and_lifelines_on_inspection_data():
    xl, xr = _inspection_data(size=150)  # lifelines' NPMLE takes seconds beyond this
    fit = turnbull(xl, xr, bootstrap=0)
    assert fit.converged and abs(fit.kkt_gap) < 1e-9  # the NPMLE's optimality condition holds

    # surpyval's Turnbull with the Kaplan–Meier estimator is the NPMLE read at every endpoint.
    x, c, n, t = xcnt_handler(xl=xl, xr=xr)
    ref = surpyval_turnbull(x, c, n, t, estimator="Kaplan-Meier", tol=1e-14, max_iter=100_000)
    np.testing.assert_allclose(_on_grid(fit.time, fit.sf, ref["x"]), ref["R"], atol=1e-9)
    np.testing.assert_allclose(_on_grid(fit.time, fit.at_risk, ref["x"]), ref["r"], atol=1e-7)
    np.testing.assert_allclose(_on_grid(fit.time, fit.events, ref["x"]), ref["d"], atol=1e-7)
    # R_lower agrees except on the last interval (l, inf), which we drain at l (the bound's
    # infimum) and surpyval only halfway.
    below = ref["x"] < fit.left[-1]
    np.testing.assert_allclose(_on_grid(fit.time, fit.sf_left, ref["x"][below]), ref["R_lower"][below], atol=1e-9)

    # lifelines' NPMLE (closed intervals; the same innermost intervals here since no two
    # endpoints coincide) stops on a likelihood change of 1e-10: masses agree to ~1e-6, and
    # ours is at least as likely.
    p, intervals = npmle(xl, xr, tol=1e-10)
    np.testing.assert_allclose([iv.left for iv in intervals], fit.left)
    np.testing.assert_allclose([iv.right for iv in intervals], fit.right)
    np.testing.assert_allclose(p, fit.mass, atol=5e-6)
    cum = np.concatenate([[0.0], np.cumsum(p)])
    lo = np.searchsorted(fit.right, xl, side="right")
    hi = np.searchsorted(fit.right, xr, side="right")
    assert fit.log_likelihood >= float(np.sum(np.log(cum[hi] - cum[lo]))) - 1e-12


def test_turnbull_bootstrap_bounds_agree_with_greenwood_on_censored_data():
    # On exact/right-censored data the bootstrap sd of S(t) estimates Greenwood's: half-widths
    # agree within Monte Carlo error (B = 400: ~4% on an sd) plus percentile-vs-normal skew.
    rng = np.random.default_rng(21)
    x = rng.weibull(1.3, 150) * 50.0
    c = (rng.random(150) < 0.25).astype(int)
    km = kaplan_meier(x, c, ci="plain")
    fit = turnbull(x, np.where(c == 1, np.inf, x), bootstrap=400, seed=1)
    mid = (km.sf > 0.2) & (km.sf < 0.8)
    greenwood = stats.norm.ppf(0.975) * np.sqrt(km.variance[mid])
    boot = (_on_grid(fit.time, fit.upper, km.time) - _on_grid(fit.time, fit.lower, km.time))[mid] / 2
    ratio = boot / greenwood
    assert 0.85 < np.median(ratio) < 1.15
    assert np.all((ratio > 0.7) & (ratio < 1.3))
    assert np.all(fit.lower <= fit.sf + 1e-12) and np.all(fit.sf <= fit.upper + 1e-12)


def test_turnbull_bootstrap_is_reproducible():
    xl, xr = _inspection_data(size=60)
    a = turnbull(xl, xr, bootstrap=30, seed=4)
    b = turnbull(xl, xr, bootstrap=30, seed=4)
    np.testing.assert_array_equal(a.lower, b.lower)
    np.testing.assert_array_equal(a.upper, b.upper)


def test_turnbull_counts_equal_repeated_rows():
    xl = np.array([0.0, 1.0, 2.0, 3.0])
    xr = np.array([2.0, 4.0, np.inf, 3.0])
    n = np.array([3, 1, 2, 2])
    counted = turnbull(xl, xr, n, bootstrap=0)
    repeated = turnbull(np.repeat(xl, n), np.repeat(xr, n), bootstrap=0)
    np.testing.assert_allclose(counted.mass, repeated.mass, atol=1e-12)
    assert counted.n == 8


def test_turnbull_record_is_json_ready_and_restricted():
    xl, xr = _inspection_data(size=80)
    fit = turnbull(xl, xr, bootstrap=20)
    record = fit.to_record()
    assert set(record["metrics"]) == {"median", "mttf", "b10"}
    assert record["params"] == [] and record["gof"] == []
    assert record["restricted"] == (fit.mass[-1] > 0 and math.isinf(fit.right[-1]))
    assert record["mttf_horizon"] == float(np.max(np.concatenate([xl, xr[np.isfinite(xr)]])))
    assert _json_plain(record)
    orjson.dumps(record)
    assert _json_plain(fit.reliability_at(3.0)) and _json_plain(fit.curves())


@pytest.mark.parametrize(
    ("xl", "xr", "field", "rule"),
    [
        ([1.0, 2.0], [0.5, 3.0], "xr[0]", ">= xl"),
        ([1.0, -2.0], [1.0, 3.0], "xl[1]", ">= 0"),
        ([1.0, 2.0], [1.0, float("nan")], "xr[1]", ">= 0"),
        ([1.0, 2.0], [1.0], "xr", "one value per row"),
        ([0.0, 0.0], [float("inf"), float("inf")], "xl", "no information"),
    ],
)
def test_turnbull_refuses_bad_input(xl, xr, field, rule):
    with pytest.raises(InputError) as err:
        turnbull(xl, xr, bootstrap=0)
    assert err.value.field == field and rule in err.value.rule
