"""A send cut off does not burn its upload link, on both stores: the real `bathtub serve` killed
with SIGKILL mid-PUT, then restarted, takes a send on the same link and its partial file is
gone; a client that hangs up mid-send leaves the link unused; and a link another process is
receiving into (its lease live) is never reset, one whose lease ran out is."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest

from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.ids import now
from bathtub_api.keys import STORE
from bathtub_api.store import open_store
from bathtub_api.tools import uploads
from tests.conftest import Api
from tests.service.serving import ON_PROC, Client, Server
from tests.service.test_uploads import link, send

HEAD = b"time,state\n"


async def upload_row(database_url: str, upload_id: str) -> dict[str, Any]:
    store = await open_store(database_url)
    try:
        item = await store.find_item("upload", upload_id)
        assert item is not None
        return item
    finally:
        await store.close()


async def start_send(url: str, total: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A PUT of `total` bytes of which only the head is sent: the service is left receiving."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    writer.write(f"PUT {parts.path}?{parts.query} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                 "Content-Type: application/octet-stream\r\nConnection: close\r\n"
                 f"Content-Length: {total}\r\n\r\n".encode() + HEAD)
    await writer.drain()
    return reader, writer


def parts_in(files: Path) -> list[str]:
    where = files / "uploads"
    return sorted(p for p in os.listdir(where) if p.endswith(".part")) if where.exists() else []


async def state_when(database_url: str, upload_id: str, want: str) -> dict[str, Any]:
    for _ in range(400):
        item = await upload_row(database_url, upload_id)
        if item["body"]["state"] == want:
            return item
        await asyncio.sleep(0.05)
    raise AssertionError(f"upload {upload_id} stayed {item['body']['state']}")


@ON_PROC
@pytest.mark.slow  # a real `bathtub serve` killed mid-upload and restarted
async def test_kill_9_mid_put_then_restart_the_link_takes_a_send(database_url: str, tmp_path: Path,
                                                                 servers: list[Server],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    files = tmp_path / "files"
    monkeypatch.setenv("BATHTUB_DATA_DIR", str(files))
    token = await token_create(Config(database_url=database_url), "alice", ["read", "write"])
    async with aiohttp.ClientSession() as http:
        servers.append(first := Server(database_url, tmp_path / "serve.log"))
        await first.ready(http)
        status, made = await Client(http, first, token).post(
            "/api/v1/uploads/create", {"purpose": "dataset_import", "filename": "lives.csv"})
        assert status == 200, made
        url = made["url"].replace(urlsplit(made["url"]).netloc, f"127.0.0.1:{first.port}")
        _, writer = await start_send(url, 1_000_000)
        item = await state_when(database_url, made["upload_id"], "receiving")
        assert parts_in(files) == [item["body"]["part"]]
        first.proc.kill()
        first.proc.wait()
        writer.close()
        # Still receiving, as the killed process left it (without leases, for good: 409 "used already").
        assert (await upload_row(database_url, made["upload_id"]))["body"]["state"] == "receiving"

        # The next instance resets it once its lease ran out (1.5 s in these servers; wait past it).
        while now() <= item["body"]["lease_until"]:
            await asyncio.sleep(0.1)
        servers.append(second := Server(database_url, tmp_path / "serve.log"))
        await second.ready(http)
        assert parts_in(files) == []
        async with http.put(url.replace(f":{first.port}", f":{second.port}"), data=HEAD + b"120,F\n340,S\n") as r:
            sent = await r.json()
            assert r.status == 200, sent
        assert sent["size"] == len(HEAD) + 12
        row = await upload_row(database_url, made["upload_id"])
        assert row["body"]["state"] == "used" and "receiver" not in row["body"] and "lease_until" not in row["body"]
        assert parts_in(files) == []


async def test_a_client_that_hangs_up_mid_send_leaves_the_link_unused(api: Api, config: Config,
                                                                      database_url: str) -> None:
    made = await link(api)
    url = str(api.client.make_url(urlsplit(made["url"]).path)) + "?" + urlsplit(made["url"]).query
    _, writer = await start_send(url, 1_000_000)
    await state_when(database_url, made["upload_id"], "receiving")
    writer.close()
    await writer.wait_closed()
    item = await state_when(database_url, made["upload_id"], "unused")
    assert set(item["body"]) & {"receiver", "lease_until", "part"} == set()
    assert parts_in(Path(config.files_dir())) == []
    status, out = await send(api, made["url"], HEAD + b"120,F\n")
    assert status == 200, out


async def test_only_a_send_whose_lease_ran_out_is_reset(api: Api, config: Config) -> None:
    """Several processes on one store: another's live send (lease ahead) is left alone by this
    one's sweep; once its lease is past (its process died), the link is reset and its file removed."""
    made = await link(api)
    store = api.client.app[STORE]
    item = await store.find_item("upload", made["upload_id"])
    part = Path(config.files_dir()) / "uploads" / f"{made['upload_id']}.other.part"
    part.parent.mkdir(parents=True, exist_ok=True)
    part.write_bytes(HEAD)
    live = {**item["body"], "state": "receiving", "receiver": "elsewhere:1:abcd", "lease_until": now() + 3600.0,
            "part": part.name}
    assert await store.update_item(item["owner"], "upload", item["id"], item["name"], live)
    assert await uploads.reset_interrupted_sends(store, config) == 0
    assert part.exists()
    status, out = await send(api, made["url"], HEAD)
    assert status == 409 and "used already" in out["detail"], out

    stale = {**live, "lease_until": now() - 1.0}
    assert await store.update_item(item["owner"], "upload", item["id"], item["name"], stale)
    assert await uploads.reset_interrupted_sends(store, config) == 1
    assert not part.exists()
    status, out = await send(api, made["url"], HEAD + b"120,F\n")
    assert status == 200, out


async def test_the_purge_leaves_a_live_send_alone(api: Api, config: Config) -> None:
    """Past retention the purge deletes stored bytes, but a link being received is its lease's to settle."""
    made = await link(api)
    store = api.client.app[STORE]
    item = await store.find_item("upload", made["upload_id"])
    live = {**item["body"], "state": "receiving", "receiver": "elsewhere:1:abcd", "lease_until": now() + 3600.0,
            "part": "x.part"}
    assert await store.update_item(item["owner"], "upload", item["id"], item["name"], live)
    assert await uploads.purge(store, dataclasses.replace(config, upload_retention_s=-1.0)) == 0
    assert (await store.find_item("upload", made["upload_id"]))["body"]["state"] == "receiving"


async def test_a_wrong_token_during_a_send_neither_breaks_it_nor_is_forgotten(api: Api, database_url: str) -> None:
    """A wrong token tried on a link being received counts (the 429 after too many), and the
    live send still completes: the link's version moved on, but it is still that send's."""
    made = await link(api)
    url = str(api.client.make_url(urlsplit(made["url"]).path)) + "?" + urlsplit(made["url"]).query
    rest = b"120,F\n340,S\n"
    reader, writer = await start_send(url, len(HEAD) + len(rest))
    await state_when(database_url, made["upload_id"], "receiving")
    wrong = made["url"].split("?t=")[0] + "?t=" + "x" * 32
    status, out = await send(api, wrong, b"a")
    assert status == 404, out
    writer.write(rest)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    assert answer.startswith(b"HTTP/1.1 200 "), answer
    item = await upload_row(database_url, made["upload_id"])
    assert item["body"]["state"] == "used" and item["body"]["attempts"] == 1
