"""Shared fixtures, and the rule of which tests run where.

The suite follows the layers, so each number is checked once, where it is computed:

- Library tests (tests/life, tests/regression, tests/rbd, tests/engine, ...) hold the numerical
  correctness: comparisons with a closed form, a published table, a peer library or R. R is one
  persistent process per session (tests/regression/rref.py). Some route tests still compare a
  route's answer with a peer; they run on one store (below), so each comparison runs once.
- Service tests run the real app on a store: SQLite in a temp file, or a real PostgreSQL named by
  BATHTUB_TEST_POSTGRES_URL (required, not skipped, under CI=true). A test that starts the app
  (`client`, `api`) starts on an empty store already migrated: on SQLite a copy of a migrated file,
  on PostgreSQL the worker's migrated schema emptied by TRUNCATE (a test that changed its shape
  gets a fresh one). A test that names `database_url` itself gets a bare store (its own schema).
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
import inspect
import itertools
import os
import queue
import shutil
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import pytest
from aiohttp import web_app

from bathtub_api.app import create_app
from bathtub_api.cli import issue_token
from bathtub_api.config import Config
from bathtub_api.keys import STORE
from bathtub_api.registry import Registry
from bathtub_api.store import open_store
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


def _pg_url(schema: str) -> str:
    # asyncpg passes unknown URL parameters as server settings
    assert PG_URL
    return f"{PG_URL}{'&' if '?' in PG_URL else '?'}search_path={schema}"


def _migrated_is_enough(request: pytest.FixtureRequest) -> bool:
    """Whether this test may start on an empty store that is already migrated, rather than on a
    store with nothing in it. Why: migrating is most of a service test's set-up (~0.3 s of
    PostgreSQL DDL, ~0.05 s on SQLite, for each of ~1,000 tests), and a test that starts the app
    (`client`, hence `api`) sees a migrated, empty store by its first line either way, since the
    app migrates as it starts. A test that names `database_url` itself (the migration stairway,
    CLI `migrate`, real `bathtub serve` processes, seeding before the app) gets the bare store."""
    if "client" not in request.fixturenames:
        return False
    return "database_url" not in inspect.signature(request.function).parameters


@pytest.fixture
async def database_url(request: pytest.FixtureRequest, tmp_path: Any, tmp_path_factory: pytest.TempPathFactory,
                       pg_schemas: Schemas) -> AsyncIterator[str]:
    migrated = _migrated_is_enough(request)
    if request.param == "sqlite":
        path = tmp_path / "bathtub.sqlite3"
        if migrated:  # a copy of this worker's migrated file: a file copy instead of nine migrations
            shutil.copyfile(await _sqlite_template(tmp_path_factory), path)
            path.chmod(0o600)  # as the store creates its file: owner-only
        yield f"sqlite:///{path}"
        return
    if not PG_URL:
        if IN_CI:
            pytest.fail("CI=true but BATHTUB_TEST_POSTGRES_URL is not set: the PostgreSQL suite must run")
        pytest.skip("set BATHTUB_TEST_POSTGRES_URL to run the PostgreSQL suite")
    if migrated:
        yield _pg_url(await pg_schemas.reused())
        return
    # A fresh schema per test, so test runs sharing one database never see, or drop, each
    # other's tables.
    schema = f"t_{os.getpid()}_{next(_SCHEMAS)}"
    await _admin(PG_URL, f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};")
    pg_schemas.append(schema)
    yield _pg_url(schema)


_SQLITE_TEMPLATE: list[Any] = []  # this worker's migrated, empty SQLite file, made on first use


async def _sqlite_template(factory: pytest.TempPathFactory) -> Any:
    if not _SQLITE_TEMPLATE:
        path = factory.mktemp("store-template") / "bathtub.sqlite3"
        store = await open_store(f"sqlite:///{path}")
        await store.close()  # the last connection's close checkpoints the WAL into the file
        _SQLITE_TEMPLATE.append(path)
    return _SQLITE_TEMPLATE[0]


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
    schemas) with nothing else to do.

    Also this worker's reused schema (`reused`): migrated once, emptied for each test that may
    start migrated (see `_migrated_is_enough`), by one TRUNCATE in place of creating, migrating
    (~0.3 s of DDL) and later dropping a schema per test."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.current: list[str] = []
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.thread: threading.Thread | None = None
        self.failure: BaseException | None = None
        self.kept: str | None = None  # the reused schema, while its tables are as migrated
        self.tables: list[str] = []
        self.shape: Any = None

    async def reused(self) -> str:
        """This worker's migrated schema with every table emptied. A test that changed its shape
        (a table, column, index, trigger or function added or dropped, a migration undone) or
        left a lock on it (TRUNCATE waits at most 5 s) hands it to the dropper, and a fresh
        schema is migrated in its place, so no test sees another's leftovers."""
        conn = await asyncpg.connect(self.url)
        try:
            if self.kept is not None:
                if await _shape(conn, self.kept) == self.shape:
                    try:
                        await conn.execute("SET lock_timeout = '5s'")
                        await conn.execute(f"TRUNCATE {', '.join(self.tables)} RESTART IDENTITY CASCADE")
                        return self.kept
                    except asyncpg.LockNotAvailableError:
                        pass
                self.queue.put(self.kept)
                self._start()
                self.kept = None
            schema = f"r_{os.getpid()}_{next(_SCHEMAS)}"
            await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};")
            store = await open_store(_pg_url(schema))
            await store.close()
            rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = $1 "
                                    "AND tablename <> 'schema_migrations'", schema)  # migrations seed no rows
            self.tables = [f'{schema}."{r["tablename"]}"' for r in rows]
            self.shape = await _shape(conn, schema)
            self.kept = schema
            return schema
        finally:
            await conn.close()

    def append(self, schema: str) -> None:
        """A new test's schema: the ones before it are finished with."""
        for done in self.current:
            self.queue.put(done)
        self.current = [schema]
        self._start()

    def _start(self) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._drop_all, name="drop-test-schemas", daemon=True)
            self.thread.start()

    def close(self) -> None:
        if self.kept is not None:
            self.current.append(self.kept)
            self._start()
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


