"""The one registry. Every tool action and every original route is declared here once;
the REST routes, the OpenAPI document and the tool protocol (MCP) are all read from it."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web
from pydantic import BaseModel

from bathtub_api import plans
from bathtub_api.auth import User, require_scope
from bathtub_api.errors import ApiError, json_response
from bathtub_api.fields import refuse_nul
from bathtub_api.jobs import JobHandler, JobRunner
from bathtub_api.keys import CONFIG, JOBS, STORE, USER
from bathtub_api.store.readonly import ReadOnlyStore

if TYPE_CHECKING:
    from bathtub_api.config import Config
    from bathtub_api.store import Store


@dataclass(frozen=True)
class Ctx:
    """What a handler may use: the caller, the store, the job runner, the public base URL, the
    service's configuration."""

    user: User
    store: Store
    jobs: JobRunner
    base_url: str
    config: Config
    idempotency_key: str | None = None  # the request's Idempotency-Key header, for the actions that honour it

    @property
    def idempotency_key_hours(self) -> float:
        return self.config.idempotency_key_hours

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    @property
    def plan(self) -> plans.PlanLimits:
        """What the caller's plan allows (Config.<plan>_*)."""
        return plans.limits(self.config, self.user.plan)


BIG_BODY = 1 << 20  # bytes of JSON parsed off the event loop

ActionHandler = Callable[[Ctx, Any], Awaitable[Any]]
# A read-scoped action that stores only for some requests says which: given the validated
# request, the reason it stores (naming the field, e.g. "save: true stores ...") or None.
WritesIf = Callable[[Any], "str | None"]
RouteHandler = Callable[[Ctx, web.Request], Awaitable[Any]]


@dataclass(frozen=True)
class Action:
    tool: str
    action: str | None
    request: type[BaseModel]
    response: type[BaseModel] | None
    handler: ActionHandler
    summary: str
    description: str = ""
    scope: str = "read"
    selector: str = "action"  # the argument naming the action in the tool protocol ("kind" for get)
    pro_only: bool = False
    heavy: bool = False
    rest_only: bool = False
    writes_if: WritesIf | None = None
    # A worked request body, published as the operation's example (Swagger UI shows it). A
    # string that is exactly `{name}` (`{dataset_id}`, `{rbd_id}`) stands for an id of the
    # caller's own item of that kind; tests/service/test_examples.py creates one and posts it.
    example: dict[str, Any] | None = None

    @property
    def stores(self) -> str:
        """Whether a call may store: always (write scope), sometimes (the request says), never."""
        return "always" if self.scope == "write" else "sometimes" if self.writes_if else "never"

    @property
    def path(self) -> str:
        return f"/api/v1/{self.tool}/{self.action}" if self.action else f"/api/v1/{self.tool}"

    @property
    def operation_id(self) -> str:
        return f"{self.tool}_{self.action}" if self.action else self.tool

    def metadata(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "selector": self.selector if self.action else None,
            "action": self.action,
            "scope": self.scope,
            "stores": self.stores,
            "pro_only": self.pro_only,
            "heavy": self.heavy,
            "rest_only": self.rest_only,
        }


@dataclass(frozen=True)
class Route:
    """An original, ingest or import route: a thin REST adapter, outside the tool protocol."""

    method: str
    path: str
    handler: RouteHandler
    summary: str
    scope: str = "read"
    request: type[BaseModel] | None = None
    response: type[BaseModel] | None = None
    content_types: tuple[str, ...] = ("application/json",)
    description: str = ""
    # Query parameters as (name, required, description), for the OpenAPI document.
    # (name, required, description[, schema]): the schema states what the handler checks
    query: tuple[tuple[str, bool, str] | tuple[str, bool, str, dict[str, Any]], ...] = ()
    # A public route's credential is not a user's token (an upload link's own secret): no
    # Authorization header, the handler checks its own credential; `scope` is then unused.
    public: bool = False
    writes_if: WritesIf | None = None
    produces: str = "application/json"  # the 200 answer's media type (a page: text/html, a PDF)

    @property
    def stores(self) -> str:
        return "always" if self.scope == "write" else "sometimes" if self.writes_if else "never"

    @property
    def operation_id(self) -> str:
        """method_path, as a Python identifier: the client's method name (`/strategy/failure-finding`
        gives `post_strategy_failure_finding`, callable as an attribute)."""
        parts = [p.strip("{}") for p in self.path.split("/") if p and p not in ("api", "v1")]
        return re.sub(r"\W", "_", f"{self.method.lower()}_{'_'.join(parts)}")


