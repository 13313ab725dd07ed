"""Below and around the handlers: tokens never reach logs or bodies, malformed HTTP answers
JSON, bad tokens are rate-limited per client address, the request log, owner-only SQLite
files, links on the configured base URL, and the headers every answer carries."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest
from aiohttp import web

from bathtub_api.app import create_app
from bathtub_api.auth import hash_token
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.keys import STORE
from bathtub_api.redact import redact
from bathtub_api.store import open_store
from bathtub_api.throttle import RateLimiter
from tests.conftest import Api

# HTTP transport (compression, origins, bodies): no store-specific behaviour (see tests/conftest.py).
pytestmark = pytest.mark.one_store


async def raw(client: Any, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are (no client library to tidy them) and read the whole answer."""
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    writer.write(data)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def everything_logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(f"{r.getMessage()} {r.exc_text or ''} {r.__dict__}" for r in caplog.records)


@pytest.mark.parametrize("fold", ["Authorization: Bearer\r\n {token}", "Authorization: Bearer {half}\r\n\t{rest}"])
async def test_a_folded_authorization_header_leaks_the_token_nowhere(
    client: Any, api: Api, caplog: pytest.LogCaptureFixture, fold: str
) -> None:
    caplog.set_level(logging.DEBUG)
    token = api.token
    header = fold.format(token=token, half=token[:20], rest=token[20:])
    status, headers, body = await raw(client, f"POST /api/v1/guide HTTP/1.1\r\nHost: x\r\n{header}\r\n"
                                              "Content-Length: 2\r\n\r\n{}".encode())
    assert status == 400 and headers["content-type"].startswith("application/json")
    assert orjson.loads(body) == {"detail": "malformed HTTP request (for example a header folded over two lines, "
                                            "or a control character)"}
    assert headers["x-content-type-options"] == "nosniff" and headers["cache-control"] == "no-store"
    logged = everything_logged(caplog)
    assert "malformed" in logged
    for part in (token, token[:20], token[20:]):
        assert part not in logged and part.encode() not in body


@pytest.mark.parametrize(("request_bytes", "status", "detail"), [
    (b"GARBAGE\r\n\r\n", 400, "malformed HTTP request line"),
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n", 431,
     "the request line or a header line is longer than 8190 bytes"),
    (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 431,
     "the request line or a header line is longer than 8190 bytes"),
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Ctl: a\x01b\r\n\r\n", 400,
     "malformed HTTP request (for example a header folded over two lines, or a control character)"),
])
async def test_protocol_errors_answer_json(client: Any, request_bytes: bytes, status: int, detail: str) -> None:
    got, headers, body = await raw(client, request_bytes)
    assert (got, orjson.loads(body)) == (status, {"detail": detail})
    assert headers["content-type"].startswith("application/json") and headers["x-content-type-options"] == "nosniff"


async def test_bad_tokens_are_rate_limited_per_client_address(aiohttp_client: Any, database_url: str) -> None:
    config = Config(database_url=database_url, bad_token_limit_per_minute=3, token_cache_seconds=0.0)
    client = await aiohttp_client(create_app(config))
    good = Api(client, await token_create(config, "alice", ["read"]))
    assert (await good.post("guide"))[0] == 200  # good tokens are not counted
    guesser = Api(client, "bt_" + "x" * 43)
    assert [(await guesser.post("guide"))[0] for _ in range(3)] == [401] * 3
    async with client.post("/api/v1/guide", json={}, headers=guesser.headers) as resp:
        body = await resp.json()
        assert resp.status == 429 and int(resp.headers["Retry-After"]) >= 1
        assert body == {"detail": f"rate limit exceeded (3 bad-token requests per client address a minute); "
                                  f"retry in {body['detail'].split('retry in ')[1]}"}
    # Only failures are limited: the address's good token still goes through (issue 26).
    assert (await good.post("guide"))[0] == 200
    assert (await guesser.post("guide"))[0] == 429
    assert (await Api(client, "").post("guide"))[0] == 401  # no token at all: nothing to guess, not counted


