"""Draws of a saved power-law NHPP (Crow-AMSAA): Crow's exact pivot 2·S·beta ~ chi2(2m) for one
failure-terminated system or a common time-terminated end, the failure count's gamma for lambda
given beta, else a normal on (log beta, log lambda) with the fit's covariance; a drawn record is a
diagram block's Weibull life under minimal repair, so a two-level run carries it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats

from bathtub import models
from bathtub.errors import InputError
from bathtub.rbd import uncertainty as unc


def _times(n: int, seed: int = 4) -> list[float]:
    """A power-law process with beta 0.7 (reliability growth): Λ(t) = (t/100)^0.7, n events."""
    gam = np.cumsum(np.random.default_rng(seed).exponential(1.0, n))
    return (100.0 * gam ** (1 / 0.7)).tolist()


def _fit(times: list[float], end: float | None = None) -> dict[str, Any]:
    """Failure-terminated at the last event, or time-terminated at `end`."""
    if end is None:
        return models.fit("crow_amsaa", {"t": times}, {"t": "t"})
    return models.fit("crow_amsaa", {"t": times, "e": [end] * len(times)}, {"t": "t", "end": "e"},
                      options={"termination": "time"})


def test_beta_draws_follow_crows_chi_squared_pivot_and_lambda_the_count_gamma() -> None:
    t = _times(15)
    for rec, m, end in ((_fit(t), 14, t[-1]), (_fit(t, 1.3 * t[-1]), 15, 1.3 * t[-1])):
        s = sum(np.log(end / x) for x in t[:m])
        assert rec["sampling"] == {"law": "crow_exact", "informative_events": m, "sum_log": pytest.approx(s),
                                   "events": 15, "end": pytest.approx(end), "systems": 1}
        n = 20_000
        d = models.parameter_draws(rec, n, seed=9)
        beta = np.array([x["params"][0]["value"] for x in d])
        lam = np.array([x["params"][1]["value"] for x in d])
        assert [p["name"] for p in d[0]["params"]] == ["beta", "lambda"]
        # 2·S·beta against chi2(2m): Kolmogorov-Smirnov at the 1% level
        assert stats.kstest(2 * s * beta, stats.chi2(2 * m).cdf).pvalue > 0.01
        # the 5%/95% points are the record's chi2_exact bounds on beta (at 90%): chi2(2m) quantiles / 2S
        ref = stats.chi2.ppf([0.05, 0.95], 2 * m) / (2 * s)
        np.testing.assert_allclose(np.quantile(beta, [0.05, 0.95]), ref, rtol=0.03)
        # given beta, the expected count lambda·T^beta is Gamma(15, 1) whatever beta
        assert stats.kstest(lam * end**beta, stats.gamma(15).cdf).pvalue > 0.01
        assert np.corrcoef(beta, lam * end**beta)[0, 1] == pytest.approx(0.0, abs=4 / np.sqrt(n))


def test_mixed_ends_draw_the_normal_on_log_scale_with_the_fits_covariance() -> None:
    t1, t2 = _times(12, 1), _times(8, 2)
    rec = models.fit("crow_amsaa", {"t": [*t1, *t2], "s": ["a"] * 12 + ["b"] * 8,
                                    "e": [t1[-1] * 1.5] * 12 + [t2[-1] * 1.2] * 8},
                     {"t": "t", "system": "s", "end": "e"})
    assert "sampling" not in rec and rec["covariance"]["names"] == ["beta", "lambda"]
    theta = np.array([p["value"] for p in rec["params"]])
    cov = np.array(rec["covariance"]["matrix"])
    # the covariance is the inverse of the power law's observed information (Crow 1974), computed here anew
    ends = np.array([t1[-1] * 1.5, t2[-1] * 1.2])
    b, lam, n = theta[0], theta[1], 20
    w = ends**b
    info = np.array([[n / b**2 + lam * np.sum(w * np.log(ends) ** 2), np.sum(w * np.log(ends))],
                     [np.sum(w * np.log(ends)), n / lam**2]])
    np.testing.assert_allclose(cov, np.linalg.inv(info), rtol=1e-6)
    k = 8000
    d = models.parameter_draws(rec, k, seed=2)
    u = np.log([[x["params"][0]["value"], x["params"][1]["value"]] for x in d])
    cov_u = cov / np.outer(theta, theta)  # the delta method onto the log scale
    np.testing.assert_allclose(u.mean(axis=0), np.log(theta), atol=4 * np.sqrt(np.diag(cov_u) / k).max())
    np.testing.assert_allclose(np.cov(u.T), cov_u, rtol=4 * np.sqrt(2 / k) * 2)


def test_an_old_record_and_other_recurrent_models_are_refused() -> None:
    rec = _fit(_times(10))
    old = {k: v for k, v in rec.items() if k not in ("sampling", "covariance")}
    with pytest.raises(InputError) as e:
        models.parameter_draws(old, 2, 1)
    assert "refit" in e.value.rule
    mcf = models.fit("mcf", {"t": _times(10)}, {"t": "t"})
    with pytest.raises(InputError) as e:
        models.parameter_draws(mcf, 2, 1, field="uncertainty")
    assert e.value.field == "uncertainty" and "cannot be drawn" in e.value.rule


def test_two_level_run_of_a_crow_amsaa_block() -> None:
    t = _times(15)
    rec = _fit(t, 1.3 * t[-1])
    rec["unit"] = "hours"
    nodes = [{"id": "in", "type": "input"}, {"id": "b", "type": "component", "model": {"saved_model_id": "ca"}},
             {"id": "out", "type": "output"}]
    d = {"name": "ca", "unit": "hours", "repairable": False, "nodes": nodes,
         "edges": [{"source": "in", "target": "b"}, {"source": "b", "target": "out"}]}
    mission = 50.0
    out = unc.analyze(d, models={"ca": rec}, mission_time=mission, seed=3, uncertainty="parameters", draws=600,
                      replications_per_draw=10)
    fig = out["uncertainty"]["figures"]["reliability"]
    assert out["uncertainty"]["sources"][0]["law"] == "crow_exact"
    # a new unit's mission reliability R = exp(−lambda·t^beta), over the exact law, by direct quadrature
    # of the pivot: E[R] = ∫ E_G[exp(−G·(t/T)^beta)] f(beta) dbeta with G ~ Gamma(15, 1), E = (1 + x)^−15
    m, s, n, end = 15, rec["sampling"]["sum_log"], 15, 1.3 * t[-1]
    grid = np.linspace(stats.gamma.ppf(1e-9, m, scale=1 / s), stats.gamma.ppf(1 - 1e-9, m, scale=1 / s), 20001)
    f = stats.gamma.pdf(grid, m, scale=1 / s)
    mean_r = np.trapezoid(f * (1 + (mission / end) ** grid) ** (-n), grid)
    # the run is exact per draw (a non-repairable diagram in closed form): its mean within 4 se of the draws'
    assert abs(fig["mean"] - mean_r) < 4 * np.sqrt(fig["total_variance"] / 600)
    assert fig["draws"] == 600 and fig["interval"][0] < mean_r < fig["interval"][1]