@dataclass
class Registry:
    actions: dict[tuple[str, str | None], Action] = field(default_factory=dict)
    routes: list[Route] = field(default_factory=list)
    job_kinds: dict[str, JobHandler] = field(default_factory=dict)

    def action(
        self,
        tool: str,
        action: str | None = None,
        *,
        request: type[BaseModel],
        response: type[BaseModel] | None = None,
        summary: str,
        **meta: Any,
    ) -> Callable[[ActionHandler], ActionHandler]:
        def deco(fn: ActionHandler) -> ActionHandler:
            key = (tool, action)
            if key in self.actions:
                raise ValueError(f"action {tool}/{action} registered twice")
            self.actions[key] = Action(tool, action, request, response, fn, summary, **meta)
            return fn

        return deco

    def route(self, method: str, path: str, *, summary: str, **meta: Any) -> Callable[[RouteHandler], RouteHandler]:
        def deco(fn: RouteHandler) -> RouteHandler:
            self.routes.append(Route(method, path, fn, summary, **meta))
            return fn

        return deco

    def body_route(
        self, method: str, path: str, handler: ActionHandler, *, request: type[BaseModel], summary: str, **meta: Any
    ) -> None:
        """An original route whose JSON body is an action's request: validate it, call the
        action's handler. The adapter the original routes share."""

        writes_if = meta.get("writes_if")

        async def adapter(ctx: Ctx, http: web.Request) -> Any:
            model = request.model_validate(await read_json(http))
            require_write_if(ctx.user, writes_if, model)
            return await handler(ctx, model)

        self.routes.append(Route(method, path, adapter, summary, request=request, **meta))

    def job(self, kind: str) -> Callable[[JobHandler], JobHandler]:
        def deco(fn: JobHandler) -> JobHandler:
            if kind in self.job_kinds:
                raise ValueError(f"job kind {kind} registered twice")
            self.job_kinds[kind] = fn
            return fn

        return deco

    def tools(self) -> dict[str, list[Action]]:
        """Actions grouped by tool, in registration order: the tool protocol's view."""
        out: dict[str, list[Action]] = {}
        for a in self.actions.values():
            out.setdefault(a.tool, []).append(a)
        return out

    def add_to(self, app: web.Application) -> None:
        for a in self.actions.values():
            app.router.add_post(a.path, _action_view(a), name=a.operation_id)
        for r in self.routes:
            app.router.add_route(r.method, r.path, _route_view(r), name=r.operation_id)


ANONYMOUS = User(id="", name="", scopes=frozenset(), token_id="")


def ctx_of(request: web.Request, public: bool = False) -> Ctx:
    app = request.app
    base = app[CONFIG].public_base_url
    user = request.get(USER, ANONYMOUS)
    store = app[STORE]
    # A token without `write` gets a store that cannot write: whatever path a handler takes,
    # a read token stores nothing (403 naming the scope), declared or not. A public route's
    # credential is its own (an upload link's secret), checked by its handler.
    if not public and "write" not in user.scopes:
        store = ReadOnlyStore(store)  # type: ignore[assignment]
    return Ctx(user, store, app[JOBS], base, app[CONFIG], request.headers.get("Idempotency-Key"))


def require_write_if(user: User, writes_if: WritesIf | None, model: Any) -> None:
    """Refuse a read token a request that would store (e.g. `save: true`), before any work."""
    if writes_if is not None:
        why = writes_if(model)
        if why:
            require_scope(user, "write", why)


async def invoke(action: Action, ctx: Ctx, body: Any) -> Any:
    """Check scope and plan, validate, run: the single path shared by REST and the tool protocol."""
    require_scope(ctx.user, action.scope)
    if action.pro_only:
        plans.check_tool(ctx.plan, action.tool, action.action)
    if not isinstance(body, dict):
        raise ApiError(422, "body: must be a JSON object")
    model = action.request.model_validate(body)
    require_write_if(ctx.user, action.writes_if, model)
    return await action.handler(ctx, model)


async def read_json(request: web.Request, *, empty: Any = None) -> Any:
    raw = await request.read()  # honours client_max_size: 413 past the limit
    if not raw.strip():
        if empty is not None:
            return empty
        raise ApiError(422, "body: a JSON object is required")
    # A large body is parsed, and searched for NUL, on a thread so the event loop keeps serving meanwhile.
    return _decode(raw) if len(raw) < BIG_BODY else await asyncio.to_thread(_decode, raw)


def _decode(raw: bytes) -> Any:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise ApiError(422, f"body: malformed JSON ({e})") from None
    refuse_nul(body, raw=raw)  # every string a body carries, including free-form parts no model describes
    return body


def _action_view(action: Action) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def view(request: web.Request) -> web.Response:
        body = await read_json(request, empty={})
        return json_response(await invoke(action, ctx_of(request), body))

    return view


def _route_view(route: Route) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def view(request: web.Request) -> web.StreamResponse:
        ctx = ctx_of(request, public=route.public)
        if not route.public:
            require_scope(ctx.user, route.scope)
        for name, value in request.match_info.items():
            refuse_nul(value, name)
        result = await route.handler(ctx, request)
        return result if isinstance(result, web.StreamResponse) else json_response(result)

    return view
