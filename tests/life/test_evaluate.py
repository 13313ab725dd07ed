"""Evaluation of stored records (fitted and params-only), checked against scipy closed forms."""

import math

import numpy as np
import pytest
from scipy import stats

from bathtub.errors import InputError
from bathtub.life import LifeData, fit
from bathtub.life.evaluate import model_from_params, reliability_at, reliability_curves


def test_fitted_record_round_trip_against_scipy():
    rng = np.random.default_rng(5)
    rec = fit(LifeData.from_arrays(20 * rng.weibull(1.5, 50)), "weibull").to_record()
    p = {x["name"]: x["value"] for x in rec["params"]}
    ref = stats.weibull_min(p["beta"], scale=p["alpha"])
    at = reliability_at(rec, 12.5)
    assert at["reliability"] == pytest.approx(ref.sf(12.5), rel=1e-12)
    assert at["failure"] == pytest.approx(ref.cdf(12.5), rel=1e-12)
    assert at["density"] == pytest.approx(ref.pdf(12.5), rel=1e-12)
    assert at["hazard"] == pytest.approx(ref.pdf(12.5) / ref.sf(12.5), rel=1e-12)
    assert at["cumulative_hazard"] == pytest.approx((12.5 / p["alpha"]) ** p["beta"], rel=1e-12)


def test_curves_shape_and_consistency():
    rec = model_from_params("lognormal", [{"name": "mu", "value": 3.0}, {"name": "sigma", "value": 0.5}])
    cv = reliability_curves(rec, points=50)
    assert set(cv) == {"x", "sf", "ff", "hf", "Hf", "df"} and all(len(v) == 50 for v in cv.values())
    x = np.array(cv["x"])
    assert x[0] == 0 and x[-1] == pytest.approx(stats.lognorm(0.5, scale=math.exp(3)).ppf(0.999))
    sf, df, hf = (np.array(cv[k], dtype=float) for k in ("sf", "df", "hf"))
    assert np.all(np.diff(sf) <= 0)
    assert np.allclose(hf[1:], df[1:] / sf[1:], rtol=1e-9)


def test_params_only_with_extras_closed_forms():
    w = [{"name": "alpha", "value": 100.0}, {"name": "beta", "value": 2.0}]
    base = stats.weibull_min(2.0, scale=100.0)
    lfp = model_from_params("weibull", w, {"p": 0.3})
    assert reliability_at(lfp, 80)["reliability"] == pytest.approx(1 - 0.3 * base.cdf(80), rel=1e-12)
    zi = model_from_params("weibull", w, {"f0": 0.05})
    assert reliability_at(zi, 80)["reliability"] == pytest.approx(0.95 * base.sf(80), rel=1e-12)
    off = model_from_params("weibull", w, {"gamma": 10.0})
    assert reliability_at(off, 80)["reliability"] == pytest.approx(base.sf(70), rel=1e-12)
    assert reliability_at(off, 5)["reliability"] == 1.0
    b10 = {x["id"]: x["value"] for x in off["life"]}["b10"]
    assert b10 == pytest.approx(10 + base.ppf(0.1), rel=1e-12)
    assert {x["id"]: x["value"] for x in lfp["life"]}["mttf"] is None  # never all fail


def test_mixture_record_and_quantile():
    params = [{"name": n, "value": v} for n, v in
              [("alpha1", 10.0), ("beta1", 3.0), ("weight1", 0.4), ("alpha2", 80.0), ("beta2", 1.5), ("weight2", 0.6)]]
    rec = model_from_params("mixture", params, base_distribution_id="weibull")
    ref = 0.4 * stats.weibull_min(3.0, scale=10).sf(30) + 0.6 * stats.weibull_min(1.5, scale=80).sf(30)
    assert reliability_at(rec, 30)["reliability"] == pytest.approx(ref, rel=1e-12)
    b50 = {x["id"]: x["value"] for x in rec["life"]}["b50"]
    assert reliability_at(rec, b50)["failure"] == pytest.approx(0.5, rel=1e-10)


def test_discrete_weibull_params_only():
    rec = model_from_params("discrete_weibull", [{"name": "q", "value": 0.9}, {"name": "beta", "value": 1.0}])
    # beta = 1 is the geometric distribution: P(T > k) = q^k, P(T = k) = q^(k-1) (1 - q), mean 1/(1-q)
    at = reliability_at(rec, 3)
    assert at["reliability"] == pytest.approx(0.9**3, rel=1e-12)
    assert at["density"] == pytest.approx(stats.geom(0.1).pmf(3), rel=1e-12)
    assert {x["id"]: x["value"] for x in rec["life"]}["mttf"] == pytest.approx(10.0, rel=1e-9)