async def _shape(conn: asyncpg.Connection, schema: str) -> Any:
    """What a test could change in a schema's structure: its relations (tables, indexes,
    sequences, views), columns with their types, constraints, triggers, functions and applied
    migrations. Rows are not shape: TRUNCATE empties them."""
    return await conn.fetchrow(
        """SELECT (SELECT string_agg(c.relname || ':' || c.relkind::text, ',' ORDER BY c.relname) FROM pg_class c
                   WHERE c.relnamespace = n.oid),
                  (SELECT string_agg(c.relname || '.' || a.attname || ':' || a.atttypid::text, ','
                                     ORDER BY c.relname, a.attnum)
                   FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                   WHERE c.relnamespace = n.oid AND a.attnum > 0 AND NOT a.attisdropped),
                  (SELECT string_agg(conname, ',' ORDER BY conname) FROM pg_constraint WHERE connamespace = n.oid),
                  (SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                   WHERE c.relnamespace = n.oid),
                  (SELECT count(*) FROM pg_proc WHERE pronamespace = n.oid)
           FROM pg_namespace n WHERE n.nspname = $1""", schema)


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


# The tokens are made through the running app's own store (`token create`'s own work,
# bathtub_api.cli.issue_token), not by `token_create`, which opens and migrates the store again
# (~0.04-0.1 s a token); the CLI's command keeps its own tests.
@pytest.fixture
async def api(client: Any, config: Config) -> Api:
    return Api(client, await issue_token(client.app[STORE], "alice", ["read", "write"]))


@pytest.fixture
async def other_api(client: Any, config: Config) -> Api:
    return Api(client, await issue_token(client.app[STORE], "mallory", ["read", "write"]))


@pytest.fixture
def anyio_backend() -> Iterator[str]:
    yield "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _r_reference() -> Iterator[None]:
    """R, where it is a reference, is one process per session (per xdist worker), started by the first
    test that asks (tests/regression/rref.py) and ended here."""
    yield
    rref.close()