def test_the_bad_token_limiter_is_per_address_refills_and_stays_bounded() -> None:
    lim = RateLimiter(60, max_keys=4)  # one a second
    assert [lim.check("10.0.0.1", at=0.0) for _ in range(60)] == [0.0] * 60
    assert lim.wait("10.0.0.1", at=0.0) == pytest.approx(1.0) and lim.wait("10.0.0.2", at=0.0) == 0.0
    assert lim.wait("10.0.0.1", at=1.0) == 0.0  # a second later one more may go
    for i in range(10):
        lim.check(f"10.0.1.{i}", at=100.0)
    assert lim.size() <= 4


async def test_the_request_log_has_no_query_and_no_token(client: Any, api: Api, caplog: pytest.LogCaptureFixture
                                                         ) -> None:
    caplog.set_level(logging.INFO, logger="bathtub_api.access")
    status, _ = await api.post(f"/api/v1/list/dataset?token={api.token}&x=1", {})
    assert status == 200
    status, _ = await Api(client, "bt_wrong").post("guide")
    assert status == 401
    records = [r for r in caplog.records if r.name == "bathtub_api.access"]
    ok, refused = records[-2], records[-1]
    owner = (await client.app[STORE].token_owner(hash_token(api.token)))["user_id"]
    assert (ok.method, ok.path, ok.status, ok.user_id) == ("POST", "/api/v1/list/dataset", 200, owner)
    assert ok.duration_ms >= 0 and ok.getMessage().startswith(f"POST /api/v1/list/dataset 200 user={owner} ")
    assert (refused.path, refused.status, refused.user_id) == ("/api/v1/guide", 401, "-")
    assert api.token not in everything_logged(caplog) and "token=" not in everything_logged(caplog)


async def test_sqlite_files_are_owner_only(tmp_path: Any) -> None:
    path = tmp_path / "bathtub.sqlite3"
    old = tmp_path / "old.sqlite3"
    old.touch(mode=0o644)
    os.chmod(old, 0o644)
    for p in (path, old):
        store = await open_store(f"sqlite:///{p}")
        await store.ensure_user("alice")  # a write: the WAL and shared-memory files exist now
        try:
            for f in (p, p.with_name(p.name + "-wal"), p.with_name(p.name + "-shm")):
                assert stat.S_IMODE(os.stat(f).st_mode) == 0o600, f
        finally:
            await store.close()


