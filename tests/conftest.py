"""Shared fixtures, and the rule of which tests run where.

The suite follows the layers, so each number is checked once, where it is computed:

- Library tests (tests/life, tests/regression, tests/rbd, tests/engine, ...) hold the numerical
  correctness: comparisons with a closed form, a published table, a peer library or R. R is one
  persistent process per session (tests/regression/rref.py). Some route tests still compare a
  route's answer with a peer; they run on one store (below), so each comparison runs once.
- Service tests run the real app on a store: SQLite in a temp file, or a real PostgreSQL named by
  BATHTUB_TEST_POSTGRES_URL (each test in its own schema; required, not skipped, under CI=true).
  A test that reaches `database_url` (through `api`, `client` or `config`) runs on both stores
  by default: storage, jobs and leases, concurrency, idempotency, auth, sessions, sharing,
  uploads, migrations, listing, and hostile bytes and numbers, where the stores differ.
- A service test whose work depends on no store (a route's numerics against a reference, a
  mapping, a refusal decided before anything is stored) is marked `one_store` and runs on SQLite
  only: running it on PostgreSQL too repeats the numerics and tests nothing more.
- `slow` marks the tests that take several seconds each here, well above a service test's usual
  one or two (real `bathtub serve` processes, Chromium, the OpenAPI fuzz, a dask cluster, mixture
  fits, profile-likelihood bounds); `pytest -m "not slow"` is the fast lane. CI runs all.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import queue
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import pytest
from aiohttp import web_app

from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.registry import Registry
from bathtub_api.tools import default_registry
from tests.regression import rref

PG_URL = os.environ.get("BATHTUB_TEST_POSTGRES_URL")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


_SCHEMAS = itertools.count()


@pytest.fixture(autouse=True)
def _forget_finished_apps() -> Iterator[None]:
    """aiohttp memoises each app's middleware chain in a module-level LRU cache of 1,024 entries
    whose keys hold the app itself, so without this every test's app (~27,000 objects) stays
    alive. A few hundred tests in, the heap held ~10 million objects, each full garbage
    collection then paused every thread for seconds (a 5 s stall in the large-CSV test on
    PostgreSQL) and slowed the whole suite. One service process has one app: only tests see it."""
    yield
    web_app._cached_build_middleware.cache_clear()


async def _admin(url: str, sql: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test that reaches `database_url` (through `api`, `client`, `config` or directly) runs on
    both stores, unless it is marked `one_store`: then on SQLite only."""
    if "database_url" in metafunc.fixturenames:
        one = metafunc.definition.get_closest_marker("one_store") is not None
        metafunc.parametrize("database_url", STORES[:1] if one else STORES, indirect=True, scope="function")


@pytest.fixture
async def database_url(request: pytest.FixtureRequest, tmp_path: Any, pg_schemas: Schemas) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'bathtub.sqlite3'}"
        return
    if not PG_URL:
        if IN_CI:
            pytest.fail("CI=true but BATHTUB_TEST_POSTGRES_URL is not set: the PostgreSQL suite must run")
        pytest.skip("set BATHTUB_TEST_POSTGRES_URL to run the PostgreSQL suite")
    # A fresh schema per test (asyncpg passes unknown URL parameters as server settings), so
    # test runs sharing one database never see, or drop, each other's tables.
    schema = f"t_{os.getpid()}_{next(_SCHEMAS)}"
    await _admin(PG_URL, f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};")
    pg_schemas.append(schema)
    yield f"{PG_URL}{'&' if '?' in PG_URL else '?'}search_path={schema}"


@pytest.fixture(scope="session")
def pg_schemas() -> Iterator[Schemas]:
    """The test schemas of this session (this xdist worker), dropped as it goes; see `Schemas`."""
    schemas = Schemas(PG_URL or "")
    yield schemas
    schemas.close()


class Schemas:
    """Drops each test's schema in a background thread once the next test starts, and the last
    when the session ends. Not at a test's own end: an app the test started may still be running
    a job then (its client closes after `database_url`'s teardown), and dropping tables under its
    lease queries deadlocks; but every fixture of a test has ended before the next test begins.
    All at the session's end, one by one as before, kept each worker ~10-25 s longer (~250
    schemas) with nothing else to do."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.current: list[str] = []
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.thread: threading.Thread | None = None
        self.failure: BaseException | None = None

    def append(self, schema: str) -> None:
        """A new test's schema: the ones before it are finished with."""
        for done in self.current:
            self.queue.put(done)
        self.current = [schema]
        if self.thread is None:
            self.thread = threading.Thread(target=self._drop_all, name="drop-test-schemas", daemon=True)
            self.thread.start()

    def close(self) -> None:
        if self.thread is None:
            return
        for done in self.current:
            self.queue.put(done)
        self.queue.put(None)
        self.thread.join()
        if self.failure is not None:
            raise self.failure

    def _drop_all(self) -> None:
        try:
            asyncio.run(self._drop())
        except BaseException as e:  # said at the session's end, where the drops used to fail
            self.failure = e
            while self.queue.get() is not None:  # let close() finish
                pass

    async def _drop(self) -> None:
        conn = await asyncpg.connect(self.url)
        try:
            while (schema := await asyncio.to_thread(self.queue.get)) is not None:
                # one a transaction: many at once overflow the lock table
                await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        finally:
            await conn.close()


@pytest.fixture
def config(database_url: str, tmp_path: Any) -> Config:
    # token_cache_seconds=0: a revocation must show on the very next request in tests.
    return Config(database_url=database_url, rate_limit_per_minute=10_000, job_concurrency=2, cpu_workers=1,
                  token_cache_seconds=0.0, data_dir=str(tmp_path / "files"))


@pytest.fixture
def registry() -> Registry:
    return default_registry()


class Api:
    """A client bound to one token: `await api.post("get/dataset", {...})` -> (status, json)."""

    def __init__(self, client: Any, token: str) -> None:
        self.client = client
        self.token = token

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    async def call(self, method: str, path: str, **kw: Any) -> tuple[int, Any]:
        url = path if path.startswith("/") else f"/api/v1/{path}"
        headers = {**self.headers, **kw.pop("headers", {})}
        async with self.client.request(method, url, headers=headers, **kw) as resp:
            body = await resp.json() if resp.content_type == "application/json" else await resp.text()
            return resp.status, body

    async def post(self, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        return await self.call("POST", path, json=body if body is not None else {}, **kw)

    async def get(self, path: str, **kw: Any) -> tuple[int, Any]:
        return await self.call("GET", path, **kw)


@pytest.fixture
async def client(aiohttp_client: Any, config: Config, registry: Registry) -> Any:
    return await aiohttp_client(create_app(config, registry))


@pytest.fixture
async def api(client: Any, config: Config) -> Api:
    return Api(client, await token_create(config, "alice", ["read", "write"]))


@pytest.fixture
async def other_api(client: Any, config: Config) -> Api:
    return Api(client, await token_create(config, "mallory", ["read", "write"]))


@pytest.fixture
def anyio_backend() -> Iterator[str]:
    yield "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _r_reference() -> Iterator[None]:
    """R, where it is a reference, is one process per session (per xdist worker), started by the first
    test that asks (tests/regression/rref.py) and ended here."""
    yield
    rref.close()
