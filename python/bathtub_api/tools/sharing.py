"""Share links: `sharing create_link` / `revoke_link` / `list_links`, and the read-only page at a
link's URL (`GET /s/{secret}`, no token), with its PDF (`GET /s/{secret}/pdf`).

A link's secret is 256 random bits shown once in its URL; only its SHA-256 is stored, looked up
by that hash (an index lookup: the secret is never compared byte by byte) and the row's hash
checked again with a constant-time compare. An unknown, revoked or expired link, or one whose
item was deleted, answers the same 404 page, so a page leaks nothing about why. A link shows its
own item only, read through the owner's read-only store."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Any, Literal

from aiohttp import web
from pydantic import Field

from bathtub import models
from bathtub_api.auth import User
from bathtub_api.errors import ApiError, not_found
from bathtub_api.fields import Id, integer
from bathtub_api.ids import iso, now
from bathtub_api.keys import BAD_TOKENS, LIMITER, REGISTRY
from bathtub_api.pages import CSP, ICON, STYLESHEET, asset, render_gone, stylesheet
from bathtub_api.pages.build import item_page
from bathtub_api.pages.pdf import print_pdf
from bathtub_api.pages.views import KINDS, Source
from bathtub_api.redact import SHARE_PREFIX
from bathtub_api.registry import Ctx, Registry, ctx_of
from bathtub_api.store.readonly import ReadOnlyStore
from bathtub_api.throttle import request_address
from bathtub_api.tools.common import Open, Strict

SHARE_KINDS = (*KINDS, "report")
ShareKind = Literal[SHARE_KINDS]  # type: ignore[valid-type]
PAGE_PREFIX = SHARE_PREFIX  # the log redaction knows this prefix (bathtub_api/redact.py)
SECRET = re.compile(r"^[A-Za-z0-9_-]{43}$")  # token_urlsafe(32): 256 bits
MAX_EXPIRY_S = 366 * 24 * 3600
# The stored kind of each shareable kind (a recurrent model is a model whose record says so).
STORED_KIND = {k: k for k in SHARE_KINDS} | {"recurrent_model": "model"}
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # the URL is the credential: never sent on to another site
    "Cache-Control": "private, no-store",  # a revoked link must not live on in a cache
    "X-Robots-Tag": "noindex, nofollow",
}


class LinkCreate(Strict):
    kind: ShareKind = Field(description="the item's kind; recurrent_model for a recurrent-event model")
    id: Id = Field(description="the item's id (one of the caller's own)")
    expires_in: integer(ge=60, le=MAX_EXPIRY_S) | None = Field(
        None, description="seconds until the link stops working (60 s to 366 days); omit for a link that lasts "
                          "until revoked")


class LinkId(Strict):
    id: Id = Field(description="the link's id (shr_...), from create_link or list_links")


class LinkList(Strict):
    offset: integer(ge=0) = 0
    limit: integer(ge=1, le=500) = 100
    kind: ShareKind | None = None
    item_id: Id | None = Field(None, description="only the links to this item")


class LinkCreated(Strict):
    id: str
    url: str
    kind: str
    item_id: str
    created_at: str | None
    expires_at: str | None


class LinkPage(Open):
    items: list[dict[str, Any]]
    next_offset: int | None


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _link(row: dict[str, Any], at: float) -> dict[str, Any]:
    state = ("revoked" if row["revoked_at"] is not None else
             "expired" if row["expires_at"] is not None and row["expires_at"] <= at else "live")
    return {"id": row["id"], "kind": row["kind"], "item_id": row["item_id"], "state": state,
            "created_at": iso(row["created_at"]), "expires_at": iso(row["expires_at"]),
            "revoked_at": iso(row["revoked_at"])}


async def _owned(ctx: Ctx, kind: str, item_id: str) -> None:
    item = await ctx.store.get_item(ctx.user.id, STORED_KIND[kind], item_id)
    # a recurrent-event model is stored as a model but shown on its own page kind
    if item is None or (kind == "recurrent_model" and models.kind_of(item["body"]).page != kind):
        raise not_found(kind, item_id)


async def create_link(ctx: Ctx, req: LinkCreate) -> dict[str, Any]:
    await _owned(ctx, req.kind, req.id)
    secret = secrets.token_urlsafe(32)
    link_id = f"shr_{secrets.token_hex(10)}"
    expires_at = None if req.expires_in is None else now() + req.expires_in
    await ctx.store.add_share_link(ctx.user.id, link_id, req.kind, req.id, hash_secret(secret), expires_at)
    row = await ctx.store.get_share_link(ctx.user.id, link_id)
    assert row is not None
    return {"id": link_id, "url": ctx.url(f"{PAGE_PREFIX}{secret}"), "kind": req.kind, "item_id": req.id,
            "created_at": iso(row["created_at"]), "expires_at": iso(row["expires_at"])}


async def revoke_link(ctx: Ctx, req: LinkId) -> dict[str, Any]:
    row = await ctx.store.get_share_link(ctx.user.id, req.id)
    if row is None:
        raise not_found("share link", req.id)
    await ctx.store.revoke_share_link(ctx.user.id, req.id)  # revoking twice keeps the first time
    row = await ctx.store.get_share_link(ctx.user.id, req.id)
    assert row is not None
    return _link(row, now())


async def list_links(ctx: Ctx, req: LinkList) -> dict[str, Any]:
    rows = await ctx.store.list_share_links(ctx.user.id, req.limit + 1, req.offset, kind=req.kind,
                                            item_id=req.item_id)
    at = now()
    more = len(rows) > req.limit
    return {"items": [_link(r, at) for r in rows[: req.limit]], "next_offset": req.offset + req.limit if more else None}


def owner_source(ctx: Ctx, request: web.Request, owner: str) -> Source:
    """The item owner's read-only view, for a page whose credential is a link (or the owner's token)."""
    user = User(owner, "", frozenset({"read"}), "")
    store = ctx.store if isinstance(ctx.store, ReadOnlyStore) else ReadOnlyStore(ctx.store)
    return Source(Ctx(user, store, ctx.jobs, ctx.base_url, ctx.config), request.app[REGISTRY])  # type: ignore[arg-type]


def html_response(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8", headers=PAGE_HEADERS)


def pdf_response(data: bytes, name: str) -> web.Response:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-")[:80] or "bathtub"
    return web.Response(body=data, content_type="application/pdf",
                        headers={**PAGE_HEADERS, "Content-Disposition": f'inline; filename="{safe}.pdf"'})


async def _live_link(ctx: Ctx, request: web.Request) -> dict[str, Any] | None:
    """The live link the URL's secret names, or None; unknown secrets count against the client
    address like bad tokens (429 past its limit), while a live link always opens (throttle.Failures:
    looked up first, a limited address's lookups one at a time)."""
    failures = request.app[BAD_TOKENS]
    address = request_address(request)
    secret = request.match_info["secret"]
    row = None
    if SECRET.match(secret):
        digest = hash_secret(secret)
        async with failures.lookup(address):
            row = await ctx.store.live_share_link(digest, now())
        if row is not None and not hmac.compare_digest(row["hash"], digest):
            row = None
    if row is None:
        wait = failures.failed(address)
        if wait > 0:
            raise ApiError(429, f"too many unknown links from this address; retry in {wait:.1f} s",
                           {"Retry-After": str(max(1, int(wait) + 1))})
        return None
    # Opening a page costs plotting: a link is held to the per-token request rate, so one leaked
    # URL cannot keep the service busy.
    limiter = request.app[LIMITER]
    wait = limiter.check(f"link:{row['id']}")
    if wait > 0:
        raise ApiError(429, f"this link is opened too often; retry in {wait:.1f} s",
                       {"Retry-After": str(max(1, int(wait) + 1))})
    return row


async def _page(ctx: Ctx, request: web.Request, pdf: bool) -> web.Response:
    link = await _live_link(ctx, request)
    if link is None:
        return html_response(render_gone(), 404)
    src = owner_source(ctx, request, link["owner"])
    try:
        if pdf:
            html = await item_page(src, link["kind"], link["item_id"], standalone=True)
            return pdf_response(await print_pdf(html, ctx.config.chromium_path, ctx.config.pdf_timeout_s),
                                link["item_id"])
        html = await item_page(src, link["kind"], link["item_id"],
                               pdf_url=f"{PAGE_PREFIX}{request.match_info['secret']}/pdf")
    except ApiError as e:
        if e.status != 404:
            raise
        return html_response(render_gone(), 404)  # the item was deleted: the same answer as any dead link
    return html_response(html)


def register(reg: Registry) -> None:
    reg.action("sharing", "create_link", request=LinkCreate, response=LinkCreated, scope="write",
               summary="A read-only page of one of your items for anyone with the URL (no token): answers {id, url}; "
                       "the URL is shown once (only its hash is kept)")(create_link)
    reg.action("sharing", "revoke_link", request=LinkId, response=Open, scope="write",
               summary="Revoke a share link: its page answers 404 from then on")(revoke_link)
    reg.action("sharing", "list_links", request=LinkList, response=LinkPage,
               summary="Your share links (live, revoked, expired) with their items; URLs are not kept, so not "
                       "listed")(list_links)


def add_page_routes(app: web.Application) -> None:
    """The pages themselves: public (the link's secret is the credential), outside the API and its
    OpenAPI document, like the browsable docs."""

    async def page(request: web.Request) -> web.Response:
        return await _page(ctx_of(request, public=True), request, pdf=False)

    async def page_pdf(request: web.Request) -> web.Response:
        return await _page(ctx_of(request, public=True), request, pdf=True)

    async def css(request: web.Request) -> web.Response:
        return web.Response(text=stylesheet(), content_type="text/css", charset="utf-8",
                            headers={"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"})

    app.router.add_get(PAGE_PREFIX + "{secret}", page, name="share_page")
    app.router.add_get(PAGE_PREFIX + "{secret}/pdf", page_pdf, name="share_page_pdf")
    async def icon(request: web.Request) -> web.Response:
        return web.Response(text=asset("icon.svg"), content_type="image/svg+xml", charset="utf-8",
                            headers={"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff"})

    app.router.add_get(STYLESHEET, css, name="page_css")
    app.router.add_get(ICON, icon, name="page_icon")
    app.router.add_get("/favicon.ico", icon, name="favicon")  # browsers ask for it whatever the page says
