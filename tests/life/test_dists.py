"""The closed-form families used in likelihoods agree with scipy, tails and t <= 0 included."""

import mpmath
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
        assert d.quantile(q) == pytest.approx(float(ref.ppf(q)), rel=1e-10)
    assert d.mean() == pytest.approx(float(ref.mean()), rel=1e-12)


def _mp_gamma(a, b):
    def cdf(t):
        return mpmath.gammainc(a, 0, t / b, regularized=True)

    def pdf(t):
        return mpmath.exp((a - 1) * mpmath.log(t / b) - t / b - mpmath.loggamma(a)) / b

    return cdf, pdf


def _mp_expo_weibull(alpha, beta, theta):
    def cdf(t):
        return (-mpmath.expm1(-((t / alpha) ** beta))) ** theta

    def pdf(t):
        z = (t / alpha) ** beta
        return theta * beta / alpha * (t / alpha) ** (beta - 1) * mpmath.exp(-z) * (-mpmath.expm1(-z)) ** (theta - 1)

    return cdf, pdf


MP_CASES = [
    ("gamma", {"alpha": 2.5, "beta": 3.0}, _mp_gamma(2.5, 3.0), stats.gamma(2.5, scale=3.0)),
    ("gamma", {"alpha": 0.6, "beta": 3.0}, _mp_gamma(0.6, 3.0), stats.gamma(0.6, scale=3.0)),
    ("expo_weibull", {"alpha": 3.0, "beta": 1.7, "theta": 2.5}, _mp_expo_weibull(3, 1.7, 2.5),
     stats.exponweib(2.5, 1.7, scale=3.0)),
    ("expo_weibull", {"alpha": 3.0, "beta": 0.8, "theta": 0.7}, _mp_expo_weibull(3, 0.8, 0.7),
     stats.exponweib(0.7, 0.8, scale=3.0)),
]


@pytest.mark.parametrize("name, params, mp, ref", MP_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(MP_CASES)])
def test_gamma_and_expo_weibull_closed_forms_against_150_digits(name, params, mp, ref):
    """Both tails to 1e-10 relative against mpmath (scipy rounds 1 - tiny to 1 in places)."""
    cdf, pdf = mp
    d = build_base(name, params)
    with mpmath.workdps(150):  # 1 - F must keep a tail of 1e-59
        for t in T[T > 0]:
            tm = mpmath.mpf(float(t))
            c = cdf(tm)
            want = {"logcdf": mpmath.log(c), "logsf": mpmath.log1p(-c), "logpdf": mpmath.log(pdf(tm))}
            for fn, w in want.items():
                got = float(getattr(d, fn)(np.array([t]))[0])
                assert got == pytest.approx(float(w), rel=1e-10, abs=1e-300), (fn, t)
    for q in (1e-6, 0.01, 0.1, 0.5, 0.9, 0.999):
        assert d.quantile(q) == pytest.approx(float(ref.ppf(q)), rel=1e-10)
    assert d.mean() == pytest.approx(float(ref.mean()), rel=1e-9)
