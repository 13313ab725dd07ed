"""Settings > API access (spec: tokens are "generated under Settings > API access"): a
server-rendered page with plain forms, no script. A person signs in with a token (a session
cookie, bathtub_api/sessions.py), sees their live tokens (name, scopes, created, last used),
creates one choosing its scopes (shown once, on the answer to the form) and revokes one.

Every form that changes something is a POST carried by the session cookie, so it must come
with this service's Origin (403 otherwise: CSRF) — the same rule the API applies to cookies.
A new token never gets a scope the signed-in token lacks: a read session cannot mint a write
token.
"""

from __future__ import annotations

import os
from typing import Any

import jinja2
from aiohttp import web

from bathtub_api import plans, sessions
from bathtub_api.auth import SCOPES, hash_token, new_token
from bathtub_api.errors import ApiError
from bathtub_api.ids import iso
from bathtub_api.keys import CONFIG, LIMITER, STORE, TOKENS
from bathtub_api.throttle import request_address, too_many
from bathtub_api.tools.session import open_for_token

ROOT = "/settings/api-access"
ASSETS = os.path.join(os.path.dirname(__file__), "access_assets")
CSS_PATH = f"{ROOT}/access.css"
# No script at all; forms post only here; never framed (clickjacking a revoke button).
CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
       "base-uri 'none'")
NAME_MAX = 100

_env = jinja2.Environment(loader=jinja2.FileSystemLoader(ASSETS), autoescape=True, undefined=jinja2.StrictUndefined)


def _page(request: web.Request, status: int = 200, **values: Any) -> web.Response:
    text = _env.get_template("api_access.html").render(root=ROOT, css=CSS_PATH, **values)
    return web.Response(text=text, status=status, content_type="text/html",
                        headers={"Content-Security-Policy": CSP, "Cache-Control": "no-store",
                                 "X-Frame-Options": "DENY",
                                 # not no-referrer: under it a browser sends `Origin: null` with our
                                 # own forms, which the CSRF rule must refuse
                                 "Referrer-Policy": "same-origin"})


async def _signed_in(request: web.Request) -> tuple[dict[str, Any], str] | None:
    """The session the cookie names, None without a cookie; 401 (ApiError) for a forged, expired
    or ended one, 429 for a flooding address or token."""
    cookie = request.cookies.get(sessions.COOKIE)
    if not cookie:
        return None
    owner, session_id = await sessions.cookie_owner(request.app, cookie, request_address(request))
    limiter = request.app[LIMITER]
    wait = limiter.check(owner["token_id"])
    if wait > 0:
        raise too_many(limiter, wait, "requests")
    await request.app[TOKENS].touch(request.app[STORE], owner["token_id"])
    return owner, session_id


def _why_signed_out(detail: str) -> str:
    """The API's 401 detail, said to a person at the page."""
    for start, text in (("bad session cookie", "Your session cookie is not valid (altered or from elsewhere)."),
                        ("session expired", "Your session expired."),
                        ("session ended", "Your session ended (signed out, or its token was revoked).")):
        if detail.startswith(start):
            return f"{text} Sign in again."
    return detail


def _sign_in_page(request: web.Request, status: int = 200, message: str = "") -> web.Response:
    response = _page(request, status, owner=None, message=message, error="", tokens=[], created=None,
                     offered=[], limits=None, refused=False)
    if request.cookies.get(sessions.COOKIE):
        sessions.clear_cookie(response)  # a dead cookie is dropped so the browser stops sending it
    return response


async def _signed_in_page(request: web.Request, owner: dict[str, Any], *, status: int = 200, error: str = "",
                          created: dict[str, Any] | None = None, message: str = "") -> web.Response:
    rows = await request.app[STORE].user_tokens(owner["user_id"])
    tokens = [{"id": r["id"], "name": r["name"] or "(unnamed)", "prefix": r["prefix"],
               "scopes": [s for s in r["scopes"].split(",") if s], "created": _when(r["created_at"]),
               "last_used": _when(r["last_used_at"]) if r["last_used_at"] else "never",
               "current": r["id"] == owner["token_id"]} for r in rows]
    limits = plans.limits(request.app[CONFIG], owner.get("plan") or "free")
    return _page(request, status, owner=owner, message=message, error=error, tokens=tokens, created=created,
                 offered=[s for s in SCOPES if s in owner["scopes"]], limits=limits, refused=False)


def _when(ts: float) -> str:
    text = iso(ts) or ""
    return text[:16].replace("T", " ") + " UTC"  # to the minute: what a person compares


