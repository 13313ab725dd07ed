"""The Anderson–Darling test row: statistic and p against statsmodels and scipy.stats.anderson.

statsmodels' normal_ad is the case-3 normal test (mean and s estimated) with the D'Agostino &
Stephens p formula; scipy.stats.anderson fits norm/expon/logistic/gumbel_l itself and gives A²
and the published critical values of the modified statistic. A Weibull fit is the smallest
extreme value fit of ln t, so scipy's gumbel_l on ln t is its independent reference.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.diagnostic import normal_ad

from bathtub.life.ad_test import _EV, _EXPON, _LOGISTIC, table_p
from bathtub.life.data import LifeData
from bathtub.life.fit import fit


def _row(x: np.ndarray, dist: str, **kw: object) -> dict:
    rows = [g for g in fit(LifeData.from_failures(x), dist, **kw).gof if g["id"] == "ad_test"]
    assert len(rows) == 1
    return rows[0]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("dist", ["normal", "lognormal"])
def test_normal_case3_matches_statsmodels(seed: int, dist: str) -> None:
    rng = np.random.default_rng(seed)
    x = rng.lognormal(4.0, 0.6, 25) if seed % 2 else rng.weibull(1.3, 25) * 80 + 1
    ref = normal_ad(np.log(x) if dist == "lognormal" else x)
    row = _row(x, dist)
    assert row["value"] == pytest.approx(float(ref[0]), rel=1e-10)
    assert row["p"] == pytest.approx(float(ref[1]), rel=1e-10)
    assert row["modified"] == pytest.approx(row["value"] * (1 + 0.75 / 25 + 2.25 / 625), rel=1e-12)
    assert ("consistent" in row["verdict"]) == (row["p"] >= 0.05)


def test_scipy_tables_are_ours() -> None:
    # scipy.stats.anderson divides the A* critical values by the same modifiers
    from scipy.stats import _morestats as ms

    assert _EXPON[1] == tuple(ms._Avals_expon.tolist())
    assert _EV[1] == tuple(ms._Avals_gumbel.tolist())
    assert _LOGISTIC[1] == tuple(ms._Avals_logistic.tolist())
    # at a tabulated point the interpolated p is that level exactly; beyond, only a bound
    for levels, crit in (_EXPON, _EV, _LOGISTIC):
        for lv, c in zip(levels, crit, strict=True):
            assert table_p(c, (levels, crit))[0] == pytest.approx(lv, rel=1e-12)
        assert table_p(crit[-1] + 0.1, (levels, crit)) == (None, f"< {levels[-1]:g}")
        assert table_p(crit[0] - 0.1, (levels, crit)) == (None, f"> {levels[0]:g}")


@pytest.mark.parametrize("seed", [5, 6, 7])
@pytest.mark.parametrize(("dist", "ref", "log", "mod"), [
    ("weibull", "gumbel_l", True, lambda n: 1 + 0.2 / math.sqrt(n)),
    ("gumbel", "gumbel_l", False, lambda n: 1 + 0.2 / math.sqrt(n)),
    ("exponential", "expon", False, lambda n: 1 + 0.6 / n),
    ("logistic", "logistic", False, lambda n: 1 + 0.25 / n),
])
def test_statistic_and_critical_values_match_scipy(seed: int, dist: str, ref: str, log: bool, mod) -> None:
    rng = np.random.default_rng(seed)
    n = 40
    x = rng.weibull(1.5 if seed != 6 else 1.0, n) * 300 + 0.5
    if dist in ("gumbel", "logistic"):
        x = rng.normal(50.0, 8.0, n) if seed != 7 else rng.logistic(50.0, 8.0, n)
    row = _row(x, dist)
    res = stats.anderson(np.log(x) if log else x, ref, method="interpolate")
    assert row["value"] == pytest.approx(float(res.statistic), rel=1e-5, abs=1e-6)
    assert row["modified"] == pytest.approx(row["value"] * mod(n), rel=1e-12)
    # the verdict agrees with scipy's 5% critical value for A² (= A* critical / modifier)
    crit5 = {"expon": 1.321, "logistic": 0.660}.get(ref, 0.757) / mod(n)
    assert ("rejected" in row["verdict"]) == (row["value"] > crit5)


def test_exponential_sample_fails_weibull_not_and_censored_gets_no_row() -> None:
    rng = np.random.default_rng(11)
    x = rng.weibull(3.0, 60) * 100
    assert "rejected" in _row(x, "exponential")["verdict"]
    assert "consistent" in _row(x, "weibull")["verdict"]
    cens = LifeData.from_failures(x[:50], x[50:])
    assert not [g for g in fit(cens, "weibull").gof if g["id"] == "ad_test"]
    assert not [g for g in fit(LifeData.from_failures(x), "weibull", method="rrx").gof if g["id"] == "ad_test"]


@pytest.mark.slow  # ~7 s: three bootstraps of 99 gamma refits by maximum likelihood
def test_bootstrap_for_a_family_without_table() -> None:
    rng = np.random.default_rng(12)
    good = rng.gamma(2.5, 40.0, 30)
    bad = np.concatenate([rng.gamma(2.5, 4.0, 15), rng.gamma(30.0, 20.0, 15)])  # two populations
    assert not [g for g in fit(LifeData.from_failures(good), "gamma").gof if g["id"] == "ad_test"]
    row = _row(good, "gamma", ad_replicates=99)
    assert "bootstrap" in row["method"] and "seed" in row["method"]
    assert row["p"] > 0.05 and "consistent" in row["verdict"]
    assert row == _row(good, "gamma", ad_replicates=99)  # fixed seed: reproducible
    worse = _row(bad, "gamma", ad_replicates=99)
    assert worse["p"] < 0.05 and "rejected" in worse["verdict"]
    # the bootstrap of a tabled family agrees with its table's reading: statistic is the same A²
    d = LifeData.from_failures(good)
    ref = stats.anderson(np.log(good), "gumbel_l", method="interpolate")
    assert _row(good, "weibull")["value"] == pytest.approx(float(ref.statistic), rel=1e-5)
    assert fit(d, "gamma").gof[-1]["id"] == "ad"
