"""The inputs once found to give a 500 (issue 11, item 14) give a 4xx naming the field, on
both stores, and change nothing; the tool protocol answers protocol faults as JSON-RPC errors."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Api
from tests.service.test_errors import assert_refusal

BIG = 2**63  # one past the largest signed 64-bit integer: what SQL integers hold


async def _dataset(api: Api) -> str:
    status, body = await api.post("datasets/create", {"name": "d", "data": {"t": [1.0, 2.0, 3.0]}})
    assert status == 200, body
    return str(body["id"])


async def _unchanged(api: Api, dataset_id: str) -> None:
    status, page = await api.post("get/dataset", {"id": dataset_id})
    assert status == 200 and page["row_count"] == 3, page


CSV_FAULTS = [
    pytest.param("t\r1\r2\r", (".line 1: ", "carriage return"), id="bare-CR"),
    pytest.param("t\n1\n2\r3\n", (".line 3: ", "carriage return"), id="bare-CR-mid-file"),
    pytest.param("t\n" + "9" * (128 * 1024 + 1) + "\n", (".line 2: ", "131072"), id="field-over-128KiB"),
    # In JSON the door refuses NUL in any string; in a raw text/csv body the CSV reader does.
    pytest.param("t\n1\x002\n", ("NUL",), id="NUL-in-csv"),
]


@pytest.mark.parametrize(("text", "words"), CSV_FAULTS)
async def test_csv_faults_are_refused_on_create(api: Api, text: str, words: tuple[str, ...]) -> None:
    for path in ("datasets/create", "/api/v1/datasets"):
        assert_refusal(*await api.post(path, {"name": "d", "csv": text}), 422, "csv", *words)
    status, listing = await api.post("list/dataset")
    assert listing["items"] == []


@pytest.mark.parametrize(("text", "words"), CSV_FAULTS)
async def test_csv_faults_are_refused_on_ingest(api: Api, text: str, words: tuple[str, ...]) -> None:
    dataset_id = await _dataset(api)
    path = f"/api/ingest/datasets/{dataset_id}/lives"
    assert_refusal(*await api.post(path, {"csv": text}), 422, "csv", *words)
    status, body = await api.call("POST", path, data=text.encode(), headers={"Content-Type": "text/csv"})
    assert_refusal(status, body, 422, "body.line", *words)
    await _unchanged(api, dataset_id)


async def test_column_names_with_surrounding_whitespace(api: Api) -> None:
    # A name is trimmed wherever it arrives, so " t " and "t" are one column.
    status, body = await api.post("datasets/create", {"name": "d", "data": {" t ": [1, 2], "c\t": [0, 1]}})
    assert status == 200, body
    assert [c["name"] for c in body["columns"]] == ["t", "c"]
    status, page = await api.post("get/dataset", {"id": body["id"]})
    assert page["rows"] == [{"t": 1, "c": 0}, {"t": 2, "c": 1}]
    status, more = await api.post(f"/api/ingest/datasets/{body['id']}/lives", {"data": {"t ": [3], " c": [1]}})
    assert status == 200 and more["n_rows"] == 3, more
    assert_refusal(*await api.post("datasets/create", {"name": "d", "data": {" t": [1], "t ": [2]}}), 422,
                   "data.t", "twice")


@pytest.mark.parametrize("value", [BIG, 2**64 - 1, 2**53])
async def test_offsets_past_the_integer_range(api: Api, value: int) -> None:
    dataset_id = await _dataset(api)
    assert_refusal(*await api.post("get/dataset", {"id": dataset_id, "offset": value}), 422, "offset",
                   "must be <= 9007199254740991")
    for kind in ("dataset", "model", "rbd", "rbd_run", "strategy_analysis"):
        assert_refusal(*await api.post(f"list/{kind}", {"offset": value}), 422, "offset")
    assert_refusal(*await api.get(f"/api/v1/datasets/{dataset_id}?offset={value}"), 422, "offset")
    # The largest offset accepted is simply past the end.
    status, page = await api.post("get/dataset", {"id": dataset_id, "offset": 2**53 - 1})
    assert status == 200 and page["rows"] == [] and page["next_offset"] is None


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("get/dataset", {"id": "ds_\x00"}, "id"),
        ("get/model", {"id": "\x00"}, "id"),
        ("get/rbd", {"id": "rbd_\x00x"}, "id"),
        ("get/job", {"id": "job\x00"}, "id"),
        ("datasets/create", {"name": "a\x00b", "data": {"t": [1]}}, "name"),
        ("/api/v1/datasets", {"name": "a\x00b", "csv": "t\n1\n"}, "name"),
        ("datasets/create", {"name": "n", "notes": "\x00", "data": {"t": [1]}}, "notes"),
        ("fit/life", {"name": "m", "dataset_id": "ds_\x00", "distribution": "weibull", "mapping": {"x": "t"}},
         "dataset_id"),
        ("rbd/create", {"name": "r\x00", "stages": [{"components": [{"distribution_id": "exponential",
                                                                    "params": [0.001]}]}]}, "name"),
        ("list/rbd_run", {"rbd_id": "\x00"}, "rbd_id"),
    ],
)
async def test_nul_in_ids_and_names(api: Api, path: str, body: dict[str, Any], field: str) -> None:
    assert_refusal(*await api.post(path, body), 422, field, "NUL")


async def test_nul_anywhere_in_a_stored_body(api: Api) -> None:
    # Strings deep inside free-form parts (diagram nodes, rows, mappings) are refused too, naming the path.
    nodes = [{"id": "a\x00", "type": "component", "distribution_id": "exponential", "params": [0.001]}]
    assert_refusal(*await api.post("rbd/create", {"name": "r", "nodes": nodes, "edges": []}), 422,
                   "nodes[0].id", "NUL")
    dataset_id = await _dataset(api)
    assert_refusal(*await api.post(f"/api/ingest/datasets/{dataset_id}/lives", {"rows": [{"t": "x\x00"}]}), 422,
                   "rows[0].t", "NUL")
    await _unchanged(api, dataset_id)
    assert_refusal(*await api.get("/api/v1/datasets/ds_%00"), 422, "dataset_id", "NUL")
    assert_refusal(*await api.post("/api/v1/models/m%00/reliability", {}), 422, "model_id", "NUL")


# ---- the tool protocol ---------------------------------------------------------------


async def _rpc_raw(api: Api, payload: Any = None, *, data: bytes | None = None) -> tuple[int, Any]:
    if data is not None:
        return await api.call("POST", "/mcp", data=data, headers={"Content-Type": "application/json"})
    return await api.post("/mcp", payload)


def _rpc_error(status: int, body: Any, code: int, rid: Any = None) -> str:
    assert isinstance(body, dict) and body.get("jsonrpc") == "2.0", body
    assert body["id"] == rid and body["error"]["code"] == code, body
    assert status == (400 if code in (-32700, -32600) else 200), (status, body)
    return str(body["error"]["message"])


@pytest.mark.parametrize("params", [[1, 2], "x", 5, True])
async def test_mcp_params_that_are_not_an_object(api: Api, params: Any) -> None:
    for method in ("tools/call", "tools/list", "initialize"):
        msg = _rpc_error(*await _rpc_raw(api, {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}),
                         -32602, 7)
        assert "params" in msg


@pytest.mark.parametrize(
    "params",
    [{"name": 5}, {"name": "get", "arguments": [1]}, {"arguments": {}}, {"name": "no_such_tool"}],
)
async def test_mcp_tools_call_with_invalid_params(api: Api, params: Any) -> None:
    msg = _rpc_error(*await _rpc_raw(api, {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": params}),
                     -32602, "a")
    assert "name" in msg or "arguments" in msg


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("rid", [_nested(300), _nested(2), {"a": 1}, 1.5, True, None])
async def test_mcp_id_that_is_not_a_string_or_integer(api: Api, rid: Any) -> None:
    msg = _rpc_error(*await _rpc_raw(api, {"jsonrpc": "2.0", "id": rid, "method": "ping"}), -32600)
    assert "id" in msg


async def test_mcp_parse_errors_and_invalid_requests(api: Api) -> None:
    _rpc_error(*await _rpc_raw(api, data=b"{not json"), -32700)
    _rpc_error(*await _rpc_raw(api, data=b"[" * 2000 + b"]" * 2000), -32700)
    _rpc_error(*await _rpc_raw(api, data=b""), -32700)
    for bad in ([], [1], "x", {"jsonrpc": "1.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 1},
                {"jsonrpc": "2.0", "id": 1, "method": 5}):
        _rpc_error(*await _rpc_raw(api, bad), -32600)
    _rpc_error(*await _rpc_raw(api, {"jsonrpc": "2.0", "id": 2, "method": "no/such"}), -32601, 2)
    # A valid request still works, with a large integer id echoed as it came.
    status, body = await _rpc_raw(api, {"jsonrpc": "2.0", "id": 2**62, "method": "ping"})
    assert status == 200 and body == {"jsonrpc": "2.0", "id": 2**62, "result": {}}


# ---- found by the OpenAPI fuzz run (test_schemathesis.py): schema-valid extremes -----------


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("strategy/demonstration_test", {"shape": 2.2e-313, "mtbf": 8.2e307, "failures": 3993508767}, "failures"),
        ("strategy/demonstration_test", {"mtbf": 1.76e308, "design_mtbf": 1.65e308, "method": "mtbf",
                                         "failures": 730, "confidence": 0.046, "mission_time": 1.76e308}, "mtbf"),
        ("strategy/demonstration_test", {"failures": 250, "mission_time": 2.67e-263, "reliability": 0.9,
                                         "mtbf": 0.5}, "mission_time"),
        ("strategy/demonstration_test", {"mtbf": 5e-324, "b_life": 5e-324, "confidence": 5e-324,
                                         "design_mtbf": 5e-324, "mission_time": 5e-324, "shape": 5e-324}, "mtbf"),
        ("strategy/demonstration_test", {"reliability": 0.9, "test_multiple": 1e200, "shape": 3.0}, "test_multiple"),
        ("strategy/optimal_replacement", {"distribution_id": "weibull", "params": [1.0, 1.67e-139],
                                          "planned_cost": 1.0, "unplanned_cost": 2.0}, "params"),
        # boost's beta function overflows at shapes of 5e-324: scipy raises from the quantile
        *(("strategy/optimal_replacement", {"distribution_id": "beta", "params": [5e-324, 5e-324], "policy": policy,
                                            "planned_cost": 1.0, "unplanned_cost": 10.0}, "params")
          for policy in ("age", "block", "minimal_repair")),
        ("strategy/failure_finding", {"distribution_id": "beta", "params": [5e-324, 5e-324],
                                      "target_availability": 0.9}, "params"),
        ("strategy/failure_finding", {"distribution_id": "lognormal", "params": [1.08e71, 3.99e16],
                                      "target_availability": 0.9}, "params"),
        ("strategy/shut_plan", {"distribution_id": "weibull", "params": [2.0, 1000.0], "current_age": 0.0,
                                "usage_rate": 1.0, "horizon_days": 1e300, "failure_cost": 1.0,
                                "shuts": [{"name": "s", "cost": 1.0, "every": 30.0}]}, "horizon_days"),
    ],
)
async def test_extreme_numbers_are_refused_not_crashed(api: Api, path: str, body: dict[str, Any], field: str) -> None:
    assert_refusal(*await api.post(path, body), 422, field)
