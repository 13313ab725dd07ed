"""What `rbd_analysis analyze` refuses, `rbd create` and `rbd edit` refuse too, with the same
detail, and store nothing: both run the analysis's own checks. Each case's diagram is
also stored directly (as an older service would have stored it) to read analyze's detail.
On SQLite and PostgreSQL."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from bathtub import rbd
from bathtub_api.auth import hash_token
from bathtub_api.keys import STORE
from tests.conftest import Api

EXP = {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": 0.01}]}
REPAIR = {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": 0.5}]}
SAVED = "SAVED"  # replaced by the id of a saved Weibull life model


def _diagram(blocks: list[dict[str, Any]], edges: list[tuple[str, str]], repairable: bool) -> dict[str, Any]:
    return {"name": "door", "unit": "hours", "repairable": repairable,
            "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}, *blocks],
            "edges": [{"source": a, "target": b} for a, b in edges]}


def _single(repairable: bool, model: dict[str, Any] | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {"id": "a", "type": "component", "model": model or EXP}
    if repairable:
        node["repair"] = REPAIR
    return _diagram([node], [("in", "a"), ("a", "out")], repairable)


def _two_of_three() -> dict[str, Any]:
    blocks = [{"id": f"p{i}", "type": "component", "model": EXP} for i in (1, 2, 3)]
    edges = [("in", f"p{i}") for i in (1, 2, 3)] + [(f"p{i}", "g") for i in (1, 2, 3)] + [("g", "out")]
    return _diagram([*blocks, {"id": "g", "type": "knode", "n": 2, "k": 3}], edges, False)


# (a valid diagram, the edit that makes it one analyze refuses, the start of the refusal)
CASES = {
    "engine_cannot_sample_the_family": (
        _single(False), [{"op": "update_node", "id": "a", "model": {"distribution_id": "beta", "params": [2, 3]}}],
        "diagram.nodes.a.model.distribution_id: not simulated by engine"),
    "covariate_schedule": (
        _single(False, {"saved_model_id": SAVED}),
        [{"op": "update_node", "id": "a", "covariate_schedules": {"temp": {"expression": "20 + 5 * (t // 100)"}}}],
        "nodes.a.covariate_schedules: needs a saved regression model"),
    "joint_unit_on_a_plain_model": (
        _single(False, {"saved_model_id": SAVED}),
        [{"op": "update_node", "id": "a", "model": {"saved_model_id": SAVED, "joint_unit": {"id": "u1", "age": 5.0}}}],
        "nodes.a.model.joint_unit: model"),
    "repair_on_a_non_repairable_block": (
        _single(False), [{"op": "update_node", "id": "a", "repair": REPAIR}],
        "nodes.a.repair: a block of a non-repairable diagram is never repaired"),
    "phases_on_a_repairable_diagram": (
        _single(True), [{"op": "set", "phases": [{"name": "p", "duration": 5.0}]}],
        "diagram.phases: phased missions are simulated by simulate_mission"),
    "costs_on_a_non_repairable_diagram": (
        _single(False), [{"op": "set", "costs": {"downtime_rate": 5.0}}],
        "diagram.costs: costs need a repairable (availability) run"),
    "knode_in_network_mode": (
        _two_of_three(), [{"op": "set", "network": True}],
        'diagram: node "g": a knode has no meaning in a network'),
}


def _with_model(x: Any, model_id: str) -> Any:
    if isinstance(x, dict):
        return {k: _with_model(v, model_id) for k, v in x.items()}
    if isinstance(x, list):
        return [_with_model(v, model_id) for v in x]
    return model_id if x == SAVED else x


async def _saved_weibull(api: Api) -> str:
    status, model = await api.post("/api/import/models", {
        "name": "pump life", "distribution": "weibull", "unit": "hours",
        "params": [{"name": "alpha", "value": 1000.0}, {"name": "beta", "value": 1.5}]})
    assert status == 200, model
    return str(model["id"])


async def _rbd_ids(api: Api) -> list[str]:
    status, listed = await api.post("list/rbd", {"limit": 500})
    assert status == 200, listed
    return [i["id"] for i in listed["items"]]


def _run_options(d: dict[str, Any]) -> dict[str, Any]:
    return {"horizon": 100.0} if d["repairable"] else {"mission_time": 100.0}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_create_and_edit_refuse_what_analyze_refuses(api: Api, client: Any, case: str) -> None:
    model_id = await _saved_weibull(api)
    base, ops, expected = (_with_model(x, model_id) for x in copy.deepcopy(CASES[case]))
    # The refused diagram in stored form, put in the store directly, as main stored it.
    bad = rbd.apply_edits(rbd.check_diagram(base), ops)
    store = client.app[STORE]
    owner = (await store.token_owner(hash_token(api.token)))["user_id"]
    await store.insert_item(owner, "rbd", "rbd_legacy", bad["name"], bad)
    status, analyzed = await api.post("rbd_analysis/analyze", {"id": "rbd_legacy", **_run_options(bad)})
    assert status == 422 and analyzed["detail"].startswith(expected), analyzed

    before = await _rbd_ids(api)
    status, created = await api.post("rbd/create", bad)
    assert (status, created) == (422, analyzed)
    assert await _rbd_ids(api) == before

    status, made = await api.post("rbd/create", base)
    assert status == 200, made
    status, edited = await api.post("rbd/edit", {"id": made["id"], "ops": ops})
    assert (status, edited) == (422, analyzed)
    status, now = await api.post("get/rbd", {"id": made["id"]})
    assert status == 200 and now["revision"] == made["revision"]


async def test_a_diagram_made_non_repairable_can_drop_its_repair_models(api: Api) -> None:
    status, made = await api.post("rbd/create", _single(True))
    assert status == 200, made
    status, refused = await api.post("rbd/edit", {"id": made["id"], "ops": [{"op": "set", "repairable": False}]})
    assert status == 422 and refused["detail"].startswith("nodes.a.repair:"), refused
    status, edited = await api.post("rbd/edit", {"id": made["id"], "ops": [
        {"op": "set", "repairable": False}, {"op": "update_node", "id": "a", "clear": ["repair"]}]})
    assert status == 200 and edited["repairable"] is False and "repair" not in edited["nodes"][2], edited
    status, run = await api.post("rbd_analysis/analyze", {"id": made["id"], "mission_time": 100.0})
    assert status == 200 and run["method"] == "closed_form", run
