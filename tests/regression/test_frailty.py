"""Weibull PH with a shared gamma frailty against an independent marginal likelihood: each group's
likelihood integrated over the frailty density numerically (scipy.integrate.quad) in this test,
at our optimum (same value, zero gradient, the same curvature hence standard errors); θ → 0 is
the Weibull PH fit (R's survreg pins that one in test_parametric.py); the time-scale property."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from bathtub.regression.frailty import fit_weibull_frailty, marginal_loglik, marginal_survival
from bathtub.regression.parametric import fit_parametric, ph_coefficients


def simulate(q: int, m: int, theta: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(q), m)
    z = rng.gamma(1 / theta, theta, q)[g]
    x = np.column_stack([rng.normal(size=q * m), rng.integers(0, 2, q * m)]).astype(float)
    t = (-np.log(rng.uniform(size=q * m)) / (z * np.exp(-2.0 + x @ np.array([0.5, -0.7])))) ** (1 / 1.5)
    c = rng.exponential(8, q * m)
    return x, np.minimum(t, c), t <= c, g


def quad_loglik(par: np.ndarray, x: np.ndarray, t: np.ndarray, e: np.ndarray, g: np.ndarray) -> float:
    """Σ_groups log ∫ Π_j f(t_j|z)^δ S(t_j|z)^(1−δ) · gamma(z; mean 1, var θ) dz, by quadrature."""
    c, rho, b, theta = par[0], par[1], par[2:-1], par[-1]
    total = 0.0
    shape = 1 / theta
    norm = -math.lgamma(shape) - shape * math.log(theta)  # the gamma density of mean 1, variance θ
    for k in np.unique(g):
        s = g == k
        log_h = c + rho * np.log(t[s]) + x[s] @ b
        events = np.sum(np.where(e[s], math.log(rho) - np.log(t[s]) + log_h, 0.0))
        cum = float(np.exp(log_h).sum())
        d = int(e[s].sum())


        def integrand(z: float, events: float = events, cum: float = cum, d: int = d) -> float:
            if z <= 0:
                return 0.0
            return math.exp(events + (d + shape - 1) * math.log(z) - z * (cum + shape) + norm)

        val, _ = integrate.quad(integrand, 0, np.inf, epsabs=0, epsrel=1e-12, limit=200)
        total += math.log(val)
    return total


def test_equals_numerical_integration_at_the_optimum() -> None:
    x, t, e, g = simulate(24, 4, 0.6, seed=1)
    fit = fit_weibull_frailty(x, t, e, g)
    par = np.array([fit.c, fit.rho, *fit.b, fit.theta])
    ll = quad_loglik(par, x, t, e, g)
    assert not fit.boundary and math.isclose(fit.loglik, ll, rel_tol=1e-9)
    # the optimum of the independent likelihood: gradient 0, and its curvature gives our standard errors
    # (in the fit's parametrisation (c, log ρ, b, log θ))
    def f(u: np.ndarray) -> float:
        return quad_loglik(np.array([u[0], math.exp(u[1]), *u[2:-1], math.exp(u[-1])]), x, t, e, g)

    u0 = np.array([fit.c, math.log(fit.rho), *fit.b, math.log(fit.theta)])
    k = u0.size
    h = 1e-3
    grad = np.array([(f(u0 + h * np.eye(k)[j]) - f(u0 - h * np.eye(k)[j])) / (2 * h) for j in range(k)])
    assert np.max(np.abs(grad)) < 1e-4
    hess = np.zeros((k, k))
    for i in range(k):
        for j in range(i, k):
            ei, ej = h * np.eye(k)[i], h * np.eye(k)[j]
            hess[i, j] = hess[j, i] = (f(u0 + ei + ej) - f(u0 + ei - ej) - f(u0 - ei + ej)
                                       + f(u0 - ei - ej)) / (4 * h * h)
    se = np.sqrt(np.diag(np.linalg.inv(-hess)))
    assert np.allclose(np.sqrt(np.diag(fit.cov)), se, rtol=2e-3)


def test_theta_to_zero_is_weibull_ph() -> None:
    x, t, e, g = simulate(20, 5, 0.5, seed=2)
    ph = fit_parametric("weibull_ph", x, t, e)
    b, _ = ph_coefficients(ph)
    c, rho = -ph.mu / ph.sigma, 1 / ph.sigma
    # the marginal likelihood is continuous at θ = 0, where it is Weibull PH's likelihood
    for theta in (1e-6, 1e-9):
        assert math.isclose(marginal_loglik(c, rho, b, theta, x, t, e, g), ph.loglik, rel_tol=1e-5 * theta / 1e-6)
    assert math.isclose(marginal_loglik(c, rho, b, 0.0, x, t, e, g), ph.loglik, rel_tol=1e-12)
    # groups that are replicates of one sample share nothing: θ̂ = 0 and the fit is weibull_ph's
    xr, tr, er = x[:30], t[:30], e[:30]
    xs, ts, es = np.tile(xr, (4, 1)), np.tile(tr, 4), np.tile(er, 4)
    gs = np.repeat(np.arange(4), 30)
    fit = fit_weibull_frailty(xs, ts, es, gs)
    ref = fit_parametric("weibull_ph", xs, ts, es)
    assert fit.boundary and fit.theta == 0.0 and math.isclose(fit.loglik, ref.loglik, rel_tol=1e-12)
    assert np.allclose(fit.b, ph_coefficients(ref)[0], rtol=1e-9)
    assert math.isclose(fit.rho, 1 / ref.sigma, rel_tol=1e-9)


def test_marginal_survival_is_the_frailty_average() -> None:
    c, rho, theta, eta = -2.0, 1.5, 0.8, 0.3
    t = np.array([0.5, 2.0, 7.0])
    ours = marginal_survival(c, rho, theta, eta, t)
    for ti, si in zip(t, ours):
        h = math.exp(c + eta) * ti**rho
        ref, _ = integrate.quad(lambda z, h=h: math.exp(-z * h) * stats.gamma.pdf(z, 1 / theta, scale=theta), 0,
                                np.inf, epsabs=0, epsrel=1e-12)
        assert math.isclose(si, ref, rel_tol=1e-10)


@pytest.mark.parametrize("scale", [1e-3, 1e6])
def test_time_scale(scale: float) -> None:
    x, t, e, g = simulate(20, 5, 0.8, seed=4)
    base = fit_weibull_frailty(x, t, e, g)
    fit = fit_weibull_frailty(x, t * scale, e, g)
    assert np.allclose(fit.b, base.b, rtol=1e-6, atol=1e-9)
    assert math.isclose(fit.rho, base.rho, rel_tol=1e-7) and math.isclose(fit.theta, base.theta, rel_tol=1e-6)
    alpha, alpha0 = math.exp(-fit.c / fit.rho), math.exp(-base.c / base.rho)
    assert math.isclose(alpha, alpha0 * scale, rel_tol=1e-7)
    assert math.isclose(fit.loglik, base.loglik - e.sum() * math.log(scale), rel_tol=1e-9)
    assert np.allclose(np.sqrt(np.diag(fit.cov))[1:], np.sqrt(np.diag(base.cov))[1:], rtol=1e-4)
