"""Two-level runs of blocks on saved repairable-system processes: an HPP block's reliability over
its rate's exact pivot against the closed form, a Kijima GRP block that keeps its drawn repair
quality (a stored run's slimmed models keep what both laws need), and a power law fitted with
covariates living at the block's covariates."""

from __future__ import annotations

import numpy as np
import pytest

from bathtub import models
from bathtub.errors import InputError
from bathtub.models.draws import sampling_form
from bathtub.rbd import uncertainty as unc
from bathtub.rbd.analysis import check_options
from bathtub.recurrent import grp

from .helpers import exp_model, series


def test_hpp_block_reliability_over_the_exact_pivot_is_the_closed_form() -> None:
    gaps = np.random.default_rng(4).exponential(50.0, 8)
    t = np.cumsum(gaps).tolist()
    rec = models.fit("hpp", {"t": t}, {"t": "t"})  # one system stopped at its 8th failure
    rec["unit"] = "hours"
    slim = unc.slim_models({"h": rec})["h"]
    assert sampling_form(slim) == sampling_form(rec) and sampling_form(slim)["pivot"] == "failure_terminated"
    mission, draws = 20.0, 800
    out = unc.analyze(series({"saved_model_id": "h"}), models={"h": slim}, mission_time=mission, seed=5,
                      uncertainty="parameters", draws=draws)
    fig = out["uncertainty"]["figures"]["reliability"]
    # R = exp(−lambda t) with lambda ~ Gamma(8, rate T): E[R] = (1 + t/T)^−8, its 5%/95% points exp(−t·q)
    total = t[-1]
    assert abs(fig["mean"] - (1 + mission / total) ** -8) < 4 * np.sqrt(fig["total_variance"] / draws)
    lam = rec["params"][0]["value"]
    assert fig["point"] == pytest.approx(np.exp(-lam * mission), rel=1e-12)
    assert out["uncertainty"]["sources"][0]["law"] == "gamma"


def test_grp_block_draws_its_repair_quality_with_its_life() -> None:
    rng = np.random.default_rng(22)
    ends = [900.0, 1100.0, 1000.0, 950.0]
    sims = grp.simulate(150.0, 2.2, 0.6, "kijima2", np.array(ends), rng)
    cols = {"t": [v for s in sims for v in s.tolist()],
            "s": [f"S{k}" for k, s in enumerate(sims) for _ in s], "e": [e for s, e in zip(sims, ends) for _ in s]}
    rec = models.fit("kijima2", cols, {"t": "t", "system": "s", "end": "e"})
    rec["unit"] = "hours"
    d = series({"saved_model_id": "g"})
    d["repairable"] = True
    d["nodes"][2]["repair"] = exp_model(0.5)
    out = unc.analyze(d, models={"g": rec}, horizon=2000.0, replications=200, seed=2, uncertainty="parameters",
                      draws=40, replications_per_draw=50)
    src = out["uncertainty"]["sources"][0]
    assert src["law"] == "normal" and src["blocks"] == ["nodes.b0.model"]
    opts = check_options(True, {"horizon": 2000.0, "replications": 50, "seed": 2}, phases_end=None)
    three = unc.UncertaintyOptions(draws=3, replications_per_draw=50)
    rows = unc.draw_rows(d, {"g": rec}, {}, opts, three, exact=False)
    # each draw's coordinates are (ln alpha, ln beta, q) drawn from the fit's covariance; q stays in [0, 1]
    for r in rows:
        la, lb, q = r["coordinates"]["g"]
        assert 0.0 <= q <= 1.0 and np.isfinite(la) and np.isfinite(lb)
    # the expected failures over the draws bracket the point run's (the draws centre on the estimate)
    fig = out["uncertainty"]["figures"]["expected_failures"]
    assert fig["interval"][0] < out["results"]["expected_failures"] < fig["interval"][1]


def _power_law_with_covariates() -> dict:
    ts = [[9.0, 14.0, 18.0], [7.0, 12.0, 16.0, 19.0], [5.0, 9.0, 13.0, 16.0, 18.0], [6.0, 10.0, 13.0, 15.0, 17.0]]
    z = [0.0, 0.0, 1.0, 1.0]
    cols = {"t": [v for s in ts for v in s], "s": [k for k, s in enumerate(ts) for _ in s],
            "e": [20.0] * 17, "z": [z[k] for k, s in enumerate(ts) for _ in s]}
    rec = models.fit("crow_amsaa", cols, {"t": "t", "system": "s", "end": "e"}, options={"covariates": ["z"]})
    rec["unit"] = "hours"
    return rec


def test_a_power_law_with_covariates_is_a_block_life_at_the_blocks_covariates_and_is_drawn() -> None:
    rec = _power_law_with_covariates()
    eff = rec["covariate_effects"]
    mission, z = 4.0, 0.5
    d = series({"saved_model_id": "p", "covariates": {"z": z}})
    out = unc.analyze(d, models={"p": rec}, mission_time=mission, seed=6, uncertainty="parameters", draws=50)
    # a new system's first failure: R(t) = exp(−lambda·e^{z·gamma}·t^beta) (Lawless 1987 at z)
    lam_z = eff["lambda"] * np.exp(eff["coefficients"][0]["value"] * z)
    assert out["results"]["reliability"] == pytest.approx(np.exp(-lam_z * mission ** eff["beta"]), rel=1e-9)
    # each draw is exact (closed form): the mean over draws is the mean of the same draws' R, computed here
    seed = unc.model_stream_seed(6, "p")
    drawn = [models.parameter_draws(rec, 1, seed, first=i)[0]["covariate_effects"] for i in range(50)]
    want = [np.exp(-e["lambda"] * np.exp(e["coefficients"][0]["value"] * z) * mission ** e["beta"]) for e in drawn]
    assert out["uncertainty"]["figures"]["reliability"]["mean"] == pytest.approx(np.mean(want), rel=1e-9)
    for bad, field in (({"saved_model_id": "p"}, "nodes.b0.model.covariates"),
                       ({"saved_model_id": "p", "covariates": {"w": 1.0, "z": 0.0}}, "nodes.b0.model.covariates.w")):
        with pytest.raises(InputError) as e:
            unc.analyze(series(bad), models={"p": rec}, mission_time=mission)
        assert e.value.field == field
