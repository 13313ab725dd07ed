"""The closed-form families used in likelihoods agree with scipy, tails and t <= 0 included."""

import numpy as np
import pytest
from scipy import stats

from bathtub.life.model import build_base

T = np.array([-1.0, 0.0, 1e-6, 0.3, 1.0, 2.5, 7.0, 40.0, 400.0])

CASES = [
    ("exponential", {"failure_rate": 0.2}, stats.expon(scale=5.0)),
    ("weibull", {"alpha": 3.0, "beta": 1.7}, stats.weibull_min(1.7, scale=3.0)),
    ("normal", {"mu": 2.0, "sigma": 1.5}, stats.norm(2.0, 1.5)),
    ("lognormal", {"mu": 0.5, "sigma": 0.8}, stats.lognorm(0.8, scale=np.exp(0.5))),
    ("logistic", {"mu": 2.0, "sigma": 0.7}, stats.logistic(2.0, 0.7)),
    ("gumbel", {"mu": 3.0, "sigma": 1.2}, stats.gumbel_l(3.0, 1.2)),
    ("loglogistic", {"alpha": 2.0, "beta": 3.0}, stats.fisk(3.0, scale=2.0)),
]


@pytest.mark.parametrize("name, params, ref", CASES, ids=[c[0] for c in CASES])
def test_closed_forms_match_scipy(name, params, ref):
    d = build_base(name, params)
    with np.errstate(divide="ignore"):
        for ours, theirs in ((d.logpdf(T), ref.logpdf(T)), (d.logsf(T), ref.logsf(T)), (d.logcdf(T), ref.logcdf(T))):
            finite = np.isfinite(theirs)
            assert np.array_equal(finite, np.isfinite(ours))
            assert np.allclose(ours[finite], theirs[finite], rtol=1e-10, atol=1e-300)
            assert np.array_equal(ours[~finite], theirs[~finite])
    for q in (1e-6, 0.01, 0.1, 0.5, 0.9, 0.999):
        assert d.ppf(q) == pytest.approx(float(ref.ppf(q)), rel=1e-10)
    assert d.mean() == pytest.approx(float(ref.mean()), rel=1e-12)