@pytest.mark.parametrize(
    "args, field",
    [
        (("weibull", [{"name": "alpha", "value": -1.0}, {"name": "beta", "value": 2.0}]), "params.alpha"),
        (("weibul", [{"name": "alpha", "value": 1.0}]), "distribution_id"),
        (("weibull", [{"name": "alpha", "value": 1.0}, {"name": "beta", "value": 2.0}], {"p": 1.5}), "extras.p"),
        (("weibull", [{"name": "alpha", "value": 1.0}, {"name": "beta", "value": 2.0}], {"x": 1}), "extras.x"),
        (("normal", [{"name": "mu", "value": 1.0}, {"name": "sigma", "value": 2.0}], {"gamma": 1}), "extras.gamma"),
        (("discrete_weibull", [{"name": "q", "value": 1.2}, {"name": "beta", "value": 2.0}]), "params.q"),
    ],
)
def test_params_only_refusals(args, field):
    with pytest.raises(InputError) as e:
        model_from_params(*args)
    assert e.value.field == field


def test_mixture_weights_must_add_to_one():
    params = [{"name": n, "value": v} for n, v in
              [("alpha1", 10.0), ("beta1", 3.0), ("weight1", 0.5), ("alpha2", 80.0), ("beta2", 1.5), ("weight2", 0.6)]]
    with pytest.raises(InputError, match="add to 1"):
        model_from_params("mixture", params, base_distribution_id="weibull")


def test_bad_time_refused():
    rec = model_from_params("exponential", [{"name": "failure_rate", "value": 0.1}])
    for t in (-1.0, math.inf, "3"):
        with pytest.raises(InputError):
            reliability_at(rec, t)


def _plain(obj):
    """True when obj is made of dict/list/str/int/float/bool/None only (JSON-ready, no numpy)."""
    if isinstance(obj, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in obj.items())
    if isinstance(obj, list):
        return all(_plain(v) for v in obj)
    return obj is None or type(obj) in (str, int, float, bool)


def test_entry_points_give_json_ready_records():
    import json

    from bathtub.life.records import fit_dataset, import_model

    cols = {"hours": [12.0, 30.0, 45.0, 51.0, 70.0, 80.0, 95.0], "state": ["F", "F", "S", "F", "F", "S", "F"]}
    rec = fit_dataset(cols, {"x": "hours", "c": "state"}, "weibull", {"bounds": "likelihood"})
    assert _plain(rec) and json.loads(json.dumps(rec)) == rec
    assert rec["kind"] == "distribution" and rec["n"] == 7 and rec["coefficients"] == [] and rec["metrics"] is None
    assert [p["name"] for p in rec["params"]] == ["alpha", "beta"]
    assert {g["id"] for g in rec["gof"]} == {"log_likelihood", "aic", "aicc", "bic", "ad"}
    assert [x["id"] for x in rec["life"]] == ["b1", "b5", "b10", "b20", "b50", "mttf"]
    assert all(x["lower"] < x["value"] for x in rec["life"])
    # the stored record evaluates like the fit
    at = reliability_at(rec, 40.0)
    p = {x["name"]: x["value"] for x in rec["params"]}
    assert at["reliability"] == pytest.approx(math.exp(-((40.0 / p["alpha"]) ** p["beta"])), rel=1e-12)
    imp = import_model("weibull", data={"x": cols["hours"], "c": [0, 0, 1, 0, 0, 1, 0]})
    assert imp["params"][0]["value"] == pytest.approx(p["alpha"], rel=1e-12) and imp["params_only"] is False
    imp = import_model("exponential", params=[{"name": "failure_rate", "value": 0.01}], extras={"gamma": 5.0})
    assert _plain(imp) and imp["params_only"] is True
    assert reliability_at(imp, 105.0)["reliability"] == pytest.approx(math.exp(-1.0), rel=1e-12)
    with pytest.raises(InputError):
        import_model("weibull")
    with pytest.raises(InputError) as e:
        fit_dataset(cols, {"x": "hours"}, "weibull", {"colour": 1})
    assert e.value.field == "options.colour"
