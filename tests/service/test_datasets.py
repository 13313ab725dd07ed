"""Datasets end to end: create, page, list, atomic and idempotent ingest, restarts, concurrency."""

from __future__ import annotations

import asyncio
from typing import Any

from bathtub.imports.tables import read_sheets
from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.store.datasets import CHUNK_ROWS
from tests.conftest import Api
from tests.service.test_errors import assert_refusal


async def _create(api: Api, **body: Any) -> dict[str, Any]:
    status, created = await api.post("/api/v1/datasets", {"name": "pumps", **body})
    assert status == 200, created
    return created


async def test_create_from_csv_infers_column_types(api: Api) -> None:
    created = await _create(api, csv="time,state,n,ok\n10,F,1,true\n20.5,S,2,false\n,F,3,\n")
    assert created["n_rows"] == created["row_count"] == 3  # n_rows: the older name, kept
    assert created["columns"] == [
        {"name": "time", "type": "number"}, {"name": "state", "type": "string"},
        {"name": "n", "type": "integer"}, {"name": "ok", "type": "string"},
    ]
    assert created["id"].startswith("ds_") and created["url"].endswith(created["id"])
    status, page = await api.post("get/dataset", {"id": created["id"]})
    assert status == 200
    assert page["rows"][1] == {"time": 20.5, "state": "S", "n": 2, "ok": "false"}
    assert page["rows"][2]["time"] is None
    assert page["next_offset"] is None and page["row_count"] == 3


async def test_zero_padded_codes_stay_text(api: Api) -> None:
    # Item 007 is not item 7: a column holding a zero-padded number is a column of codes, all
    # of it text (not '007' in one row and 10 in the next); plain numbers still convert.
    created = await _create(api, csv="item,time\n007,10\n010,20.5\n12,5\n")
    assert created["columns"] == [{"name": "item", "type": "string"}, {"name": "time", "type": "number"}]
    _, page = await api.post("get/dataset", {"id": created["id"]})
    assert [r["item"] for r in page["rows"]] == ["007", "010", "12"]
    assert [r["time"] for r in page["rows"]] == [10, 20.5, 5]


def test_an_uploaded_csv_keeps_codes_as_text(tmp_path: Any) -> None:
    path = tmp_path / "lives.csv"
    path.write_text("serial,hours,state\n0042,100,F\n0043,150.5,S\n44,7,F\n0.5,1,F\n")
    (sheet,) = read_sheets(path, "csv")
    assert sheet.column("serial") == ["0042", "0043", "44", "0.5"]
    assert sheet.column("hours") == [100, 150.5, 7, 1]


async def test_pages_across_chunks(api: Api) -> None:
    n = 2 * CHUNK_ROWS + 500
    created = await _create(api, data={"i": list(range(n)), "x": [i / 2 for i in range(n)]})
    seen = []
    offset: int | None = 0
    while offset is not None:
        status, page = await api.post("get/dataset", {"id": created["id"], "offset": offset, "limit": 333})
        assert status == 200 and len(page["rows"]) <= 333
        seen.extend(r["i"] for r in page["rows"])
        offset = page["next_offset"]
    assert seen == list(range(n))
    status, page = await api.post("get/dataset", {"id": created["id"], "offset": CHUNK_ROWS - 1, "limit": 3})
    assert [r["i"] for r in page["rows"]] == [CHUNK_ROWS - 1, CHUNK_ROWS, CHUNK_ROWS + 1]
    status, page = await api.post("get/dataset", {"id": created["id"], "offset": n + 10})
    assert page["rows"] == [] and page["next_offset"] is None


async def test_create_refusals(api: Api) -> None:
    assert_refusal(*await api.post("/api/v1/datasets", {"name": "x"}), 422, "exactly one of csv or data")
    assert_refusal(*await api.post("/api/v1/datasets", {"name": "x", "csv": "a,b\n1\n"}), 422, "line 2")
    assert_refusal(*await api.post("/api/v1/datasets", {"name": "x", "csv": "a,a\n1,2\n"}), 422, "twice")
    assert_refusal(*await api.post("/api/v1/datasets", {"name": "x", "data": {"a": [1], "b": [1, 2]}}), 422, "equal")
    assert_refusal(*await api.post("/api/v1/datasets", {"name": "", "csv": "a\n1\n"}), 422, "name")
    assert (await api.post("list/dataset"))[1]["items"] == []


