"""Big tables are built, carried and freed a block at a time (bathtub_api.bulk) so the event loop
never waits long for the GIL. These tests shrink the blocks to a few rows, so every path crosses
block boundaries (a block exactly full, one row over, an empty last block) and check that what is
stored and answered is exactly what whole-table processing gives; on both stores, refusals and
failed refits change nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from bathtub.errors import InputError
from bathtub.imports.tables import text_cell
from bathtub_api import bulk, tables
from tests.conftest import Api
from tests.service.test_errors import assert_refusal

BLOCK = 3


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(bulk, "BLOCK", BLOCK)
    monkeypatch.setattr(tables, "RAW_BLOCK", 2)
    yield


def life_csv(n: int) -> str:
    lines = [f"{10.0 + 7.25 * i:.2f},{'S' if i % 4 == 3 else 'F'},{i:03d},lot {i % 5}" for i in range(n)]
    return "time,state,code,lot\n" + "\n".join(lines) + "\n"


async def all_rows(api: Api, dataset_id: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    while True:
        status, page = await api.post("get/dataset", {"id": dataset_id, "offset": len(rows), "limit": 500})
        assert status == 200, page
        rows += page["rows"]
        if page["next_offset"] is None:
            return rows


# -- the helpers themselves ---------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK, 2 * BLOCK + 1])
def test_blocks_round_trip_at_every_boundary(n: int) -> None:
    columns = [[float(i) for i in range(n)], [f"u{i}" for i in range(n)], [None if i % 2 else i for i in range(n)]]
    rows = bulk.rows_of(columns)
    assert rows == list(zip(*columns)) and all(type(r) is tuple for r in rows)
    packed = bulk.pack(rows)
    assert len(packed) == -(-n // BLOCK)  # one pickled block per BLOCK rows, the last partial
    assert bulk.unpack(packed) == rows
    back: list[list[Any]] = [[], [], []]
    for i in range(0, n, 2):  # blocks of another size, and one empty block
        bulk.extend_columns(back, rows[i : i + 2])
    bulk.extend_columns(back, [])
    assert back == columns


async def test_release_empties_big_lists_only() -> None:
    big, small = list(range(3 * BLOCK + 1)), list(range(BLOCK))
    await bulk.release(big, small)
    assert big == [] and small == list(range(BLOCK))  # a small list is freed as usual, where it falls


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 7])
def test_csv_in_blocks_is_the_csv_cell_by_cell(n: int) -> None:
    text = life_csv(n)
    names, rows = tables.parse_csv(text)
    assert names == ["time", "state", "code", "lot"]
    # Column `code` is zero-padded: text whole (bathtub.imports.tables.text_column); others convert per cell.
    want = [(text_cell(t), text_cell(s), c, text_cell(lot))
            for t, s, c, lot in (line.split(",") for line in text.splitlines()[1:] if line)]
    assert rows == want


def test_csv_lines_split_as_before_across_blocks() -> None:
    # CRLF, blank lines, a quoted cell holding a newline and a comma, no final newline.
    text = 'a,b\r\n1,x\r\n\r\n2,"two\nlines, one cell"\n3,y\n,\n4,z'
    assert tables.parse_csv(text) == (["a", "b"], [(1, "x"), (2, "two\nlines, one cell"), (3, "y"), (4, "z")])
    # A short row past a few blocks is named by its line, as the reader counts lines.
    with pytest.raises(InputError) as bad:
        tables.parse_csv("a,b\n1,2\n3,4\n5,6\n7,8\n9\n")
    assert bad.value.field == "csv.line 6"
    with pytest.raises(InputError) as bare_cr:
        tables.parse_csv("a,b\n1,2\n3,4\n5,6\r7,8\n")
    assert bare_cr.value.field == "csv.line 4" and "carriage return" in str(bare_cr.value)


def test_conform_in_blocks() -> None:
    columns = [{"name": "t", "type": "integer"}, {"name": "label", "type": "string"}]
    rows, cols = tables.conform(columns, ["label", "t"], [(5, 1), ("b", 2.5), (None, 3), (7.0, 4)])
    assert rows == [(1, "5"), (2.5, "b"), (3, None), (4, "7.0")] and all(type(r) is tuple for r in rows)
    assert cols == [{"name": "t", "type": "number"}, {"name": "label", "type": "string"}]
    with pytest.raises(InputError) as bad:
        tables.conform([{"name": "t", "type": "number"}], ["t"], [(1,), (2,), (3,), (4,), ("x",)])
    assert bad.value.field == "rows[4].t"


# -- through the service, on both stores --------------------------------------------------------

async def test_create_ingest_and_delete_across_blocks(api: Api) -> None:
    text = life_csv(7)
    status, created = await api.post("datasets/create", {"name": "blocks", "csv": text})
    assert status == 200 and created["row_count"] == 7, created
    dataset_id = created["id"]
    expected = [dict(zip(("time", "state", "code", "lot"), r, strict=True)) for r in tables.parse_csv(text)[1]]
    assert await all_rows(api, dataset_id) == expected
    status, model = await api.post("fit/life", {"name": "w", "dataset_id": dataset_id, "distribution": "weibull",
                                                "mapping": {"x": "time", "c": "state"}})
    assert status == 200 and model["n"] == 7, model

    # Ingest as raw CSV: conformed a block at a time, appended, the model refitted on every row.
    more = "lot,code,state,time\n" + "\n".join(f"lot {i},{i:03d},F,{500 + i}" for i in range(230)) + "\n"
    status, out = await api.call("POST", f"/api/ingest/datasets/{dataset_id}/lives", data=more.encode(),
                                 headers={"Content-Type": "text/csv"})
    assert status == 200 and out["appended"] == 230 and out["row_count"] == 237, out
    expected += [{"time": 500 + i, "state": "F", "code": f"{i:03d}", "lot": f"lot {i}"} for i in range(230)]
    assert await all_rows(api, dataset_id) == expected
    status, record = await api.post("get/model", {"id": model["id"]})
    assert record["n"] == 237

    # Delete across stored chunks (100 rows each) and blocks: exactly the rows asked go, in order.
    gone = {0, 99, 100, 101, 199, 236}
    status, out = await api.post("datasets/delete_rows", {"id": dataset_id, "rows": sorted(gone, reverse=True)})
    assert status == 200 and out["deleted"] == len(gone) and out["row_count"] == 237 - len(gone), out
    expected = [r for i, r in enumerate(expected) if i not in gone]
    assert await all_rows(api, dataset_id) == expected
    status, record = await api.post("get/model", {"id": model["id"]})
    assert record["n"] == len(expected)

    # Refused and failed deletes change nothing: an index out of range, and a delete of every failure,
    # which leaves the Weibull model nothing to refit (the refit fails after the rows were planned).
    assert_refusal(*await api.post("datasets/delete_rows", {"id": dataset_id, "rows": [5, 10_000]}), 422,
                   "rows[1]")
    failures = [i for i, r in enumerate(expected) if r["state"] == "F"]
    status, out = await api.post("datasets/delete_rows", {"id": dataset_id, "rows": failures})
    assert status == 422 and "nothing was applied" in out["detail"], out
    assert await all_rows(api, dataset_id) == expected
    status, record = await api.post("get/model", {"id": model["id"]})
    assert record["n"] == len(expected)


async def test_an_upload_import_unpacks_every_block(api: Api) -> None:
    """The worker process packs rows in blocks of its own size (the real one: it imports the module
    afresh), so a table of a few blocks and a partial one crosses the process boundary."""
    n = 2 * 2_000 + 17
    text = life_csv(n)
    status, link = await api.post("uploads/create", {"purpose": "dataset_import", "filename": "big.csv"})
    assert status == 200, link
    parts = urlsplit(link["url"])
    async with api.client.put(f"{parts.path}?{parts.query}", data=text.encode()) as resp:
        assert resp.status == 200, await resp.text()
    # A refused import (an unknown column) creates nothing and leaves the bytes to import.
    assert_refusal(*await api.post("datasets/upload", {"upload_id": link["upload_id"], "name": "x",
                                                       "columns": {"t": "nope"}}), 422, "columns.t")
    status, listing = await api.post("list/dataset", {})
    assert listing["items"] == []
    status, made = await api.post("datasets/upload", {"upload_id": link["upload_id"], "name": "big",
                                                      "columns": {"t": "time", "c": "state", "code": "code"}})
    assert status == 200 and made["row_count"] == n, made
    want = [{"t": t, "c": s, "code": c} for t, s, c, _ in tables.parse_csv(text)[1]]
    assert await all_rows(api, made["id"]) == want
