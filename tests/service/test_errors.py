"""Every refusal is {"detail": ...} with the spec's status, naming the field and the rule."""

from __future__ import annotations

from typing import Any

import pytest

from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from tests.conftest import Api

# The shape of refusals, decided before anything is stored (see tests/conftest.py).
pytestmark = pytest.mark.one_store


def assert_refusal(status: int, body: Any, expected: int, *words: str) -> None:
    assert status == expected, body
    assert isinstance(body, dict) and list(body) == ["detail"] and isinstance(body["detail"], str)
    for w in words:
        assert w in body["detail"], body["detail"]


async def test_unknown_route_and_wrong_method(api: Api) -> None:
    assert_refusal(*await api.post("no_such_tool/x"), 404, "no such route")
    assert_refusal(*await api.post("/nowhere"), 404)
    assert_refusal(*await api.get("get/dataset"), 405, "method")
    async with api.client.get("/api/v1/get/dataset", headers=api.headers) as resp:
        assert "POST" in resp.headers["Allow"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({}, ("id", "required")),
        ({"id": 5}, ("id", "string")),
        ({"id": "x", "limit": 0}, ("limit", "must be >= 1")),
        ({"id": "x", "limit": 501}, ("limit", "must be <= 500")),
        ({"id": "x", "offset": -1}, ("offset",)),
        ({"id": "x", "limit": "10"}, ("limit", "integer")),
        ({"id": "x", "colour": "red"}, ("colour", "unknown field")),
        ([1, 2], ("body", "object")),
    ],
)
async def test_validation_names_field_and_rule(api: Api, body: Any, words: tuple[str, ...]) -> None:
    assert_refusal(*await api.post("get/dataset", body), 422, *words)


async def test_malformed_json(api: Api) -> None:
    headers = {"Content-Type": "application/json"}
    status, body = await api.call("POST", "get/dataset", data=b"{not json", headers=headers)
    assert_refusal(status, body, 422, "malformed JSON")


async def test_body_over_the_limit_is_413(aiohttp_client: Any, database_url: str) -> None:
    config = Config(database_url=database_url, max_body_bytes=1024)
    client = await aiohttp_client(create_app(config))
    api = Api(client, await token_create(config, "alice", ["read", "write"]))
    status, body = await api.post("datasets/create", {"name": "big", "csv": "t\n" + "1\n" * 2000})
    assert_refusal(status, body, 413, "1024")
    status, listing = await api.post("list/dataset")
    assert listing["items"] == []


@pytest.mark.parametrize(
    ("path", "body", "detail"),
    [
        ("datasets/create", {"name": "x", "csv": "t\n1\n", "data": {"t": [1]}}, "csv: give csv or data, not both"),
        ("datasets/create", {"name": "x"}, "csv: give exactly one of csv or data"),
        ("fit/demand", {"name": "d", "batches": [5]}, "batches.0: must be an object"),
        ("strategy/failure_finding", {"distribution_id": "weibull", "params": [1.5], "saved_model_id": "mdl_x",
                                      "target_availability": 0.9},
         "distribution_id: give distribution_id or saved_model_id, not both"),
        ("strategy/failure_finding", {"distribution_id": "weibull", "target_availability": 0.9},
         "params: required with distribution_id"),
        ("strategy/failure_finding", {"distribution_id": "weibull", "params": [{"name": 1}],
                                      "target_availability": 0.9}, "params.0.name: Input should be a valid string"),
        ("strategy/failure_finding", {"distribution_id": "weibull", "params": [1.5, 100.0],
                                      "target_availability": 1.0}, "target_availability: must be < 1"),
    ],
)
async def test_refusals_name_fields_never_classes(api: Api, path: str, body: Any, detail: str) -> None:
    status, out = await api.post(path, body)
    assert status == 422 and out["detail"].startswith(detail), out
    for cls in ("DemandBatchIn", "ParamIn", "DatasetCreate", "FailureFindingIn", "Value error", "list["):
        assert cls not in out["detail"]
