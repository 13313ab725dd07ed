"""Fits compared with lifelines, reliability and surpyval, and with closed forms.

Peers agree to ~1e-7 on these data; our Weibull 2P is a profile-score Newton root at machine
precision, so where peers differ among themselves (their optimiser tolerance, ~1e-7) the
reference used is the one the test names, at 1e-4 relative as the issue asks, and a closed
form or a direct scipy optimisation of a log-likelihood written here where one exists.
"""

import math
import warnings

import lifelines
import numpy as np
import pytest
import surpyval
from reliability.Fitters import Fit_Lognormal_2P, Fit_Weibull_2P, Fit_Weibull_Mixture
from scipy import optimize, stats

from bathtub.life import LifeData, fit

REL = 1e-4


def close(a, b, rel=REL):
    return abs(a - b) <= rel * abs(b)


@pytest.fixture(scope="module")
def censored():
    rng = np.random.default_rng(3)
    t = 30 * rng.weibull(1.7, 60)
    c = rng.uniform(0, 60, 60)
    x = np.minimum(t, c)
    return x, (c < t).astype(int)


@pytest.fixture(scope="module")
def complete():
    rng = np.random.default_rng(7)
    return 50 * rng.weibull(2.2, 80)


def rel_w2p(x, cens, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Fit_Weibull_2P(failures=x[cens == 0], right_censored=x[cens == 1],
                              show_probability_plot=False, print_results=False, **kw)


def test_weibull_right_censored_against_three_peers(censored):
    x, cens = censored
    f = fit(LifeData.from_arrays(x, cens), "weibull")
    p = f.params
    r = rel_w2p(x, cens)
    lf = lifelines.WeibullFitter().fit(x, 1 - cens)  # lifelines: 1 = event
    sp = surpyval.Weibull.fit(x, c=cens)
    for a_ref, b_ref in ((r.alpha, r.beta), (lf.lambda_, lf.rho_), tuple(sp.params)):
        assert close(p["alpha"], a_ref) and close(p["beta"], b_ref)
    assert close(f.se[0], r.alpha_SE) and close(f.se[1], r.beta_SE)
    assert close(f.se[0], float(np.sqrt(sp.hess_inv[0, 0]))) and close(f.se[1], float(np.sqrt(sp.hess_inv[1, 1])))
    assert close(f.log_likelihood, r.loglik, 1e-9) and close(f.log_likelihood, lf.log_likelihood_, 1e-9)
    g = {x["id"]: x["value"] for x in f.gof}
    assert close(g["aicc"], r.AICc, 1e-9) and close(g["bic"], r.BIC, 1e-9) and close(g["ad"], r.AD, 1e-6)
    # 95% interval on the log scale, as reliability computes it
    assert close(f.ci[0][0], r.alpha_lower) and close(f.ci[0][1], r.alpha_upper)
    assert close(f.ci[1][0], r.beta_lower) and close(f.ci[1][1], r.beta_upper)


def test_weibull_mle_is_the_score_root(censored):
    """Second method: the score of a log-likelihood written here vanishes at our estimate."""
    x, cens = censored
    f = fit(LifeData.from_arrays(x, cens), "weibull")
    a, b = f.values

    def ll(v):
        al, be = v
        z = (x / al) ** be
        return float(np.sum((1 - cens) * (np.log(be / al) + (be - 1) * np.log(x / al))) - z.sum())

    res = optimize.minimize(lambda v: -ll(v), [25.0, 1.0], method="Nelder-Mead",
                            options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000})
    assert close(a, res.x[0], 1e-6) and close(b, res.x[1], 1e-6)
    assert close(f.log_likelihood, ll([a, b]), 1e-12)


def test_b_lives_and_lower_bounds(censored):
    """B-lives: closed form alpha (-ln(1-p))^(1/beta); lower bound: delta method written here."""
    x, cens = censored
    f = fit(LifeData.from_arrays(x, cens), "weibull")
    a, b = f.values
    cov = np.array(f.covariance)
    life = {x["id"]: x for x in f.life}
    for p in (1, 5, 10, 20, 50):
        k = -math.log1p(-p / 100)
        tp = a * k ** (1 / b)
        g = np.array([1 / a, -math.log(k) / b**2])  # gradient of ln t_p
        lower = tp * math.exp(-stats.norm.ppf(0.9) * math.sqrt(g @ cov @ g))
        assert close(life[f"b{p}"]["value"], tp, 1e-9)
        assert close(life[f"b{p}"]["lower"], lower, 1e-5)
    assert close(life["mttf"]["value"], a * math.gamma(1 + 1 / b), 1e-9)


