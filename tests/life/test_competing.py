"""Competing risks: per-mode fits, shares and the test, against reliability and scipy."""

import warnings

import numpy as np
import pytest
from reliability.Fitters import Fit_Weibull_2P
from scipy import stats

from bathtub.errors import InputError
from bathtub.life.competing import fit_competing_risks


def simulate(seed, a2, b2, n=300):
    rng = np.random.default_rng(seed)
    t1, t2 = 100 * rng.weibull(3.0, n), a2 * rng.weibull(b2, n)
    cens = rng.uniform(0, 200, n)
    t = np.minimum(t1, t2)
    x = np.minimum(t, cens)
    c = (cens < t).astype(int)
    mode = np.where(c == 1, None, np.where(t1 < t2, "wear", "shock"))  # a censored unit failed by no mode
    return x, c, mode


def test_each_mode_is_a_fit_with_the_others_censored():
    x, c, mode = simulate(1, 150, 1.0)
    out = fit_competing_risks(x, c, mode, "weibull")
    for m in out["modes"]:
        own = (c == 0) & (mode == m["mode"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = Fit_Weibull_2P(failures=x[own], right_censored=x[~own], show_probability_plot=False,
                               print_results=False)
        p = {q["name"]: q["value"] for q in m["model"]["params"]}
        assert p["alpha"] == pytest.approx(r.alpha, rel=1e-4) and p["beta"] == pytest.approx(r.beta, rel=1e-4)
        # share interval: Clopper–Pearson, as scipy's binomtest computes it
        ci = stats.binomtest(m["failures"], int((c == 0).sum())).proportion_ci(0.95, method="exact")
        assert m["share_ci"] == pytest.approx([ci.low, ci.high], rel=1e-9)
    assert sum(m["share"] for m in out["modes"]) == pytest.approx(1.0)


def test_test_rejects_different_shapes_and_keeps_a_common_distribution():
    x, c, mode = simulate(1, 150, 1.0)  # wear-out against random shocks: different shapes
    out = fit_competing_risks(x, c, mode, "weibull")
    assert out["test"]["df"] == 1 and out["test"]["p"] < 1e-3
    assert "differ" in out["test"]["meaning"]
    # one Weibull for all failures, modes drawn at random independently of time: the null holds
    rng = np.random.default_rng(3)
    t = 100 * rng.weibull(2.0, 400)
    mode = np.where(rng.uniform(size=400) < 0.3, "a", "b")
    out = fit_competing_risks(t, None, mode, "weibull")
    assert out["test"]["p"] > 0.05


def test_refusals():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(InputError, match="at least 2 modes"):
        fit_competing_risks(x, None, ["a", "a", "a", "a"])
    with pytest.raises(InputError, match="needs a mode"):
        fit_competing_risks(x, None, ["a", None, "b", "b"])
    with pytest.raises(InputError):
        fit_competing_risks(x, [0, -1, 0, 0], ["a", "a", "b", "b"])