def _guard(handler: Any) -> Any:
    """Run a page handler: a bad session shows the sign-in form (401), a refused form its
    reason; never a JSON body or a traceback on a page."""

    async def view(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except ApiError as e:
            if e.status == 401:
                return _sign_in_page(request, 401, _why_signed_out(e.detail))
            response = _page(request, e.status, owner=None, message="", error=e.detail, tokens=[], created=None,
                             offered=[], limits=None, refused=True)
            response.headers.update(e.headers)
            return response

    return view


async def _changing(request: web.Request) -> tuple[dict[str, Any], str]:
    """A form that changes something: this service's Origin, then a live session."""
    sessions.check_origin(request)
    signed = await _signed_in(request)
    if signed is None:
        raise ApiError(401, "sign in first")
    return signed


async def index(request: web.Request) -> web.StreamResponse:
    signed = await _signed_in(request)
    if signed is None:
        return _sign_in_page(request)
    return await _signed_in_page(request, signed[0])


async def sign_in(request: web.Request) -> web.StreamResponse:
    sessions.check_origin(request)  # a page elsewhere must not sign a browser in (login CSRF)
    form = await request.post()
    token = str(form.get("token", "")).strip()
    if not token:
        return _sign_in_page(request, 422, "token: required field is missing")
    try:
        _, cookie, lifetime = await open_for_token(request, token)
    except ApiError as e:
        if e.status == 401:
            return _sign_in_page(request, 401, "That token is not valid (mistyped, or revoked).")
        raise
    response = _see_other()
    sessions.set_cookie(request, response, cookie, lifetime)
    return response


async def sign_out(request: web.Request) -> web.StreamResponse:
    sessions.check_origin(request)
    cookie = request.cookies.get(sessions.COOKIE)
    if cookie:
        try:
            _, session_id = await sessions.cookie_owner(request.app, cookie, request_address(request))
            await request.app[STORE].end_session(session_id)
        except ApiError:
            pass  # already dead: signing out of it is done
    response = _see_other()
    sessions.clear_cookie(response)
    return response


async def create(request: web.Request) -> web.StreamResponse:
    owner, _ = await _changing(request)
    form = await request.post()
    name = str(form.get("name", "")).strip()
    scopes = [s for s in SCOPES if s in form.getall("scopes", [])]
    unknown = [str(s) for s in form.getall("scopes", []) if s not in SCOPES]
    error = ""
    if not name:
        error = "name: required field is missing"
    elif len(name) > NAME_MAX or any(ord(c) < 32 or ord(c) == 127 for c in name):
        error = f"name: at most {NAME_MAX} characters, no control characters"
    elif unknown or not scopes:
        error = f"scopes: choose one or more of {', '.join(SCOPES)}"
    elif not set(scopes) <= owner["scopes"]:
        missing = sorted(set(scopes) - owner["scopes"])
        return await _signed_in_page(request, owner, status=403,
                                     error=f"scopes: this session's token lacks {', '.join(missing)}; a new "
                                           "token cannot have more than the one signed in with")
    if error:
        return await _signed_in_page(request, owner, status=422, error=error)
    token = new_token()
    token_id = await request.app[STORE].add_token(owner["user_id"], hash_token(token), token[:8], scopes, name)
    created = {"id": token_id, "name": name, "scopes": scopes, "token": token}
    return await _signed_in_page(request, owner, created=created)


async def revoke(request: web.Request) -> web.StreamResponse:
    owner, _ = await _changing(request)
    token_id = request.match_info["token_id"]
    if not await request.app[STORE].revoke_own_token(owner["user_id"], token_id):
        return await _signed_in_page(request, owner, status=404, error=f"no live token of yours with id {token_id}")
    request.app[TOKENS].forget(token_id)  # "it no longer works": in this process, from the next request on
    if token_id == owner["token_id"]:  # that ended this very session
        return _sign_in_page(request, 200, "Revoked the token this session was opened with; you are signed out.")
    return await _signed_in_page(request, owner, message="Token revoked: it no longer works, nor do its sessions.")


def _see_other() -> web.Response:
    """Back to the page after a form (post, redirect, get: a reload does not post again)."""
    return web.Response(status=303, headers={"Location": ROOT, "Cache-Control": "no-store"})


async def css(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(os.path.join(ASSETS, "access.css"), headers={"Cache-Control": "max-age=3600"})


def add_routes(app: web.Application) -> None:
    app.router.add_get(ROOT, _guard(index), name="api_access")
    app.router.add_get(CSS_PATH, css, name="api_access_css")
    app.router.add_post(f"{ROOT}/sign-in", _guard(sign_in), name="api_access_sign_in")
    app.router.add_post(f"{ROOT}/sign-out", _guard(sign_out), name="api_access_sign_out")
    app.router.add_post(f"{ROOT}/tokens", _guard(create), name="api_access_create")
    app.router.add_post(f"{ROOT}/tokens/{{token_id}}/revoke", _guard(revoke), name="api_access_revoke")
