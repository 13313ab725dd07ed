"""Probability paper: plotting positions and the fitted CDF's delta-method band, checked against
the `reliability` package (its plotting positions and its Weibull/lognormal CDF bounds on the same
fits), against the band's closed form on Weibull paper, and for exact scale invariance."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from bathtub.life import saved
from bathtub.life.data import LifeData
from bathtub.life.paper import cdf_band, from_y, paper_of, plotting_positions, to_y

LIVES = [16.0, 34.0, 53.0, 75.0, 93.0, 120.0, 150.0, 191.0, 240.0, 339.0]
CENSORED = [0, 0, 0, 0, 0, 0, 1, 0, 1, 0]
FAILURES = [x for x, c in zip(LIVES, CENSORED) if c == 0]
SUSPENDED = [x for x, c in zip(LIVES, CENSORED) if c == 1]
T = np.array([20.0, 60.0, 100.0, 200.0, 300.0])


def _fit(dist: str, scale: float = 1.0) -> dict:
    return saved.fit_columns({"t": [x * scale for x in LIVES], "c": CENSORED}, {"x": "t", "c": "c"}, dist, {})


def _reliability():  # type: ignore[no-untyped-def]
    warnings.simplefilter("ignore")
    import reliability.Fitters as fitters
    from reliability.Utils import distribution_confidence_intervals as dci

    return fitters, dci


def test_plotting_positions_match_reliability() -> None:
    warnings.simplefilter("ignore")
    from reliability.Probability_plotting import plotting_positions as reference

    x, y = reference(failures=FAILURES, right_censored=SUSPENDED)
    ours = plotting_positions(LifeData.from_columns({"t": LIVES, "c": CENSORED}, {"x": "t", "c": "c"}))
    assert ours["t"] == pytest.approx(list(x))
    assert ours["F"] == pytest.approx(list(y), rel=1e-9)


def test_weibull_band_matches_reliability_and_the_closed_form() -> None:
    fitters, dci = _reliability()
    rec = _fit("weibull")
    band = cdf_band(rec, T)
    ref = fitters.Fit_Weibull_2P(failures=FAILURES, right_censored=SUSPENDED, show_probability_plot=False,
                                 print_results=False, CI=0.95, CI_type="reliability")
    sf_lower, sf_upper = dci.weibull_CI(ref.distribution, func="CDF", plot_CI=False, CI_type="reliability", CI=0.95,
                                        x=T)
    # reliability returns the bounds on R(t); its own fit differs from ours in the 5th digit.
    assert band["lower"] == pytest.approx(1 - np.maximum(sf_lower, sf_upper), rel=2e-3)
    assert band["upper"] == pytest.approx(1 - np.minimum(sf_lower, sf_upper), rel=2e-3)
    # Closed form on Weibull paper: u = beta (ln t - ln alpha), Var u by the delta method.
    p = {q["name"]: q["value"] for q in rec["params"]}
    cov = np.asarray(rec["covariance"]["matrix"])
    a, b = p["alpha"], p["beta"]
    u = b * (np.log(T) - math.log(a))
    grad = np.stack([-b / a * np.ones_like(T), np.log(T) - math.log(a)])
    se = np.sqrt(np.einsum("in,ij,jn->n", grad, cov, grad))
    z = stats.norm.ppf(0.975)
    assert band["lower"] == pytest.approx(-np.expm1(-np.exp(u - z * se)), rel=1e-6)
    assert band["upper"] == pytest.approx(-np.expm1(-np.exp(u + z * se)), rel=1e-6)
    assert band["F"] == pytest.approx(-np.expm1(-np.exp(u)), rel=1e-12)


def test_lognormal_band_matches_reliability() -> None:
    fitters, dci = _reliability()
    rec = _fit("lognormal")
    band = cdf_band(rec, T)
    ref = fitters.Fit_Lognormal_2P(failures=FAILURES, right_censored=SUSPENDED, show_probability_plot=False,
                                   print_results=False, CI=0.95, CI_type="reliability")
    sf_lower, sf_upper = dci.lognormal_CI(ref.distribution, func="CDF", plot_CI=False, CI_type="reliability",
                                          CI=0.95, x=T)
    # (its two arrays come in the other order for this family: bounds on R(t), whichever is which)
    assert band["lower"] == pytest.approx(1 - np.maximum(sf_lower, sf_upper), rel=2e-3)
    assert band["upper"] == pytest.approx(1 - np.minimum(sf_lower, sf_upper), rel=2e-3)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3, 1e6])
@pytest.mark.parametrize("dist", ["weibull", "lognormal", "loglogistic", "exponential"])
def test_band_is_scale_true(dist: str, scale: float) -> None:
    base = cdf_band(_fit(dist), T)
    scaled = cdf_band(_fit(dist, scale), T * scale)
    for key in ("F", "lower", "upper"):
        assert scaled[key] == pytest.approx(base[key], rel=1e-5, abs=1e-12), key
    assert all(lo < f < hi for lo, f, hi in zip(base["lower"], base["F"], base["upper"]))


def test_params_only_models_have_no_band_and_scales_round_trip() -> None:
    from bathtub.life.evaluate import model_from_params

    rec = model_from_params("weibull", [{"name": "alpha", "value": 100.0}, {"name": "beta", "value": 2.0}])
    band = cdf_band(rec, T)
    assert band["lower"] == [None] * T.size and band["F"][2] == pytest.approx(-math.expm1(-1.0))
    p = np.array([1e-6, 0.01, 0.5, 0.632, 0.99, 1 - 1e-9])
    for scale in ("cloglog", "probit", "logit"):
        assert from_y(to_y(p, scale), scale) == pytest.approx(p, rel=1e-9)  # type: ignore[arg-type]
    assert paper_of("normal").x == "linear" and paper_of("gamma").name == "Weibull"
