"""Kijima I / II generalised renewal: a known q is recovered from simulated fleets within its
interval, the fit agrees with surpyval's GeneralizedRenewal (same model, same convention),
q = 1 is the power-law NHPP, and the library's virtual-age process is the engine's (the mean
number of failures by the horizon agrees with the engine's Kijima repair quality)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from surpyval import Weibull
from surpyval.recurrent import GeneralizedRenewal

from bathtub.engine import simulate_availability
from bathtub.recurrent import events, fit_data, grp, nhpp
from tests.engine.engine_diagrams import block, series

Z = 3.2905267314919255  # two-sided 99.9%: several checks per test, each failing by chance rarely


@pytest.mark.parametrize(("kind", "q"), [("kijima1", 0.3), ("kijima2", 0.6)])
def test_known_q_is_recovered_within_its_interval(kind: str, q: float) -> None:
    rng = np.random.default_rng(21 if kind == "kijima1" else 22)
    ends = np.full(300, 1500.0)
    sims = grp.simulate(100.0, 2.5, q, kind, ends, rng)
    rec = fit_data(events([list(s) for s in sims], ends=ends), kind)
    eff = rec["repair_effectiveness"]
    assert eff["interval"][0] <= q <= eff["interval"][1], eff
    params = {p["name"]: p for p in rec["params"]}
    for name, true in (("alpha", 100.0), ("beta", 2.5)):
        assert params[name]["ci"][0] <= true <= params[name]["ci"][1], (name, params[name])
    assert rec["repair_test"]["renewal"]["p_value"] < 0.05 and rec["repair_test"]["minimal_repair"]["p_value"] < 0.05


def test_agrees_with_surpyval() -> None:
    rng = np.random.default_rng(3)
    ends = np.full(30, 600.0)
    sims = grp.simulate(100.0, 2.0, 0.4, "kijima1", ends, rng)
    data = events([list(s) for s in sims], ends=ends)
    x, i, c = [], [], []
    for k, s in enumerate(sims):
        x += [*s.tolist(), 600.0]
        i += [k] * (len(s) + 1)
        c += [0] * len(s) + [1]
    for kind, tag in (("kijima1", "i"), ("kijima2", "ii")):
        ours = grp.fit(data, kind)
        ref = GeneralizedRenewal.fit(x=x, i=i, c=c, dist=Weibull, kijima=tag)
        q, alpha, beta = ref.params
        assert ours.q == pytest.approx(q, abs=1e-5)
        assert ours.alpha == pytest.approx(alpha, rel=1e-5) and ours.beta == pytest.approx(beta, rel=1e-5)


def test_minimal_repair_is_the_power_law() -> None:
    data = events(([1.0, 4.0, 9.0, 20.0], [2.0, 3.0, 15.0], [7.0, 30.0]), ends=[25.0, 18.0, 40.0])
    pl = nhpp.power_law(data)
    for kind in grp.KINDS:
        g = grp.fit(data, kind, q=1.0)
        assert g.beta == pytest.approx(pl.beta, rel=1e-6)
        assert g.alpha == pytest.approx(pl.lam ** (-1 / pl.beta), rel=1e-6)
        assert g.log_likelihood == pytest.approx(pl.log_likelihood, rel=1e-9)


@pytest.mark.parametrize(("kind", "q"), [("kijima1", 0.5), ("kijima2", 0.5)])
def test_library_process_is_the_engines_kijima_repair(kind: str, q: float) -> None:
    """Mean failures by the horizon of a Weibull block with instant Kijima repair: the engine's
    Monte Carlo against the library's sampler, each within its own standard error."""
    alpha, beta, horizon, n = 400.0, 3.0, 3000.0, 4000
    node = block("W", {"distribution_id": "weibull", "params": {"alpha": alpha, "beta": beta}}, instant_repair=True,
                 repair_quality={"model": kind, "q": q})
    engine = simulate_availability(series(node), horizon=horizon, replications=n, seed=41, grid=0)
    counts = np.array([s.size for s in grp.simulate(alpha, beta, q, kind, np.full(n, horizon),
                                                    np.random.default_rng(42))])
    se_engine = engine.expected_failures_std_error
    diff = engine.blocks[0].failures - counts.mean()
    assert abs(diff) <= Z * math.hypot(se_engine, counts.std(ddof=1) / math.sqrt(n)), (engine.blocks[0].failures,
                                                                                       counts.mean())


def test_fit_transforms_with_the_time_unit() -> None:
    rng = np.random.default_rng(8)
    ends = np.full(40, 800.0)
    sims = [list(s) for s in grp.simulate(100.0, 2.0, 0.5, "kijima2", ends, rng)]
    base = grp.fit(events(sims, ends=ends), "kijima2")
    for k in (1e-3, 1e6):
        g = grp.fit(events([[v * k for v in s] for s in sims], ends=ends * k), "kijima2")
        assert g.q == pytest.approx(base.q, abs=1e-5) and g.beta == pytest.approx(base.beta, rel=1e-5)
        assert g.alpha == pytest.approx(base.alpha * k, rel=1e-5)
