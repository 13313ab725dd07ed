"""Units and distribution names as users write them: aliases of a unit are one unit wherever
units are compared, and model import takes other tools' distribution names with their
parameter conventions (checked against `reliability` and lifelines' closed forms). SQLite only:
nothing here depends on the store."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import numpy as np
import pytest
from reliability import Distributions as R
from reliability.Fitters import Fit_Gamma_3P
from scipy import stats

from bathtub import engine
from bathtub.life import records
from bathtub.life.data import LifeData
from bathtub.life.fit import fit
from bathtub.units import ALIASES, canonical_unit, same_unit, units_clash, years_per_unit
from tests.conftest import Api

# Unit aliases and other tools' parameter conventions: mapping, no store-specific behaviour (see tests/conftest.py).
pytestmark = pytest.mark.one_store

# ---------------------------------------------------------------------------------------
# The canonical unit


@pytest.mark.parametrize(("aliases", "canonical"), [
    (("h", "hr", "hrs", "hour", "hours", "Hours", " HR "), "hour"),
    (("d", "day", "days", "Days"), "day"),
    (("wk", "week", "weeks"), "week"),
    (("mo", "month", "months"), "month"),
    (("y", "yr", "yrs", "year", "years"), "year"),
    (("min", "minutes"), "minute"),
    (("s", "sec", "seconds"), "second"),
    (("cycle", "cycles", "Cycles"), "cycle"),
    (("km", "kilometres", "kilometers"), "km"),
    (("mi", "mile", "miles"), "mile"),
])
def test_aliases_are_one_unit(aliases: tuple[str, ...], canonical: str) -> None:
    for a in aliases:
        assert canonical_unit(a) == canonical, a
        assert same_unit(a, aliases[0]) and not units_clash(a, canonical)


def test_other_units_compare_as_written_and_distinct_units_clash() -> None:
    assert canonical_unit("Load  Cycles ") == "load cycles" and same_unit("load cycles", "LOAD CYCLES")
    assert canonical_unit(None) is None and canonical_unit("  ") is None
    assert units_clash("hours", "days") and units_clash("km", "miles") and not units_clash(None, "days")
    # Every alias belongs to exactly one unit.
    seen = [a for aliases in ALIASES.values() for a in aliases]
    assert len(seen) == len(set(seen))


def test_calendar_units_in_years_and_discounting_by_alias() -> None:
    assert years_per_unit("hrs") == 1 / 8766.0 and years_per_unit("yr") == 1.0
    assert years_per_unit("wk") == pytest.approx(7 / 365.25, rel=1e-15) and years_per_unit("cycles") is None
    d = {"nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
                   {"id": "a", "type": "component", "model": {"distribution_id": "exponential",
                                                              "params": [{"name": "failure_rate", "value": 0.1}]},
                    "repair": {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": 1.0}]}}],
         "edges": [{"source": "in", "target": "a"}, {"source": "a", "target": "out"}],
         "costs": {"discount_rate": 5.0}}
    rates = {u: engine.normalize_diagram({**d, "unit": u})["costs"]["discount"] for u in ("h", "hr", "Hours", "hrs")}
    assert set(rates.values()) == {math.log1p(0.05) / 8766.0}
    assert engine.normalize_diagram({**d, "unit": "yr"})["costs"]["discount"] == math.log1p(0.05)


# ---------------------------------------------------------------------------------------
# Units compared in the service


async def _import(api: Api, unit: str, **body: Any) -> str:
    status, model = await api.post("/api/import/models", {
        "name": "life", "unit": unit, "distribution": "weibull",
        "params": [{"name": "alpha", "value": 1000.0}, {"name": "beta", "value": 2.0}], **body})
    assert status == 200, model
    return str(model["id"])


def _one_block(unit: str, model: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": "u", "unit": unit, "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
                                                 {"id": "a", "type": "component", "model": model}],
            "edges": [{"source": "in", "target": "a"}, {"source": "a", "target": "out"}], **extra}


async def test_saved_models_and_subsystems_in_an_alias_of_the_diagram_unit(api: Api) -> None:
    mid = await _import(api, "hrs")
    status, sub = await api.post("rbd/create", _one_block("h", {"saved_model_id": mid}))
    assert status == 200, sub
    parent = _one_block("Hours", {"saved_model_id": mid})
    parent["nodes"].append({"id": "s", "type": "subsystem", "subsystem_rbd_id": sub["id"]})
    parent["edges"] = [{"source": "in", "target": "a"}, {"source": "a", "target": "s"},
                       {"source": "s", "target": "out"}]
    status, made = await api.post("rbd/create", parent)
    assert status == 200, made
    status, run = await api.post("rbd_analysis/analyze", {"id": made["id"], "mission_time": 500.0})
    assert status == 200 and run["method"] == "closed_form", run
    # The block and the subsystem's block on the same Weibull, in series: R = exp(-2 (t/alpha)^beta).
    assert run["results"]["reliability"] == pytest.approx(math.exp(-2 * 0.25), rel=1e-12)
    status, body = await api.post("rbd/create", _one_block("days", {"saved_model_id": mid}))
    assert status == 422 and body["detail"] == \
        f"nodes.a.model.saved_model_id: model {mid} is in 'hrs' but the diagram is in 'days'", body
    bad = _one_block("days", {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": 0.1}]})
    bad["nodes"].append({"id": "s", "type": "subsystem", "subsystem_rbd_id": sub["id"]})
    bad["edges"] = [{"source": "in", "target": "a"}, {"source": "a", "target": "s"}, {"source": "s", "target": "out"}]
    status, body = await api.post("rbd/create", bad)
    assert status == 422 and body["detail"].startswith("nodes.s.subsystem_rbd_id: diagram"), body


async def test_discounting_takes_any_calendar_alias(api: Api) -> None:
    model = {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": 0.01}]}
    d = _one_block("h", model, repairable=True, costs={"discount_rate": 5.0})
    d["nodes"][2]["repair"] = {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": 1.0}]}
    status, made = await api.post("rbd/create", d)
    assert status == 200 and made["costs"] == {"discount_rate": 5.0}, made
    status, body = await api.post("rbd/create", {**d, "unit": "cycles"})
    assert status == 422 and body["detail"].startswith("costs.discount_rate: needs a calendar time unit"), body


async def test_strategy_on_a_saved_model_compares_units_by_alias(api: Api) -> None:
    mid = await _import(api, "hours")
    ask = {"saved_model_id": mid, "planned_cost": 100.0, "unplanned_cost": 1000.0}
    status, same = await api.post("strategy/optimal_replacement", {**ask, "unit": "h"})
    assert status == 200 and same["optimal_time"] > 0, same
    status, body = await api.post("strategy/optimal_replacement", {**ask, "unit": "days"})
    assert (status, body) == (422, {"detail": f"unit: model {mid} is in 'hours', not 'days': omit unit or give "
                                              "the model's"})


# ---------------------------------------------------------------------------------------
# Distribution names from other tools

T = np.array([5.0, 40.0, 150.0, 900.0])


def _sf(dist: Any) -> np.ndarray:
    return np.asarray(dist.SF(T, show_plot=False), dtype=float)


# (name as the tool writes it, its parameters, the tool's (or the closed form's) survival at T)
FOREIGN = [
    ("Weibull_2P", {"alpha": 300.0, "beta": 1.7}, _sf(R.Weibull_Distribution(alpha=300.0, beta=1.7))),
    ("Weibull_3P", {"alpha": 300.0, "beta": 1.7, "gamma": 20.0},
     _sf(R.Weibull_Distribution(alpha=300.0, beta=1.7, gamma=20.0))),
    ("lognormal_2p", {"mu": 5.0, "sigma": 0.8}, _sf(R.Lognormal_Distribution(mu=5.0, sigma=0.8))),
    ("Lognormal_3P", {"mu": 5.0, "sigma": 0.8, "gamma": 3.0},
     _sf(R.Lognormal_Distribution(mu=5.0, sigma=0.8, gamma=3.0))),
    ("Exponential_1P", {"Lambda": 0.004}, _sf(R.Exponential_Distribution(Lambda=0.004))),
    ("Exponential_2P", {"Lambda": 0.004, "gamma": 10.0}, _sf(R.Exponential_Distribution(Lambda=0.004, gamma=10.0))),
    ("Normal_2P", {"mu": 400.0, "sigma": 90.0}, _sf(R.Normal_Distribution(mu=400.0, sigma=90.0))),
    # reliability's gamma: alpha the scale, beta the shape (Bathtub's the other way round).
    ("Gamma_2P", {"alpha": 100.0, "beta": 2.0}, _sf(R.Gamma_Distribution(alpha=100.0, beta=2.0))),
    ("Gamma_3P", {"alpha": 100.0, "beta": 2.0, "gamma": 15.0},
     _sf(R.Gamma_Distribution(alpha=100.0, beta=2.0, gamma=15.0))),
    ("LOGLOGISTIC_2P", {"alpha": 200.0, "beta": 3.0}, _sf(R.Loglogistic_Distribution(alpha=200.0, beta=3.0))),
    ("Loglogistic_3P", {"alpha": 200.0, "beta": 3.0, "gamma": 4.0},
     _sf(R.Loglogistic_Distribution(alpha=200.0, beta=3.0, gamma=4.0))),
    ("Gumbel_2P", {"mu": 500.0, "sigma": 120.0}, _sf(R.Gumbel_Distribution(mu=500.0, sigma=120.0))),
    ("Beta_2P", {"alpha": 2.0, "beta": 5.0}, np.asarray(R.Beta_Distribution(alpha=2.0, beta=5.0).SF(
        T / 1000.0, show_plot=False), dtype=float)),
    # lifelines: S(t) = exp(-(t/lambda)^rho), exp(-t/lambda), 1 - Phi((ln t - mu)/sigma), 1/(1 + (t/alpha)^beta).
    ("WeibullFitter", {"lambda_": 300.0, "rho_": 1.7}, np.exp(-((T / 300.0) ** 1.7))),
    ("ExponentialFitter", {"lambda_": 250.0}, np.exp(-T / 250.0)),
    ("LogNormalFitter", {"mu_": 5.0, "sigma_": 0.8}, stats.norm.sf((np.log(T) - 5.0) / 0.8)),
    ("LogLogisticFitter", {"alpha_": 200.0, "beta_": 3.0}, 1.0 / (1.0 + (T / 200.0) ** 3.0)),
]


@pytest.mark.parametrize(("name", "params", "expected"), FOREIGN, ids=[f[0] for f in FOREIGN])
async def test_import_takes_other_tools_names_and_conventions(api: Api, name: str, params: dict[str, float],
                                                              expected: np.ndarray) -> None:
    status, model = await api.post("/api/import/models", {
        "name": name, "distribution": name, "params": [{"name": k, "value": v} for k, v in params.items()]})
    assert status == 200, model
    times = T / 1000.0 if name == "Beta_2P" else T
    for t, want in zip(times, expected):
        status, at = await api.post(f"/api/v1/models/{model['id']}/reliability", {"t": float(t)})
        assert status == 200, at
        assert at["at"]["reliability"] == pytest.approx(want, rel=1e-9, abs=1e-14), (name, t)


async def test_import_names_any_case_and_refuses_unknown_naming_what_is_accepted(api: Api) -> None:
    status, model = await api.post("/api/import/models", {
        "name": "w", "distribution": "WEIBULL", "params": [{"name": "alpha", "value": 10.0},
                                                           {"name": "beta", "value": 2.0}]})
    assert status == 200 and model["distribution"] == "weibull", model
    status, body = await api.post("/api/import/models", {"name": "w", "distribution": "Weibul_2P",
                                                         "params": [{"name": "alpha", "value": 1.0}]})
    assert status == 422 and body["detail"].startswith("distribution: unknown distribution 'Weibul_2P'; accepted")
    for name in ("weibull", "Weibull_3P", "Lognormal_2P", "Gamma_2P", "WeibullFitter"):
        assert name in body["detail"]
    status, body = await api.post("/api/import/models", {"name": "w", "distribution": "Weibull_3P",
                                                         "params": [{"name": "alpha", "value": 10.0},
                                                                    {"name": "beta", "value": 2.0}]})
    assert (status, body["detail"]) == (422, "params.gamma: required for Weibull_3P (its location); without one "
                                             "use Weibull_2P")
    status, body = await api.post("/api/import/models", {"name": "w", "distribution": "Normal_2P",
                                                         "params": [{"name": k, "value": v} for k, v in
                                                                    (("mu", 1.0), ("sigma", 2.0), ("gamma", 1.0))]})
    assert (status, body["detail"]) == (422, "params.gamma: Normal_2P has no location")


@pytest.mark.slow  # ~4 s: a Weibull 3P import refit twice, by the route and by the library
async def test_a_3p_name_refits_data_with_the_offset(api: Api) -> None:
    rng = np.random.default_rng(7)
    x = (rng.weibull(1.8, 40) * 500.0 + 120.0).tolist()
    status, model = await api.post("/api/import/models", {"name": "w3", "distribution": "Weibull_3P",
                                                          "data": {"x": x}})
    assert status == 200, model
    status, got = await api.get(f"/api/v1/models/{model['id']}")
    assert status == 200 and got["options"]["offset"] is True, got
    own = fit(LifeData.from_columns({"x": x}, {"x": "x"}), "weibull", options={"offset": True}).to_record()
    assert [p["value"] for p in got["params"]] == [p["value"] for p in own["params"]]
    status, body = await api.post("/api/import/models", {"name": "w", "distribution": "Weibull_2P", "data": {"x": x},
                                                         "options": {"offset": True}})
    assert (status, body["detail"]) == (422, "options.offset: Weibull_2P means offset false; leave it out")


@pytest.mark.slow  # ~4 s: a gamma 3P refit, and reliability's Fit_Gamma_3P as its reference
def test_gamma_3p_refit_matches_reliability_and_the_engine_samples_it() -> None:
    rng = np.random.default_rng(3)
    x = rng.gamma(2.5, 40.0, 60) + 30.0
    rec = records.import_model("Gamma_3P", data={"x": x.tolist()})
    ours = {p["name"]: p["value"] for p in rec["params"]}
    ref = Fit_Gamma_3P(failures=x, show_probability_plot=False, print_results=False)
    # reliability's alpha is the scale, beta the shape; its optimiser stops at ~1e-5.
    assert ours["alpha"] == pytest.approx(ref.beta, rel=1e-3) and ours["beta"] == pytest.approx(ref.alpha, rel=1e-3)
    assert ours["gamma"] == pytest.approx(ref.gamma, rel=1e-3) and rec["log_likelihood"] >= ref.loglik - 1e-6
    # The engine's gamma with a location, against scipy's, and its sampling mean.
    d = engine.EngineLifetime.from_input("gamma", {"alpha": 2.5, "beta": 40.0, "gamma": 30.0})
    ref_dist = stats.gamma(2.5, loc=30.0, scale=40.0)
    t = np.array([10.0, 30.0, 31.0, 80.0, 400.0])
    assert np.allclose(d.sf(t), ref_dist.sf(t), rtol=1e-10, atol=1e-300)
    assert np.allclose(d.pdf(t), ref_dist.pdf(t), rtol=1e-10, atol=1e-300)
    q = np.array([0.0, 1e-6, 0.3, 0.9])
    assert np.allclose(d.quantile(q), ref_dist.ppf(q), rtol=1e-10)
    assert d.mean() == pytest.approx(30.0 + 2.5 * 40.0, rel=1e-14)
    draws = d.sample(100_000, seed=4)
    assert draws.min() > 30.0 and abs(draws.mean() - 130.0) < 4 * ref_dist.std() / math.sqrt(draws.size)


def test_library_import_translates_reliability_gamma() -> None:
    rec = records.import_model("Gamma_2P", params={"alpha": 100.0, "beta": 2.0})
    assert [(p["name"], p["value"]) for p in rec["params"]] == [("alpha", 2.0), ("beta", 100.0)]


async def test_a_gamma_3p_import_is_a_block_life(api: Api) -> None:
    status, model = await api.post("/api/import/models", {
        "name": "g3", "unit": "hrs", "distribution": "Gamma_3P",
        "params": [{"name": "alpha", "value": 40.0}, {"name": "beta", "value": 2.5}, {"name": "gamma", "value": 30.0}]})
    assert status == 200, model
    status, made = await api.post("rbd/create", _one_block("hours", {"saved_model_id": model["id"]}))
    assert status == 200, made
    exact = float(stats.gamma(2.5, loc=30.0, scale=40.0).sf(150.0))
    status, run = await api.post("rbd_analysis/analyze", {"id": made["id"], "mission_time": 150.0})
    assert status == 200 and run["method"] == "closed_form", run
    assert run["results"]["reliability"] == pytest.approx(exact, rel=1e-9)
    status, queued = await api.post("rbd_analysis/analyze", {"id": made["id"], "mission_time": 150.0,
                                                             "method": "simulation", "replications": 20_000,
                                                             "seed": 5})
    assert status == 200, queued
    for _ in range(600):
        status, job = await api.post("get/job", {"id": queued["job_id"]})
        if job["status"] in ("done", "failed"):
            break
        await asyncio.sleep(0.05)
    assert job["status"] == "done", job
    lo, hi = job["result"]["results"]["reliability_interval"]
    assert lo <= exact <= hi, (lo, exact, hi)
