"""Sessions (spec: "A session is accepted as an alternative"): sign in with a token for a signed
session cookie, sign out. The cookie's rules live in bathtub_api/sessions.py."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import BaseModel

from bathtub_api import sessions
from bathtub_api.auth import hash_token, token_owner
from bathtub_api.errors import ApiError, json_response
from bathtub_api.fields import text
from bathtub_api.keys import BAD_TOKENS, SESSION, STORE
from bathtub_api.registry import Ctx, Registry, read_json
from bathtub_api.throttle import request_address
from bathtub_api.tools.common import Strict

PATH = "/api/v1/session"


class SignIn(Strict):
    """The token to sign in with (as `bathtub token create` printed it, or the API access page)."""

    token: text(min_length=1, max_length=200)


class SessionOpened(BaseModel):
    user: str
    plan: str
    scopes: list[str]
    token_id: str
    expires_at: str


class SignedOut(BaseModel):
    signed_out: bool


async def open_for_token(request: web.Request, token: str) -> tuple[dict[str, Any], str, float]:
    """Check a token as the bearer path does (a bad one is 401 and slows the client address)
    and open a session for it. Shared by the JSON route and the API access page's form."""
    app = request.app
    address = request_address(request)
    owner = await token_owner(app, hash_token(token.strip()), address)
    if owner is None:
        app[BAD_TOKENS].refuse(address)  # 429 once the address is past its limit
        raise ApiError(401, "token: bad or revoked token")
    return await sessions.open_session(app, owner)


async def sign_in(ctx: Ctx, request: web.Request) -> web.Response:
    # A browser posting from another site's page would sign its user in as the attacker (login
    # CSRF): an Origin, when sent, must be ours. Scripts and the Python client send none.
    if "Origin" in request.headers:
        sessions.check_origin(request)
    req = SignIn.model_validate(await read_json(request))
    shown, cookie, lifetime = await open_for_token(request, req.token)
    response = json_response(shown)
    sessions.set_cookie(request, response, cookie, lifetime)
    return response


async def sign_out(ctx: Ctx, request: web.Request) -> web.Response:
    session_id = request.get(SESSION)
    # Ending one's own session stores nothing of the user's: the raw store, whatever the scopes.
    ended = bool(session_id) and await request.app[STORE].end_session(session_id)
    response = json_response({"signed_out": ended})
    sessions.clear_cookie(response)
    return response


def register(reg: Registry) -> None:
    reg.route("POST", PATH, public=True, request=SignIn, response=SessionOpened,
              summary="Sign in with a token: a session cookie for browsers",
              description="Answers the user, plan, scopes (the token's) and expires_at, and sets the "
                          "`bathtub_session` cookie: signed, HttpOnly, SameSite=Strict, Secure over https, "
                          "valid for Config.session_hours (BATHTUB_SESSION_HOURS, default 12). The cookie is "
                          "accepted wherever the token is, with its scopes; revoking the token ends its "
                          "sessions. A request signed in by the cookie that changes anything must carry this "
                          "service's Origin (else 403). 401 for a bad or revoked token.")(sign_in)
    reg.route("DELETE", PATH, response=SignedOut,
              summary="Sign out: end this session and clear its cookie",
              description="`signed_out` is false when the request carried no session (a bearer token). "
                          "A forged or expired cookie is 401; without this service's Origin, 403.")(sign_out)
