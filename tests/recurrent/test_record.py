"""The record's per-system and per-cause parts: proportional-intensity covariates against
surpyval and a closed form, by_cause as separate fits, systems_vs_model and
next_failure_by_system against the fitted process's own closed forms, refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from surpyval.recurrent import CrowAMSAA, ProportionalIntensityNHPP

from bathtub.errors import InputError
from bathtub.recurrent import events, fit_data, nhpp
from bathtub.recurrent.record import fit_columns

# surpyval's ProportionalIntensityNHPP example: four systems observed to 20, Z = 0, 0, 1, 1.
X = [9, 14, 18, 20, 7, 12, 16, 19, 20, 5, 9, 13, 16, 18, 20, 6, 10, 13, 15, 17, 19, 20]
IDS = [1] * 4 + [2] * 5 + [3] * 6 + [4] * 7
C = [0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1]
Z = [0.0] * 9 + [1.0] * 13


def test_covariate_effects_match_surpyval_and_the_closed_form() -> None:
    cols = {"t": [float(v) if c == 0 else None for v, c in zip(X, C)], "s": IDS, "end": [20.0] * 22, "z": Z}
    rec = fit_columns(cols, {"t": "t", "system": "s", "end": "end"}, "crow_amsaa", {"covariates": ["z"]})
    eff = rec["covariate_effects"]
    ref = ProportionalIntensityNHPP.fit(X, np.array(Z).reshape(-1, 1), i=IDS, c=C, baseline=CrowAMSAA)
    coef = eff["coefficients"][0]
    assert coef["value"] == pytest.approx(ref.coeffs[0], abs=1e-6)
    assert eff["beta"] == pytest.approx(ref.params[1], rel=1e-6)
    # All systems end at 20 with one beta: the intensity ratio is the ratio of event rates, 11/7.
    assert coef["intensity_ratio"] == pytest.approx(11 / 7, rel=1e-7)
    assert eff["beta"] == pytest.approx(CrowAMSAA.fit(x=X, i=IDS, c=C).params[1], rel=1e-6)
    assert 0 < eff["likelihood_ratio"]["p_value"] < 1


def test_by_cause_is_one_fit_per_cause() -> None:
    t = [3.0, 8.0, 11.0, 20.0, 26.0, 33.0, 41.0, 45.0, 52.0, 60.0]
    cause = ["seal", "bearing", "seal", "seal", "bearing", "seal", "bearing", "seal", "seal", "bearing"]
    rec = fit_columns({"t": t, "cause": cause, "end": [70.0] * 10}, {"t": "t", "cause": "cause", "end": "end"},
                      "crow_amsaa")
    rows = {r["cause"]: r for r in rec["by_cause"]}
    for c in ("seal", "bearing"):
        sub = np.array([v for v, k in zip(t, cause) if k == c])
        beta = sub.size / np.sum(np.log(70.0 / sub))  # time-terminated closed form
        assert rows[c]["beta"] == pytest.approx(beta, rel=1e-10) and rows[c]["events"] == sub.size
        assert rows[c]["lambda"] == pytest.approx(sub.size / 70.0**beta, rel=1e-10)


def test_systems_vs_model_and_next_failure_follow_the_fitted_process() -> None:
    data = events(([1.0, 4.0, 9.0, 20.0], [2.0, 3.0, 15.0], [7.0, 30.0]), ends=[25.0, 18.0, 40.0])
    rec = fit_data(data, "crow_amsaa")
    pl = nhpp.power_law(data)
    for row, end, n in zip(rec["systems_vs_model"], (25.0, 18.0, 40.0), (4, 3, 2)):
        mu = pl.lam * end**pl.beta
        assert row["expected"] == pytest.approx(mu, rel=1e-12) and row["events"] == n
        p = min(1.0, 2 * min(stats.poisson.cdf(n, mu), stats.poisson.sf(n - 1, mu)))
        assert row["p_value"] == pytest.approx(p, rel=1e-12)
    for row, end in zip(rec["next_failure_by_system"], (25.0, 18.0, 40.0)):
        # Minimal repair: P(no failure in (T, T + x]) = exp(-(Lambda(T + x) - Lambda(T))).
        for p, x in zip((0.05, 0.5, 0.95), (row["interval"][0], row["median"], row["interval"][1])):
            assert 1 - math.exp(-pl.lam * ((end + x) ** pl.beta - end**pl.beta)) == pytest.approx(p, rel=1e-9)
    hpp = fit_data(data, "hpp")
    lam = 9 / 83.0
    assert hpp["next_failure_by_system"][0]["median"] == pytest.approx(math.log(2) / lam, rel=1e-12)


def test_refusals_name_the_field() -> None:
    with pytest.raises(InputError) as err:
        fit_columns({"t": [1.0, 2.0]}, {"t": "t"}, "crow_amsaa", {"covariates": "z"})
    assert err.value.field == "options.covariates"
    with pytest.raises(InputError) as err:
        fit_columns({"t": [1.0, 2.0]}, {"t": "t"}, "crow_amsaa", {"speed": 1})
    assert err.value.field == "options.speed"
    with pytest.raises(InputError) as err:
        fit_columns({"e": [10.0, 20.0], "n": [1, 2]}, {"interval_end": "e", "count": "n"}, "kijima1")
    assert err.value.field == "distribution"
    with pytest.raises(InputError) as err:
        fit_columns({"t": [1.0, 2.0, 3.0], "e": [2.0, 2.0, 2.0]}, {"t": "t", "end": "e"}, "hpp")
    assert err.value.field == "data.t" and "after its end" in err.value.rule
