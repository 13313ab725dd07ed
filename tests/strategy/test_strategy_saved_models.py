"""Strategy calculators on saved regression models at a unit's covariates and on saved
repairable-system processes, against the calculators on the equivalent plain distribution and the
closed forms: Weibull PH at x is a Weibull of the same shape and scale exp(μ + x·γ) (checked against
lifelines' Weibull AFT fit of the same data), a power law is minimal repair of a Weibull
(Barlow–Hunter's T* = α·(Cp/((β−1)·Cu))^{1/β}), an HPP an exponential. With parameter uncertainty
each draw's optimum is the closed form on that draw's own parameters."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from lifelines import WeibullAFTFitter
from scipy import optimize

from bathtub import models, strategy
from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.strategy.saved_life import saved_life
from bathtub.strategy.uncertain import failure_finding_uncertain, optimal_replacement_uncertain
from tests.models.reference import LIFE

CP, CU = 100.0, 1000.0


def barlow_hunter(alpha: float, beta: float) -> float:
    return alpha * (CP / ((beta - 1.0) * CU)) ** (1.0 / beta)


def weibull_ph() -> dict[str, Any]:
    return models.fit("weibull_ph", LIFE, {"x": "x", "c": "c"}, covariates=["z"])


def _process(n: int, beta: float, seed: int) -> list[float]:
    gam = np.cumsum(np.random.default_rng(seed).exponential(1.0, n))
    return (100.0 * gam ** (1 / beta)).tolist()


def test_weibull_ph_at_covariates_is_the_weibull_lifelines_fits() -> None:
    rec = weibull_ph()
    df = pd.DataFrame({"x": LIFE["x"], "e": [1 - c for c in LIFE["c"]], "z": LIFE["z"]})
    ref = WeibullAFTFitter().fit(df, "x", "e")
    for z in (-0.8, 0.0, 0.6):
        life = saved_life(rec, "m", covariates={"z": z})
        # lifelines: scale exp(lambda_intercept + lambda_z·z), shape exp(rho_intercept)
        alpha = math.exp(ref.params_[("lambda_", "Intercept")] + ref.params_[("lambda_", "z")] * z)
        beta = math.exp(ref.params_[("rho_", "Intercept")])
        assert life.distribution_id == "weibull"
        assert life.params["alpha"] == pytest.approx(alpha, rel=1e-4)
        assert life.params["beta"] == pytest.approx(beta, rel=1e-4)
        # the calculators on the saved model at z answer as on that plain Weibull
        plain = Lifetime.of("weibull", {"alpha": alpha, "beta": beta})
        for policy in ("age", "minimal_repair"):
            got = strategy.optimal_replacement(lifetime=life, planned_cost=CP, unplanned_cost=CU, policy=policy)
            want = strategy.optimal_replacement(lifetime=plain, planned_cost=CP, unplanned_cost=CU, policy=policy)
            assert got["optimal_time"] == pytest.approx(want["optimal_time"], rel=1e-3)
        got = strategy.optimal_replacement(lifetime=life, planned_cost=CP, unplanned_cost=CU, policy="minimal_repair")
        assert got["optimal_time"] == pytest.approx(barlow_hunter(alpha, beta), rel=1e-3)
        ff = strategy.failure_finding_interval(lifetime=life, target_availability=0.99)
        assert ff["interval"] == pytest.approx(strategy.failure_finding_interval(
            lifetime=plain, target_availability=0.99)["interval"], rel=1e-3)


def test_a_power_law_is_minimal_repair_of_its_weibull_with_or_without_covariates() -> None:
    t = _process(20, 1.8, 3)
    rec = models.fit("crow_amsaa", {"t": t}, {"t": "t"})
    beta, lam = (p["value"] for p in rec["params"])
    life = saved_life(rec, "m", policy="minimal_repair")
    got = strategy.optimal_replacement(lifetime=life, planned_cost=CP, unplanned_cost=CU, policy="minimal_repair")
    assert got["optimal_time"] == pytest.approx(barlow_hunter(lam ** (-1 / beta), beta), rel=1e-6)
    # with covariates z the intensity is lambda·e^{z·gamma}·beta·t^(beta−1) (Lawless 1987)
    ts = [[9.0, 14.0, 18.0], [7.0, 12.0, 16.0, 19.0], [5.0, 9.0, 13.0, 16.0, 18.0], [6.0, 10.0, 13.0, 15.0, 17.0]]
    z = [0.0, 0.0, 1.0, 1.0]
    cols = {"t": [v for s in ts for v in s], "s": [k for k, s in enumerate(ts) for _ in s],
            "e": [20.0] * 17, "z": [z[k] for k, s in enumerate(ts) for _ in s]}
    cov = models.fit("crow_amsaa", cols, {"t": "t", "system": "s", "end": "e"}, options={"covariates": ["z"]})
    eff = cov["covariate_effects"]
    lam_z = eff["lambda"] * math.exp(eff["coefficients"][0]["value"] * 0.5)
    life = saved_life(cov, "m", covariates={"z": 0.5})
    assert life.params["alpha"] == pytest.approx(lam_z ** (-1 / eff["beta"]), rel=1e-12)
    got = strategy.optimal_replacement(lifetime=life, planned_cost=CP, unplanned_cost=CU, policy="minimal_repair")
    assert got["optimal_time"] == pytest.approx(barlow_hunter(lam_z ** (-1 / eff["beta"]), eff["beta"]), rel=1e-6)


def test_hpp_and_kijima_lives_and_what_is_refused() -> None:
    t = _process(15, 1.0, 7)
    hpp = models.fit("hpp", {"t": t}, {"t": "t"})
    lam = hpp["params"][0]["value"]
    got = strategy.failure_finding_interval(lifetime=saved_life(hpp, "h"), target_availability=0.995)
    # U(T) = 1 − (1 − e^{−λT})/(λT) = 0.005, solved here by brentq
    want = optimize.brentq(lambda x: 1 + math.expm1(-lam * x) / (lam * x) - 0.005, 1e-9, 1e9, xtol=1e-14, rtol=1e-14)
    assert got["interval"] == pytest.approx(want, rel=1e-8)
    k = models.fit("kijima2", {"t": _process(25, 2.0, 2)}, {"t": "t"})
    a, b = k["params"][0]["value"], k["params"][1]["value"]
    life = saved_life(k, "k", policy="age")
    assert (life.distribution_id, life.params) == ("weibull", {"alpha": a, "beta": b})
    cases = [
        (lambda: saved_life(k, "k", policy="minimal_repair"), "policy", "restore part of the age"),
        (lambda: saved_life(models.fit("cox", LIFE, {"x": "x", "c": "c"}, covariates=["z"]), "c",
                            covariates={"z": 0.1}), "saved_model_id", "step survival"),
        (lambda: saved_life(models.fit("loglinear", {"t": t}, {"t": "t"}), "l"), "saved_model_id", "log-linear"),
        (lambda: saved_life(models.fit("mcf", {"t": t}, {"t": "t"}), "f"), "saved_model_id", "kijima1/kijima2"),
        (lambda: saved_life(weibull_ph(), "m"), "covariates.z", "required"),
        (lambda: saved_life(weibull_ph(), "m", covariates={"z": 0.1, "w": 1.0}), "covariates.w", "not a covariate"),
        (lambda: saved_life(hpp, "h", covariates={"z": 1.0}), "covariates", "has no covariates"),
        (lambda: saved_life(models.fit("weibull", {"x": LIFE["x"]}, {"x": "x"}), "w", covariates={"z": 1.0}),
         "covariates", "has no covariates"),
    ]
    for call, field, rule in cases:
        with pytest.raises(InputError) as e:
            call()
        assert e.value.field == field and rule in e.value.rule, (field, e.value)


def _percentiles(values: list[float]) -> dict[str, float]:
    lo, mid, hi = np.quantile(values, [0.05, 0.5, 0.95], method="inverted_cdf")
    return {"lower": lo, "median": mid, "upper": hi}


def test_uncertain_optimum_of_a_regression_at_covariates_is_each_draws_closed_form() -> None:
    rec, z, n = weibull_ph(), {"z": 0.6}, 60
    life = saved_life(rec, "m", covariates=z)
    out = optimal_replacement_uncertain(rec, n, 4, model_id="m", covariates=z, lifetime=life, planned_cost=CP,
                                        unplanned_cost=CU, policy="minimal_repair", curve_points=10)
    # the same draws read straight from the drawn records: Weibull shape 1/sigma, scale exp(mu + gamma·z)
    want = [barlow_hunter(math.exp(d["mu"] + d["gamma"][0] * 0.6), 1.0 / d["sigma"])
            for d in models.parameter_draws(rec, n, 4, field="uncertainty")]
    pu = out["parameter_uncertainty"]
    for key, value in _percentiles(want).items():
        assert pu["optimal_time"][key] == pytest.approx(value, rel=1e-6)
    assert out["optimal_time"] == pytest.approx(barlow_hunter(life.params["alpha"], life.params["beta"]), rel=1e-6)


def test_uncertain_optimum_of_a_power_law_is_each_crow_draws_closed_form() -> None:
    t = _process(20, 1.8, 3)
    rec = models.fit("crow_amsaa", {"t": t}, {"t": "t"})
    n = 50
    out = optimal_replacement_uncertain(rec, n, 9, model_id="p", lifetime=saved_life(rec, "p"), planned_cost=CP,
                                        unplanned_cost=CU, policy="minimal_repair", curve_points=10)
    want = []
    for d in models.parameter_draws(rec, n, 9):
        beta, lam = (p["value"] for p in d["params"])
        want.append(barlow_hunter(lam ** (-1 / beta), beta) if beta > 1 else None)
    got = out["parameter_uncertainty"]["optimal_time"]
    finite = sorted(w for w in want if w is not None)
    # a draw with beta <= 1 never pays to renew: it counts beyond every finite optimum
    ranked = finite + [math.inf] * (n - len(finite))
    for key, q in (("lower", 0.05), ("median", 0.5), ("upper", 0.95)):
        v = float(np.quantile(ranked, q, method="inverted_cdf"))
        assert (got[key] is None and not math.isfinite(v)) or got[key] == pytest.approx(v, rel=1e-6)
    # failure finding over an HPP's exact pivot: each draw's interval is its exponential's root
    hpp = models.fit("hpp", {"t": t}, {"t": "t"})
    ff = failure_finding_uncertain(hpp, 20, 1, model_id="h", lifetime=saved_life(hpp, "h"), target_availability=0.99)
    roots = [optimize.brentq(lambda x, lam=d["params"][0]["value"]: 1 + math.expm1(-lam * x) / (lam * x) - 0.01,
                             1e-9, 1e9, xtol=1e-14, rtol=1e-14) for d in models.parameter_draws(hpp, 20, 1)]
    for key, value in _percentiles(roots).items():
        assert ff["parameter_uncertainty"]["interval"][key] == pytest.approx(value, rel=1e-7)
