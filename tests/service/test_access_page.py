"""Settings > API access in headless Chromium against the real service (both stores): sign in
with a token, list tokens (name, scopes, created, last used), create one choosing scopes (shown
once), revoke one, sign out; a form posted from another origin changes nothing; a forged or
expired cookie shows the sign-in form with 401. Screenshots are saved under tmp_path."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from bathtub_api import sessions
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.store import open_store
from tests.browser import chromium
from tests.session_browser import ServedApp, free_port

PAGE = "/settings/api-access"


@pytest.fixture
async def served(config: Config) -> Any:
    s = await asyncio.to_thread(ServedApp.bathtub, config)
    try:
        yield s
    finally:
        await asyncio.to_thread(s.close)


def rows(driver: Any) -> dict[str, dict[str, str]]:
    """The token table as {name: {prefix, scopes, created, last_used}}."""
    # selenium here, not at the top: its webdriver package costs ~0.55 s in every xdist worker
    from selenium.webdriver.common.by import By

    out = {}
    for tr in driver.find_elements(By.CSS_SELECTOR, "#tokens tbody tr"):
        cells = tr.find_elements(By.TAG_NAME, "td")
        name = cells[0].text.replace("this session", "").strip()
        out[name] = {"id": tr.get_attribute("data-token-id"), "prefix": cells[1].text,
                     "scopes": " ".join(s.text for s in cells[2].find_elements(By.CLASS_NAME, "scope")),
                     "created": cells[3].text, "last_used": cells[4].text, "current": "this session" in cells[0].text}
    return out


def submit(driver: Any, button: Any) -> None:
    """Click a form's button and wait for the answer page (a click does not wait for navigation)."""
    # A mark on the old window object, not a reference to an old element: asking Chromium about an
    # element while its document unloads can fail with an inspector error ("Node with given id does not
    # belong to the document") instead of the stale-element error selenium's staleness_of expects.
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script("window.__before_submit = true")
    button.click()
    WebDriverWait(driver, 30, ignored_exceptions=(WebDriverException,)).until(lambda d: d.execute_script(
        "return window.__before_submit === undefined && document.readyState === 'complete'"))


def api_status(url: str, token: str, path: str, body: dict[str, Any]) -> int:
    return httpx.post(f"{url}/api/v1/{path}", json=body, headers={"Authorization": f"Bearer {token}"},
                      timeout=30).status_code


async def live_tokens(config: Config, user: str) -> list[str]:
    store = await open_store(config.database_url)
    try:
        return [t["id"] for t in await store.list_tokens(user) if t["revoked_at"] is None]
    finally:
        await store.close()


