"""The pointwise band of h(t): the delta method on ln h(t) from a fit's covariance.

Checked against a delta method written out with the Weibull hazard's analytic gradient
(ln h = ln beta - beta ln alpha + (beta - 1) ln t), and against the exponential's closed form:
h(t) = lambda for every t, so its band is lambda's own (log-scale Fisher) interval.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bathtub.life.data import LifeData
from bathtub.life.fit import fit
from bathtub.life.paper import hazard_band
from bathtub.models import registry


def _record(x: np.ndarray, dist: str, cens: np.ndarray | None = None) -> dict:
    return fit(LifeData.from_failures(x, cens), dist).to_record()


def test_weibull_band_is_the_analytic_delta_method() -> None:
    rng = np.random.default_rng(4)
    x = rng.weibull(1.8, 40) * 1200.0
    rec = _record(x[:32], "weibull", x[32:])
    a, b = (p["value"] for p in rec["params"])
    assert rec["covariance"]["names"] == ["alpha", "beta"]
    cov = np.asarray(rec["covariance"]["matrix"])
    t = np.array([50.0, 300.0, 900.0, 2500.0])
    got = hazard_band(rec, t, 0.9)
    h = b / a * (t / a) ** (b - 1)
    g = np.vstack([np.full_like(t, -b / a), 1 / b - np.log(a) + np.log(t)])
    se = np.sqrt(np.einsum("in,ij,jn->n", g, cov, g))
    zq = stats.norm.ppf(0.95)
    assert got["h"] == pytest.approx(h.tolist(), rel=1e-12)
    assert got["lower"] == pytest.approx((h * np.exp(-zq * se)).tolist(), rel=1e-6)
    assert got["upper"] == pytest.approx((h * np.exp(zq * se)).tolist(), rel=1e-6)


def test_exponential_band_is_the_rate_interval() -> None:
    rng = np.random.default_rng(5)
    x = rng.exponential(400.0, 25)
    rec = _record(x, "exponential")
    lam = rec["params"][0]
    got = hazard_band(rec, np.array([1.0, 100.0, 5000.0]), 0.95)
    assert got["h"] == pytest.approx([lam["value"]] * 3, rel=1e-12)
    assert got["lower"] == pytest.approx([lam["ci"][0]] * 3, rel=1e-7)
    assert got["upper"] == pytest.approx([lam["ci"][1]] * 3, rel=1e-7)
    # the closed form too: 25 failures, se(ln lambda) = 1/sqrt(r)
    assert got["upper"][0] / got["h"][0] == pytest.approx(np.exp(stats.norm.ppf(0.975) / 5.0), rel=1e-7)


def test_protocol_band_and_no_covariance() -> None:
    rng = np.random.default_rng(6)
    rec = {**_record(rng.lognormal(5.0, 0.5, 30), "lognormal"), "name": "x"}
    model = registry.from_record(rec)
    got = model.hazard_band([100.0, 200.0])
    assert got["lower"][0] < got["h"][0] < got["upper"][0]
    bare = {k: v for k, v in rec.items() if k != "covariance"}
    assert hazard_band(bare, np.array([100.0]))["lower"] == [None]
