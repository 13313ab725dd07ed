"""ALT through the service: fit with stress roles, the model record, reliability at a use
stress, refusals (nothing saved), and the bootstrap job storing its bounds on the model.

References: reliability's Fit_Weibull_Exponential (the Arrhenius form) on its ALT_temperature
data; scipy's Weibull at the use-level parameters.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from tests.conftest import Api
from tests.service.test_errors import assert_refusal
from tests.service.test_rbd_service import poll

R = pytest.importorskip("reliability.ALT_fitters")
D = pytest.importorskip("reliability.Datasets")

DS = D.ALT_temperature()
ROWS = [(t, "F", s) for t, s in zip(DS.failures, DS.failure_stresses)] + \
       [(t, "S", s) for t, s in zip(DS.right_censored, DS.right_censored_stresses)]


def _csv(rows) -> str:
    return "time,state,temp\n" + "\n".join(f"{t},{c},{s}" for t, c, s in rows)


async def _dataset(api: Api, rows=ROWS) -> str:
    status, created = await api.post("/api/v1/datasets", {"name": "alt", "csv": _csv(rows)})
    assert status == 200, created
    return created["id"]


def _body(dataset_id: str, distribution: str = "weibull_arrhenius", **mapping: str) -> dict:
    return {"name": "alt fit", "dataset_id": dataset_id, "distribution": distribution, "unit": "h",
            "mapping": mapping or {"x": "time", "c": "state", "stress": "temp"}}


@pytest.mark.one_store  # numerics and refusals: no store-specific behaviour
async def test_fit_record_and_reliability_at_use_stress(api: Api) -> None:
    status, fitted = await api.post("/api/v1/fit", _body(await _dataset(api)))
    assert status == 200, fitted
    assert fitted["kind"] == "alt" and fitted["distribution"] == "weibull_arrhenius" and fitted["n"] == len(ROWS)
    status, record = await api.get(f"/api/v1/models/{fitted['id']}")
    assert status == 200
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = R.Fit_Weibull_Exponential(failures=DS.failures, failure_stress=DS.failure_stresses,
                                        right_censored=DS.right_censored,
                                        right_censored_stress=DS.right_censored_stresses,
                                        show_probability_plot=False, show_life_stress_plot=False,
                                        print_results=False)
    p = {q["name"]: q for q in record["params"]}
    assert math.isclose(p["A"]["value"], ref.b, rel_tol=1e-4) and math.isclose(p["B"]["value"], ref.a, rel_tol=1e-4)
    assert math.isclose(p["beta"]["value"], ref.beta, rel_tol=1e-4)
    assert p["B"]["ci"][0] < p["B"]["value"] < p["B"]["ci"][1]
    assert record["metrics"]["log_likelihood"] >= ref.loglik - 1e-9
    assert (await api.post("get/model", {"id": fitted["id"]}))[1] == record
    assert record["stress_life"]["points"] and record["levels"][0]["stress"] == 40.0

    status, at = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 5000.0, "stress": 30})
    assert status == 200, at
    alpha = p["A"]["value"] * math.exp(p["B"]["value"] / 30.0)
    dist = stats.weibull_min(p["beta"]["value"], scale=alpha)
    assert math.isclose(at["at"]["reliability"], dist.sf(5000.0), rel_tol=1e-10)
    assert math.isclose(at["use"]["mttf"]["value"], dist.mean(), rel_tol=1e-10)
    af40 = next(a for a in at["use"]["acceleration_factors"] if a["stress"] == 40.0)
    assert math.isclose(af40["value"], math.exp(p["B"]["value"] * (1 / 30 - 1 / 40)), rel_tol=1e-10)
    status, curves = await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"stress": 30})
    assert status == 200 and np.allclose(curves["curves"]["sf"], dist.sf(np.array(curves["curves"]["x"])))
    assert_refusal(*await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 10.0}), 422, "stress")
    assert_refusal(*await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"stress": -3}), 422,
                   "stress", "> 0")


@pytest.mark.parametrize("rows,mapping,distribution,words", [
    ([(10, "F", 300), (20, "F", 300), (30, "S", 300)], None, "weibull_arrhenius", ("mapping.stress", "2 distinct")),
    ([(10, "F", 300), (20, "F", 0), (30, "S", 350)], None, "weibull_arrhenius", ("mapping.stress", "> 0")),
    ([(10, "S", 300), (20, "S", 320), (30, "S", 350)], None, "weibull_power", ("mapping.c", "no failures")),
    (ROWS[:5], {"x": "time", "stress": "temp"}, "weibull_peck", ("mapping.stress2",)),
    (ROWS[:5], {"x": "time", "stress": "nope"}, "weibull_arrhenius", ("mapping.stress", "nope")),
    (ROWS[:5], {"x": "time", "stress": "temp", "n": "state"}, "weibull_arrhenius", ("mapping.n",)),
])
@pytest.mark.one_store  # numerics and refusals: no store-specific behaviour
async def test_refusals_save_nothing(api: Api, rows, mapping, distribution, words) -> None:
    dataset_id = await _dataset(api, rows)
    body = _body(dataset_id, distribution, **(mapping or {}))
    assert_refusal(*await api.post("/api/v1/fit", body), 422, *words)
    assert (await api.get("/api/v1/models"))[1]["models"] == []


@pytest.mark.one_store  # numerics and refusals: no store-specific behaviour
async def test_stress_on_a_plain_model_is_refused(api: Api) -> None:
    dataset_id = await _dataset(api)
    status, fitted = await api.post("/api/v1/fit", _body(dataset_id, "weibull", x="time", c="state"))
    assert status == 200, fitted
    assert_refusal(*await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 1.0, "stress": 3}),
                   422, "stress", "not an ALT model")
    assert_refusal(*await api.post("alt/bootstrap", {"model_id": fitted["id"]}), 422, "model_id")


async def test_bootstrap_job_stores_bounds_on_the_model(api: Api) -> None:
    status, fitted = await api.post("/api/v1/fit", _body(await _dataset(api)))
    assert status == 200
    assert_refusal(*await api.post("alt/bootstrap", {"model_id": fitted["id"], "use_stress": -1}), 422,
                   "use_stress")
    assert_refusal(*await api.post("alt/bootstrap", {"model_id": fitted["id"], "replicates": 5}), 422,
                   "replicates")
    status, queued = await api.post("alt/bootstrap", {"model_id": fitted["id"], "replicates": 300, "seed": 4,
                                                      "use_stress": 30, "kind": "nonparametric"})
    assert status == 200 and queued["status"] == "queued", queued
    job = await poll(api, queued["job_id"])
    assert job["status"] == "done", job
    status, record = await api.get(f"/api/v1/models/{fitted['id']}")
    boot = record["bootstrap"]
    assert boot["replicates"] == 300 and boot["kind"] == "nonparametric" and boot["use_stress"] == 30
    rows = {r["name"]: r for r in boot["intervals"]}
    assert set(rows) >= {"A", "B", "beta", "life", "b1", "b10", "mttf"}
    fisher = {q["name"]: q for q in record["params"]}
    for name in ("B", "beta"):  # the bootstrap and Fisher intervals describe the same uncertainty
        r = rows[name]
        assert r["ci"][0] < r["value"] < r["ci"][1] and r["ci_method"] == "percentile"
        assert r["bca_ci"][0] < r["value"] < r["bca_ci"][1]
        assert math.isclose(r["value"], fisher[name]["value"], rel_tol=1e-12)
        assert 0.5 < r["se"] / fisher[name]["se"] < 2.0


@pytest.mark.slow  # ~5 s: an ALT bootstrap job, then a refit
async def test_ingest_refits_an_alt_model_and_drops_stale_bounds(api: Api) -> None:
    dataset_id = await _dataset(api)
    status, fitted = await api.post("/api/v1/fit", _body(dataset_id))
    status, queued = await api.post("alt/bootstrap", {"model_id": fitted["id"], "replicates": 100})
    assert (await poll(api, queued["job_id"]))["status"] == "done"
    assert "bootstrap" in (await api.post("get/model", {"id": fitted["id"]}))[1]
    extra = [(700.0, "F", 80), (900.0, "F", 60)]
    status, out = await api.post(f"/api/ingest/datasets/{dataset_id}/lives",
                                 {"rows": [{"time": t, "state": c, "temp": s} for t, c, s in extra]})
    assert status == 200 and out["refit"] == [{"id": fitted["id"], "name": fitted["name"]}], out
    status, record = await api.post("get/model", {"id": fitted["id"]})
    assert record["n"] == len(ROWS) + 2 and "bootstrap" not in record
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = ROWS + extra
        f = [r for r in rows if r[1] == "F"]
        rc = [r for r in rows if r[1] == "S"]
        ref = R.Fit_Weibull_Exponential(failures=[r[0] for r in f], failure_stress=[r[2] for r in f],
                                        right_censored=[r[0] for r in rc], right_censored_stress=[r[2] for r in rc],
                                        show_probability_plot=False, show_life_stress_plot=False,
                                        print_results=False)
    assert math.isclose({p["name"]: p["value"] for p in record["params"]}["beta"], ref.beta, rel_tol=1e-4)
