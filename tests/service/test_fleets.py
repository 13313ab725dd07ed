"""Fleets over HTTP on both stores: create/get/update/delete, the spec's forecast shape with per-item rows,
usage ingest (JSON and CSV, all or nothing), estimated rates, and alert email through a real SMTP server
(aiosmtpd on loopback): one email per crossing, none on a repeat, one again after clearing; a dead mail
server leaves the ingest 200 and the mail queued."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.keys import STORE
from tests.conftest import Api
from tests.service.test_errors import assert_refusal

LAMBDA = 1e-3  # per hour of use


class Inbox:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(envelope)
        return "250 OK"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


async def app_api(aiohttp_client: Any, config: Config, registry: Any, **changes: Any) -> Api:
    cfg = dataclasses.replace(config, mail_poll_s=0.05, **changes)
    client = await aiohttp_client(create_app(cfg, registry))
    return Api(client, await token_create(cfg, "alice", ["read", "write"]))


async def exp_model(api: Api) -> str:
    status, out = await api.post("/api/import/models", {"name": "pump life", "distribution": "exponential",
                                                        "unit": "hours",
                                                        "params": [{"name": "failure_rate", "value": LAMBDA}]})
    assert status == 200, out
    return out["id"]


async def make_fleet(api: Api, **extra: Any) -> dict[str, Any]:
    body = {"name": "pumps", "model_id": await exp_model(api), "period_label": "months", "periods": 6,
            "default_rate": 50.0,
            "items": [{"name": f"P{i}", "current_use": 100.0 * i, "rate": 100.0} for i in range(1, 11)], **extra}
    status, out = await api.post("fleets/create", body)
    assert status == 200, out
    return out


async def wait_for(predicate: Any, seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


async def test_forecast_shape_and_values(api: Api, other_api: Api) -> None:
    fleet = await make_fleet(api)
    status, out = await api.get(f"/api/v1/fleets/{fleet['id']}/forecast")
    assert status == 200, out
    assert out["fleet"] == {"id": fleet["id"], "name": "pumps", "model_id": fleet["model_id"]}
    fc = out["forecast"]
    assert {"status", "method", "periods", "period_label", "expected_failures", "total_expected"} <= set(fc)
    q = 1 - math.exp(-LAMBDA * 100.0)  # each item uses 100 h a month; no replacement: the fleet thins
    assert fc["expected_failures"] == pytest.approx([10 * (1 - q) ** j * q for j in range(6)], rel=1e-10)
    assert fc["period_label"] == "months" and fc["status"] == "ok"
    assert [r["rate_used"] for r in out["per_item"]] == [100.0] * 10
    assert {r["rate_basis"] for r in out["per_item"]} == {"manual"}
    # get fleet with per_item (what a share page reads) gives the forecast route's own rows; without, none
    status, got = await api.post("get/fleet", {"id": fleet["id"], "per_item": True})
    assert status == 200 and got["per_item"] == out["per_item"]
    assert "per_item" not in (await api.post("get/fleet", {"id": fleet["id"]}))[1]
    assert_refusal(*await other_api.get(f"/api/v1/fleets/{fleet['id']}/forecast"), 404)
    status, renewed = await api.post("fleets/update", {"id": fleet["id"], "replace_failed": True})
    status, out = await api.get(f"/api/v1/fleets/{fleet['id']}/forecast", params={"per_item": "false"})
    assert out["forecast"]["expected_failures"] == pytest.approx([10 * LAMBDA * 100.0] * 6, rel=1e-12)
    assert "per_item" not in out


async def test_usage_ingest_updates_estimates_and_is_all_or_nothing(api: Api) -> None:
    fleet = await make_fleet(api, rate_source="estimated")
    route = f"/api/ingest/fleets/{fleet['id']}/usage"
    status, out = await api.post(route, {"readings": [{"name": "P1", "current_use": 200.0,
                                                       "read_at": "2026-01-01T00:00:00"}]})
    assert status == 200, out
    assert out["updated_items"] == 1 and out["alerts_fired"] == 0 and "expected_failures" in out["forecast"]
    csv = "name,current_use,read_at\nP1,260.44,2026-01-11T00:00:00Z\nP2,300,2026-01-11T00:00:00+00:00\n"
    status, out = await api.call("POST", route, data=csv, headers={"Content-Type": "text/csv"})
    assert status == 200, out
    assert out["updated_items"] == 2
    status, got = await api.post("get/fleet", {"id": fleet["id"]})
    items = {i["name"]: i for i in got["items"]}
    # 60.44 h over 10 days = 184 h per 30.44-day month, the first estimate
    assert items["P1"]["estimated_rate"] == pytest.approx(60.44 / (10 / 30.44), rel=1e-12)
    assert items["P2"].get("estimated_rate") is None and items["P2"]["current_use"] == 300.0
    status, fc = await api.get(f"/api/v1/fleets/{fleet['id']}/forecast")
    rows = {r["name"]: r for r in fc["per_item"]}
    assert rows["P1"]["rate_basis"] == "estimated" and rows["P2"]["rate_basis"] == "manual"

    before = (await api.post("get/fleet", {"id": fleet["id"]}))[1]["items"]
    for readings, field in (([{"name": "P1", "current_use": 300.0}, {"name": "nope", "current_use": 1.0}],
                             "readings[1].name"),
                            ([{"name": "P1", "current_use": -1.0}], "readings[0].current_use"),
                            ([{"name": "P1", "current_use": 300.0, "read_at": "yesterday"}], "readings[0].read_at"),
                            ([{"name": "P3", "current_use": 500.0}, {"name": "P3", "current_use": 600.0}],
                             "readings[1].name")):
        assert_refusal(*await api.post(route, {"readings": readings}), 422, field)
    assert (await api.post("get/fleet", {"id": fleet["id"]}))[1]["items"] == before  # nothing applied


async def test_alerts_one_email_per_crossing(aiohttp_client: Any, config: Config, registry: Any,
                                             smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    api = await app_api(aiohttp_client, config, registry, smtp_url=f"smtp://127.0.0.1:{port}",
                        smtp_from="alerts@bathtub.test")
    rule = {"kind": "item_failure_probability", "threshold": 0.5, "periods": 1, "email": "planner@plant.test",
            "name": "an item likely to fail next month"}
    fleet = await make_fleet(api, alert_rules=[rule])
    route = f"/api/ingest/fleets/{fleet['id']}/usage"

    async def rate(value: float) -> dict[str, Any]:
        status, out = await api.post(route, {"readings": [{"name": "P1", "current_use": 1000.0, "rate": value}]})
        assert status == 200, out
        return out

    # chance of failing within a month at rate r: 1 − e^{−λ r}; above 0.5 once r > ln 2/λ = 693 h
    assert (await rate(100.0))["alerts_fired"] == 0
    assert (await rate(800.0))["alerts_fired"] == 1
    await wait_for(lambda: len(inbox.messages) == 1)
    assert (await rate(900.0))["alerts_fired"] == 0  # still above: no repeat
    assert (await rate(100.0))["alerts_fired"] == 0  # cleared
    assert (await rate(1000.0))["alerts_fired"] == 1  # crossed again
    await wait_for(lambda: len(inbox.messages) == 2)
    await asyncio.sleep(0.3)
    assert len(inbox.messages) == 2
    mail = inbox.messages[0]
    assert mail.mail_from == "alerts@bathtub.test" and mail.rcpt_tos == ["planner@plant.test"]
    text = mail.content.decode()
    assert "pumps" in text and "an item likely to fail next month" in text and "0.5" in text


async def test_a_dead_mail_server_never_fails_the_ingest(aiohttp_client: Any, config: Config,
                                                         registry: Any) -> None:
    api = await app_api(aiohttp_client, config, registry, smtp_url=f"smtp://127.0.0.1:{free_port()}")
    rule = {"kind": "expected_failures_next_period", "threshold": 0.5, "email": "planner@plant.test"}
    fleet = await make_fleet(api, alert_rules=[rule])
    readings = [{"name": f"P{i}", "current_use": 1000.0, "rate": 1000.0} for i in range(1, 11)]
    status, out = await api.post(f"/api/ingest/fleets/{fleet['id']}/usage", {"readings": readings})
    assert status == 200 and out["alerts_fired"] == 1
    store = api.client.app[STORE]
    user = await store.ensure_user("alice")
    for _ in range(200):
        box = await store.outbox(user)
        if box and box[0]["attempts"] >= 1:
            break
        await asyncio.sleep(0.05)
    assert len(box) == 1 and box[0]["sent_at"] is None and box[0]["attempts"] >= 1 and box[0]["last_error"]


async def test_fleet_refusals_and_delete(api: Api, other_api: Api) -> None:
    model = await exp_model(api)
    assert_refusal(*await api.post("fleets/create", {"name": "x", "model_id": "mdl_nope"}), 404)
    assert_refusal(*await other_api.post("fleets/create", {"name": "x", "model_id": model}), 404)
    items = [{"name": "A", "current_use": 1.0}, {"name": "A", "current_use": 2.0}]
    assert_refusal(*await api.post("fleets/create", {"name": "x", "model_id": model, "items": items}), 422,
                   "items[1].name")
    assert_refusal(*await api.post("fleets/create", {"name": "x", "model_id": model,
                                                     "items": [{"name": "A", "current_use": -5.0}]}), 422,
                   "current_use")
    fleet = await make_fleet(api)
    assert_refusal(*await other_api.post("fleets/delete", {"id": fleet["id"]}), 404)
    status, _ = await api.post("fleets/delete", {"id": fleet["id"]})
    assert status == 200
    assert_refusal(*await api.post("get/fleet", {"id": fleet["id"]}), 404)


async def test_reader_cannot_ingest(api: Api, client: Any, config: Config) -> None:
    fleet = await make_fleet(api)
    reader = Api(client, await token_create(config, "rita", ["read"]))
    assert_refusal(*await reader.post(f"/api/ingest/fleets/{fleet['id']}/usage",
                                      {"readings": [{"name": "P1", "current_use": 1.0}]}), 403)


async def test_usage_ingest_is_idempotent(api: Api) -> None:
    fleet = await make_fleet(api)
    route = f"/api/ingest/fleets/{fleet['id']}/usage"
    body = {"readings": [{"name": "P1", "current_use": 500.0, "read_at": "2026-02-01T00:00:00"}]}
    status, first = await api.post(route, body, headers={"Idempotency-Key": "meter-7"})
    assert status == 200 and first["replayed"] is False
    status, again = await api.post(route, body, headers={"Idempotency-Key": "meter-7"})
    assert status == 200 and again["replayed"] is True
    assert {k: v for k, v in again.items() if k != "replayed"} == {k: v for k, v in first.items() if k != "replayed"}
    other = {"readings": [{"name": "P1", "current_use": 900.0}]}
    assert_refusal(*await api.post(route, other, headers={"Idempotency-Key": "meter-7"}), 409, "Idempotency-Key")
    status, got = await api.post("get/fleet", {"id": fleet["id"]})
    assert {i["name"]: i for i in got["items"]}["P1"]["current_use"] == 500.0
