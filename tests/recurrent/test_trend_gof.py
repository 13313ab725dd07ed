"""Trend tests and the Cramér-von Mises goodness of fit, each recomputed here from its
textbook formula (and Laplace's U against reliability's ROCOF); the CvM critical values
spot-checked against MIL-HDBK-189C's table."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from reliability.Datasets import system_growth
from reliability.Repairable_systems import ROCOF
from scipy import stats

from bathtub.recurrent import events, fit_data, gof, trend

GROWTH = np.array(system_growth().failures, dtype=float)


def test_laplace_and_mil_hdbk_189_on_system_growth() -> None:
    d = events(GROWTH)  # failure-terminated at 620: the last failure is not a test point
    lap = trend.laplace(d)
    ref = ROCOF(failure_times=list(GROWTH), show_plot=False, print_results=False)
    assert lap["statistic"] == pytest.approx(ref.U, rel=1e-12)
    t, tn, m = GROWTH[:-1], GROWTH[-1], GROWTH.size - 1
    u = (t.mean() - tn / 2) / (tn * math.sqrt(1 / (12 * m)))
    assert lap["statistic"] == pytest.approx(u, rel=1e-12)
    mil = trend.mil_hdbk_189(d)
    assert mil["dof"] == 42  # 2 (N - 1) for a failure-terminated test of N = 22
    assert mil["statistic"] == pytest.approx(2 * np.sum(np.log(tn / t)), rel=1e-12)
    cdf = stats.chi2.cdf(mil["statistic"], 42)
    assert mil["p_value"] == pytest.approx(2 * min(cdf, 1 - cdf))
    assert lap["verdict"] == mil["verdict"] == "improving"
    # Time-terminated at 650: every failure counts, 2N dof.
    tt = events(GROWTH, ends=650.0)
    assert trend.mil_hdbk_189(tt)["dof"] == 44
    u_tt = (GROWTH.sum() - GROWTH.size * 325.0) / (650.0 * math.sqrt(GROWTH.size / 12))
    assert trend.laplace(tt)["statistic"] == pytest.approx(u_tt, rel=1e-12)


def test_lewis_robinson_and_reverse_arrangements_from_their_formulas() -> None:
    d = events(GROWTH)
    gaps = np.diff(np.concatenate([[0.0], GROWTH]))
    cv = np.std(gaps, ddof=1) / np.mean(gaps)
    lr = trend.lewis_robinson(d)
    assert lr["statistic"] == pytest.approx(trend.laplace(d)["statistic"] / cv, rel=1e-12)
    ra = trend.reverse_arrangements(d)
    a = sum(1 for i, j in itertools.combinations(range(gaps.size), 2) if gaps[i] < gaps[j])
    assert ra["statistic"] == a and ra["reference"] == "exact"
    # Exact law checked by enumerating all permutations of a small sample.
    small = events([3.0, 4.0, 10.0, 11.0, 30.0, 31.0, 60.0])
    g = np.diff(np.concatenate([[0.0], small.systems[0].times]))
    stat = sum(1 for i, j in itertools.combinations(range(g.size), 2) if g[i] < g[j])
    counts = [sum(1 for i, j in itertools.combinations(range(g.size), 2) if p[i] < p[j])
              for p in itertools.permutations(range(g.size))]
    lower = np.mean(np.array(counts) <= stat)
    upper = np.mean(np.array(counts) >= stat)
    assert trend.reverse_arrangements(small)["p_value"] == pytest.approx(min(1.0, 2 * min(lower, upper)), rel=1e-9)


def test_cramer_von_mises_statistic_and_table() -> None:
    rec = fit_data(events(GROWTH), "crow_amsaa")
    cvm = rec["goodness_of_fit"][0]
    m = GROWTH.size - 1
    beta_bar = rec["beta_unbiased"]["value"]
    z = np.sort((GROWTH[:-1] / GROWTH[-1]) ** beta_bar)
    i = np.arange(1, m + 1)
    c2 = 1 / (12 * m) + np.sum((z - (2 * i - 1) / (2 * m)) ** 2)
    assert cvm["statistic"] == pytest.approx(c2, rel=1e-12) and cvm["m"] == 21
    # MIL-HDBK-189C critical values at 5%: M = 20 -> 0.217, M = 60 -> 0.220, M = 100 -> 0.220.
    assert cvm["critical_values"]["0.05"] == 0.217
    assert gof.critical_values(60)["0.05"] == 0.220 and gof.critical_values(500)["0.01"] == 0.34
    assert gof.critical_values(1) is None
    assert cvm["verdict"] == "consistent with the power law"


def test_cvm_rejects_a_process_that_is_not_a_power_law() -> None:
    # Failures in two bursts (0-10 and 990-1000): no power law spreads them so.
    t = np.concatenate([np.linspace(0.5, 10, 15), np.linspace(990, 1000, 15)])
    cvm = fit_data(events(t, ends=1000.0), "crow_amsaa")["goodness_of_fit"][0]
    assert cvm["verdict"] == "rejects the power law"


def test_grouped_chi_square_from_its_formula() -> None:
    from bathtub.recurrent.data import GroupedData
    from bathtub.recurrent.nhpp import power_law_grouped

    ends = np.array([100.0, 200.0, 300.0, 400.0, 500.0])
    counts = np.array([20.0, 12.0, 10.0, 9.0, 8.0])
    g = GroupedData(ends, counts)
    rec = fit_data(g, "crow_amsaa")
    chi = rec["goodness_of_fit"][0]
    pl = power_law_grouped(g)
    expected = pl.lam * (ends**pl.beta - np.r_[0.0, ends[:-1]] ** pl.beta)
    assert expected.min() >= 5  # no pooling needed here
    x2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi["statistic"] == pytest.approx(x2, rel=1e-12) and chi["dof"] == 3
    assert chi["p_value"] == pytest.approx(stats.chi2.sf(x2, 3), rel=1e-12)
    assert [r["expected"] for r in rec["intervals"]] == pytest.approx(expected.tolist(), rel=1e-12)
