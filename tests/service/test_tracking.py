"""Tracked fleets over HTTP on both stores: create/get/list/update/delete, measurements ingest (JSON and
CSV; all or nothing; idempotent), and each item's remaining life checked against the conjugate closed
form of the random-effects model the service fitted (common intercept a, slope B ~ N(μ_b, σ_b²), noise σ:
the slope's posterior is normal with precision 1/σ_b² + Σt²/σ², and P(T > t) = Φ(((D − a)/t − m)/s))."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from tests.conftest import Api
from tests.service.test_errors import assert_refusal

SLOPES = [0.5, 0.8, 1.1, 1.4, 0.9, 1.25, 0.7, 1.05]
TIMES = [10.0, 20.0, 30.0, 40.0]
D = 50.0


async def degradation_model(api: Api, model: str = "random_effects", path: str = "linear") -> dict[str, Any]:
    rng = np.random.default_rng(0)
    cols: dict[str, list[Any]] = {"unit": [], "hours": [], "crack": []}
    for k, b in enumerate(SLOPES):
        for t in TIMES:
            cols["unit"].append(f"U{k}")
            cols["hours"].append(t)
            cols["crack"].append(float(1.0 + b * t + rng.normal(0, 0.3)))
    status, ds = await api.post("datasets/create", {"name": "cracks", "data": cols})
    assert status == 200, ds
    status, out = await api.post("degradation/create", {
        "name": "crack growth", "dataset_id": ds["id"], "mapping": {"i": "unit", "x": "hours", "y": "crack"},
        "path": path, "threshold": D, "direction": "up", "model": model, "unit": "hours",
        **({"options": {"method": "ml"}} if model == "random_effects" else {})})
    assert status == 200, out
    return out


def closed_form(model: dict[str, Any], t: list[float], y: list[float], q: float) -> float:
    v = {p["name"]: p["value"] for p in model["random_effects"]["params"]}
    a, mu_b, sd_b, sigma = v["mu_a"], v["mu_b"], v["sd_b"], v["sigma"]
    tt, yy = np.array(t), np.array(y)
    prec = 1 / sd_b**2 + np.sum(tt * tt) / sigma**2
    m = (mu_b / sd_b**2 + np.sum(tt * (yy - a)) / sigma**2) / prec
    s = 1 / math.sqrt(prec)
    age = tt[-1]
    s_age = stats.norm.cdf(((D - a) / age - m) / s)
    return (D - a) / (m + s * stats.norm.ppf((1 - q) * s_age)) - age


async def make(api: Api, model_id: str, **extra: Any) -> dict[str, Any]:
    status, out = await api.post("tracked_fleets/create", {"name": "gearboxes", "model_id": model_id,
                                                           "items": [{"name": "G1"}, {"name": "G2"},
                                                                     {"name": "G3"}], **extra})
    assert status == 200, out
    return out


def route(fleet_id: str) -> str:
    return f"/api/ingest/tracking/{fleet_id}/measurements"


async def test_create_get_list_delete(api: Api, other_api: Api) -> None:
    model = await degradation_model(api)
    fleet = await make(api, model["id"])
    assert fleet["id"].startswith("trk_") and fleet["item_count"] == 3 and fleet["unit"] == "hours"
    assert [i["remaining_life"]["status"] for i in fleet["items"]] == ["no_measurements"] * 3
    status, got = await api.post("get/tracked_fleet", {"id": fleet["id"]})
    assert status == 200 and got["items"] == fleet["items"]
    status, listed = await api.post("list/tracked_fleet", {})
    assert [i["id"] for i in listed["items"]] == [fleet["id"]] and listed["items"][0]["item_count"] == 3
    path = "/" + fleet["url"].split("/", 3)[3]
    status, by_url = await api.get(path)
    assert status == 200 and by_url["id"] == fleet["id"]
    assert (await other_api.post("get/tracked_fleet", {"id": fleet["id"]}))[0] == 404
    assert (await other_api.post(route(fleet["id"]), {"measurements": [{"item": "G1", "time": 1, "value": 2}]}
                                 ))[0] == 404
    status, out = await api.post("tracked_fleets/delete", {"id": fleet["id"]})
    assert status == 200 and out["deleted"]
    assert (await api.post("get/tracked_fleet", {"id": fleet["id"]}))[0] == 404


async def test_ingest_predicts_each_item_against_the_closed_form(api: Api) -> None:
    model = await degradation_model(api)
    fleet = await make(api, model["id"], probability=0.8)
    g1 = ([5.0, 10.0, 15.0], [6.2, 10.9, 16.4])
    rows = [{"item": "G1", "time": t, "value": y} for t, y in zip(*g1)] + [{"item": "G2", "time": 8.0, "value": 9.0}]
    status, out = await api.post(route(fleet["id"]), {"measurements": rows})
    assert status == 200, out
    assert out["updated"] == 2 and out["appended"] == 4 and [i["name"] for i in out["items"]] == ["G1", "G2"]
    rl = out["items"][0]["remaining_life"]
    assert rl["basis"] == "random_effects" and rl["as_of"] == 15.0 and rl["probability"] == 0.8
    assert rl["median"] == pytest.approx(closed_form(model, *g1, 0.5), rel=1e-6)
    assert rl["interval"][0] == pytest.approx(closed_form(model, *g1, 0.1), rel=1e-6)
    assert rl["interval"][1] == pytest.approx(closed_form(model, *g1, 0.9), rel=1e-6)
    status, got = await api.post("get/tracked_fleet", {"id": fleet["id"]})
    assert got["items"][0] == out["items"][0] and got["items"][2]["remaining_life"]["status"] == "no_measurements"
    # CSV appends to what is stored: the prediction uses every measurement of the item
    csv = "item,time,value\nG1,20,21.7\nG1,25,27.3\n"
    status, out = await api.call("POST", route(fleet["id"]), data=csv, headers={"Content-Type": "text/csv"})
    assert status == 200, out
    t, y = [*g1[0], 20.0, 25.0], [*g1[1], 21.7, 27.3]
    g1_row = out["items"][0]
    assert g1_row["measurements"] == 5 and g1_row["last_time"] == 25.0 and g1_row["last_value"] == 27.3
    assert g1_row["remaining_life"]["median"] == pytest.approx(closed_form(model, t, y, 0.5), rel=1e-6)
    # a new probability re-predicts every item from the stored measurements
    status, upd = await api.post("tracked_fleets/update", {"id": fleet["id"], "probability": 0.5})
    assert status == 200, upd
    assert upd["items"][0]["remaining_life"]["interval"][0] == pytest.approx(closed_form(model, t, y, 0.25), rel=1e-6)


async def test_pseudo_failure_model_uses_each_items_own_line(api: Api) -> None:
    model = await degradation_model(api, "pseudo_failure")
    fleet = await make(api, model["id"])
    rows = [{"item": "G1", "time": t, "value": 1.0 + 1.2 * t + e} for t, e in ((10, 0.1), (20, -0.2), (30, 0.15))]
    rows.append({"item": "G2", "time": 12.0, "value": 14.0})
    status, out = await api.post(route(fleet["id"]), rows)
    assert status == 200, out
    g1, g2 = out["items"]
    assert g1["remaining_life"]["basis"] == "own_line"
    tt = np.array([10.0, 20.0, 30.0])
    a, b = np.polyfit(tt, [r["value"] for r in rows[:3]], 1)[::-1]
    # noise small against the distance to the threshold: the median is the own line's crossing
    assert g1["remaining_life"]["median"] == pytest.approx((D - a) / b - 30.0, rel=1e-6)
    assert g2["remaining_life"]["basis"] == "population"
    refused = await api.post("tracked_fleets/create", {"name": "x", "model_id": (await degradation_model(
        api, "pseudo_failure", "power"))["id"]})
    assert_refusal(*refused, 422, "model_id:", "power")


async def test_bad_rows_refuse_the_whole_request_naming_the_row(api: Api) -> None:
    model = await degradation_model(api)
    fleet = await make(api, model["id"])
    fid = fleet["id"]
    status, _ = await api.post(route(fid), {"measurements": [{"item": "G1", "time": 10, "value": 11.0}]})
    assert status == 200
    ok = {"item": "G2", "time": 5, "value": 6.0}
    cases = [
        ([ok, {"item": "G9", "time": 1, "value": 2}], "measurements[1].item:", "no item 'G9'"),
        ([ok, {"item": "G2", "time": 6, "value": "x"}], "measurements[1].value:", "finite"),
        ([ok, {"item": "G2", "time": "inf", "value": 1}], "measurements[1].time:", "finite"),
        ([ok, {"item": "G2", "time": 4, "value": 5.0}], "measurements[1].time:", "not after"),
        ([ok, {"item": "G1", "time": 9, "value": 5.0}], "measurements[1].time:", "latest stored"),
        ([ok, {"item": "G1", "time": 10, "value": 5.0}], "measurements[1].time:", "latest stored"),
        ([ok, {"item": "G2", "time": 5, "value": 6.5}], "measurements[1]:", "appears twice"),
        ([ok, {"item": "G2", "time": -1, "value": 6.5}], "measurements[1].time:", ">= 0"),
        ([ok, {"item": "G2", "time": 7, "value": 6.5, "temp": 3}], "measurements[1].temp:", "unknown field"),
        ([], "measurements:", "no measurements"),
    ]
    for rows, field, words in cases:
        assert_refusal(*await api.post(route(fid), {"measurements": rows}), 422, field, words)
    csv = "item,time,value\nG2,5,6\nG2,6,nan\n"
    assert_refusal(*await api.call("POST", route(fid), data=csv, headers={"Content-Type": "text/csv"}), 422,
                   "body[1].value:")
    status, got = await api.post("get/tracked_fleet", {"id": fid})
    assert [i["measurements"] for i in got["items"]] == [1, 0, 0]  # nothing applied
    assert (await api.post(route("trk_nope"), [ok]))[0] == 404


async def test_ingest_is_idempotent_and_removing_an_item_drops_its_measurements(api: Api) -> None:
    model = await degradation_model(api)
    fid = (await make(api, model["id"]))["id"]
    body = {"measurements": [{"item": "G3", "time": 10, "value": 12.0}]}
    status, first = await api.post(route(fid), body, headers={"Idempotency-Key": "probe-1"})
    assert status == 200 and not first["replayed"]
    status, again = await api.post(route(fid), body, headers={"Idempotency-Key": "probe-1"})
    assert status == 200 and again["replayed"] and again["items"] == first["items"]
    other = {"measurements": [{"item": "G3", "time": 11, "value": 12.0}]}
    assert_refusal(*await api.post(route(fid), other, headers={"Idempotency-Key": "probe-1"}), 409, "Idempotency-Key")
    status, got = await api.post("get/tracked_fleet", {"id": fid})
    assert got["items"][2]["measurements"] == 1
    status, upd = await api.post("tracked_fleets/update", {"id": fid, "remove_items": ["G3"]})
    assert status == 200 and upd["item_count"] == 2
    status, upd = await api.post("tracked_fleets/update", {"id": fid, "items": [{"name": "G3"}], "name": "renamed"})
    assert status == 200 and upd["name"] == "renamed" and upd["items"][2]["measurements"] == 0
    status, out = await api.post(route(fid), {"measurements": [{"item": "G3", "time": 5, "value": 6.0}]})
    assert status == 200 and out["items"][0]["measurements"] == 1  # the old time-10 reading went with the item
    assert_refusal(*await api.post("tracked_fleets/update", {"id": fid, "remove_items": ["nope"]}), 422,
                   "remove_items[0]")


async def test_binding_refusals(api: Api) -> None:
    status, life = await api.post("/api/import/models", {"name": "m", "distribution": "exponential",
                                                         "params": [{"name": "failure_rate", "value": 0.1}]})
    assert status == 200
    assert_refusal(*await api.post("tracked_fleets/create", {"name": "x", "model_id": life["id"]}), 422,
                   "model_id:", "life model")
    assert (await api.post("tracked_fleets/create", {"name": "x", "model_id": "deg_nope"}))[0] == 404
    model = await degradation_model(api)
    assert_refusal(*await api.post("tracked_fleets/create", {"name": "x", "model_id": model["id"],
                                                             "items": [{"name": "A"}, {"name": "A"}]}), 422,
                   "items[1].name")
    assert_refusal(*await api.post("tracked_fleets/create", {"name": "x", "model_id": model["id"],
                                                             "probability": 1.0}), 422, "probability")
    status, listed = await api.post("list/tracked_fleet", {})
    assert listed["items"] == []


async def test_guide_topic_fleets_covers_tracked_fleets_and_is_all_live(api: Api) -> None:
    status, out = await api.post("guide", {"topic": "fleets"})
    assert status == 200, out
    text = str(out)
    for words in ("tracked_fleets create", "/api/ingest/tracking/{id}/measurements", "default_covariates",
                  "alert_rules", "EWMA factor 0.3", "Fieller"):
        assert words in text, words
    assert "Not yet available" not in text and "planned" not in text


async def test_rebinding_to_a_model_that_cannot_read_the_measurements_is_refused(api: Api) -> None:
    linear = await degradation_model(api)
    fid = (await make(api, linear["id"]))["id"]
    status, _ = await api.post(route(fid), [{"item": "G2", "time": 1.0, "value": -0.5}])
    assert status == 200
    exponential = await degradation_model(api, "pseudo_failure", "exponential")
    assert_refusal(*await api.post("tracked_fleets/update", {"id": fid, "model_id": exponential["id"]}), 422,
                   "model_id:", "'G2'", "log of the value")
    status, got = await api.post("get/tracked_fleet", {"id": fid})
    assert got["model_id"] == linear["id"]
