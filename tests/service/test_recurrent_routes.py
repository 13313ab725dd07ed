"""Repairable-system models through the service (SQLite only): POST /api/v1/fit with a
recurrent model id and `fit recurrent` save a model of kind `recurrent`, read back by
`get model` and GET /api/v1/models/{id}; bad recurrent data is refused naming the field and
saves nothing. The numbers themselves are checked against references in tests/recurrent."""

from __future__ import annotations

import math

import pytest
from reliability.Datasets import MCF_1, system_growth

from tests.conftest import Api
from tests.service.test_errors import assert_refusal

# Numerics and mapping of the fit routes: the store only saves the record (see tests/conftest.py).
pytestmark = pytest.mark.one_store

GROWTH = system_growth().failures


async def _dataset(api: Api, data: dict) -> str:
    status, created = await api.post("/api/v1/datasets", {"name": "events", "data": data})
    assert status == 200, created
    return created["id"]


def mcf1_fleet() -> dict[str, list]:
    """MCF_1: five systems, the last time of each is its end of observation."""
    t, s, e = [], [], []
    for k, times in enumerate(MCF_1().times):
        for v in times[:-1]:
            t.append(float(v))
            s.append(f"S{k + 1}")
            e.append(float(times[-1]))
    return {"t": t, "unit": s, "end": e}


async def _models(api: Api) -> list:
    return (await api.get("/api/v1/models"))[1]["models"]


async def test_crow_amsaa_fit_is_a_recurrent_model(api: Api) -> None:
    ds = await _dataset(api, {"t": GROWTH})
    status, fitted = await api.post("/api/v1/fit", {"name": "growth", "dataset_id": ds, "distribution": "crow_amsaa",
                                                    "mapping": {"t": "t"}, "unit": "h"})
    assert status == 200, fitted
    assert fitted["kind"] == "recurrent" and fitted["distribution"] == "crow_amsaa" and fitted["n"] == 22
    status, record = await api.get(f"/api/v1/models/{fitted['id']}")
    assert status == 200
    assert (await api.post("get/model", {"id": fitted["id"]}))[1] == record
    params = {p["name"]: p for p in record["params"]}
    # Published (reliability's Repairable_systems docs; MIL-HDBK-189C example): 0.6142, 0.4239, 45.88.
    assert math.isclose(params["beta"]["value"], 0.61421, abs_tol=5e-6)
    assert math.isclose(params["lambda"]["value"], 0.42394, abs_tol=5e-6)
    assert math.isclose(record["mtbf"]["instantaneous"]["value"], 45.883, abs_tol=5e-4)
    assert record["termination"] == "failure" and record["growth"]["verdict"] == "improving"
    assert record["unit"] == "h" and record["dataset_id"] == ds
    assert {t["id"] for t in record["trend_tests"]} == {"laplace", "mil_hdbk_189", "lewis_robinson",
                                                         "reverse_arrangements"}
    # A recurrent model has no single reliability function.
    assert_refusal(*await api.post(f"/api/v1/models/{fitted['id']}/reliability", {"t": 1.0}), 422, "recurrent")


async def test_fit_tool_kijima_and_mcf_with_groups(api: Api) -> None:
    data = mcf1_fleet()
    data["fleet"] = ["A" if u in ("S1", "S2", "S3") else "B" for u in data["unit"]]
    ds = await _dataset(api, data)
    status, fitted = await api.post("fit/recurrent", {"name": "grp", "dataset_id": ds, "model": "kijima1",
                                                      "mapping": {"t": "t", "system": "unit", "end": "end"}})
    assert status == 200, fitted
    record = (await api.post("get/model", {"id": fitted["id"]}))[1]
    assert record["kind"] == "recurrent" and record["systems"] == 5 and record["termination"] == "time"
    q = record["repair_effectiveness"]
    assert 0 <= q["interval"][0] <= q["q"] <= q["interval"][1] <= 1
    assert set(record["repair_test"]) >= {"renewal", "minimal_repair"}
    assert [r["system"] for r in record["next_failure_by_system"]] == ["S1", "S2", "S3", "S4", "S5"]
    status, fitted = await api.post("fit/recurrent", {"name": "mcf", "dataset_id": ds, "model": "mcf",
                                                      "mapping": {"t": "t", "system": "unit", "end": "end",
                                                                  "group": "fleet"},
                                                      "options": {"confidence": 0.9}})
    assert status == 200, fitted
    record = (await api.get(f"/api/v1/models/{fitted['id']}"))[1]
    assert record["curve"]["mcf"][-1] == pytest.approx(11 / 3)
    assert record["comparison"]["groups"] == ["A", "B"] and set(record["curves"]) == {"A", "B"}


