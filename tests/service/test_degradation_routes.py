"""Degradation models over HTTP (SQLite only): create (pseudo-failure, random-effects), get,
list (and GET /api/v1/models), a unit's remaining life; refusals name the field and save nothing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.stats import norm

from bathtub.degradation.model import build_model
from tests.conftest import Api
from tests.service.test_errors import assert_refusal

# Numerics and mapping of the degradation routes: the store only saves the record (see tests/conftest.py).
pytestmark = pytest.mark.one_store

SLOPES = [0.5, 0.8, 1.1, 1.4, 0.9, 1.25, 0.7, 1.05]
TIMES = [10.0, 20.0, 30.0, 40.0]


def _rows(seed: int = 0) -> dict[str, list[Any]]:
    rng = np.random.default_rng(seed)
    cols: dict[str, list[Any]] = {"unit": [], "hours": [], "crack": []}
    for k, b in enumerate(SLOPES):
        for t in TIMES:
            cols["unit"].append(f"U{k}")
            cols["hours"].append(t)
            cols["crack"].append(float(1.0 + b * t + rng.normal(0, 0.3)))
    return cols


async def _dataset(api: Api, data: dict[str, list[Any]]) -> str:
    status, out = await api.post("datasets/create", {"name": "cracks", "data": data})
    assert status == 200, out
    return out["id"]


MAPPING = {"i": "unit", "x": "hours", "y": "crack"}


async def test_create_get_list_and_remaining_life(api: Api, other_api: Api) -> None:
    data = _rows()
    ds = await _dataset(api, data)
    body = {"name": "crack growth", "dataset_id": ds, "mapping": MAPPING, "path": "linear", "threshold": 50.0,
            "direction": "up", "model": "pseudo_failure", "life_distribution": "lognormal", "unit": "hours"}
    status, pf = await api.post("degradation/create", body)
    assert status == 200, pf
    assert pf["id"].startswith("deg_") and pf["kind"] == "degradation_model" and pf["n"] == len(SLOPES)
    ref = build_model(data, MAPPING, path="linear", threshold=50.0, direction="up", model="pseudo_failure",
                      life_distribution="lognormal")
    assert [p["value"] for p in pf["life"]["params"]] == pytest.approx([p["value"] for p in ref["life"]["params"]])
    status, re = await api.post("degradation/create", {**body, "name": "re", "model": "random_effects",
                                                       "options": {"method": "ml"}})
    assert status == 200, re
    assert re["distribution"] == "random_effects" and re["life"]["median"] > 0
    status, got = await api.post("get/degradation_model", {"id": re["id"]})
    assert status == 200 and got["random_effects"] == re["random_effects"]
    assert (await other_api.post("get/degradation_model", {"id": re["id"]}))[0] == 404
    status, listed = await api.post("list/degradation_model", {})
    assert [m["id"] for m in listed["items"]] == [pf["id"], re["id"]]
    status, models = await api.get("/api/v1/models")
    kinds = {m["id"]: m["kind"] for m in models["models"]}
    assert kinds == {pf["id"]: "degradation_model", re["id"]: "degradation_model"}
    # a unit with no readings: the population life conditioned on its age (fixed intercept, closed form)
    v = {p["name"]: p["value"] for p in re["random_effects"]["params"]}
    age = 20.0
    status, rl = await api.post("degradation/remaining_life", {"id": re["id"], "age": age, "probability": 0.8})
    assert status == 200, rl

    def sf(t: float) -> float:
        return float(norm.cdf((50.0 - v["mu_a"]) / t, v["mu_b"], v["sd_b"]))

    for q, s in ((0.5, rl["median"]), (0.1, rl["interval"][0]), (0.9, rl["interval"][1])):
        assert 1 - sf(age + s) / sf(age) == pytest.approx(q, rel=1e-7)
    status, fast = await api.post("degradation/remaining_life", {"id": re["id"], "age": age,
                                                                 "readings": [[10, 15.0], [20, 30.0]]})
    assert status == 200 and fast["median"] < rl["median"] and fast["readings"] == 2
    assert rl["p_never"] == pytest.approx(norm.cdf(-v["mu_b"] / v["sd_b"]) / sf(age), rel=1e-9, abs=1e-300)
    if rl["p_never"] > 0:
        assert rl["mean"] is None and "infinite" in rl["null_reason"]["mean"]
    assert_refusal(*await api.post("degradation/remaining_life", {"id": pf["id"], "age": 1.0}), 422, "id",
                   "random_effects")
    assert_refusal(*await api.post("degradation/remaining_life", {"id": re["id"], "age": 5.0,
                                                                 "readings": [[10.0, 3.0]]}), 422, "readings.0")
    assert_refusal(*await api.post("degradation/remaining_life", {"id": re["id"], "age": -1.0}), 422, "age")
    assert_refusal(*await api.post("degradation/remaining_life", {"id": re["id"], "age": 5.0,
                                                                 "readings": [[1.0, 2.0, 3.0]]}), 422, "readings")


@pytest.mark.parametrize(("change", "words"), [
    ({"threshold": 1e9}, ("threshold", "no unit")),
    ({"threshold": 1e9, "model": "random_effects"}, ("threshold",)),
    ({"direction": "sideways"}, ("direction",)),
    ({"path": "cubic"}, ("path",)),
    ({"model": "neural"}, ("model",)),
    ({"mapping": {"i": "unit", "x": "hours"}}, ("mapping.y",)),
    ({"mapping": {"i": "unit", "x": "hours", "y": "nope"}}, ("mapping.y", "nope")),
    ({"life_distribution": "zeta"}, ("life_distribution",)),
    ({"options": {"extrapolation": 0.5}}, ("extrapolation",)),
    ({"options": {"bogus": 1}}, ("options.bogus",)),
    # the potential-failure level must be met before the threshold (below it, going up)
    ({"potential_failure": 60.0}, ("potential_failure", "below", "50")),
    ({"potential_failure": 50.0, "model": "random_effects"}, ("potential_failure", "below")),
])
async def test_refusals_name_the_field_and_save_nothing(api: Api, change: dict[str, Any],
                                                        words: tuple[str, ...]) -> None:
    ds = await _dataset(api, _rows())
    body = {"name": "x", "dataset_id": ds, "mapping": MAPPING, "threshold": 50.0, "direction": "up",
            "model": "pseudo_failure", **change}
    assert_refusal(*await api.post("degradation/create", body), 422, *words)
    assert (await api.post("list/degradation_model", {}))[1]["items"] == []


async def test_pf_interval_drives_the_rcm_on_condition_check(api: Api) -> None:
    # Noise-free lines 1 + b t, b in SLOPES, P = 30, F = 50: unit k's P–F interval is 20/b_k
    # hours (16 to 40 h); the check compares the inspection interval with the 5% point of those.
    data = {"unit": [f"U{k}" for k in range(len(SLOPES)) for _ in TIMES], "hours": TIMES * len(SLOPES),
            "crack": [1.0 + b * t for b in SLOPES for t in TIMES]}
    ds = await _dataset(api, data)
    status, dm = await api.post("degradation/create", {
        "name": "crack growth", "dataset_id": ds, "mapping": MAPPING, "threshold": 50.0, "direction": "up",
        "model": "pseudo_failure", "unit": "hours", "potential_failure": 30.0})
    assert status == 200, dm
    lower = float(np.quantile(20.0 / np.array(SLOPES), 0.05))
    assert dm["pf_interval"]["ci"][0] == pytest.approx(lower, rel=1e-9) and dm["pf_interval"]["unit"] == "hours"
    assert dm["potential_failure"] == 30.0 and dm["fitted_on"]["potential_failure"] == 30.0

    def mode(text: str, hours: float) -> dict[str, Any]:
        return {"text": text, "consequence": "operational",
                "decision": {"outcome": "on_condition", "interval": hours, "interval_unit": "hours",
                             "evidence": {"type": "degradation_model", "id": dm["id"]}}}

    modes = [mode("often", 12.0), mode("rarely", 20.0)]
    status, study = await api.post("rcm/create", {"name": "pump", "functions": [{
        "text": "Hold pressure", "failures": [{"text": "Leaks", "modes": modes}]}]})
    assert status == 200, study
    checks = {m["text"]: m["decision"]["check"] for m in study["functions"][0]["failures"][0]["modes"]}
    assert checks["often"]["state"] == "supported", checks
    assert checks["rarely"]["state"] == "contradicted", checks
    for c in checks.values():
        assert f"{lower:.4g} hours" in c["reason"] or f"{lower:.4g}" in c["reason"], c


async def test_row_refusals_name_column_and_row(api: Api) -> None:
    base = {"name": "x", "mapping": MAPPING, "threshold": 5.0, "direction": "up", "model": "pseudo_failure"}
    one = {"unit": ["a", "a", "b"], "hours": [1.0, 2.0, 1.0], "crack": [1.0, 2.0, 1.0]}
    body = {**base, "dataset_id": await _dataset(api, one)}
    assert_refusal(*await api.post("degradation/create", body), 422, "unit", "row 2", "at least 2")
    back = {"unit": ["a", "a", "a"], "hours": [1.0, 3.0, 2.0], "crack": [1.0, 2.0, 3.0]}
    body = {**base, "dataset_id": await _dataset(api, back)}
    assert_refusal(*await api.post("degradation/create", body), 422, "hours", "row 2", "increase")
    assert (await api.post("list/degradation_model", {}))[1]["items"] == []
    assert (await api.post("degradation/create", {**base, "dataset_id": "ds_nope"}))[0] == 404


async def test_rbd_block_simulates_a_joint_unit(api: Api) -> None:
    from tests.service.test_rbd_service import poll

    ds = await _dataset(api, _rows(1))
    status, re = await api.post("degradation/create", {
        "name": "re", "dataset_id": ds, "mapping": MAPPING, "threshold": 50.0, "direction": "up",
        "model": "random_effects", "unit": "hours"})
    assert status == 200, re
    v = {p["name"]: p["value"] for p in re["random_effects"]["params"]}
    age, mission = 30.0, 15.0

    def sf(t: float) -> float:
        return float(norm.cdf((50.0 - v["mu_a"]) / t, v["mu_b"], v["sd_b"]))

    block = {"id": "j", "type": "component", "model": {"saved_model_id": re["id"],
                                                       "joint_unit": {"id": "U9", "age": age}}}
    diagram = {"name": "joint", "unit": "hours", "repairable": False,
               "nodes": [{"id": "in", "type": "input"}, block, {"id": "out", "type": "output"}],
               "edges": [{"source": "in", "target": "j"}, {"source": "j", "target": "out"}]}
    status, made = await api.post("rbd/create", diagram)
    assert status == 200, made
    status, queued = await api.post("rbd_analysis/analyze", {"id": made["id"], "mission_time": mission,
                                                            "replications": 20_000, "seed": 4})
    assert status == 200, queued
    if queued.get("job_id"):
        assert (await poll(api, queued["job_id"]))["status"] == "done"
    _, run = await api.post("get/rbd_run", {"id": queued["run_id"]})
    assert run["method"] == "simulation"
    lo, hi = run["results"]["reliability_interval"]
    want = sf(age + mission) / sf(age)
    assert lo <= want <= hi, (lo, want, hi)
    # a joint unit needs a random-effects degradation model of the caller's
    bad = {**diagram, "nodes": [{"id": "in", "type": "input"}, {**block, "model": {
        "saved_model_id": "deg_0000", "joint_unit": {"age": 1.0}}}, {"id": "out", "type": "output"}]}
    assert_refusal(*await api.post("rbd/create", bad), 422, "nodes.j.model.saved_model_id")
