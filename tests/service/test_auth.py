"""Tokens, scopes, ownership and the rate limit."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import CookieJar

from bathtub_api.app import create_app
from bathtub_api.auth import hash_token
from bathtub_api.cli import main, token_create
from bathtub_api.config import Config
from bathtub_api.store import open_store
from tests.conftest import Api

DATA = {"name": "d", "data": {"t": [1.0, 2.0]}}


async def test_missing_and_bad_tokens_are_401(api: Api) -> None:
    for headers in ({}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer bt_not-a-real-token"}):
        async with api.client.post("/api/v1/guide", json={}, headers=headers) as resp:
            assert resp.status == 401
            assert list((await resp.json()).keys()) == ["detail"]


async def test_read_only_token_cannot_write(api: Api, config: Config) -> None:
    reader = Api(api.client, await token_create(config, "alice", ["read"]))
    status, body = await reader.post("datasets/create", DATA)
    assert status == 403 and "write" in body["detail"]
    status, _ = await reader.post("guide")
    assert status == 200


async def test_other_users_items_are_404_never_403(api: Api, other_api: Api) -> None:
    status, created = await api.post("datasets/create", DATA)
    assert status == 200
    for call in (
        other_api.post("get/dataset", {"id": created["id"]}),
        other_api.get(f"/api/v1/datasets/{created['id']}"),
        other_api.post(f"/api/ingest/datasets/{created['id']}/lives", {"rows": [{"t": 3.0}]}),
    ):
        status, body = await call
        assert status == 404, body
    status, listing = await other_api.post("list/dataset")
    assert listing["items"] == []
    status, page = await api.post("get/dataset", {"id": created["id"]})
    assert page["row_count"] == 2  # mallory's ingest changed nothing


async def test_tokens_are_stored_hashed_and_revocable(api: Api, config: Config, capsys: Any) -> None:
    store = await open_store(config.database_url)
    try:
        rows = await store.db.fetch("SELECT hash, prefix FROM tokens")
        assert all(api.token not in (r["hash"], r["prefix"]) for r in rows)
        assert hash_token(api.token) in {r["hash"] for r in rows}
        listed = await store.list_tokens("alice")
    finally:
        await store.close()
    url_args = ["--database-url", config.database_url]
    assert await asyncio.to_thread(main, [*url_args, "token", "revoke", listed[0]["id"]]) == 0
    status, body = await api.post("guide")
    assert status == 401 and "revoked" in body["detail"]
    assert await asyncio.to_thread(main, [*url_args, "token", "revoke", listed[0]["id"]]) == 1
    assert await asyncio.to_thread(main, [*url_args, "token", "list", "--user", "alice"]) == 0
    out = capsys.readouterr().out
    assert "revoked" in out and api.token not in out


async def test_rate_limit_answers_429_with_retry_after(aiohttp_client: Any, database_url: str) -> None:
    config = Config(database_url=database_url, rate_limit_per_minute=5)
    client = await aiohttp_client(create_app(config))
    limited = Api(client, await token_create(config, "alice", ["read"]))
    statuses = [(await limited.post("guide"))[0] for _ in range(5)]
    assert statuses == [200] * 5
    async with client.post("/api/v1/guide", json={}, headers=limited.headers) as resp:
        assert resp.status == 429
        assert int(resp.headers["Retry-After"]) >= 1
        assert "rate limit" in (await resp.json())["detail"]
    other = Api(client, await token_create(config, "bob", ["read"]))
    assert (await other.post("guide"))[0] == 200  # the limit is per token


async def test_bad_tokens_from_an_address_never_lock_out_valid_credentials(aiohttp_client: Any,
                                                                           database_url: str) -> None:
    """Issue 26: 31 bad tokens from one address (behind a proxy, everyone's) used to answer 429
    to every request from it, good tokens and session cookies included."""
    config = Config(database_url=database_url, token_cache_seconds=0.0)  # the default limit, 30 a minute
    client = await aiohttp_client(create_app(config), cookie_jar=CookieJar(unsafe=True))
    guesser = Api(client, "bt_" + "x" * 43)
    statuses = [(await guesser.post("guide"))[0] for _ in range(31)]
    assert statuses == [401] * 30 + [429]
    fresh = await token_create(config, "alice", ["read"])
    assert (await Api(client, fresh).post("guide"))[0] == 200  # a valid token goes through
    async with client.post("/api/v1/session", json={"token": fresh}) as resp:
        assert resp.status == 200  # signing in with it too
    async with client.get("/api/v1/datasets") as resp:  # and its session cookie, no Authorization
        assert resp.status == 200
    # Guessing stays expensive: the address's next bad token (and a bad sign-in) is still 429.
    assert (await guesser.post("guide"))[0] == 429
    async with client.post("/api/v1/session", json={"token": "bt_" + "y" * 43}) as resp:
        assert resp.status == 429 and int(resp.headers["Retry-After"]) >= 1
