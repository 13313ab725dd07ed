"""The app factory: create_app(config) -> aiohttp Application (aiohttp-demos `polls` style)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import orjson
from aiohttp import web

from bathtub import engine_version
from bathtub_api import access_page, docs, mailer, mcp, openapi, plans
from bathtub_api.auth import RateLimiter, TokenCache, auth_middleware
from bathtub_api.config import Config
from bathtub_api.errors import error_middleware, json_response
from bathtub_api.jobs import JobRunner
from bathtub_api.keys import BAD_TOKENS, CONFIG, JOBS, LIMITER, REGISTRY, SESSION_KEY, STORE, TOKENS
from bathtub_api.precompressed import Precompressed
from bathtub_api.registry import Registry
from bathtub_api.store import open_store
from bathtub_api.tools import default_registry, sharing, uploads
from bathtub_api.transport import access_middleware, install_protocol_errors


def create_app(config: Config | None = None, registry: Registry | None = None) -> web.Application:
    config = config or Config.from_env()
    reg = registry or default_registry()
    install_protocol_errors()
    app = web.Application(middlewares=[access_middleware, error_middleware, auth_middleware],
                          client_max_size=config.max_body_bytes)
    app[CONFIG] = config
    app[REGISTRY] = reg
    app[LIMITER] = RateLimiter(config.rate_limit_per_minute)
    app[BAD_TOKENS] = RateLimiter(config.bad_token_limit_per_minute)
    app[TOKENS] = TokenCache(config.token_cache_seconds)
    app.cleanup_ctx.append(_store_and_jobs)
    reg.add_to(app)
    mcp.add_route(app, reg)
    document = Precompressed(orjson.dumps(openapi.build(reg)))

    async def openapi_json(request: web.Request) -> web.Response:
        return document.response(request)  # gzip when asked, 304 when the client has it

    async def health(request: web.Request) -> web.Response:
        return json_response({"status": "ok", "store": request.app[STORE].kind, "engine_version": engine_version})

    app.router.add_get("/api/v1/openapi.json", openapi_json, name="openapi")
    app.router.add_get("/healthz", health, name="health")
    docs.add_routes(app, reg)  # the browsable docs at /api/v1/docs
    access_page.add_routes(app)  # Settings > API access: sign in, list, create and revoke tokens
    sharing.add_page_routes(app)  # share links' pages at /s/{secret}
    return app


async def _store_and_jobs(app: web.Application) -> AsyncIterator[None]:
    config = app[CONFIG]
    store = await open_store(config.database_url)
    store.plans = plans.all_limits(config)  # the store enforces the quotas it counts (items, jobs)
    app[STORE] = store
    app[SESSION_KEY] = config.session_key or await store.server_secret("session_hmac")
    jobs = JobRunner(store, app[REGISTRY], concurrency=config.job_concurrency, cpu_workers=config.cpu_workers,
                     retention_days=config.job_retention_days, cpu_limit_s=config.job_cpu_limit_seconds,
                     lease_s=config.job_lease_seconds, heartbeat_s=config.job_heartbeat_seconds,
                     max_attempts=config.job_max_attempts, grace_s=config.shutdown_grace_seconds,
                     engine_threads=config.job_engine_threads, cluster=config.dask_scheduler or None)
    app[JOBS] = jobs
    await jobs.start()
    purger = asyncio.create_task(uploads.purge_loop(store, config))
    mail = asyncio.create_task(mailer.mailer_loop(store, config))
    try:
        yield
    finally:
        purger.cancel()
        mail.cancel()
        await asyncio.gather(purger, mail, return_exceptions=True)
        try:
            await jobs.close()
        finally:
            await store.close()
