"""uploads import_rbd (SQLite only): an AvailSim4 system workbook written as AvailSim4's own examples
are (its documented ARCHITECTURE / FAILURE_MODE_ASSIGNMENTS / FAILURE_MODES layout, here the shape of
its BM11 benchmark) imports into a diagram whose simulation equals, bit for bit at the same seed, the
plant built by hand with rbd create; what has no counterpart is named; this service's own JSON and a
block-list sheet import too; a bad file changes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import Api
from tests.service.test_errors import assert_refusal
from tests.service.test_rbd_service import poll
from tests.service.test_uploads import link, send, workbook

# The import's mapping into a diagram, checked by simulation: no store-specific behaviour (see tests/conftest.py).
pytestmark = pytest.mark.one_store

ARCH = ["COMPONENT_NAME", "COMPONENT_TYPE", "COMPONENT_NUMBER", "CHILDREN_NAME", "CHILDREN_LOGIC", "IN_MRU",
        "TRIGGER_MRU"]
MODES = ["FAILURE_MODE_NAME", "FAILURE_LAW", "FAILURE_PARAMETERS", "REPAIR_LAW", "REPAIR_PARAMETERS",
         "TYPE_OF_FAILURE", "HELD_BEFORE_REPAIR", "INSPECTION_NAME", "PHASE_NAME", "NEXT_PHASE_IF_FAILURE",
         "PHASE_CHANGE_TRIGGER", "HELD_AFTER_REPAIR"]
EMPTY = {"PHASES": [["PHASE_NAME", "PHASE_LAW", "PHASE_PARAMETERS", "NEXT_DEFAULT_PHASE", "FIRST_PHASE",
                     "NEXT_DEFAULT_PHASE_IF_FAILURE"]],
         "MRU": [["MRU_NAME", "MRU_LAW", "MRU_PARAMETERS", "MRU_SCHEDULE", "LOWEST_COMMON_ANCESTOR_SCOPE",
                  "TRIGGERING_STATUS"]],
         "INSPECTIONS": [["INSPECTION_NAME", "INSPECTION_PERIOD", "INSPECTION_DURATION"]],
         "ROOT_CAUSE_ANALYSIS": [["TRIGGERING_COMPONENT_NAME", "TRIGGERED_BY_COMPONENT_STATUS", "TRIGGERED_IN_PHASE"]],
         "PHASE_JUMP": [["TRIGGERING_COMPONENT_NAME", "TRIGGERED_BY_COMPONENT_STATUS", "FROM_PHASE", "TO_PHASE"]]}


def mode(name: str, mean: float, mttr: float, law: str = "exp") -> list[Any]:
    return [name, law, mean, "exp", f"[{mttr}]", "detectable", "NEVER_HELD", "none", "none", "none", "after_repair",
            "never_held"]


def availsim4_bm11(c3_law: str = "exp") -> bytes:
    """D = AND(C1, C2, C3); C1 = 1oo2(B1, B2); C2 = 1oo3(B3 ×2, B4); B4 = AND(A ×2)."""
    return workbook({
        "ARCHITECTURE": [ARCH,
                         ["D", "compound", 1, "C1,C2,C3", "and", "none", "none"],
                         ["C1", "compound", 1, "B1,B2", "1oo2", "none", "none"],
                         ["C2", "compound", 1, "B3,B4", "1oo3", "none", "none"],
                         ["C3", "basic", 1, "none", "none", "none", "none"],
                         ["B1", "basic", 1, "none", "none", "none", "none"],
                         ["B2", "basic", 1, "none", "none", "none", "none"],
                         ["B3", "basic", 2, "none", "none", "none", "none"],
                         ["B4", "compound", 1, "A", "and", "none", "none"],
                         ["A", "basic", 2, "none", "none", "none", "none"]],
        "FAILURE_MODE_ASSIGNMENTS": [["COMPONENT_NAME", "FAILURE_MODE_NAME"], ["C3", "C3failure"],
                                     ["B1", "B1failure"], ["B2", "B2failure"], ["B3", "B3failure"],
                                     ["A", "Afailure"]],
        "FAILURE_MODES": [MODES, mode("C3failure", 400.0, 2.0, c3_law), mode("B1failure", 100.0, 5.0),
                          mode("B2failure", 120.0, 5.0), mode("B3failure", 80.0, 4.0), mode("Afailure", 150.0, 3.0)],
        **EMPTY,
    })


def exp(mean: float) -> dict[str, Any]:
    return {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": 1.0 / mean}]}


def by_hand() -> dict[str, Any]:
    """The same plant drawn by hand: blocks in the order the import writes them, gates named after their
    compounds, copies numbered."""
    def comp(nid: str, mean: float, mttr: float) -> dict[str, Any]:
        return {"id": nid, "type": "component", "model": exp(mean), "repair": exp(mttr)}
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
             comp("B1", 100.0, 5.0), comp("B2", 120.0, 5.0), {"id": "C1", "type": "knode", "n": 1, "k": 2},
             comp("B3_1", 80.0, 4.0), comp("B3_2", 80.0, 4.0), comp("A_1", 150.0, 3.0), comp("A_2", 150.0, 3.0),
             {"id": "C2", "type": "knode", "n": 1, "k": 3}, comp("C3", 400.0, 2.0)]
    edges = [("B1", "C1"), ("B2", "C1"), ("A_1", "A_2"), ("B3_1", "C2"), ("B3_2", "C2"), ("A_2", "C2"),
             ("C1", "B3_1"), ("C1", "B3_2"), ("C1", "A_1"), ("C2", "C3"), ("in", "B1"), ("in", "B2"), ("C3", "out")]
    return {"name": "BM11 by hand", "unit": "hours", "repairable": True, "nodes": nodes,
            "edges": [{"source": a, "target": b} for a, b in edges]}


async def import_file(api: Api, data: bytes, filename: str, **extra: Any) -> tuple[int, Any]:
    made = await link(api, filename, "rbd_import")
    status, out = await send(api, made["url"], data)
    assert status == 200, out
    return await api.post("uploads/import_rbd", {"upload_id": made["upload_id"], **extra})


async def simulate(api: Api, rbd_id: str) -> dict[str, Any]:
    status, queued = await api.post("rbd_analysis/analyze", {"id": rbd_id, "horizon": 2000.0, "replications": 4000,
                                                             "seed": 11, "grid": 11})
    assert status == 200, queued
    job = await poll(api, queued["job_id"])
    assert job["status"] == "done", job
    status, run = await api.post("get/rbd_run", {"id": queued["run_id"], "include_curve": True})
    return run


async def test_availsim4_workbook_simulates_like_the_plant_built_by_hand(api: Api) -> None:
    status, out = await import_file(api, availsim4_bm11(), "BM11_system.xlsx")
    assert status == 200, out
    assert out["format"] == "availsim4" and out["unmapped"] == [] and len(out["rbds"]) == 1
    imported = out["rbds"][0]
    status, diagram = await api.post("get/rbd", {"id": imported["id"]})
    hand = by_hand()
    strip = ("label",)
    assert [{k: v for k, v in n.items() if k not in strip} for n in diagram["nodes"]] == hand["nodes"]
    assert sorted((e["source"], e["target"]) for e in diagram["edges"]) == \
        sorted((e["source"], e["target"]) for e in hand["edges"])
    status, made = await api.post("rbd/create", hand)
    assert status == 200, made
    a, b = await simulate(api, imported["id"]), await simulate(api, made["id"])
    assert a["results"] == b["results"]  # bit for bit: every figure of the run
    assert a["curve"] == b["curve"]
    assert 0.5 < a["results"]["mean_availability"] < 1.0


async def test_what_has_no_counterpart_is_named(api: Api) -> None:
    status, out = await import_file(api, availsim4_bm11(c3_law="fix"), "BM11_fix.xlsx")
    assert status == 200, out
    assert out["unmapped"] == [{"item": "FAILURE_MODES.C3failure.FAILURE", "what": "fix law [400.0]",
                                "done": "exponential with mean 400, marked placeholder: replace it with a real "
                                        "model"}]
    status, diagram = await api.post("get/rbd", {"id": out["rbds"][0]["id"]})
    c3 = next(n for n in diagram["nodes"] if n["id"] == "C3")
    assert c3["model"]["placeholder"] is True


async def test_availsim4_refusals_change_nothing(api: Api) -> None:
    data = workbook({"ARCHITECTURE": [ARCH, ["R", "compound", 1, "X,Y", "2oo3", "none", "none"],
                                      ["X", "basic", 1, "none", "none", "none", "none"],
                                      ["Y", "basic", 1, "none", "none", "none", "none"]],
                     "FAILURE_MODE_ASSIGNMENTS": [["COMPONENT_NAME", "FAILURE_MODE_NAME"], ["X", "m"], ["Y", "m"]],
                     "FAILURE_MODES": [MODES, mode("m", 10.0, 1.0)], **EMPTY})
    assert_refusal(*await import_file(api, data, "bad.xlsx"), 422, "CHILDREN_LOGIC", "2oo3 names 3 children")
    assert (await api.post("list/rbd"))[1]["items"] == []


async def test_own_json_and_block_list(api: Api) -> None:
    hand = by_hand()
    status, out = await import_file(api, json.dumps({"diagrams": [hand, {**hand, "name": "second"}]}).encode(),
                                    "plants.json")
    assert status == 200, out
    assert out["format"] == "bathtub_json" and [r["name"] for r in out["rbds"]] == ["BM11 by hand", "second"]
    # one diagram of the file is bad: none is stored
    bad = {**hand, "name": "broken", "edges": hand["edges"][:-1]}
    before = len((await api.post("list/rbd"))[1]["items"])
    status, out = await import_file(api, json.dumps([hand, bad]).encode(), "two.json")
    assert status == 422, out
    assert len((await api.post("list/rbd"))[1]["items"]) == before

    sheet = workbook({"blocks": [["id", "type", "label", "after", "life", "mtbf", "beta", "mttr"],
                                 ["pump", "component", "Feed pump", "", "weibull", 1000, 2.0, 8],
                                 ["valve", "component", "", "pump", "", 5000, "", 2]]})
    status, out = await import_file(api, sheet, "blocks.xlsx", name="feed line", unit="hours")
    assert status == 200, out
    assert out["format"] == "block_list"
    status, diagram = await api.post("get/rbd", {"id": out["rbds"][0]["id"]})
    nodes = {n["id"]: n for n in diagram["nodes"]}
    assert nodes["pump"]["label"] == "Feed pump" and nodes["pump"]["model"]["distribution_id"] == "weibull"
    assert diagram["repairable"] is True
    assert sorted((e["source"], e["target"]) for e in diagram["edges"]) == [("in", "pump"), ("pump", "valve"),
                                                                            ("valve", "out")]