async def test_returned_urls_use_the_configured_base_url_not_the_host_header(
    aiohttp_client: Any, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Config(host="10.1.2.3", port=9000).public_base_url == "http://10.1.2.3:9000"
    monkeypatch.setenv("BATHTUB_BASE_URL", "https://bathtub.example.com/")
    config = Config.from_env(database_url=database_url)
    assert config.public_base_url == "https://bathtub.example.com"
    client = await aiohttp_client(create_app(config))
    api = Api(client, await token_create(config, "alice", ["read", "write"]))
    status, made = await api.post("datasets/create", {"name": "d", "data": {"x": [1.0, 2.0]}},
                                  headers={"Host": "evil.example", "X-Forwarded-Host": "evil.example"})
    assert status == 200, made
    assert made["url"].startswith("https://bathtub.example.com/api/v1/") and "evil" not in orjson.dumps(made).decode()
    default = await aiohttp_client(create_app(Config(database_url=database_url)))
    status, made = await Api(default, api.token).post("datasets/create", {"name": "d", "data": {"x": [1.0]}},
                                                      headers={"Host": "evil.example"})
    assert status == 200 and made["url"].startswith("http://127.0.0.1:8080/api/v1/"), made


async def test_every_answer_carries_nosniff_and_no_store(client: Any, api: Api) -> None:
    for method, path, headers in (("POST", "/api/v1/guide", api.headers), ("POST", "/api/v1/guide", {}),
                                  ("GET", "/api/v1/openapi.json", {}), ("GET", "/healthz", {}),
                                  ("GET", "/nowhere", {}), ("POST", "/mcp", api.headers)):
        async with client.request(method, path, headers=headers, json={}) as resp:
            assert resp.headers["X-Content-Type-Options"] == "nosniff", (method, path)
            # the public OpenAPI document may be kept, but is checked again each time (by its ETag)
            cache = "no-cache" if path == "/api/v1/openapi.json" else "no-store"
            assert resp.headers["Cache-Control"] == cache, (method, path)


async def test_a_client_that_hangs_up_mid_body_is_no_server_error(config: Config,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    token = await token_create(config, "alice", ["read", "write"])
    # Served as `bathtub serve` serves (aiohttp's test server cancels the handler instead, so the
    # handler never sees the connection's loss as run_app's does).
    runner = web.AppRunner(create_app(config))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        host, port = runner.addresses[0][:2]
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"POST /api/v1/get/dataset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Authorization: Bearer " + token.encode() + b"\r\nContent-Length: 100\r\n\r\n{\"id\": ")
        await writer.drain()
        await asyncio.sleep(0.3)  # the handler is waiting for the rest of the body
        writer.close()
        for _ in range(200):
            if any(getattr(r, "path", None) == "/api/v1/get/dataset" for r in caplog.records):
                break
            await asyncio.sleep(0.05)
        logged = everything_logged(caplog)
        assert "closed the connection before its request arrived whole" in logged
        assert "unhandled error" not in logged and "Traceback" not in logged
        assert [r.status for r in caplog.records if getattr(r, "path", None) == "/api/v1/get/dataset"] == [400]
    finally:
        await runner.cleanup()


async def test_link_secrets_never_reach_a_log_line(api: Api, caplog: pytest.LogCaptureFixture,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26: every share-page open logged `GET /s/<secret> 200`; the secret is stored only as
    a hash, so the log was the one place a reader could take a live link from. Every logger at
    every level is captured: ours, and aiohttp's request-line logger the test server turns on."""
    caplog.set_level(logging.DEBUG)
    _, ds = await api.post("datasets/create", {"name": "d", "data": {"t": [1.0, 2.0, 3.0]}})
    _, link = await api.post("sharing/create_link", {"kind": "dataset", "id": ds["id"]})
    path = urlsplit(link["url"]).path
    secret = path.removeprefix("/s/")
    _, upload = await api.post("uploads/create", {"purpose": "dataset_import", "filename": "lives.csv"})
    parts = urlsplit(upload["url"])
    token = parts.query.removeprefix("t=")
    async with api.client.get(path) as resp:
        assert resp.status == 200
    async with api.client.get(f"{path}/nothing-here") as resp:
        assert resp.status == 404
    async with api.client.put(f"{parts.path}?{parts.query}", data=b"time,state\n1,F\n") as resp:
        assert resp.status == 200
    # A bug while drawing a page (a fault no request can cause): its log line and traceback.
    from bathtub_api.tools import sharing

    async def broken(*args: Any, **kwargs: Any) -> str:
        raise RuntimeError(f"could not draw the page with pdf link {kwargs['pdf_url']}")

    monkeypatch.setattr(sharing, "item_page", broken)
    async with api.client.get(path) as resp:
        assert resp.status == 500
    logged = everything_logged(caplog) + caplog.text
    assert secret not in logged and token not in logged
    # What is left still tells which page was opened, and how it went.
    access = [(r.method, r.path, r.status) for r in caplog.records if r.name == "bathtub_api.access"]
    assert ("GET", "/s/<redacted>", 200) in access and ("GET", "/s/<redacted>/nothing-here", 404) in access
    assert ("PUT", parts.path, 200) in access and ("GET", "/s/<redacted>", 500) in access
    assert "unhandled error on GET /s/<redacted>" in caplog.text
    assert "RuntimeError: could not draw the page with pdf link /s/<redacted>/pdf" in caplog.text
    assert f"PUT {parts.path}?t=<redacted> HTTP/1.1" in caplog.text  # aiohttp's own request line


@pytest.mark.parametrize(("text", "clean"), [
    ("/s/AbC_-9/pdf", "/s/<redacted>/pdf"),
    ('GET /s/AbC?x=1 HTTP/1.1" 200 "https://example.com/s/AbC"', 'GET /s/<redacted>?x=1 HTTP/1.1" 200 '
                                                                 '"https://example.com/s/<redacted>"'),
    ("PUT /api/uploads/upl_1?a=1&t=tok-en_1&b=2", "PUT /api/uploads/upl_1?a=1&t=<redacted>&b=2"),
    ("/s/<redacted>/pdf?t=<redacted>", "/s/<redacted>/pdf?t=<redacted>"),  # twice changes nothing
    ("/api/v1/list/dataset?at=5", "/api/v1/list/dataset?at=5"),  # only a parameter named t
])
def test_redact(text: str, clean: str) -> None:
    assert redact(text) == clean
