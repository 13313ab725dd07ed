"""Nelson's MCF on reliability's MCF_1: the mean against reliability and surpyval, both
variance estimators against their formulas computed here (Nelson's per-time-point one and
Lawless-Nadeau's, which surpyval also computes). reliability labels its bounds "95%" but uses
the one-sided z = 1.645: they equal our two-sided 90% bounds, not our 95% ones."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reliability.Datasets import MCF_1
from reliability.Repairable_systems import MCF_nonparametric
from surpyval.recurrent import NonParametricCounting

from bathtub.recurrent import events, mcf
from bathtub.recurrent.data import EventData

TIMES = MCF_1().times  # five systems, each list ends with the system's end of observation


def _data(times: list) -> EventData:
    return events([t[:-1] for t in times], ends=[t[-1] for t in times])


def _formulas(times: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """MCF and both variances straight from their definitions, a systems x times grid."""
    ends = np.array([t[-1] for t in times], dtype=float)
    ev = [np.array(t[:-1], dtype=float) for t in times]
    grid = np.unique(np.concatenate(ev))
    d_ij = np.array([[np.sum(e == t) for t in grid] for e in ev], dtype=float)
    risk = np.array([[end >= t for t in grid] for end in ends], dtype=float)
    r = risk.sum(axis=0)
    d = d_ij.sum(axis=0)
    dev = risk * (d_ij - d / r)
    nelson = np.cumsum((dev**2).sum(axis=0) / r**2)
    lawless = (np.cumsum(dev / r, axis=1) ** 2).sum(axis=0)
    return grid, np.cumsum(d / r), nelson, lawless


def test_mcf_1_mean_and_variances() -> None:
    out = mcf.mcf(_data(TIMES))
    grid, m, nelson, lawless = _formulas(TIMES)
    assert out["time"] == grid.tolist()
    assert out["mcf"] == pytest.approx(m, rel=1e-12)
    assert out["variance_nelson"] == pytest.approx(nelson, rel=1e-12)
    assert out["variance_lawless_nadeau"] == pytest.approx(lawless, rel=1e-9, abs=1e-12)
    x, i, c = [], [], []
    for k, t in enumerate(TIMES):
        x += list(t)
        i += [k] * len(t)
        c += [0] * (len(t) - 1) + [1]
    ref = NonParametricCounting.fit(x=x, i=i, c=c)
    at = np.isin(ref.x, grid)
    assert np.asarray(out["mcf"]) == pytest.approx(np.asarray(ref.mcf_hat)[at], rel=1e-9)
    assert np.asarray(out["variance_lawless_nadeau"]) == pytest.approx(np.asarray(ref.var)[at], rel=1e-6)
    rel = MCF_nonparametric(data=TIMES, print_results=False, show_plot=False)
    assert np.asarray(out["mcf"])[-1] == pytest.approx(float(np.asarray(rel.MCF, dtype=float)[-1]), rel=1e-12)


def test_bounds_follow_the_formula_and_reliability_uses_one_sided_z() -> None:
    # Untied times (reliability handles tied failures one row at a time, not per time point).
    times = [[5, 10, 15.5, 17], [6, 13, 17.5, 19], [12, 20, 25, 26], [13.5, 15, 24], [16, 22, 25.5, 28]]
    out95 = mcf.mcf(_data(times), confidence=0.95)
    m = np.asarray(out95["mcf"])
    v = np.asarray(out95["variance_nelson"])
    z = 1.959963984540054
    assert np.asarray(out95["upper_nelson"]) == pytest.approx(m * np.exp(z * np.sqrt(v) / m), rel=1e-12)
    assert np.asarray(out95["lower_nelson"]) == pytest.approx(m / np.exp(z * np.sqrt(v) / m), rel=1e-12)
    rel = MCF_nonparametric(data=times, CI=0.95, print_results=False, show_plot=False)
    keep = np.asarray(rel.variance) != ""
    assert np.asarray(rel.variance)[keep].astype(float) == pytest.approx(v, rel=1e-9)
    upper = np.asarray(rel.upper)[keep].astype(float)
    out90 = mcf.mcf(_data(times), confidence=0.90)
    assert upper == pytest.approx(np.asarray(out90["upper_nelson"]), rel=1e-9)  # z = 1.645: two-sided 90%
    assert not np.allclose(upper, np.asarray(out95["upper_nelson"]))


def test_two_population_comparison() -> None:
    a = _data(TIMES[:3])
    b = _data(TIMES[3:])
    cmp = mcf.compare(a, b, ("A", "B"))
    fa, fb = mcf.mcf(a), mcf.mcf(b)
    t = np.asarray(cmp["time"])
    assert t.max() <= min(26, 28)
    expect = mcf.mcf_at(fa, t) - mcf.mcf_at(fb, t)
    assert np.asarray(cmp["difference"]) == pytest.approx(expect, abs=1e-12)
    va = np.interp(t, fa["time"], fa["variance_lawless_nadeau"], left=0)  # steps: compare at event times only
    at = np.isin(t, fa["time"]) & (t >= max(fb["time"][0], fa["time"][0]))
    vb = np.asarray([fb["variance_lawless_nadeau"][np.searchsorted(fb["time"], x, side="right") - 1] for x in t[at]])
    assert np.asarray(cmp["variance"])[at] == pytest.approx(va[at] + vb, rel=1e-9)
    half = 1.959963984540054 * np.sqrt(cmp["variance"])
    assert np.asarray(cmp["upper"]) == pytest.approx(np.asarray(cmp["difference"]) + half, rel=1e-12)
    apart = (np.asarray(cmp["lower"]) > 0) | (np.asarray(cmp["upper"]) < 0)
    assert cmp["differs_at"] == t[apart].tolist()
    assert math.isfinite(cmp["final"]["difference"])


def test_comparison_detects_a_threefold_rate() -> None:
    """Two fleets of 40 HPP systems (rates 1 and 3 per unit time, observed to 10): the MCF
    difference at 10 is -20 in expectation, and its interval must hold it and exclude 0."""
    rng = np.random.default_rng(5)

    def fleet(rate: float) -> EventData:
        seqs = [np.sort(rng.uniform(0, 10, rng.poisson(rate * 10))) for _ in range(40)]
        return events(seqs, ends=[10.0] * 40)

    cmp = mcf.compare(fleet(1.0), fleet(3.0), ("slow", "fast"))
    lo, hi = cmp["final"]["ci"]
    assert hi < 0 and lo <= -20 <= hi
    assert cmp["verdict"].startswith("the MCFs differ")


def test_one_system_has_no_bounds_and_cannot_be_a_compared_group() -> None:
    out = mcf.mcf(events([1.0, 3.0, 7.0]))
    assert out["mcf"] == [1.0, 2.0, 3.0] and out["upper_nelson"] is None and out["variance_lawless_nadeau"] is None
    from bathtub.errors import InputError

    with pytest.raises(InputError) as err:
        mcf.compare(events([1.0, 3.0]), _data(TIMES), ("one", "five"))
    assert err.value.field == "mapping.group"
