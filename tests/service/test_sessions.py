"""Sessions on both stores: POST /api/v1/session sets a signed HttpOnly SameSite=Strict cookie
(Secure over https) accepted wherever the token is, with its scopes; a cookie-carried change
without this service's Origin is 403 and changes nothing; a forged or expired cookie is 401;
revoking the token or signing out ends the session; the signing key outlives a restart."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from http.cookies import SimpleCookie
from typing import Any

from aiohttp import CookieJar

from bathtub_api import sessions
from bathtub_api.app import create_app
from bathtub_api.cli import main, token_create
from bathtub_api.config import Config
from bathtub_api.store import open_store

DATA = {"name": "d", "data": {"t": [1.0, 2.0]}}


async def browser(aiohttp_client: Any, config: Config) -> Any:
    # unsafe=True: the test server is an IP address, whose cookies aiohttp's jar drops otherwise.
    return await aiohttp_client(create_app(config), cookie_jar=CookieJar(unsafe=True))


def origin(client: Any) -> dict[str, str]:
    return {"Origin": str(client.make_url("/")).rstrip("/")}


async def sign_in(client: Any, token: str) -> tuple[int, Any, SimpleCookie]:
    async with client.post("/api/v1/session", json={"token": token}) as resp:
        cookie: SimpleCookie = SimpleCookie()
        for header in resp.headers.getall("Set-Cookie", []):
            cookie.load(header)
        return resp.status, await resp.json(), cookie


async def call(client: Any, method: str, path: str, **kw: Any) -> tuple[int, Any]:
    async with client.request(method, path, **kw) as resp:
        return resp.status, await resp.json()


async def item_count(config: Config) -> int:
    store = await open_store(config.database_url)
    try:
        row = await store.db.fetchrow("SELECT COUNT(*) AS n FROM items")
        return int(row["n"])
    finally:
        await store.close()


async def test_sign_in_sets_a_strict_http_only_cookie(aiohttp_client: Any, config: Config) -> None:
    client = await browser(aiohttp_client, config)
    token = await token_create(config, "alice", ["read", "write"])
    status, body, cookie = await sign_in(client, token)
    assert status == 200, body
    assert body["user"] == "alice" and body["scopes"] == ["read", "write"] and body["plan"] == "free"
    morsel = cookie[sessions.COOKIE]
    assert morsel["httponly"] and morsel["samesite"] == "Strict" and morsel["path"] == "/"
    assert not morsel["secure"]  # plain http here: a Secure cookie would never come back
    assert int(morsel["max-age"]) == int(config.session_hours * 3600)
    assert token not in morsel.value  # the cookie names a session, never the token
    # Over https (the public base URL) the cookie is Secure.
    https = await browser(aiohttp_client, dataclasses.replace(config, base_url="https://bathtub.example"))
    _, _, cookie = await sign_in(https, token)
    assert cookie[sessions.COOKIE]["secure"]


async def test_the_cookie_works_wherever_the_token_does(aiohttp_client: Any, config: Config) -> None:
    client = await browser(aiohttp_client, config)
    await sign_in(client, await token_create(config, "alice", ["read", "write"]))
    status, created = await call(client, "POST", "/api/v1/datasets/create", json=DATA, headers=origin(client))
    assert status == 200, created
    assert (await call(client, "GET", f"/api/v1/datasets/{created['id']}"))[0] == 200  # a read: no Origin needed
    status, rpc = await call(client, "POST", "/mcp", headers=origin(client),
                             json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                   "params": {"name": "get", "arguments": {"kind": "dataset", "id": created["id"]}}})
    assert status == 200 and rpc["result"]["isError"] is False
    # A read token's session has the read scope only.
    reader = await browser(aiohttp_client, config)
    await sign_in(reader, await token_create(config, "alice", ["read"]))
    status, body = await call(reader, "POST", "/api/v1/datasets/create", json=DATA, headers=origin(reader))
    assert status == 403 and "'write' scope" in body["detail"]
    assert (await call(reader, "POST", "/api/v1/get/dataset", json={"id": created["id"]},
                       headers=origin(reader)))[0] == 200


async def test_a_cookie_without_this_origin_changes_nothing(aiohttp_client: Any, config: Config) -> None:
    client = await browser(aiohttp_client, config)
    await sign_in(client, await token_create(config, "alice", ["read", "write"]))
    before = await item_count(config)
    own = origin(client)["Origin"]
    for headers in ({}, {"Origin": "https://evil.example"}, {"Origin": "null"}, {"Origin": own + ".evil.example"},
                    {"Origin": own.replace("http://", "https://")}):
        for method, path in (("POST", "/api/v1/datasets/create"), ("POST", "/api/v1/rbd/create"),
                             ("POST", "/mcp")):
            status, body = await call(client, method, path, json=DATA, headers=headers)
            assert status == 403 and body["detail"].startswith("Origin:"), (headers, path, body)
    status, body = await call(client, "DELETE", "/api/v1/session", headers={"Origin": "https://evil.example"})
    assert status == 403  # nor sign it out
    assert await item_count(config) == before
    assert (await call(client, "POST", "/api/v1/guide", json={}, headers=origin(client)))[0] == 200


async def test_forged_and_expired_cookies_are_401(aiohttp_client: Any, config: Config) -> None:
    client = await browser(aiohttp_client, config)
    token = await token_create(config, "alice", ["read", "write"])
    _, _, cookie = await sign_in(client, token)
    good = cookie[sessions.COOKIE].value
    _, session_id, expires, sig = good.split(".")
    store = await open_store(config.database_url)
    try:
        key = await store.server_secret("session_hmac")
    finally:
        await store.close()
    assert sessions.encode(key, session_id, float(expires)) == good  # the key the service signs with
    forged = [
        f"v1.{session_id}.{int(expires) + 86400}.{sig}",  # a later expiry, the old signature
        f"v1.ses_{'0' * 20}.{expires}.{sig}",  # another session id
        sessions.encode("not the key", session_id, float(expires)),
        good[:-2] + ("AA" if not good.endswith("AA") else "BB"),
        "v2." + good[3:], "garbage", "",
    ]
    expired = sessions.encode(key, session_id, time.time() - 1)  # properly signed, but past its time
    raw = await aiohttp_client(create_app(config))
    for value, words in [*((f, "bad session cookie") for f in forged if f),
                         (expired, "session expired")]:
        status, body = await call(raw, "GET", "/api/v1/openapi.json")
        assert status == 200  # public either way
        status, body = await call(raw, "POST", "/api/v1/guide", json={},
                                  headers={"Cookie": f"{sessions.COOKIE}={value}", **origin(raw)})
        assert status == 401 and body["detail"].startswith(words), (value, body)
    status, body = await call(raw, "GET", "/api/v1/datasets", headers={"Cookie": f"{sessions.COOKIE}={good}"})
    assert status == 200, body  # the genuine one, sent the same way, works


async def test_revoking_the_token_or_signing_out_ends_the_session(aiohttp_client: Any, config: Config) -> None:
    client = await browser(aiohttp_client, config)
    token = await token_create(config, "alice", ["read", "write"])
    await sign_in(client, token)
    assert (await call(client, "POST", "/api/v1/guide", json={}, headers=origin(client)))[0] == 200
    status, out = await call(client, "DELETE", "/api/v1/session", headers=origin(client))
    assert (status, out) == (200, {"signed_out": True})
    status, body = await call(client, "POST", "/api/v1/guide", json={}, headers=origin(client))
    assert status == 401  # the jar dropped the cookie
    # A copy of the cookie kept from before sign-out is dead too (the session row ended).
    _, _, cookie = await sign_in(client, token)
    kept = {"Cookie": f"{sessions.COOKIE}={cookie[sessions.COOKIE].value}", **origin(client)}
    await call(client, "DELETE", "/api/v1/session", headers=origin(client))
    raw = await aiohttp_client(create_app(config))
    status, body = await call(raw, "POST", "/api/v1/guide", json={}, headers=kept)
    assert status == 401 and "session ended" in body["detail"]
    # Revoking the token (the operator's CLI here) ends every session opened with it.
    _, _, cookie = await sign_in(client, token)
    kept = {"Cookie": f"{sessions.COOKIE}={cookie[sessions.COOKIE].value}", **origin(raw)}
    assert (await call(raw, "POST", "/api/v1/guide", json={}, headers=kept))[0] == 200
    store = await open_store(config.database_url)
    try:
        token_id = (await store.list_tokens("alice"))[0]["id"]
    finally:
        await store.close()
    assert await asyncio.to_thread(main, ["--database-url", config.database_url, "token", "revoke", token_id]) == 0
    status, body = await call(raw, "POST", "/api/v1/guide", json={}, headers=kept)
    assert status == 401 and "revoked" in body["detail"]
    # Signing out without a session says so.
    bearer = {"Authorization": f"Bearer {await token_create(config, 'alice', ['read'])}"}
    assert await call(raw, "DELETE", "/api/v1/session", headers=bearer) == (200, {"signed_out": False})


async def test_sign_in_refusals(aiohttp_client: Any, config: Config) -> None:
    client = await browser(aiohttp_client, config)
    token = await token_create(config, "alice", ["read", "write"])
    for body, status in (({"token": "bt_not-a-real-token"}, 401), ({}, 422), ({"token": token, "x": 1}, 422)):
        assert (await call(client, "POST", "/api/v1/session", json=body))[0] == status
    status, body = await call(client, "POST", "/api/v1/session", json={"token": token},
                              headers={"Origin": "https://evil.example"})  # login CSRF
    assert status == 403
    store = await open_store(config.database_url)
    try:
        assert (await store.db.fetchrow("SELECT COUNT(*) AS n FROM sessions"))["n"] == 0  # none opened
    finally:
        await store.close()


async def test_the_signing_key_outlives_a_restart_or_comes_from_config(aiohttp_client: Any, config: Config) -> None:
    token = await token_create(config, "alice", ["read", "write"])
    first = await browser(aiohttp_client, config)
    _, _, cookie = await sign_in(first, token)
    header = {"Cookie": f"{sessions.COOKIE}={cookie[sessions.COOKIE].value}"}
    again = await aiohttp_client(create_app(config))  # another instance on the same store
    assert (await call(again, "GET", "/api/v1/datasets", headers=header))[0] == 200
    keyed = await aiohttp_client(create_app(dataclasses.replace(config, session_key="operator-set key")))
    status, body = await call(keyed, "GET", "/api/v1/datasets", headers=header)
    assert status == 401  # signed with the stored key, not this one
    keyed_browser = await browser(aiohttp_client, dataclasses.replace(config, session_key="operator-set key"))
    _, _, cookie = await sign_in(keyed_browser, token)
    session_id, expires = cookie[sessions.COOKIE].value.split(".")[1:3]
    assert cookie[sessions.COOKIE].value == sessions.encode("operator-set key", session_id, float(expires))


async def test_bearer_header_wins_over_a_cookie(aiohttp_client: Any, config: Config) -> None:
    # A script that sends its token is judged by the token alone: no Origin rule applies.
    client = await browser(aiohttp_client, config)
    token = await token_create(config, "alice", ["read", "write"])
    await sign_in(client, token)
    status, body = await call(client, "POST", "/api/v1/datasets/create", json=DATA,
                              headers={"Authorization": f"Bearer {token}"})
    assert status == 200, body
