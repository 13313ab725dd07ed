"""Discrete Weibull B-lives, bounds and metrics; B-lives below t = 0 are warned of, not hidden.

Discrete Weibull (Nakagawa & Osaki 1975): P(T >= k) = q^((k-1)^beta), i.e. P(T > k) = q^(k^beta),
on cycles k = 1, 2, ... Its B-life is the smallest k with F(k) >= p; its mean is
sum_{k>=0} q^(k^beta), which is 1/(1 - q) for beta = 1 (geometric) and (1 + theta_3(0, q)) / 2
for beta = 2 (Jacobi's theta function). Bounds are recomputed here from a likelihood written in
the test, maximised by Nelder–Mead and differentiated by scipy.differentiate.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import optimize, stats

from bathtub.life import LifeData, fit
from bathtub.life.dists import DiscreteWeibull
from bathtub.life.evaluate import model_from_params

Z90 = stats.norm.ppf(0.9)
CHI80 = stats.chi2.ppf(0.8, 1)


@pytest.fixture(scope="module")
def cycles():
    rng = np.random.default_rng(4)
    k = np.ceil(40 * rng.weibull(1.6, 150))
    c = np.zeros(k.size, int)
    c[:25] = 1  # units still running after k cycles
    k[:25] = np.maximum(k[:25] - 3, 1)
    return k, c


def negll_of(k, c):
    kf, kr = k[c == 0], k[c == 1]

    def negll(v):
        q, b = v
        if not 0 < q < 1 or b <= 0:
            return 1e300
        s = lambda n: q ** (n**b)  # noqa: E731 - P(T > n)
        with np.errstate(divide="ignore", invalid="ignore"):
            v = -(np.sum(np.log(s(kf - 1) - s(kf))) + np.sum(np.log(s(kr))))
        return v if np.isfinite(v) else 1e300

    return negll


def direct_mle(negll, x0):
    r = optimize.minimize(negll, x0, method="Nelder-Mead",
                          options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 40000, "maxfev": 40000})
    return r.x, -r.fun


def mp_covariance(k, c, at):
    """Inverse observed information of the likelihood written in mpmath at 40 digits (mpmath.diff)."""
    kf, kr = [int(v) for v in k[c == 0]], [int(v) for v in k[c == 1]]

    def ll(q, b):
        def s(n):  # P(T > n)
            return q ** (mpmath.mpf(n) ** b) if n > 0 else mpmath.mpf(1)

        return sum(mpmath.log(s(n - 1) - s(n)) for n in kf) + sum(mpmath.log(s(n)) for n in kr)

    with mpmath.workdps(40):
        x = (mpmath.mpf(at[0]), mpmath.mpf(at[1]))
        hqq, hbb, hqb = (float(mpmath.diff(ll, x, n)) for n in ((2, 0), (0, 2), (1, 1)))
    return np.linalg.inv(-np.array([[hqq, hqb], [hqb, hbb]]))


def smallest_cycle(q, b, p):
    """Brute force: the first k with 1 - q^(k^b) >= p."""
    k = 1
    while 1.0 - q ** (k**b) < p:
        k += 1
    return k


def test_metrics_are_the_distribution_s_own(cycles):
    k, c = cycles
    rec = fit(LifeData.from_arrays(k, c), "discrete_weibull").to_record()
    q, b = (p["value"] for p in rec["params"])
    m = rec["metrics"]
    assert set(m) == {"median", "mttf", "b10"}
    assert m["median"] == smallest_cycle(q, b, 0.5) and m["b10"] == smallest_cycle(q, b, 0.1)
    n = np.arange(0, 200_000, dtype=float)
    assert m["mttf"] == pytest.approx(math.fsum(q ** (n**b)), rel=1e-12)
    life = {x["id"]: x for x in rec["life"]}
    assert life["b50"]["value"] == m["median"] and life["mttf"]["value"] == m["mttf"]
    for pct in (1, 5, 10, 20, 50):
        assert life[f"b{pct}"]["value"] == smallest_cycle(q, b, pct / 100)


@pytest.mark.slow  # ~4 s: an mpmath delta method
def test_fisher_bounds_by_an_independent_delta_method(cycles):
    """Lower bound of B_p: the delta method on ln t_p, t_p = (ln(1 - p) / ln q)^(1/beta) the real
    quantile, with the information differentiated by mpmath at 40 digits; the cycle bound is
    ceil(lower). (scipy.differentiate.hessian was 0.3% off here, q being 0.998.)"""
    k, c = cycles
    f = fit(LifeData.from_arrays(k, c), "discrete_weibull")
    negll = negll_of(k, c)
    v, _ = direct_mle(negll, [0.95, 1.2])
    np.testing.assert_allclose(f.values, v, rtol=1e-6)

    cov = mp_covariance(k, c, f.values)
    np.testing.assert_allclose(np.array(f.covariance), cov, rtol=1e-7)
    q, b = f.values
    life = {x["id"]: x for x in f.life}
    strict = 0
    for pct in (1, 5, 10, 20, 50):
        p = pct / 100
        tp = (math.log1p(-p) / math.log(q)) ** (1 / b)
        g = np.array([-1.0 / (b * q * math.log(q)), -math.log(tp) / b])  # d ln t_p / d(q, beta)
        lower = tp * math.exp(-Z90 * math.sqrt(g @ cov @ g))
        assert abs(lower - round(lower)) > 1e-4  # not on a knife edge between two cycles
        assert life[f"b{pct}"]["lower"] == max(math.ceil(lower), 1)
        strict += life[f"b{pct}"]["lower"] < life[f"b{pct}"]["value"]
    assert strict >= 3  # real bounds, not the estimate repeated
    # MTTF: the mean's gradient summed term by term
    n = np.arange(0, 200_000, dtype=float)
    terms = q ** (n**b)
    mean = terms.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        dq = np.nansum(n**b * q ** (n**b - 1))
        db = np.nansum(terms * math.log(q) * n**b * np.where(n > 0, np.log(np.where(n > 0, n, 1)), 0.0))
    g = np.array([dq, db])
    assert life["mttf"]["lower"] == pytest.approx(mean * math.exp(-Z90 * math.sqrt(g @ cov @ g) / mean), rel=1e-6)


@pytest.mark.slow  # ~8 s: profile likelihood by mpmath
def test_likelihood_bounds_by_profiling_the_real_quantile(cycles):
    """The likelihood bound of B_p: the smallest t_p whose profile likelihood (maximised over
    beta with q = (1 - p)^(1 / t^beta)) stays within chi2_1(0.80)/2 of the maximum; then ceil."""
    k, c = cycles
    f = fit(LifeData.from_arrays(k, c), "discrete_weibull", bounds="likelihood")
    negll = negll_of(k, c)
    v, llmax = direct_mle(negll, [0.95, 1.2])
    life = {x["id"]: x for x in f.life}
    for pct in (10, 50):
        p = pct / 100

        def profile(t, p=p):
            r = optimize.minimize_scalar(lambda b: negll(((1 - p) ** (1 / t**b), b)), bounds=(0.2, 5.0),
                                         method="bounded", options={"xatol": 1e-10})
            return -r.fun - (llmax - CHI80 / 2)

        tp = (math.log1p(-p) / math.log(v[0])) ** (1 / v[1])
        lower = optimize.brentq(profile, 0.3 * tp, tp * (1 - 1e-9), xtol=1e-10)
        assert abs(lower - round(lower)) > 1e-4
        assert life[f"b{pct}"]["lower"] == max(math.ceil(lower), 1)
        assert life[f"b{pct}"]["lower"] < life[f"b{pct}"]["value"]


@pytest.mark.parametrize(("q", "beta", "exact"), [
    (0.9, 1.0, 1 / (1 - 0.9)),
    (1 - 1e-7, 1.0, 1 / (1 - (1 - 1e-7))),  # past the directly summed terms: the tail formula
    (0.8, 2.0, None),
    # theta_3(0, e^-c) = sqrt(pi/c) (1 + 2 e^(-pi^2/c) + ...) (Poisson summation): sqrt(pi/c) here
    # (c = -ln q of the float q, which is what the model holds)
    (math.exp(-1e-12), 2.0, (1 + math.sqrt(math.pi / -math.log(math.exp(-1e-12)))) / 2),
    (0.5, 0.35, None),
])
def test_mean_closed_forms(q, beta, exact):
    ours = DiscreteWeibull(q, beta).mean()
    if exact is None and beta == 2.0:
        with mpmath.workdps(40):
            exact = float((1 + mpmath.jtheta(3, 0, mpmath.mpf(q))) / 2)
    if exact is None:  # slowly decaying: mpmath's own Euler–Maclaurin summation at 40 digits
        with mpmath.workdps(40):
            exact = float(mpmath.nsum(lambda n: mpmath.mpf(q) ** (n**beta), [0, mpmath.inf], method="e"))
    assert ours == pytest.approx(exact, rel=1e-10)


def test_params_only_discrete_model_has_metrics():
    rec = model_from_params("discrete_weibull", [{"name": "q", "value": 0.9}, {"name": "beta", "value": 1.0}])
    assert rec["metrics"] == {"median": 7.0, "mttf": pytest.approx(10.0, rel=1e-14), "b10": 1.0}


# ---- B-lives below zero ----------------------------------------------------------------
@pytest.mark.parametrize("dist", ["normal", "gumbel", "logistic"])
def test_negative_b_lives_are_kept_and_warned(dist):
    rng = np.random.default_rng(8)
    x = rng.normal(10, 6, 40)
    x = x[x > 0]
    f = fit(LifeData.from_arrays(x), dist)
    rec = f.to_record()
    d = f.dist()
    below = float(d.cdf(np.array([0.0]))[0])
    assert below > 0.01
    life = {x["id"]: x for x in rec["life"]}
    assert life["b1"]["value"] < 0
    ppf = {"normal": stats.norm(*f.values), "gumbel": stats.gumbel_l(*f.values), "logistic": stats.logistic(*f.values)}
    assert life["b1"]["value"] == pytest.approx(ppf[dist].ppf(0.01), rel=1e-10)  # the number stays
    flagged = [i for i in rec["life"] if "warning" in i]
    for item in rec["life"]:
        v, lo = item["value"], item["lower"]
        negative = (v is not None and v < 0) or (lo is not None and lo < 0)
        assert ("warning" in item) == (negative or item["id"] == "mttf")
    assert "below t = 0" in life["b1"]["warning"] and f"{below:.3g}" in life["b1"]["warning"]
    assert rec["warnings"] == [i["warning"] for i in flagged]


def test_positive_models_carry_no_warning():
    rng = np.random.default_rng(8)
    rec = fit(LifeData.from_arrays(30 * rng.weibull(2, 40)), "weibull").to_record()
    assert rec["warnings"] == [] and not any("warning" in i for i in rec["life"])
    rec = fit(LifeData.from_arrays(rng.normal(100, 5, 40)), "normal").to_record()
    assert rec["warnings"] == []


def test_params_only_normal_warns_too():
    rec = model_from_params("normal", [{"name": "mu", "value": 10.0}, {"name": "sigma", "value": 6.0}])
    b1 = next(i for i in rec["life"] if i["id"] == "b1")
    assert b1["value"] == pytest.approx(10 + 6 * stats.norm.ppf(0.01), rel=1e-12)
    assert "warning" in b1 and b1["warning"] in rec["warnings"]