async def test_grouped_data(api: Api) -> None:
    # weibull.com Crow-AMSAA example 4: cumulative failures 2, 3, 4, 11 by 200, 400, 600, 3000 h.
    ds = await _dataset(api, {"end": [200, 400, 600, 3000], "n": [2, 1, 1, 7]})
    status, fitted = await api.post("/api/v1/fit", {"name": "g", "dataset_id": ds, "distribution": "crow_amsaa",
                                                    "mapping": {"interval_end": "end", "count": "n"}})
    assert status == 200, fitted
    record = (await api.get(f"/api/v1/models/{fitted['id']}"))[1]
    assert record["termination"] == "grouped"
    assert next(p for p in record["params"] if p["name"] == "beta")["value"] == pytest.approx(0.6315, abs=5e-5)


@pytest.mark.parametrize(("data", "mapping", "options", "field"), [
    ({"t": [5.0, 30.0], "end": [20.0, 20.0]}, {"t": "t", "end": "end"}, None, "data.t"),  # event after the end
    ({"t": [5.0, 8.0, None], "s": ["a", "a", "b"], "end": [8.0, 8.0, 10.0]},
     {"t": "t", "system": "s", "end": "end"}, {"termination": "failure"}, "data.t"),  # system without events
    ({"t": [-1.0, 3.0]}, {"t": "t"}, None, "data.t"),  # negative time
    ({"t": [3.0]}, {"t": "t"}, None, "data.t"),  # one event in total
    ({"t": [3.0, 4.0]}, {"t": "t", "when": "t"}, None, "mapping.when"),  # unknown role
    ({"t": [3.0, 4.0], "z": [1.0, 2.0]}, {"t": "t"}, {"covariates": ["z"]}, "data.z"),  # z varies in a system
])
async def test_bad_recurrent_data_is_refused_and_saves_nothing(api: Api, data: dict, mapping: dict,
                                                               options: dict | None, field: str) -> None:
    ds = await _dataset(api, data)
    body = {"name": "bad", "dataset_id": ds, "distribution": "crow_amsaa", "mapping": mapping}
    if options:
        body["options"] = options
    assert_refusal(*await api.post("/api/v1/fit", body), 422, field)
    tool = {k: v for k, v in body.items() if k != "distribution"} | {"model": "crow_amsaa"}
    assert_refusal(*await api.post("fit/recurrent", tool), 422, field)
    assert await _models(api) == []


async def test_unknown_model_id_is_refused_by_the_tool(api: Api) -> None:
    ds = await _dataset(api, {"t": GROWTH})
    assert_refusal(*await api.post("fit/recurrent", {"name": "x", "dataset_id": ds, "model": "weibull",
                                                     "mapping": {"t": "t"}}), 422, "model")
    assert await _models(api) == []


async def test_saved_power_law_is_a_repairable_blocks_life(api: Api) -> None:
    ds = await _dataset(api, {"t": GROWTH})
    _, pl = await api.post("fit/recurrent", {"name": "pl", "dataset_id": ds, "model": "crow_amsaa",
                                             "mapping": {"t": "t"}, "unit": "hours"})
    _, mcf_model = await api.post("fit/recurrent", {"name": "mcf", "dataset_id": ds, "model": "mcf",
                                                    "mapping": {"t": "t"}, "unit": "hours"})
    diagram = {"name": "pump", "unit": "hours", "repairable": True,
               "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
                         {"id": "pump", "type": "component", "model": {"saved_model_id": pl["id"]},
                          "instant_repair": True}],
               "edges": [{"source": "in", "target": "pump"}, {"source": "pump", "target": "out"}]}
    status, created = await api.post("rbd/create", diagram)
    assert status == 200, created
    diagram["nodes"][2]["model"] = {"saved_model_id": mcf_model["id"]}
    status, body = await api.post("rbd/create", diagram)
    assert_refusal(status, body, 422, "nodes.pump.model.saved_model_id", "'mcf'")


async def test_guide_repairable_topic_is_live(api: Api) -> None:
    status, page = await api.post("guide", {"topic": "repairable"})
    assert status == 200 and all(a["available"] for a in page["actions"])
    assert "planned" not in page["text"] and "not yet available" not in page["text"]
    from bathtub.recurrent import MODELS

    assert all(f"`{m}`" in page["text"] for m in MODELS)


async def test_ingest_refits_a_recurrent_model(api: Api) -> None:
    ds = await _dataset(api, {"t": GROWTH[:-2]})
    status, fitted = await api.post("/api/v1/fit", {"name": "g", "dataset_id": ds, "distribution": "crow_amsaa",
                                                    "mapping": {"t": "t"}})
    assert status == 200 and fitted["n"] == 20
    status, out = await api.post(f"/api/ingest/datasets/{ds}/lives", {"rows": [{"t": v} for v in GROWTH[-2:]]})
    assert status == 200 and out["refit"] == [{"id": fitted["id"], "name": "g"}]
    record = (await api.post("get/model", {"id": fitted["id"]}))[1]
    assert record["kind"] == "recurrent" and record["n"] == 22
    assert next(p for p in record["params"] if p["name"] == "beta")["value"] == pytest.approx(0.6142104, abs=1e-7)
