"""Parameter draws from a fit's sampling distribution (`bathtub.models.parameter_draws`):
moments against the fit's own covariance on its unconstrained scale, the complete-data
exponential against the gamma (chi-squared) closed form, independence from how draws are split,
and refusals that name the field."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from bathtub import models
from bathtub.errors import InputError
from bathtub.life.data import LifeData
from bathtub.life.fit import fit
from bathtub.models import draws


def weibull_record(n: int = 60, seed: int = 3) -> dict:
    t = (np.random.default_rng(seed).weibull(1.8, n) * 500.0).tolist()
    return models.fit("weibull", {"x": t}, {"x": "x"})


def values(draws: list[dict], name: str) -> np.ndarray:
    return np.array([next(p["value"] for p in d["params"] if p["name"] == name) for d in draws])


def test_weibull_draws_have_the_fits_log_scale_covariance() -> None:
    rec = weibull_record()
    draws = models.parameter_draws(rec, 4000, 11)
    la, lb = np.log(values(draws, "alpha")), np.log(values(draws, "beta"))
    p = {q["name"]: q["value"] for q in rec["params"]}
    c = np.array(rec["covariance"]["matrix"])
    # the fit's covariance carried to (ln alpha, ln beta) by the delta method: J = diag(1/theta)
    jinv = np.diag([1 / p["alpha"], 1 / p["beta"]])
    want = jinv @ c @ jinv
    got = np.cov(np.vstack([la, lb]))
    n = len(draws)
    # sample means within 4 standard errors; variances within 4 se of a normal sample variance
    assert abs(la.mean() - math.log(p["alpha"])) < 4 * math.sqrt(want[0, 0] / n)
    assert abs(lb.mean() - math.log(p["beta"])) < 4 * math.sqrt(want[1, 1] / n)
    for i in range(2):
        assert abs(got[i, i] - want[i, i]) < 4 * want[i, i] * math.sqrt(2 / (n - 1))
    rho_want = want[0, 1] / math.sqrt(want[0, 0] * want[1, 1])
    rho_got = got[0, 1] / math.sqrt(got[0, 0] * got[1, 1])
    assert abs(rho_got - rho_want) < 4 * (1 - rho_want**2) / math.sqrt(n)
    # and the 2.5/97.5% points of the drawn alpha are the record's Fisher 95% interval
    lo, hi = np.quantile(values(draws, "alpha"), [0.025, 0.975])
    ci = next(q["ci"] for q in rec["params"] if q["name"] == "alpha")
    assert lo == pytest.approx(ci[0], rel=0.02) and hi == pytest.approx(ci[1], rel=0.02)


def test_normal_family_draws_location_on_its_own_scale() -> None:
    x = (np.random.default_rng(5).normal(100.0, 10.0, 80)).tolist()
    rec = models.fit("normal", {"x": x}, {"x": "x"})
    draws = models.parameter_draws(rec, 3000, 2)
    mu = values(draws, "mu")
    se = next(q["se"] for q in rec["params"] if q["name"] == "mu")
    assert mu.std(ddof=1) == pytest.approx(se, rel=4 * math.sqrt(2 / 2999))
    assert (values(draws, "sigma") > 0).all()


@pytest.mark.parametrize("r", [5, 50, 500])
def test_complete_exponential_draws_the_gamma_law(r: int) -> None:
    t = (np.random.default_rng(r).exponential(200.0, r)).tolist()
    rec = models.fit("exponential", {"x": t}, {"x": "x"})
    total = float(np.sum(t))
    lam = values(models.parameter_draws(rec, 5000, 9), "failure_rate")
    # lambda ~ chi2(2r) / (2T): the Kolmogorov-Smirnov test against that closed form
    law = stats.chi2(2 * r, scale=1.0 / (2.0 * total))
    assert stats.kstest(lam, law.cdf).pvalue > 1e-3
    # its 5% and 95% points are the classical failure-terminated chi-squared limits
    assert np.quantile(lam, 0.05) == pytest.approx(law.ppf(0.05), rel=0.03 + 0.3 / r)
    assert np.quantile(lam, 0.95) == pytest.approx(law.ppf(0.95), rel=0.03 + 0.3 / r)


def test_interval_censored_exponential_is_not_taken_for_complete_data() -> None:
    # every unit "failed", but inside an interval: lambda-hat is not r / T, so no gamma law
    rec = models.fit("exponential", {"xl": [1.0, 2, 3, 4], "xr": [2.0, 3, 5, 6]}, {"xl": "xl", "xr": "xr"})
    assert rec["n"] == rec["n_failures"] == 4
    assert draws.sampling_form(rec)["law"] == "normal"
    exact = models.fit("exponential", {"x": [1.0, 2, 3, 4]}, {"x": "x"})
    assert draws.sampling_form(exact)["law"] == "gamma"


def test_censored_exponential_draws_the_normal_on_log_scale() -> None:
    rec = models.fit("exponential", {"x": [10.0, 20, 30, 40, 50], "c": [1, 1, 0, 1, 0]}, {"x": "x", "c": "c"})
    lam = values(models.parameter_draws(rec, 4000, 1), "failure_rate")
    p = rec["params"][0]
    assert np.log(lam).std(ddof=1) == pytest.approx(p["se"] / p["value"], rel=4 * math.sqrt(2 / 3999))


def test_a_draw_depends_only_on_seed_and_index() -> None:
    rec = weibull_record()
    whole = models.parameter_draws(rec, 10, 42)
    parts = models.parameter_draws(rec, 4, 42) + models.parameter_draws(rec, 6, 42, first=4)
    assert whole == parts
    assert models.parameter_draws(rec, 1, 43) != whole[:1]
    assert models.from_record(rec).parameter_draws(10, 42) == whole
    assert all(p["se"] is None and p["ci"] is None for d in whole for p in d["params"])


def test_mixture_weights_stay_a_distribution() -> None:
    rng = np.random.default_rng(8)
    x = np.concatenate([5 * rng.weibull(4.0, 80), 150 * rng.weibull(5.0, 80)])
    rec = fit(LifeData.from_arrays(x), "mixture", modes=2).to_record()
    draws = models.parameter_draws(rec, 500, 3)
    w1, w2 = values(draws, "weight1"), values(draws, "weight2")
    assert np.allclose(w1 + w2, 1.0) and (w1 > 0).all() and (w2 > 0).all()
    # the weight's spread is the fit's standard error for it (delta method through the log-ratio)
    se = next(q["se"] for q in rec["params"] if q["name"] == "weight1")
    assert w1.std(ddof=1) == pytest.approx(se, rel=0.15)


def test_what_cannot_be_drawn_is_refused_naming_the_field() -> None:
    km = models.fit("kaplan_meier", {"x": [1.0, 2, 3, 4]}, {"x": "x"})
    with pytest.raises(InputError) as e:
        models.parameter_draws(km, 5, 1, field="nodes.P1.model.saved_model_id")
    assert e.value.field == "nodes.P1.model.saved_model_id"
    with pytest.raises(InputError) as e:
        models.parameter_draws(weibull_record(), 0, 1)
    assert e.value.field == "n"