def test_rank_regression_matches_reliability(censored):
    x, cens = censored
    d = LifeData.from_arrays(x, cens)
    for method in ("rrx", "rry"):
        r = rel_w2p(x, cens, method=method.upper())
        p = fit(d, "weibull", method=method).params
        assert close(p["alpha"], r.alpha, 1e-7) and close(p["beta"], r.beta, 1e-7)


@pytest.mark.parametrize(
    "name, peer, convert",
    [
        ("lognormal", surpyval.LogNormal, lambda p: p),
        ("normal", surpyval.Normal, lambda p: p),
        ("gamma", surpyval.Gamma, lambda p: [p[0], 1 / p[1]]),  # surpyval's gamma takes a rate
        ("loglogistic", surpyval.LogLogistic, lambda p: p),
        ("gumbel", surpyval.Gumbel, lambda p: p),
        ("logistic", surpyval.Logistic, lambda p: p),
        ("exponential", surpyval.Exponential, lambda p: p),
    ],
)
def test_complete_data_families_against_surpyval(complete, name, peer, convert):
    m = peer.fit(complete)
    f = fit(LifeData.from_arrays(complete), name)
    for ours, theirs in zip(f.values, convert(list(m.params)), strict=True):
        assert close(ours, theirs)
    assert close(f.log_likelihood, -m.neg_ll(), 1e-8)
    if name not in ("gamma", "exponential"):  # same parametrisation: compare standard errors too
        for ours, theirs in zip(f.se, np.sqrt(np.diag(m.hess_inv)), strict=True):
            assert close(ours, theirs, 1e-5)


def test_lognormal_against_reliability(censored):
    x, cens = censored
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = Fit_Lognormal_2P(failures=x[cens == 0], right_censored=x[cens == 1],
                             show_probability_plot=False, print_results=False)
    f = fit(LifeData.from_arrays(x, cens), "lognormal")
    assert close(f.values[0], r.mu) and close(f.values[1], r.sigma)
    assert close(f.se[0], r.mu_SE, 1e-3) and close(f.se[1], r.sigma_SE, 1e-3)


def test_exponential_closed_form(censored):
    """lambda = r / T (failures over total time on test), se = lambda / sqrt(r)."""
    x, cens = censored
    f = fit(LifeData.from_arrays(x, cens), "exponential")
    r = int((cens == 0).sum())
    lam = r / x.sum()
    assert close(f.values[0], lam, 1e-12) and close(f.se[0], lam / math.sqrt(r), 1e-12)


def test_exponential_likelihood_bounds_closed_form(complete):
    """Profile bounds solve 2 r (l/lhat - 1 - ln(l/lhat)) = chi2_1(0.95) exactly."""
    f = fit(LifeData.from_arrays(complete), "exponential", bounds="likelihood")
    r, lhat = complete.size, complete.size / complete.sum()

    def dev(lam):
        return 2 * r * (lam / lhat - 1 - math.log(lam / lhat)) - stats.chi2.ppf(0.95, 1)

    lo = optimize.brentq(dev, lhat * 0.3, lhat)
    hi = optimize.brentq(dev, lhat, lhat * 3)
    assert close(f.ci[0][0], lo, 1e-7) and close(f.ci[0][1], hi, 1e-7)
    # B10 one-sided 90% likelihood bound: ln(1/0.9) / lambda at the upper chi2_1(0.8) end
    up = optimize.brentq(lambda lam: 2 * r * (lam / lhat - 1 - math.log(lam / lhat)) - stats.chi2.ppf(0.8, 1),
                         lhat, lhat * 3)
    b10 = next(x for x in f.life if x["id"] == "b10")
    assert close(b10["lower"], -math.log(0.9) / up, 1e-4)


def test_weibull_interval_censored_against_surpyval():
    rng = np.random.default_rng(7)
    t = 50 * rng.weibull(2.2, 80)
    lo = np.floor(t / 10) * 10
    hi = lo + 10
    f = fit(LifeData.from_arrays(xl=lo, xr=hi), "weibull")
    m = surpyval.Weibull.fit(x=np.vstack([lo, hi]).T)
    assert close(f.values[0], m.params[0]) and close(f.values[1], m.params[1])
    se = np.sqrt(np.diag(m.hess_inv))
    assert close(f.se[0], se[0], 1e-3) and close(f.se[1], se[1], 1e-3)
    assert close(f.log_likelihood, -m.neg_ll(), 1e-9)
    # lower ends at 0 are left-censored: same likelihood either way
    assert {g["id"] for g in f.gof} == {"log_likelihood", "aic", "aicc", "bic"}  # no AD on interval data


