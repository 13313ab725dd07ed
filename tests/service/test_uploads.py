"""Upload links end to end on both stores: the spec's lifecycle table, limits and error codes, memory
while a too-large file is refused, content-based format detection, inspection, imports into
datasets (one sheet; several sheets atomically), and the retention purge."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import logging
import tracemalloc
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import openpyxl
import pytest

from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.keys import STORE
from bathtub_api.tools import uploads
from tests.conftest import Api
from tests.service.test_errors import assert_refusal

CSV = b"time,state\n120,F\n340,S\n410,F\n95,F\n"


def workbook(sheets: dict[str, list[list[Any]]]) -> bytes:
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


async def link(api: Api, filename: str = "lives.csv", purpose: str = "dataset_import") -> dict[str, Any]:
    status, out = await api.post("uploads/create", {"purpose": purpose, "filename": filename})
    assert status == 200, out
    return out


async def send(api: Api, url: str, data: Any, method: str = "PUT") -> tuple[int, Any]:
    """Send to a link as a browser or curl would: no Authorization header, the link is the credential."""
    parts = urlsplit(url)
    async with api.client.request(method, f"{parts.path}?{parts.query}", data=data) as resp:
        return resp.status, await resp.json()


async def upload(api: Api, data: bytes, filename: str = "lives.csv", purpose: str = "dataset_import") -> str:
    made = await link(api, filename, purpose)
    status, out = await send(api, made["url"], data)
    assert status == 200, out
    return made["upload_id"]


async def test_lifecycle_table(api: Api, other_api: Api, config: Config) -> None:
    made = await link(api)
    assert set(made) >= {"url", "upload_id", "url_fallback", "curl_fallback"}
    token = urlsplit(made["url"]).query.removeprefix("t=")
    assert len(token) >= 32  # 192 random bits, url-safe base64
    assert made["curl_fallback"].startswith("curl ") and made["url_fallback"] in made["curl_fallback"]
    # wrong token and unknown id: 404, and nothing is revealed about the link
    assert_refusal(*await send(api, made["url"].replace(token, "x" * len(token)), CSV), 404)
    assert_refusal(*await send(api, made["url"].replace(made["upload_id"], "upl_nope"), CSV), 404)
    status, out = await send(api, made["url"], CSV)
    assert status == 200, out
    assert out == {"upload_id": made["upload_id"], "size": len(CSV), "sha256": hashlib.sha256(CSV).hexdigest(),
                   "detected_format": "csv"}
    assert_refusal(*await send(api, made["url"], CSV), 409, "used")  # single use
    assert_refusal(*await send(api, made["url"], CSV, method="POST"), 409)
    # the stored bytes are private: another user cannot see the upload
    assert_refusal(*await other_api.post("get/upload", {"id": made["upload_id"]}), 404)


async def test_expired_link_is_410(api: Api, config: Config) -> None:
    made = await link(api)
    store = api.client.app[STORE]
    item = await store.find_item("upload", made["upload_id"])
    body = {**item["body"], "expires_at": item["body"]["expires_at"] - config.upload_link_seconds - 1}
    await store.update_item(item["owner"], "upload", item["id"], item["name"], body)
    assert_refusal(*await send(api, made["url"], CSV), 410, "expired")


async def test_too_many_wrong_tokens_is_429(api: Api, config: Config) -> None:
    made = await link(api)
    bad = made["url"].split("?t=")[0] + "?t=wrong"
    for _ in range(config.upload_max_attempts):
        assert (await send(api, bad, CSV))[0] == 404
    status, out = await send(api, made["url"], CSV)  # even the right token now: the link is locked
    assert_refusal(status, out, 429, "too many")


async def test_too_large_is_413_with_flat_memory_and_the_link_stays_unused(api: Api, config: Config) -> None:
    made = await link(api)
    limit = config.upload_max_bytes
    assert limit == 30 * 1024 * 1024
    block = b"x" * (1024 * 1024)

    async def body():  # streamed by the client too, so the measurement is the server's
        for _ in range(30):
            yield block
        yield b"y"

    tracemalloc.start()
    try:
        status, out = await send(api, made["url"], body())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert_refusal(status, out, 413, str(limit))
    # 31,457,281 bytes went through the server; what it held at once stays a few chunks
    assert peak < 8 * 1024 * 1024, peak
    assert not list((Path(config.files_dir()) / "uploads").glob("*")), "nothing of the refused file is kept"
    ok, sent = await send(api, made["url"], CSV)  # a refused send leaves the link unused
    assert ok == 200 and sent["size"] == len(CSV)


async def test_exactly_the_limit_is_accepted(aiohttp_client: Any, config: Config, registry: Any) -> None:
    small = dataclasses.replace(config, upload_max_bytes=1000)
    api = Api(await aiohttp_client(create_app(small, registry)), await token_create(small, "alice", ["read", "write"]))
    data = b"a,b\n" + b"1,2\n" * 249  # 1000 bytes
    assert len(data) == 1000
    status, out = await send(api, (await link(api))["url"], data)
    assert status == 200 and out["size"] == 1000
    assert_refusal(*await send(api, (await link(api))["url"], data + b"x"), 413)


async def test_format_is_read_from_content_not_name(api: Api) -> None:
    wb = workbook({"lives": [["time", "state"], [10, "F"]]})
    for data, name, fmt in ((CSV, "data.xlsx", "csv"), (wb, "data.csv", "xlsx"), (b"\x89PNG\r\n\x1a\n" + b"0" * 40,
                                                                                    "x.csv", "png")):
        made = await link(api, name)
        status, out = await send(api, made["url"], data)
        assert status == 200 and out["detected_format"] == fmt, (name, out)


async def test_the_token_is_never_logged(api: Api, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    made = await link(api)
    token = made["url"].split("?t=")[1]
    await send(api, made["url"], CSV)
    await send(api, made["url"], CSV)
    # aiohttp.access, the test harness's own request-line logger (`bathtub serve` turns it off),
    # quotes the query: its lines are redacted too (bathtub_api/redact.py).
    assert not any(token in r.getMessage() for r in caplog.records)
    assert any("?t=<redacted>" in r.getMessage() for r in caplog.records if r.name == "aiohttp.access")


async def test_inspection_of_a_workbook(api: Api, other_api: Api) -> None:
    data = workbook({
        "Pump lives": [["Pump fleet, 2026"], [], ["Time", "State", "Count"], [120, "F", 1], [340, "S", 2],
                       [410, "F", 1]],
        "Outages": [["Asset", "Start", "End", "Reason", "Planned"],
                    ["P-101", "2026-01-03 10:00", "2026-01-03 14:00", "seal leak", "no"],
                    ["P-102", "2026-02-01 08:00", "2026-02-01 09:30", "PM", "yes"]],
        "Intervals": [["last_ok", "found_failed"], [100, 200], [150, 300]],
    })
    upload_id = await upload(api, data, "plant.xlsx", "excel_import")
    status, out = await api.post("get/upload", {"id": upload_id})
    assert status == 200, out
    assert out["detected_format"] == "xlsx" and out["stored"] is True
    sheets = {s["name"]: s for s in out["inspection"]["sheets"]}
    lives = sheets["Pump lives"]
    assert lives["header_row"] == 2 and lives["columns"] == ["Time", "State", "Count"] and lives["row_count"] == 3
    assert lives["sample_rows"][1] == {"Time": 340, "State": "S", "Count": 2}
    assert lives["looks_like"][0] == {"kind": "life_data", "mapping": {"x": "Time", "c": "State", "n": "Count"},
                                      "reason": lives["looks_like"][0]["reason"]}
    assert sheets["Outages"]["looks_like"][0]["kind"] == "outage_log"
    assert sheets["Outages"]["looks_like"][0]["mapping"] == {"asset": "Asset", "start": "Start", "end": "End",
                                                             "reason": "Reason", "planned": "Planned"}
    assert sheets["Intervals"]["looks_like"][0]["mapping"] == {"xl": "last_ok", "xr": "found_failed"}
    assert_refusal(*await other_api.post("get/upload", {"id": upload_id}), 404)


async def test_dataset_from_csv_and_from_a_sheet(api: Api, config: Config) -> None:
    upload_id = await upload(api, CSV)
    status, ds = await api.post("datasets/upload", {"upload_id": upload_id, "name": "pumps"})
    assert status == 200, ds
    assert ds["n_rows"] == 4 and [c["name"] for c in ds["columns"]] == ["time", "state"]
    status, page = await api.post("get/dataset", {"id": ds["id"]})
    assert page["rows"][0] == {"time": 120, "state": "F"}
    # imported: the bytes are gone at once, the record says what they became
    assert not (Path(config.files_dir()) / "uploads" / upload_id).exists()
    status, rec = await api.post("get/upload", {"id": upload_id})
    assert rec["stored"] is False and rec["imported_into"] == [ds["id"]] and "inspection" not in rec
    assert_refusal(*await api.post("datasets/upload", {"upload_id": upload_id, "name": "again"}), 422, "upload_id")

    data = workbook({"notes": [["just a title"]], "lives": [["Hours", "Status", "Site"], [10.5, "F", "A"],
                                                            [20, "S", "B"]]})
    upload_id = await upload(api, data, "x.xlsx")
    status, ds = await api.post("datasets/upload", {"upload_id": upload_id, "name": "renamed", "sheet": "lives",
                                                    "columns": {"time": "Hours", "state": "Status"}})
    assert status == 200, ds
    assert [c["name"] for c in ds["columns"]] == ["time", "state"] and ds["n_rows"] == 2
    assert ds["columns"][0]["type"] == "number"


async def test_import_excel_is_all_or_nothing(api: Api) -> None:
    data = workbook({"a": [["t", "c"], [1, "F"], [2, "S"]], "b": [["x"], [5], [6], [7]]})
    upload_id = await upload(api, data, "two.xlsx", "excel_import")
    bad = {"upload_id": upload_id, "sheets": [{"sheet": "a", "name": "A"},
                                              {"sheet": "b", "name": "B", "columns": {"x": "nope"}}]}
    status, out = await api.post("uploads/import_excel", bad)
    assert_refusal(status, out, 422, "sheets[1].columns.x")
    assert (await api.post("list/dataset"))[1]["items"] == []  # nothing was created
    status, out = await api.post("uploads/import_excel", {"upload_id": upload_id, "sheets": [
        {"sheet": "a", "name": "A"}, {"sheet": "b", "name": "B"}]})
    assert status == 200, out
    assert [d["n_rows"] for d in out["datasets"]] == [2, 3]
    assert len((await api.post("list/dataset"))[1]["items"]) == 2


async def test_retention_purge_survives_a_restart(api: Api, config: Config) -> None:
    upload_id = await upload(api, CSV)
    path = Path(config.files_dir()) / "uploads" / upload_id
    assert path.exists()
    # the purge keeps no state of its own: it reads the store's records and the files, so a purge run by
    # a freshly started process (here: with a retention already past) finds what an earlier one left
    expired = dataclasses.replace(config, upload_retention_s=-1.0)
    assert await uploads.purge(api.client.app[STORE], expired) == 1
    assert not path.exists()
    status, rec = await api.post("get/upload", {"id": upload_id})
    assert rec["stored"] is False
    assert_refusal(*await api.post("datasets/upload", {"upload_id": upload_id, "name": "late"}), 422, "gone")


async def test_scopes_and_validation(api: Api, client: Any, config: Config) -> None:
    reader = Api(client, await token_create(config, "rita", ["read"]))
    assert_refusal(*await reader.post("uploads/create", {"purpose": "dataset_import", "filename": "a.csv"}), 403)
    assert_refusal(*await api.post("uploads/create", {"purpose": "nonsense", "filename": "a.csv"}), 422, "purpose")
    assert_refusal(*await api.post("uploads/create", {"purpose": "rbd_import", "filename": "../a.csv"}), 422,
                   "filename")
