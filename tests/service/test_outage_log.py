"""rbd upload_outage_log on both stores: a synthetic log drawn from known laws (exponential time between
failures, lognormal time to repair, planned outages on a calendar) is fitted back within four of the
fits' own standard errors; planned outages stay out; an unknown asset is refused naming the row; apply
edits the diagram."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import numpy as np

from tests.conftest import Api
from tests.service.test_errors import assert_refusal
from tests.service.test_uploads import link, send

RATE, MU, SIGMA = 1 / 500.0, 2.0, 0.5  # per hour; log-hours
PLANNED_EVERY, PLANNED_HOURS, HORIZON = 2000.0, 8.0, 120_000.0
T0 = dt.datetime(2020, 1, 1)


def synthetic_log(rng: np.random.Generator) -> tuple[str, dict[str, dict[str, int]]]:
    lines = ["Asset,Start,End,Reason,Planned"]
    counts: dict[str, dict[str, int]] = {}
    for asset in ("P-101", "pump-b"):
        t, next_planned, c = 0.0, PLANNED_EVERY, {"unplanned": 0, "planned": 0, "ongoing": 0}
        while t < HORIZON:
            fail = t + rng.exponential(1 / RATE)
            if next_planned < fail:  # memoryless: after a planned stop the life starts afresh, as the fit assumes
                start, end, planned, reason = next_planned, next_planned + PLANNED_HOURS, True, "PM"
                next_planned += PLANNED_EVERY
            else:
                start, end, planned, reason = fail, fail + rng.lognormal(MU, SIGMA), False, "trip"
            if start >= HORIZON:
                break
            while next_planned < end:
                next_planned += PLANNED_EVERY
            ongoing = end > HORIZON
            c["planned" if planned else "unplanned"] += 1
            c["ongoing"] += ongoing
            stamp = (T0 + dt.timedelta(hours=start)).isoformat()
            finish = "" if ongoing else (T0 + dt.timedelta(hours=end)).isoformat()
            lines.append(f"{asset},{stamp},{finish},{reason},{'yes' if planned else 'no'}")
            t = end
        counts[asset] = c
    return "\n".join(lines) + "\n", counts


PLANT = {"name": "two pumps", "unit": "hours", "repairable": True,
         "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
                   {"id": "pump-a", "type": "component", "label": "P-101",
                    "model": {"distribution_id": "exponential", "mean": 100.0, "placeholder": True},
                    "repair": {"distribution_id": "exponential", "mean": 5.0, "placeholder": True}},
                   {"id": "pump-b", "type": "component",
                    "model": {"distribution_id": "exponential", "mean": 100.0, "placeholder": True},
                    "repair": {"distribution_id": "exponential", "mean": 5.0, "placeholder": True}}],
         "edges": [{"source": "in", "target": "pump-a"}, {"source": "in", "target": "pump-b"},
                   {"source": "pump-a", "target": "out"}, {"source": "pump-b", "target": "out"}]}
COLUMNS = {"asset": "Asset", "start": "Start", "end": "End", "reason": "Reason", "planned": "Planned"}


async def post_log(api: Api, csv: str) -> str:
    made = await link(api, "outages.csv", "outage_log")
    status, out = await send(api, made["url"], csv.encode())
    assert status == 200, out
    return made["upload_id"]


def param(record: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in record["params"] if p["name"] == name)


async def test_fits_recover_the_laws_and_apply_sets_the_blocks(api: Api) -> None:
    log, counts = synthetic_log(np.random.default_rng(7))
    status, rbd = await api.post("rbd/create", PLANT)
    assert status == 200, rbd
    upload_id = await post_log(api, log)
    body = {"id": rbd["id"], "upload_id": upload_id, "columns": COLUMNS, "tbf_distribution": "exponential",
            "ttr_distribution": "lognormal", "observed_from": T0.isoformat()}
    status, out = await api.post("rbd/upload_outage_log", body)
    assert status == 200, out
    assert out["applied"] is False
    blocks = {b["node_id"]: b for b in out["blocks"]}
    assert set(blocks) == {"pump-a", "pump-b"}  # P-101 is pump-a's label
    for node, asset in (("pump-a", "P-101"), ("pump-b", "pump-b")):
        b = blocks[node]
        assert (b["unplanned"], b["planned"], b["ongoing"]) == (counts[asset]["unplanned"], counts[asset]["planned"],
                                                                counts[asset]["ongoing"])
        assert b["ttr"]["n"] == counts[asset]["unplanned"]  # planned outages are not repairs
        # within 4 of the fit's own standard errors (a 95% interval would miss one of these six
        # estimates in a quarter of seeds; 4 SE misses about one in 2,500)
        rate = param(b["tbf"], "failure_rate")
        assert abs(rate["value"] - RATE) < 4 * rate["se"], rate
        for name, truth in (("mu", MU), ("sigma", SIGMA)):
            p = param(b["ttr"], name)
            assert abs(p["value"] - truth) < 4 * p["se"], (name, p)
        # the MLE of an exponential rate from censored data: failures / total time on test
        assert math.isclose(rate["value"], b["unplanned"] / sum(_uptimes(log, asset)), rel_tol=1e-6)
    body["apply"] = True  # a proposal left the upload in place; applying uses it
    status, applied = await api.post("rbd/upload_outage_log", body)
    assert status == 200 and applied["applied"] is True, applied
    status, diagram = await api.post("get/rbd", {"id": rbd["id"]})
    nodes = {n["id"]: n for n in diagram["nodes"]}
    for node in ("pump-a", "pump-b"):
        proposal = blocks[node]["proposal"]
        assert nodes[node]["model"]["distribution_id"] == "exponential"
        assert nodes[node]["model"]["params"] == proposal["model"]["params"]
        assert nodes[node]["repair"]["distribution_id"] == "lognormal"
        assert not nodes[node]["model"].get("placeholder")
    assert_refusal(*await api.post("rbd/upload_outage_log", body), 422, "upload_id")  # imported: bytes gone


async def test_unknown_asset_and_bad_cells_name_the_row(api: Api) -> None:
    status, rbd = await api.post("rbd/create", PLANT)
    log = ("Asset,Start,End,Reason,Planned\n"
           "P-101,2026-01-01T00:00,2026-01-01T05:00,trip,no\n"
           "P-999,2026-01-02T00:00,2026-01-02T05:00,trip,no\n")
    body = {"id": rbd["id"], "upload_id": await post_log(api, log), "columns": COLUMNS}
    assert_refusal(*await api.post("rbd/upload_outage_log", body), 422, "rows[1].Asset", "P-999")
    log = "Asset,Start,End\nP-101,2026-01-01T00:00,2025-12-31T00:00\n"
    body = {"id": rbd["id"], "upload_id": await post_log(api, log), "columns": {"asset": "Asset", "start": "Start",
                                                                                 "end": "End"}}
    assert_refusal(*await api.post("rbd/upload_outage_log", body), 422, "rows[0].End", "before it starts")
    body["columns"] = {"asset": "Asset", "start": "Begin", "end": "End"}
    assert_refusal(*await api.post("rbd/upload_outage_log", body), 422, "columns.start")
    status, diagram = await api.post("get/rbd", {"id": rbd["id"]})
    assert diagram["nodes"] == (await api.post("get/rbd", {"id": rbd["id"]}))[1]["nodes"]

def _uptimes(log: str, asset: str) -> list[float]:
    rows = [r.split(",") for r in log.strip().splitlines()[1:] if r.startswith(asset + ",")]
    first = T0
    last = max(dt.datetime.fromisoformat(x) for r in log.strip().splitlines()[1:] for x in r.split(",")[1:3] if x)
    up, t = [], first
    for r in rows:
        start = dt.datetime.fromisoformat(r[1])
        up.append((start - t).total_seconds() / 3600)
        if not r[2]:
            return up
        t = dt.datetime.fromisoformat(r[2])
    up.append((last - t).total_seconds() / 3600)
    return up