def test_weibull_mixture_against_reliability():
    rng = np.random.default_rng(11)
    x = np.concatenate([10 * rng.weibull(3.0, 70), 80 * rng.weibull(1.5, 130)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = Fit_Weibull_Mixture(failures=x, show_probability_plot=False, print_results=False)
    f = fit(LifeData.from_arrays(x), "mixture", modes=2)
    p = f.params
    ours = sorted([(p["alpha1"], p["beta1"], p["weight1"]), (p["alpha2"], p["beta2"], p["weight2"])])
    theirs = sorted([(r.alpha_1, r.beta_1, r.proportion_1), (r.alpha_2, r.beta_2, 1 - r.proportion_1)])
    assert f.log_likelihood >= r.loglik - 1e-6
    for a, b in zip(ours, theirs, strict=True):
        for u, v in zip(a, b, strict=True):
            assert close(u, v, 1e-3)
    se = dict(zip(f.spec.names, f.se, strict=True))
    first = 1 if p["alpha1"] < p["alpha2"] else 2  # reliability orders modes by scale
    second = 3 - first
    assert close(se[f"alpha{first}"], r.alpha_1_SE, 1e-4) and close(se[f"beta{first}"], r.beta_1_SE, 1e-4)
    assert close(se[f"alpha{second}"], r.alpha_2_SE, 1e-4) and close(se[f"beta{second}"], r.beta_2_SE, 1e-4)
    assert close(se["weight1"], r.proportion_1_SE, 1e-4)


def test_tied_and_counted_data_match_expanded_peers():
    """Ties and counts are collapsed into weights; reliability sees every unit, with the same results.

    Suspensions sit on half units so no suspension ties a failure: at such a tie we rank the
    failure first (Johnson's rule, as Weibull++), while reliability's order there comes from an
    unstable pandas sort, so it is no reference for that case.
    """
    rng = np.random.default_rng(9)
    t = np.round(30 * rng.weibull(1.4, 200))
    cen = np.round(rng.uniform(5, 60, 200)) + 0.5
    x, c = np.maximum(np.minimum(t, cen), 1.0), (cen < t).astype(int)
    f = fit(LifeData.from_arrays(x, c), "weibull")
    r = rel_w2p(x, c)
    assert close(f.values[0], r.alpha) and close(f.values[1], r.beta)
    g = {x["id"]: x["value"] for x in f.gof}
    assert close(g["ad"], r.AD, 1e-6)
    for method in ("rrx", "rry"):
        rr = rel_w2p(x, c, method=method.upper())
        p = fit(LifeData.from_arrays(x, c), "weibull", method=method).params
        assert close(p["alpha"], rr.alpha, 1e-7) and close(p["beta"], rr.beta, 1e-7)
    # the same units given as (time, code, count) rows
    keys, counts = np.unique(np.stack([x, c], axis=1), axis=0, return_counts=True)
    g2 = fit(LifeData.from_arrays(keys[:, 0], keys[:, 1].astype(int), n=counts), "weibull")
    assert g2.values == pytest.approx(f.values, rel=1e-12)


def test_b_lives_against_peers(censored):
    x, cens = censored
    f = fit(LifeData.from_arrays(x, cens), "weibull")
    lf = lifelines.WeibullFitter().fit(x, 1 - cens)
    sp = surpyval.Weibull.fit(x, c=cens)
    for item in f.life[:5]:
        q = float(item["id"][1:]) / 100
        assert close(item["value"], lf.percentile(1 - q)) and close(item["value"], float(sp.qf(q)))


def test_interval_censored_against_lifelines():
    rng = np.random.default_rng(8)
    t = 40 * rng.weibull(1.6, 120)
    lo = np.floor(t / 8) * 8
    hi = lo + 8
    hi[:15] = np.inf  # still running at lo: right-censored
    f = fit(LifeData.from_arrays(xl=lo, xr=hi), "weibull")
    lf = lifelines.WeibullFitter().fit_interval_censoring(lo, hi)
    assert close(f.params["alpha"], lf.lambda_) and close(f.params["beta"], lf.rho_)
    assert close(f.log_likelihood, lf.log_likelihood_, 1e-8)
    se = lf.summary["se(coef)"]
    assert close(f.se[0], se["lambda_"], 1e-3) and close(f.se[1], se["rho_"], 1e-3)


def test_left_censored_against_surpyval():
    rng = np.random.default_rng(12)
    t = 25 * rng.weibull(2.0, 100)
    c = np.zeros(100, int)
    c[t < 8] = -1  # found failed at the first inspection, at 8
    x = np.where(c == -1, 8.0, t)
    f = fit(LifeData.from_arrays(x, c), "lognormal")
    m = surpyval.LogNormal.fit(x, c=c)
    assert close(f.values[0], m.params[0]) and close(f.values[1], m.params[1])
    assert close(f.log_likelihood, -m.neg_ll(), 1e-9)


def test_weibull_likelihood_bounds_by_a_second_method(censored):
    """Profile bounds re-derived here: for each alpha, beta maximised by scipy; then brentq."""
    x, cens = censored
    f = fit(LifeData.from_arrays(x, cens), "weibull", bounds="likelihood")
    a_hat = f.values[0]

    def ll(a, b):
        z = (x / a) ** b
        return float(np.sum((1 - cens) * (np.log(b / a) + (b - 1) * np.log(x / a))) - z.sum())

    def prof_alpha(a):
        r = optimize.minimize_scalar(lambda lb: -ll(a, math.exp(lb)), bounds=(-3, 3), method="bounded",
                                     options={"xatol": 1e-12})
        return -r.fun - (f.log_likelihood - stats.chi2.ppf(0.95, 1) / 2)

    lo = optimize.brentq(prof_alpha, a_hat * 0.5, a_hat, xtol=1e-12)
    hi = optimize.brentq(prof_alpha, a_hat, a_hat * 2, xtol=1e-12)
    assert close(f.ci[0][0], lo, 1e-6) and close(f.ci[0][1], hi, 1e-6)
    # likelihood bounds are not symmetric on the log scale, unlike Fisher's
    assert f.ci[0][1] / a_hat != pytest.approx(a_hat / f.ci[0][0], rel=1e-3)


def test_exact_median_ranks_regression():
    """RRY on complete data with the beta distribution's median rank, computed here by scipy."""
    rng = np.random.default_rng(13)
    x = np.sort(20 * rng.weibull(1.3, 25))
    n = x.size
    i = np.arange(1, n + 1)
    y = np.log(-np.log1p(-stats.beta.median(i, n - i + 1)))
    b, a = np.polyfit(np.log(x), y, 1)
    p = fit(LifeData.from_arrays(x), "weibull", method="rry", median_ranks="exact").params
    assert close(p["beta"], b, 1e-10) and close(p["alpha"], math.exp(-a / b), 1e-10)


def test_three_parameter_without_a_maximum_is_refused():
    from bathtub.errors import InputError

    rng = np.random.default_rng(1)
    x = 10 + 30 * rng.weibull(0.8, 50)
    with pytest.raises(InputError) as e:
        fit(LifeData.from_arrays(x), "weibull", options={"offset": True})
    assert e.value.field == "options.offset"


def test_weibull_likelihood_bound_of_b10_by_a_second_method(censored):
    """One-sided 90% bound: profile of ln L over t = B10 (alpha = t / k^(1/beta)) meets chi2_1(0.8)/2."""
    x, cens = censored
    f = fit(LifeData.from_arrays(x, cens), "weibull", bounds="likelihood")
    k = -math.log(0.9)

    def ll(a, b):
        z = (x / a) ** b
        return float(np.sum((1 - cens) * (np.log(b / a) + (b - 1) * np.log(x / a))) - z.sum())

    def prof(t):
        r = optimize.minimize_scalar(lambda lb: -ll(t / k ** (1 / math.exp(lb)), math.exp(lb)), bounds=(-3, 3),
                                     method="bounded", options={"xatol": 1e-12})
        return -r.fun - (f.log_likelihood - stats.chi2.ppf(0.8, 1) / 2)

    b10 = next(v for v in f.life if v["id"] == "b10")
    assert close(b10["lower"], optimize.brentq(prof, b10["value"] * 0.3, b10["value"], xtol=1e-12), 1e-6)
