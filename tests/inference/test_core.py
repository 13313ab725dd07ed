"""The inference core against closed forms: the maximiser finds the exponential and normal MLEs
and its covariance is the analytic inverse information; the Hessians match analytic second
derivatives; the row builder's delta-method intervals match hand computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from bathtub.inference import (
    Stage,
    hessian,
    hessian_from_gradient,
    interval,
    maximise,
    row,
    standard_terms,
    z,
)

RNG = np.random.default_rng(27)
T = RNG.exponential(40.0, 50)
Y = RNG.normal(3.0, 2.0, 80)


def _exp_loglik(u: np.ndarray) -> tuple[float, np.ndarray]:
    """Exponential log-likelihood in u = ln(rate), with its gradient."""
    lam = math.exp(u[0])
    return T.size * u[0] - lam * T.sum(), np.array([T.size - lam * T.sum()])


def test_exponential_mle_and_information():
    m = maximise(_exp_loglik, np.array([0.0]), grad=True, stages=(Stage("BFGS", {"gtol": 1e-7}),))
    # closed form: rate = n / sum t; the information of ln(rate) is n, so var = 1/n
    assert m.converged and m.method == "BFGS"
    assert math.exp(m.estimate[0]) == pytest.approx(T.size / T.sum(), rel=1e-8)
    assert m.covariance is not None and m.covariance[0, 0] == pytest.approx(1 / T.size, rel=1e-5)
    assert m.log_likelihood == pytest.approx(T.size * math.log(T.size / T.sum()) - T.size, rel=1e-12)
    assert m.to_dict()["iterations"] == m.iterations > 0


def _normal_loglik(p: np.ndarray) -> float:
    mu, log_s = p
    return float(stats.norm.logpdf(Y, mu, math.exp(log_s)).sum())


@pytest.mark.parametrize("stages", [(Stage("Nelder-Mead", {"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000}),),
                                    (Stage("BFGS"), Stage("Nelder-Mead", {"xatol": 1e-10, "fatol": 1e-12}))])
def test_normal_mle_and_covariance(stages):
    m = maximise(_normal_loglik, np.array([0.0, 0.0]), stages=stages, steps=1e-4)
    s_hat = Y.std()  # the MLE of sigma divides by n
    np.testing.assert_allclose(m.estimate, [Y.mean(), math.log(s_hat)], atol=1e-6)
    # inverse information at the MLE: var(mu) = s^2/n, var(ln s) = 1/(2n), uncorrelated
    np.testing.assert_allclose(m.covariance, [[s_hat**2 / Y.size, 0], [0, 1 / (2 * Y.size)]], rtol=1e-5, atol=1e-9)
    assert m.method == "+".join(s.method for s in stages)


@pytest.mark.parametrize("kind, law", [("extreme", stats.gumbel_l), ("normal", stats.norm),
                                       ("logistic", stats.logistic)])
def test_standard_laws_against_scipy_and_differences(kind, law):
    # the log-location-scale laws' log density and log survival are scipy's (minimum extreme value:
    # gumbel_l), and their z-derivatives match central differences, far into both tails
    z = np.linspace(-8.0, 6.0, 57)
    lf, ls, df, ds = standard_terms(kind, z)
    np.testing.assert_allclose(lf, law.logpdf(z), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ls, law.logsf(z), rtol=1e-9, atol=1e-12)
    h = 1e-6
    up, down = standard_terms(kind, z + h), standard_terms(kind, z - h)
    np.testing.assert_allclose(df, (up[0] - down[0]) / (2 * h), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ds, (up[1] - down[1]) / (2 * h), rtol=1e-6, atol=1e-6)


def _quadratic(p: np.ndarray) -> float:
    return float(p[0] ** 2 * p[1] + math.exp(p[1]) + 3 * p[0] * p[1])


def _quadratic_hessian(p: np.ndarray) -> np.ndarray:
    return np.array([[2 * p[1], 2 * p[0] + 3], [2 * p[0] + 3, math.exp(p[1])]])


@pytest.mark.parametrize("diagonal", ["cross", "three_point"])
def test_hessian_against_analytic(diagonal):
    p = np.array([0.7, -0.4])
    np.testing.assert_allclose(hessian(_quadratic, p, np.array([1e-4, 1e-4]), diagonal=diagonal),
                               _quadratic_hessian(p), rtol=1e-6)


def test_hessian_from_gradient_against_analytic():
    p = np.array([0.7, -0.4])

    def grad(q: np.ndarray) -> np.ndarray:
        return np.array([2 * q[0] * q[1] + 3 * q[1], q[0] ** 2 + math.exp(q[1]) + 3 * q[0]])

    np.testing.assert_allclose(hessian_from_gradient(grad, p, 1e-5), _quadratic_hessian(p), rtol=1e-8)


def test_hessian_nan_when_a_probe_is_not_finite():
    h = hessian(lambda p: math.log(p[0]) if p[0] > 0 else math.nan, np.array([1e-5]), 1e-4,
                diagonal="three_point", nan_if_not_finite=True)
    assert np.isnan(h).all()


def test_z_two_and_one_sided():
    assert z(0.95) == pytest.approx(1.959963984540054, rel=1e-15)  # Phi^-1(0.975), any table
    assert z(0.95, sides=1) == pytest.approx(1.6448536269514722, rel=1e-15)  # Phi^-1(0.95)
    assert z(0.9) == z(0.95, sides=1)


def test_row_delta_method_by_hand():
    zq = z(0.9)
    # identity: value -/+ z se
    assert row("mu", 2.0, 0.5, confidence=0.9) == {"name": "mu", "value": 2.0, "se": 0.5,
                                                   "ci": [2.0 - zq * 0.5, 2.0 + zq * 0.5]}
    # log: se of ln(value) 0.1 -> se of value 0.1 * value, bounds value * exp(-/+ z 0.1)
    r = row("alpha", 100.0, 0.1, scale="log", confidence=0.9)
    assert r["se"] == pytest.approx(10.0) and r["ci"] == pytest.approx([100 * math.exp(-zq * 0.1),
                                                                        100 * math.exp(zq * 0.1)])
    # logit: se of logit p 0.2 -> se of p = p(1-p) 0.2; bounds through expit
    r = row("p", 0.2, 0.2, scale="logit", confidence=0.9)
    lp = math.log(0.2 / 0.8)
    assert r["se"] == pytest.approx(0.2 * 0.8 * 0.2)
    assert r["ci"] == pytest.approx([special.expit(lp - zq * 0.2), special.expit(lp + zq * 0.2)])
    assert interval(0.2, 0.2, "logit", zq) == pytest.approx(tuple(r["ci"]))
    assert "lower" not in r and "upper" not in r


def test_row_lr_passes_through_and_missing_se():
    r = row("theta", 1.5, 0.3, scale="log", confidence=0.95, limits=(0.9, 2.7), ci_method="lr")
    assert r["ci"] == [0.9, 2.7] and r["ci_method"] == "lr" and r["se"] == pytest.approx(0.45)
    assert row("beta", 2.0, None)["ci"] is None
    assert row("x", 1.0, math.inf, scale="log", finite=True)["se"] is None
