"""Every kind is listed the same way: one request model (offset/limit, name_contains,
created_after), one answer shape (items, next_offset), and every url an item carries answers a GET."""

from __future__ import annotations

from typing import Any

from bathtub_api.registry import Registry
from bathtub_api.tools.common import ListRequest
from tests.conftest import Api
from tests.service.test_rbd_service import poll, two_of_three


def _lists(registry: Registry) -> list[Any]:
    return [a for a in registry.actions.values() if a.tool == "list"]


def test_every_list_takes_the_one_request_model(registry: Registry) -> None:
    kinds = {a.action for a in _lists(registry)}
    assert {"dataset", "model", "rbd", "rbd_run", "job", "strategy_analysis", "upload", "fleet", "photo"} <= kinds
    for a in _lists(registry):
        assert issubclass(a.request, ListRequest), a.action


async def test_every_list_pages_and_filters_alike(api: Api, registry: Registry) -> None:
    for a in _lists(registry):
        status, out = await api.post(f"list/{a.action}", {"limit": 1})
        assert status == 200 and out["items"] == [] and out["next_offset"] is None, (a.action, out)
        status, out = await api.post(f"list/{a.action}", {"created_after": "2999-01-01", "name_contains": "x"})
        assert status == 200 and out["items"] == [], (a.action, out)
        status, out = await api.post(f"list/{a.action}", {"created_after": "yesterday"})
        assert status == 422 and out["detail"].startswith("created_after:"), (a.action, out)
        status, out = await api.post(f"list/{a.action}", {"limit": 501})
        assert status == 422 and out["detail"].startswith("limit:"), (a.action, out)


async def _names(api: Api, kind: str, **body: Any) -> tuple[list[str], int | None]:
    status, out = await api.post(f"list/{kind}", body)
    assert status == 200, out
    return [i.get("name", i.get("kind")) for i in out["items"]], out["next_offset"]


async def test_paging_and_filters_on_datasets_rbds_and_jobs(api: Api, other_api: Api) -> None:
    created = []
    for name in ("Pump A", "pump_b", "valve"):
        status, ds = await api.post("datasets/create", {"name": name, "csv": "time\n1\n"})
        assert status == 200, ds
        status, page = await api.post("get/dataset", {"id": ds["id"]})
        created.append(page["created_at"])
    assert await _names(api, "dataset", limit=2) == (["Pump A", "pump_b"], 2)
    assert await _names(api, "dataset", limit=2, offset=2) == (["valve"], None)
    assert await _names(api, "dataset", name_contains="PUMP") == (["Pump A", "pump_b"], None)
    assert await _names(api, "dataset", name_contains="_") == (["pump_b"], None)  # literal, not a wildcard
    assert await _names(api, "dataset", name_contains="%") == ([], None)
    assert await _names(api, "dataset", created_after=created[0]) == (["pump_b", "valve"], None)
    assert await _names(other_api, "dataset") == ([], None)  # only the caller's own

    status, rbd = await api.post("rbd/create", two_of_three())
    assert status == 200, rbd
    status, q = await api.post("rbd_analysis/analyze", {"id": rbd["id"], "horizon": 10.0, "replications": 200,
                                                        "seed": 1})
    assert status == 200, q
    await poll(api, q["job_id"])
    status, jobs = await api.post("list/job", {"name_contains": "SIMULATE"})
    assert status == 200 and [j["id"] for j in jobs["items"]] == [q["job_id"]], jobs
    assert jobs["items"][0]["status"] == "done" and jobs["next_offset"] is None
    assert await _names(api, "job", name_contains="nothing") == ([], None)
    assert (await _names(api, "rbd_run", name_contains="2oo3"))[1] is None


async def test_every_listed_url_answers_a_get(api: Api, registry: Registry) -> None:
    await api.post("datasets/create", {"name": "d", "csv": "time,state\n1,F\n2,F\n3,S\n4,F\n"})
    status, ds = await api.post("list/dataset", {})
    status, _ = await api.post("fit/life", {"name": "m", "dataset_id": ds["items"][0]["id"],
                                            "distribution": "weibull", "mapping": {"x": "time", "c": "state"}})
    assert status == 200
    await api.post("rbd/create", two_of_three())
    seen = 0
    for a in _lists(registry):
        status, out = await api.post(f"list/{a.action}", {})
        for item in out["items"]:
            if "url" in item:
                path = "/" + item["url"].split("/", 3)[3]
                status, body = await api.get(path)
                assert status == 200, (a.action, item["url"], body)
                seen += 1
    assert seen >= 3
