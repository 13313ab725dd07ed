"""Concurrent edits of one diagram all land: each edit is applied to the latest version and
written only if nobody wrote in between (the store's version check), else re-applied."""

from __future__ import annotations

import asyncio

from tests.conftest import Api
from tests.service.test_rbd_service import LAM, MU, exp_model, two_of_three


async def test_concurrent_edits_lose_nothing(api: Api) -> None:
    blocks = [{"id": f"p{i}", "type": "component", "model": exp_model(LAM), "repair": exp_model(MU)} for i in range(12)]
    diagram = {"name": "bank", "unit": "hours", "repairable": True,
               "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
                         {"id": "vote", "type": "knode", "n": 1, "k": 12}, *blocks],
               "edges": [*({"source": "in", "target": b["id"]} for b in blocks),
                         *({"source": b["id"], "target": "vote"} for b in blocks), {"source": "vote", "target": "out"}]}
    status, created = await api.post("rbd/create", diagram)
    assert status == 200, created
    # Twelve edits at once, each to its own block: a lost update would undo another's label.
    edits = [api.post("rbd/edit", {"id": created["id"], "ops": [{"op": "update_node", "id": f"p{i}",
                                                                  "label": f"relabelled {i}"}]}) for i in range(12)]
    results = await asyncio.gather(*edits)
    assert [s for s, _ in results] == [200] * 12, results
    status, stored = await api.post("get/rbd", {"id": created["id"]})
    labels = {n["id"]: n.get("label") for n in stored["nodes"]}
    assert all(labels[f"p{i}"] == f"relabelled {i}" for i in range(12)), labels


async def test_stale_revision_is_refused(api: Api) -> None:
    _, created = await api.post("rbd/create", two_of_three())
    _, first = await api.post("get/rbd", {"id": created["id"]})
    rename = {"id": created["id"], "ops": [{"op": "set", "name": "renamed"}]}
    assert (await api.post("rbd/edit", {**rename, "revision": first["revision"]}))[0] == 200
    status, body = await api.post("rbd/edit", {**rename, "revision": first["revision"]})
    assert status == 422 and "revision" in body["detail"]
