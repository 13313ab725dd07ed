"""Power-law (Crow-AMSAA), grouped, log-linear, HPP and Duane fits against published figures,
peers (reliability, surpyval) and closed forms computed here; failure- vs time-terminated;
exact bounds checked by simulation of their own pivots; invariance to the time unit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reliability.Datasets import system_growth
from reliability.Repairable_systems import reliability_growth
from scipy import optimize, stats
from surpyval.recurrent import CoxLewis, CrowAMSAA

from bathtub.recurrent import bounds, events, fit_data, nhpp
from bathtub.recurrent.data import GroupedData

GROWTH = np.array(system_growth().failures, dtype=float)
FLEET = ([1.0, 4.0, 9.0, 20.0], [2.0, 3.0, 15.0], [7.0, 30.0])
FLEET_ENDS = [25.0, 18.0, 40.0]


def _param(record: dict, name: str) -> dict:
    return next(p for p in record["params"] if p["name"] == name)


def test_system_growth_matches_the_published_figures_and_reliability() -> None:
    rec = fit_data(events(GROWTH), "crow_amsaa")
    ref = reliability_growth(times=list(GROWTH), model="Crow-AMSAA", print_results=False, show_plot=False)
    beta, lam = _param(rec, "beta")["value"], _param(rec, "lambda")["value"]
    # Published: beta 0.6142, lambda 0.4239, instantaneous MTBF 45.88 (reliability docs, MIL-HDBK-189C).
    assert round(beta, 4) == 0.6142 and round(lam, 4) == 0.4239
    assert round(rec["mtbf"]["instantaneous"]["value"], 2) == 45.88
    assert beta == pytest.approx(ref.Beta, rel=1e-9) and lam == pytest.approx(ref.Lambda, rel=1e-9)
    assert rec["mtbf"]["instantaneous"]["value"] == pytest.approx(ref.DMTBF_I, rel=1e-9)
    assert rec["mtbf"]["cumulative"]["value"] == pytest.approx(ref.DMTBF_C, rel=1e-9)
    assert rec["termination"] == "failure" and rec["growth"]["verdict"] == "improving"


def test_failure_and_time_terminated_differ_and_are_each_right() -> None:
    n = GROWTH.size
    ft = fit_data(events(GROWTH), "crow_amsaa")
    tt = fit_data(events(GROWTH, ends=650.0), "crow_amsaa")
    s_ft = float(np.sum(np.log(620.0 / GROWTH[:-1])))  # the last failure closes the test: 0 term
    s_tt = float(np.sum(np.log(650.0 / GROWTH)))
    assert _param(ft, "beta")["value"] == pytest.approx(n / s_ft, rel=1e-12)
    assert _param(tt, "beta")["value"] == pytest.approx(n / s_tt, rel=1e-12)
    # MIL-HDBK-189C unbiased beta: (N-2)/N failure-terminated, (N-1)/N time-terminated.
    assert ft["beta_unbiased"]["value"] == pytest.approx((n - 2) / n * n / s_ft, rel=1e-12)
    assert tt["beta_unbiased"]["value"] == pytest.approx((n - 1) / n * n / s_tt, rel=1e-12)
    # Exact chi-squared intervals: 2 beta S ~ chi2(2(N-1)) failure-, chi2(2N) time-terminated.
    for rec, s, dof in ((ft, s_ft, 2 * (n - 1)), (tt, s_tt, 2 * n)):
        lo, hi = _param(rec, "beta")["ci"]
        assert lo == pytest.approx(stats.chi2.ppf(0.025, dof) / (2 * s), rel=1e-12)
        assert hi == pytest.approx(stats.chi2.ppf(0.975, dof) / (2 * s), rel=1e-12)
    # Cumulative MTBF bounds: Poisson (chi2 2N, 2N+2) when time-terminated, Gamma(N) when not.
    c = tt["mtbf"]["cumulative"]
    assert c["ci"][0] == pytest.approx(2 * 650.0 / stats.chi2.ppf(0.975, 2 * n + 2), rel=1e-12)
    assert c["ci"][1] == pytest.approx(2 * 650.0 / stats.chi2.ppf(0.025, 2 * n), rel=1e-12)
    c = ft["mtbf"]["cumulative"]
    assert c["ci"][0] == pytest.approx(2 * 620.0 / stats.chi2.ppf(0.975, 2 * n), rel=1e-12)
    assert ft["mtbf"]["instantaneous"]["method"] == "crow_exact"


def test_multi_system_matches_surpyval() -> None:
    x, i, c = [], [], []
    for k, (times, end) in enumerate(zip(FLEET, FLEET_ENDS)):
        x += [*times, end]
        i += [k] * (len(times) + 1)
        c += [0] * len(times) + [1]
    ref = CrowAMSAA.fit(x=x, i=i, c=c)
    pl = nhpp.power_law(events(FLEET, ends=FLEET_ENDS))
    assert pl.beta == pytest.approx(ref.params[1], rel=1e-6)
    assert pl.lam ** (-1 / pl.beta) == pytest.approx(ref.params[0], rel=1e-6)
    # Log-linear: surpyval's search stops ~1e-5 short; check against an independent tight maximisation.
    ll = nhpp.loglinear(events(FLEET, ends=FLEET_ENDS))
    t = np.concatenate(FLEET)
    ends = np.array(FLEET_ENDS)

    def nll(p: np.ndarray) -> float:
        return -(t.size * p[0] + p[1] * t.sum() - math.exp(p[0]) * float(np.sum(np.expm1(p[1] * ends) / p[1])))

    best = optimize.minimize(nll, [-1.0, -0.05], method="Nelder-Mead",
                             options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000})
    assert ll.g0 == pytest.approx(best.x[0], abs=1e-6) and ll.g1 == pytest.approx(best.x[1], abs=1e-7)
    cl = CoxLewis.fit(x=x, i=i, c=c)
    assert ll.g0 == pytest.approx(cl.params[0], abs=1e-4) and ll.g1 == pytest.approx(cl.params[1], abs=1e-5)
    assert -nll(np.array([ll.g0, ll.g1])) >= -nll(np.asarray(cl.params)) - 1e-12


def test_grouped_example_of_weibull_com() -> None:
    # weibull.com, Crow-AMSAA example 4 (grouped): 2, 3, 4, 11 cumulative failures by 200, 400, 600,
    # 3000 h; RGA gives beta = 0.6315.
    g = GroupedData(np.array([200.0, 400.0, 600.0, 3000.0]), np.array([2.0, 1.0, 1.0, 7.0]))
    pl = nhpp.power_law_grouped(g)
    assert round(pl.beta, 4) == 0.6315
    assert pl.lam == pytest.approx(11 / 3000**pl.beta, rel=1e-12)
    rec = fit_data(g, "crow_amsaa")
    assert rec["goodness_of_fit"][0]["id"] == "chi_square"


def test_hpp_exact_interval_and_duane_against_reliability() -> None:
    rec = fit_data(events(GROWTH, ends=650.0), "hpp")
    n = GROWTH.size
    lam = _param(rec, "lambda")
    assert lam["value"] == pytest.approx(n / 650.0)
    assert lam["ci"] == pytest.approx([stats.chi2.ppf(0.025, 2 * n) / 1300, stats.chi2.ppf(0.975, 2 * n + 2) / 1300])
    d = fit_data(events(GROWTH), "duane")
    ref = reliability_growth(times=list(GROWTH), model="Duane", print_results=False, show_plot=False)
    assert _param(d, "alpha")["value"] == pytest.approx(ref.Alpha, rel=1e-9)
    assert _param(d, "b")["value"] == pytest.approx(1 / ref.A, rel=1e-9)
    assert d["mtbf"]["instantaneous"]["value"] == pytest.approx(ref.DMTBF_I, rel=1e-9)


def test_crow_failure_terminated_mtbf_bound_law_by_simulation() -> None:
    """The exact law behind the failure-terminated bounds: MTBF_hat / MTBF = G1 G2 / N^2.
    Simulate power-law tests stopped at the N-th failure and check the quantiles used."""
    rng = np.random.default_rng(11)
    n, beta, lam, reps = 8, 0.7, 0.5, 40000
    big = np.cumsum(rng.exponential(size=(reps, n)), axis=1)  # unit-rate arrivals = Lambda(t_i)
    t = (big / lam) ** (1 / beta)
    b_hat = n / np.sum(np.log(t[:, -1:] / t[:, :-1]), axis=1)
    m_hat = t[:, -1] / (n * b_hat)
    m_true = 1 / (lam * beta * t[:, -1] ** (beta - 1))
    ratios = m_hat / m_true
    for p in (0.025, 0.5, 0.975):
        q = bounds.product_quantile(p, n)
        share = float(np.mean(ratios <= q))
        assert abs(share - p) <= 3 * math.sqrt(p * (1 - p) / reps), (p, share)


@pytest.mark.parametrize("k", [1e-3, 1.0, 1e6])
def test_results_transform_exactly_with_the_time_unit(k: float) -> None:
    base = fit_data(events(FLEET, ends=FLEET_ENDS), "crow_amsaa")
    scaled = fit_data(events([np.array(f) * k for f in FLEET], ends=np.array(FLEET_ENDS) * k), "crow_amsaa")
    b = _param(base, "beta")["value"]
    assert _param(scaled, "beta")["value"] == pytest.approx(b, rel=1e-9)
    assert _param(scaled, "lambda")["value"] == pytest.approx(_param(base, "lambda")["value"] * k ** -b, rel=1e-7)
    s_inst, b_inst = scaled["mtbf"]["instantaneous"], base["mtbf"]["instantaneous"]
    for s_v, b_v in zip([s_inst["value"], *s_inst["ci"]], [b_inst["value"], *b_inst["ci"]], strict=True):
        assert s_v == pytest.approx(b_v * k, rel=1e-7)
    ll_b = fit_data(events(FLEET, ends=FLEET_ENDS), "loglinear")
    ll_s = fit_data(events([np.array(f) * k for f in FLEET], ends=np.array(FLEET_ENDS) * k), "loglinear")
    assert _param(ll_s, "g1")["value"] == pytest.approx(_param(ll_b, "g1")["value"] / k, rel=1e-7)
    assert ll_s["rocof"]["value"] == pytest.approx(ll_b["rocof"]["value"] / k, rel=1e-7)
    g = GroupedData(np.array([200.0, 400.0, 600.0, 3000.0]) * k, np.array([2.0, 1.0, 1.0, 7.0]))
    assert nhpp.power_law_grouped(g).beta == pytest.approx(0.63148, abs=1e-4)


@pytest.mark.parametrize("systems", [1, 3])
def test_crow_time_terminated_mtbf_bounds_cover(systems: int) -> None:
    """Crow's conditional bounds at the end of a time-terminated test: each side misses the true
    instantaneous MTBF at most alpha/2 of the time (discrete N makes them slightly conservative)."""
    rng = np.random.default_rng(12 + systems)
    beta, lam, end, reps = 0.7, 1.0, 40.0, 1200
    true = 1 / (lam * beta * end ** (beta - 1))
    low_miss = high_miss = 0
    done = 0
    for _ in range(reps):
        seqs = []
        for _ in range(systems):
            n = rng.poisson(lam * end**beta)
            seqs.append(np.sort(end * rng.uniform(size=n) ** (1 / beta)))  # given N, t/T ~ U^(1/beta)
        t = np.concatenate(seqs)
        if t.size < 3:
            continue
        s_log = float(np.sum(np.log(end / t)))
        lower, upper = bounds.crow_time_terminated(s_log, t.size, end, systems, 0.95)
        low_miss += lower > true
        high_miss += upper < true
        done += 1
    tol = 3 * math.sqrt(0.025 * 0.975 / done)
    assert low_miss / done <= 0.025 + tol and high_miss / done <= 0.025 + tol, (low_miss / done, high_miss / done)
    assert low_miss / done >= 0.005 and high_miss / done >= 0.005  # bounds, not the whole half-line
    # The record uses these bounds, at the fitted MTBF T / (N beta_hat), for a common end.
    rec = fit_data(events(seqs, ends=[end] * systems), "crow_amsaa")
    m = rec["mtbf"]["instantaneous"]
    s_log = float(np.sum(np.log(end / np.concatenate(seqs))))
    assert m["method"] == "crow_exact"
    assert m["ci"] == pytest.approx(list(bounds.crow_time_terminated(s_log, rec["n"], end, systems,
                                                                                      0.95)), rel=1e-12)


def test_failure_terminated_fleet_and_grouped_fleet() -> None:
    """Several failure-terminated systems: each last failure only closes its system's test, so
    the exact beta interval has 2(N - K) degrees of freedom; grouped counts of K systems
    observed together give lambda = N / (K e_k^beta) with the same beta."""
    rec = fit_data(events(FLEET), "crow_amsaa")
    s = sum(float(np.sum(np.log(f[-1] / np.array(f[:-1])))) for f in FLEET)
    m = sum(len(f) - 1 for f in FLEET)
    lo, hi = _param(rec, "beta")["ci"]
    assert lo == pytest.approx(stats.chi2.ppf(0.025, 2 * m) / (2 * s), rel=1e-12)
    assert hi == pytest.approx(stats.chi2.ppf(0.975, 2 * m) / (2 * s), rel=1e-12)
    assert rec["beta_unbiased"]["value"] == pytest.approx((m - 1) / s, rel=1e-12)
    assert rec["mtbf"]["instantaneous"]["method"] == "fisher"  # no exact law for unequal failure ends
    one = nhpp.power_law_grouped(GroupedData(np.array([200.0, 400.0, 600.0, 3000.0]), np.array([2.0, 1, 1, 7])))
    two = nhpp.power_law_grouped(GroupedData(np.array([200.0, 400.0, 600.0, 3000.0]), np.array([2.0, 1, 1, 7]), 2))
    assert two.beta == pytest.approx(one.beta, rel=1e-12) and two.lam == pytest.approx(one.lam / 2, rel=1e-12)
