"""Options zi / lfp / offset, the other families, mixtures and `best`, against independent references."""

import math
import warnings

import numpy as np
import pytest
import surpyval
from reliability.Fitters import Fit_Weibull_3P
from scipy import optimize, stats

from bathtub.life import LifeData, fit


def close(a, b, rel=1e-4):
    return abs(a - b) <= rel * abs(b)


def direct_mle(negll, x0):
    """A second method: Nelder–Mead on a log-likelihood written in the test."""
    r = optimize.minimize(negll, x0, method="Nelder-Mead",
                          options={"xatol": 1e-11, "fatol": 1e-13, "maxiter": 40000, "maxfev": 40000})
    return r.x, -r.fun


def test_zero_inflated_factorises():
    """With no censoring at 0 the likelihood splits: f0 = n0 / n and the base fits the rest."""
    rng = np.random.default_rng(2)
    x = np.concatenate([np.zeros(8), 40 * rng.weibull(1.5, 92)])
    f = fit(LifeData.from_arrays(x), "weibull", options={"zi": True})
    base = fit(LifeData.from_arrays(x[x > 0]), "weibull")
    assert close(f.params["f0"], 8 / 100, 1e-6)
    assert close(f.params["alpha"], base.params["alpha"]) and close(f.params["beta"], base.params["beta"])
    assert close(f.se[2], math.sqrt(0.08 * 0.92 / 100), 1e-3)  # binomial se of f0
    b5 = next(v for v in f.life if v["id"] == "b5")["value"]
    assert b5 == 0.0  # 8% are dead on arrival


def test_limited_failure_population_against_direct_mle():
    rng = np.random.default_rng(2)
    t = 40 * rng.weibull(2, 200)
    t[rng.uniform(0, 1, 200) >= 0.4] = np.inf
    x, c = np.minimum(t, 80.0), (t > 80.0).astype(int)
    f = fit(LifeData.from_arrays(x, c), "weibull", options={"lfp": True})
    fx, rx = x[c == 0], x[c == 1]

    def negll(v):
        a, b, p = v
        if a <= 0 or b <= 0 or not 0 < p < 1:
            return 1e300
        d = stats.weibull_min(b, scale=a)
        return -(np.sum(np.log(p) + d.logpdf(fx)) + np.sum(np.log1p(-p * d.cdf(rx))))

    v, ll = direct_mle(negll, [30.0, 1.5, 0.5])
    assert close(f.log_likelihood, ll, 1e-9)
    for ours, ref in zip(f.values, v, strict=True):
        assert close(ours, ref, 1e-5)
    assert next(v for v in f.life if v["id"] == "b50")["value"] is None  # only ~38% ever fail


def test_weibull_3p_parameters_and_both_kinds_of_standard_error():
    """Peers disagree on 3P standard errors: reliability holds gamma fixed for alpha and beta.

    We report the full 3x3 inverse information (gamma is estimated, so its uncertainty belongs in
    the others'); the fixed-gamma figures are the inverse of the 2x2 block, which must match
    reliability's alpha_SE and beta_SE. Parameters against surpyval.
    """
    rng = np.random.default_rng(2)
    _ = 40 * rng.weibull(1.5, 92), rng.weibull(2, 200), rng.uniform(0, 1, 200)
    x = 20 + 30 * rng.weibull(2.5, 100)
    f = fit(LifeData.from_arrays(x), "weibull", options={"offset": True})
    m = surpyval.Weibull.fit(x, offset=True)
    assert close(f.params["alpha"], m.params[0]) and close(f.params["beta"], m.params[1])
    assert close(f.params["gamma"], m.gamma)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = Fit_Weibull_3P(failures=x, show_probability_plot=False, print_results=False)
    cov = np.array(f.covariance)
    fixed = np.linalg.inv(np.linalg.inv(cov)[:2, :2])
    assert close(math.sqrt(fixed[0, 0]), r.alpha_SE, 1e-3) and close(math.sqrt(fixed[1, 1]), r.beta_SE, 1e-3)
    assert close(f.se[2], r.gamma_SE, 1e-3)
    assert f.se[0] > r.alpha_SE  # the full information is the honest (wider) one

    def negll(v):
        a, b, g = v
        if a <= 0 or b <= 0 or g >= x.min():
            return 1e300
        return -np.sum(stats.weibull_min(b, loc=g, scale=a).logpdf(x))

    v, ll = direct_mle(negll, [25.0, 2.0, 15.0])
    assert close(f.log_likelihood, ll, 1e-9)
    assert all(close(a, b, 1e-5) for a, b in zip(f.values, v, strict=True))