async def test_ingest_json_csv_and_atomic_refusal(api: Api) -> None:
    created = await _create(api, csv="time,state\n10,F\n")
    path = f"/api/ingest/datasets/{created['id']}/lives"
    status, out = await api.post(path, {"rows": [{"time": 11, "state": "S"}, {"state": "F", "time": 12.5}]})
    assert status == 200 and out == {"appended": 2, "row_count": 3, "n_rows": 3, "refit": [], "replayed": False}
    status, out = await api.call("POST", path + "?refit=false", data="state,time\nF,13\nS,14\n",
                                 headers={"Content-Type": "text/csv"})
    assert status == 200 and out["n_rows"] == 5
    # One bad row among good ones: 422 naming it, and nothing appended.
    bad = {"rows": [{"time": 15, "state": "F"}, {"time": "soon", "state": "F"}]}
    assert_refusal(*await api.post(path, bad), 422, "rows[1].time", "number")
    assert_refusal(*await api.post(path, {"rows": [{"time": 1, "colour": "red"}]}), 422, "colour")
    assert_refusal(*await api.call("POST", path, data="time\n1\n", headers={"Content-Type": "text/csv"}), 422,
                   "missing state")
    assert_refusal(*await api.post(path + "?refit=maybe", {"rows": [{"time": 1, "state": "F"}]}), 422, "refit")
    status, page = await api.post("get/dataset", {"id": created["id"]})
    assert page["row_count"] == 5
    assert [r["time"] for r in page["rows"]] == [10, 11, 12.5, 13, 14]


async def test_ingest_is_idempotent_with_a_key(api: Api) -> None:
    created = await _create(api, csv="time\n1\n")
    path = f"/api/ingest/datasets/{created['id']}/lives"
    headers = {"Idempotency-Key": "batch-7"}
    first = await api.post(path, {"rows": [{"time": 2}, {"time": 3}]}, headers=headers)
    again = await api.post(path, {"rows": [{"time": 2}, {"time": 3}]}, headers=headers)
    assert first[1]["n_rows"] == 3 and again[1] == {**first[1], "replayed": True}
    assert (await api.post("get/dataset", {"id": created["id"]}))[1]["row_count"] == 3


async def test_data_survives_a_restart(aiohttp_client: Any, database_url: str) -> None:
    config = Config(database_url=database_url)
    client = await aiohttp_client(create_app(config))
    token = await token_create(config, "alice", ["read", "write"])
    created = await _create(Api(client, token), data={"t": [1.5, 2.5]})
    await client.close()
    reopened = Api(await aiohttp_client(create_app(config)), token)
    status, page = await reopened.post("get/dataset", {"id": created["id"]})
    assert status == 200 and [r["t"] for r in page["rows"]] == [1.5, 2.5]


async def test_concurrent_writers_lose_nothing(api: Api) -> None:
    created = await _create(api, data={"k": [0]})
    path = f"/api/ingest/datasets/{created['id']}/lives"
    appends = [api.post(path, {"rows": [{"k": i}, {"k": -i}]}) for i in range(1, 41)]
    creates = [api.post("datasets/create", {"name": f"d{i}", "data": {"k": [i]}}) for i in range(20)]
    results = await asyncio.gather(*appends, *creates)
    assert all(status == 200 for status, _ in results)
    status, page = await api.post("get/dataset", {"id": created["id"], "limit": 500})
    assert page["row_count"] == 81
    assert sorted(r["k"] for r in page["rows"]) == sorted([0, *range(1, 41), *(-i for i in range(1, 41))])
    status, listing = await api.post("list/dataset", {"limit": 500})
    assert status == 200 and len(listing["items"]) == 21
