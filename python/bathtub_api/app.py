"""The app factory: create_app(config) -> aiohttp Application (aiohttp-demos `polls` style)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import orjson
from aiohttp import web

from bathtub import engine_version
from bathtub_api import access_page, docs, mailer, mcp, openapi, plans, redact
from bathtub_api.auth import TokenCache, auth_middleware
from bathtub_api.config import Config
from bathtub_api.errors import error_middleware, json_response
from bathtub_api.jobs import JobRunner
from bathtub_api.keys import BAD_TOKENS, CONFIG, JOBS, LIMITER, PHOTOS, REGISTRY, SESSION_KEY, STORE, TOKENS, WRITES
from bathtub_api.photo_decoder import PhotoDecoder
from bathtub_api.precompressed import Precompressed
from bathtub_api.private import restrict_umask
from bathtub_api.registry import Registry
from bathtub_api.store import open_store
from bathtub_api.throttle import Failures, RateLimiter
from bathtub_api.tools import default_registry, sharing, uploads
from bathtub_api.transport import access_middleware, install_protocol_errors
from bathtub_api.write_faults import WriteHealth, probe_files

log = logging.getLogger("bathtub_api")


def create_app(config: Config | None = None, registry: Registry | None = None) -> web.Application:
    config = config or Config.from_env()
    reg = registry or default_registry()
    restrict_umask()  # everything this process writes from now on is owner-only (bathtub_api/private.py)
    install_protocol_errors()
    redact.install()  # secrets in URLs out of aiohttp's own log lines too
    app = web.Application(middlewares=[access_middleware, error_middleware, auth_middleware],
                          client_max_size=config.max_body_bytes)
    app[CONFIG] = config
    app[REGISTRY] = reg
    app[LIMITER] = RateLimiter(config.rate_limit_per_minute)
    app[BAD_TOKENS] = Failures(config.bad_token_limit_per_minute)
    app[TOKENS] = TokenCache(config.token_cache_seconds)
    app[PHOTOS] = PhotoDecoder(config.photo_decodes, config.photo_decode_wait_s)
    app[WRITES] = WriteHealth()
    app.cleanup_ctx.append(_store_and_jobs)
    reg.add_to(app)
    mcp.add_route(app, reg)
    document = Precompressed(orjson.dumps(openapi.build(reg)))

    async def openapi_json(request: web.Request) -> web.Response:
        return document.response(request)  # gzip when asked, 304 when the client has it

    async def health(request: web.Request) -> web.Response:
        """ok, or degraded (still 200: reads are served, and an instance taken out of rotation
        would never see the write that shows it recovered) with the reason of the last refused
        write, until a write of the same kind succeeds. Files are probed here (a 1-byte file,
        only while degraded) since the store's writes may succeed all along."""
        writes = request.app[WRITES]
        if writes.failing("files"):
            await probe_files(writes, config.files_dir())
        out = {"status": "ok", "store": request.app[STORE].kind, "engine_version": engine_version}
        degraded = writes.report()
        if degraded is not None:
            out = {**out, "status": "degraded", **degraded}
        return json_response(out)

    app.router.add_get("/api/v1/openapi.json", openapi_json, name="openapi")
    app.router.add_get("/healthz", health, name="health")
    docs.add_routes(app, reg)  # the browsable docs at /api/v1/docs
    access_page.add_routes(app)  # Settings > API access: sign in, list, create and revoke tokens
    sharing.add_page_routes(app)  # share links' pages at /s/{secret}
    return app


async def _store_and_jobs(app: web.Application) -> AsyncIterator[None]:
    config = app[CONFIG]
    store = await open_store(config.database_url, health=app[WRITES])
    store.plans = plans.all_limits(config)  # the store enforces the quotas it counts (items, jobs)
    app[STORE] = store
    app[SESSION_KEY] = config.session_key or await store.server_secret("session_hmac")
    jobs = JobRunner(store, app[REGISTRY].job_kinds, concurrency=config.job_concurrency, cpu_workers=config.cpu_workers,
                     retention_days=config.job_retention_days, cpu_limit_s=config.job_cpu_limit_seconds,
                     lease_s=config.job_lease_seconds, heartbeat_s=config.job_heartbeat_seconds,
                     max_attempts=config.job_max_attempts, grace_s=config.shutdown_grace_seconds,
                     engine_threads=config.job_engine_threads, cluster=config.dask_scheduler or None)
    app[JOBS] = jobs
    await jobs.start()
    try:  # before the first request: a link a killed process left receiving takes a send again
        await uploads.reset_interrupted_sends(store, config)
        await uploads.purge(store, config)
    except Exception:  # e.g. a full store: serve anyway (reads work), the purge loop retries
        log.exception("upload start-up purge failed")
    purger = asyncio.create_task(uploads.purge_loop(store, config))
    mail = asyncio.create_task(mailer.mailer_loop(store, config))
    try:
        yield
    finally:
        purger.cancel()
        mail.cancel()
        await asyncio.gather(purger, mail, return_exceptions=True)
        app[PHOTOS].close()
        try:
            await jobs.close()
        finally:
            await store.close()