def test_discrete_weibull_against_direct_mle():
    rng = np.random.default_rng(4)
    k = np.ceil(10 * rng.weibull(1.3, 150))
    k[:20] = np.maximum(k[:20] - 1, 1)
    c = np.zeros(k.size, int)
    c[:20] = 1  # some units still running after k cycles
    f = fit(LifeData.from_arrays(k, c), "discrete_weibull")

    def negll(v):
        q, b = v
        if not 0 < q < 1 or b <= 0:
            return 1e300
        s = lambda n: q ** (n**b)  # noqa: E731 - P(T > n)
        kf, kr = k[c == 0], k[c == 1]
        return -(np.sum(np.log(s(kf - 1) - s(kf))) + np.sum(np.log(s(kr))))

    v, ll = direct_mle(negll, [0.9, 1.0])
    assert close(f.values[0], v[0], 1e-6) and close(f.values[1], v[1], 1e-5)
    assert close(f.log_likelihood, ll, 1e-9)


def test_beta_uniform_expo_weibull():
    rng = np.random.default_rng(6)
    b = rng.beta(2, 5, 100)
    m = surpyval.Beta.fit(b)
    f = fit(LifeData.from_arrays(b), "beta")
    assert close(f.values[0], m.params[0]) and close(f.values[1], m.params[1])
    u = rng.uniform(2, 9, 50)
    f = fit(LifeData.from_arrays(u), "uniform")  # complete data: the sample's ends
    assert f.values == (u.min(), u.max()) and f.se == (None, None)
    x = 40 * rng.weibull(1.5, 100)
    m = surpyval.ExpoWeibull.fit(x)
    f = fit(LifeData.from_arrays(x), "expo_weibull")
    assert f.log_likelihood >= -m.neg_ll() - 1e-8
    for ours, ref in zip(f.values, m.params, strict=True):
        assert close(ours, ref, 1e-4)


def test_uniform_with_a_suspension_beyond_the_last_failure():
    """Score -N/(b-a) + sum 1/(b-r) = 0 has the closed root for one suspension: b = r + (r-a)/(N-1)."""
    x = np.array([1.0, 2.0, 3.0, 4.0, 6.0])
    f = fit(LifeData.from_arrays(x, [0, 0, 0, 0, 1]), "uniform")
    assert f.values[0] == 1.0 and close(f.values[1], 6.0 + 5.0 / 4.0, 1e-10)


@pytest.mark.slow  # ~3 s: three-mode mixture and every family
def test_mixture_three_modes_and_best():
    rng = np.random.default_rng(6)
    x = np.concatenate([5 * rng.weibull(4.0, 60), 40 * rng.weibull(3.0, 60), 150 * rng.weibull(5.0, 60)])
    d = LifeData.from_arrays(x)
    f3 = fit(d, "mixture", modes=3)
    f2 = fit(d, "mixture", modes=2)
    w = [f3.params[f"weight{i}"] for i in (1, 2, 3)]
    assert math.isclose(sum(w), 1.0, rel_tol=1e-12) and min(w) > 0.2
    assert f3.log_likelihood > f2.log_likelihood
    rec = f3.to_record()
    assert rec["distribution"] == "mixture" and rec["base_distribution"] == "weibull"

    y = np.exp(rng.normal(3.0, 0.4, 300))
    best = fit(LifeData.from_arrays(y), "best")
    ranking = best.to_record()["ranking"]
    assert best.distribution == ranking[0]["distribution"]
    assert [r["aicc"] for r in ranking] == sorted(r["aicc"] for r in ranking)
    own = fit(LifeData.from_arrays(y), ranking[1]["distribution"])
    assert close(ranking[1]["log_likelihood"], own.log_likelihood, 1e-9)
    assert "lowest AICc" in best.notes[-1]
    assert best.distribution in ("lognormal", "loglogistic", "gamma")


def test_exponential_location_closed_form():
    """gamma = first failure, lambda = n / sum (t - gamma); gamma on the boundary has no se."""
    rng = np.random.default_rng(5)
    x = 5 + 20 * rng.exponential(1, 40)
    f = fit(LifeData.from_arrays(x), "exponential", options={"offset": True})
    lam = x.size / np.sum(x - x.min())
    assert f.params["gamma"] == x.min() and close(f.params["failure_rate"], lam, 1e-12)
    assert close(f.log_likelihood, x.size * math.log(lam) - x.size, 1e-12)
    assert f.se[1] is None and f.ci[1] is None and close(f.se[0], lam / math.sqrt(x.size), 1e-12)
    m = surpyval.Exponential.fit(x, offset=True)
    assert close(f.params["failure_rate"], m.params[0])


@pytest.mark.parametrize("name, peer", [("lognormal", surpyval.LogNormal), ("loglogistic", surpyval.LogLogistic)])
def test_location_families_against_surpyval(name, peer):
    rng = np.random.default_rng(5)
    _ = rng.exponential(1, 40)
    y = 3 + np.exp(rng.normal(2, 0.5, 80))
    f = fit(LifeData.from_arrays(y), name, options={"offset": True})
    m = peer.fit(y, offset=True)
    assert close(f.values[0], m.params[0]) and close(f.values[1], m.params[1]) and close(f.values[2], m.gamma)
    assert close(f.log_likelihood, -m.neg_ll(), 1e-9)