@pytest.mark.slow  # ~10 s: Chromium
async def test_api_access_page_in_chromium(served: ServedApp, config: Config, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By  # see rows()

    token = await token_create(config, "alice", ["read", "write"], name="first token")
    shots: list[Path] = []

    def shot(driver: Any, name: str) -> None:
        path = tmp_path / f"{len(shots) + 1:02d}-{name}.png"
        driver.save_screenshot(str(path))
        shots.append(path)

    def drive() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        with chromium() as d:
            d.get(served.url + PAGE)
            assert d.find_element(By.TAG_NAME, "h1").text == "Sign in"
            shot(d, "sign-in")
            d.find_element(By.ID, "token").send_keys("bt_wrong")
            submit(d, d.find_element(By.ID, "sign-in"))
            seen["wrong"] = d.find_element(By.ID, "message").text
            d.find_element(By.ID, "token").send_keys(token)
            submit(d, d.find_element(By.ID, "sign-in"))
            assert d.current_url == served.url + PAGE  # post, redirect, get
            seen["user"] = d.find_element(By.ID, "user").text
            seen["first"] = rows(d)
            cookie = d.get_cookie(sessions.COOKIE)
            seen["cookie"] = cookie
            # Create a read-only token: name and scopes chosen in the form.
            d.find_element(By.ID, "name").send_keys("laptop script")
            assert d.find_element(By.ID, "scope-read").is_selected()
            assert not d.find_element(By.ID, "scope-write").is_selected()
            submit(d, d.find_element(By.ID, "create"))
            seen["new"] = d.find_element(By.ID, "new-token-value").get_attribute("value")
            seen["after_create"] = rows(d)
            shot(d, "created")
            # The new token works with its scopes only.
            seen["new_read"] = api_status(served.url, seen["new"], "guide", {})
            seen["new_write"] = api_status(served.url, seen["new"], "datasets/create",
                                           {"name": "x", "data": {"t": [1.0]}})
            d.get(served.url + PAGE)  # shown once: a fresh page has no token value
            seen["shown_again"] = len(d.find_elements(By.ID, "new-token-value"))
            seen["after_use"] = rows(d)
            # A form on another origin (another port: same site, so the Strict cookie IS sent)
            # posting a revoke: the Origin check refuses it.
            victim = seen["after_use"]["laptop script"]["id"]
            seen["evil_url"] = f"{evil.url}/?target={served.url}{PAGE}/tokens/{victim}/revoke"
            d.get(seen["evil_url"])
            submit(d, d.find_element(By.ID, "go"))
            seen["evil_page"] = d.find_element(By.TAG_NAME, "body").text
            shot(d, "cross-origin-refused")
            seen["after_evil"] = rows_after(d)
            # Revoke it from the page itself.
            d.get(served.url + PAGE)
            for tr in d.find_elements(By.CSS_SELECTOR, "#tokens tbody tr"):
                if tr.get_attribute("data-token-id") == victim:
                    submit(d, tr.find_element(By.CLASS_NAME, "revoke"))
                    break
            seen["revoked_message"] = d.find_element(By.ID, "message").text
            seen["after_revoke"] = rows(d)
            seen["revoked_status"] = api_status(served.url, seen["new"], "guide", {})
            shot(d, "revoked")
            # Sign out.
            submit(d, d.find_element(By.ID, "sign-out"))
            seen["signed_out_h1"] = d.find_element(By.TAG_NAME, "h1").text
            seen["cookie_after_sign_out"] = d.get_cookie(sessions.COOKIE)
            # A forged cookie, then an expired one (signed with the real key): the sign-in form, 401.
            d.add_cookie({"name": sessions.COOKIE, "value": cookie["value"][:-3] + "xyz", "path": "/"})
            d.get(served.url + PAGE)
            seen["forged"] = d.find_element(By.ID, "message").text
            d.add_cookie({"name": sessions.COOKIE, "value": expired, "path": "/"})
            d.get(served.url + PAGE)
            seen["expired"] = d.find_element(By.ID, "message").text
            shot(d, "expired")
        return seen

    def rows_after(d: Any) -> dict[str, dict[str, str]]:
        d.get(served.url + PAGE)
        return rows(d)

    async def evil_page(request: web.Request) -> web.Response:
        target = request.query["target"]
        return web.Response(content_type="text/html", text=(
            f'<!doctype html><h1>Win a prize</h1><form method="post" action="{target}">'
            '<button id="go" type="submit">Claim</button></form>'))

    evil_app = web.Application()
    evil_app.router.add_get("/", evil_page)
    evil = await asyncio.to_thread(ServedApp, evil_app, free_port())
    store = await open_store(config.database_url)
    try:
        key = await store.server_secret("session_hmac")
    finally:
        await store.close()
    expired = sessions.encode(key, "ses_00000000000000000000", time.time() - 60)
    try:
        seen = await asyncio.to_thread(drive)
    finally:
        await asyncio.to_thread(evil.close)
    for path in shots:  # kept beside the test's tmp_path; look at them when the page changes
        print(f"screenshot: {path}")

    assert "not valid" in seen["wrong"]
    assert seen["user"] == "alice"
    first = seen["first"]["first token"]
    assert first["scopes"] == "read write" and first["current"] and first["prefix"] == token[:8] + "…"
    assert first["created"].endswith("UTC") and first["last_used"] != "never"
    cookie = seen["cookie"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"]
    assert seen["new"].startswith("bt_") and seen["new"] != token
    created = seen["after_create"]["laptop script"]
    assert created["scopes"] == "read" and created["last_used"] == "never" and not created["current"]
    assert (seen["new_read"], seen["new_write"]) == (200, 403)
    assert seen["shown_again"] == 0
    assert seen["after_use"]["laptop script"]["last_used"] != "never"
    assert "Origin" in seen["evil_page"] and "Nothing was changed" in seen["evil_page"]
    assert "laptop script" in seen["after_evil"]  # not revoked
    assert seen["revoked_message"].startswith("Token revoked")
    assert "laptop script" not in seen["after_revoke"] and "first token" in seen["after_revoke"]
    assert seen["revoked_status"] == 401
    assert seen["signed_out_h1"] == "Sign in" and seen["cookie_after_sign_out"] is None
    assert seen["forged"].startswith("Your session cookie is not valid")
    assert seen["expired"].startswith("Your session expired.")
    assert len(await live_tokens(config, "alice")) == 1


async def form(client: Any, path: str, data: dict[str, Any] | list[tuple[str, str]], headers: dict[str, str]
               ) -> tuple[int, str]:
    async with client.post(PAGE + path, data=data, headers=headers, allow_redirects=False) as resp:
        return resp.status, await resp.text()


async def test_page_forms_refuse_what_they_must(aiohttp_client: Any, config: Config) -> None:
    """The page's rules without a browser (both stores): statuses a browser does not show."""
    from aiohttp import CookieJar

    from bathtub_api.app import create_app

    client = await aiohttp_client(create_app(config), cookie_jar=CookieJar(unsafe=True))
    own = {"Origin": str(client.make_url("/")).rstrip("/")}
    reader = await token_create(config, "alice", ["read"], name="reader")
    status, _ = await form(client, "/sign-in", {"token": reader}, {"Origin": "https://evil.example"})
    assert status == 403  # login CSRF
    status, _ = await form(client, "/sign-in", {"token": reader}, own)
    assert status == 303
    async with client.get(PAGE) as resp:
        page = await resp.text()
        assert resp.status == 200 and "reader" in page
        assert resp.headers["Cache-Control"] == "no-store" and "frame-ancestors 'none'" in resp.headers[
            "Content-Security-Policy"]
        assert 'value="write"' not in page  # a read session is offered read only
    (token_id,) = await live_tokens(config, "alice")
    before = await live_tokens(config, "alice")
    for headers in ({}, {"Origin": "https://evil.example"}, {"Origin": "null"}):
        assert (await form(client, "/tokens", {"name": "x", "scopes": "read"}, headers))[0] == 403
        assert (await form(client, f"/tokens/{token_id}/revoke", {}, headers))[0] == 403
    assert await live_tokens(config, "alice") == before  # nothing created, nothing revoked
    status, text = await form(client, "/tokens", [("name", "w"), ("scopes", "write")], own)
    assert status == 403 and "lacks write" in text  # no more scopes than the session's token
    status, text = await form(client, "/tokens", [("name", ""), ("scopes", "read")], own)
    assert status == 422 and "name: required" in text
    status, text = await form(client, "/tokens", [("name", "x"), ("scopes", "admin")], own)
    assert status == 422 and "scopes:" in text
    status, text = await form(client, "/tokens/tok_nope/revoke", {}, own)
    assert status == 404
    assert await live_tokens(config, "alice") == before
    other = await token_create(config, "mallory", ["read", "write"])
    (mallory_token,) = await live_tokens(config, "mallory")
    assert (await form(client, f"/tokens/{mallory_token}/revoke", {}, own))[0] == 404  # not alice's
    assert len(await live_tokens(config, "mallory")) == 1 and other
    # A forged cookie: the sign-in form, 401.
    raw = await aiohttp_client(create_app(config))
    async with raw.get(PAGE, headers={"Cookie": f"{sessions.COOKIE}=v1.ses_x.9999999999.AAAA"}) as resp:
        assert resp.status == 401 and "Sign in" in await resp.text()
