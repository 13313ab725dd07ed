"""Writes the storage refuses, caused for real: a full SQLite store (`PRAGMA max_page_count`, a
real SQLITE_FULL), a read-only store (SQLite's `query_only`, a real SQLITE_READONLY; a
PostgreSQL role whose transactions are read-only, a real read_only_sql_transaction), and a full
file system for uploads (a small tmpfs, when this machine lets us mount one). Each is a 507
naming the cause, nothing is half-written, /healthz says degraded until writes succeed again,
and a job whose result cannot be stored neither crashes the runner nor stays stuck.

PostgreSQL's disk_full cannot be caused here (it would need the shared server's disk filled):
its recognition is checked on the driver's own exception class instead."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import subprocess
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from PIL import Image

from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.jobs import JobCtx
from bathtub_api.keys import STORE
from bathtub_api.registry import Ctx, Registry
from bathtub_api.store.guarded import GuardedDriver
from bathtub_api.tools import default_registry
from bathtub_api.tools.common import Strict
from bathtub_api.write_faults import write_fault
from tests.conftest import PG_URL, Api
from tests.service.test_photos import dataset as some_dataset
from tests.service.test_photos import post_photo
from tests.service.test_uploads import link, send

FULL = "the store is full: database or disk is full; nothing was saved"
ROWS = {"time": [float(i) for i in range(1, 3001)]}
Switch = Callable[[bool], Awaitable[None]]


def dataset(name: str) -> dict[str, Any]:
    return {"name": name, "data": ROWS}


async def health(api: Api) -> dict[str, Any]:
    async with api.client.get("/healthz") as resp:
        assert resp.status == 200
        return dict(await resp.json())


async def names(api: Api) -> list[str]:
    status, out = await api.post("list/dataset", {})
    assert status == 200, out
    return [d["name"] for d in out["items"]]


def inner(api: Api) -> Any:
    guarded = api.client.app[STORE].db
    assert isinstance(guarded, GuardedDriver)
    return guarded.inner


async def sqlite_full(api: Api, full: bool) -> None:
    """Cap the writer's file at its present size (SQLite refuses to grow it: SQLITE_FULL), or lift it."""
    driver = inner(api)
    (row,) = await driver.fetch("PRAGMA page_count")
    await driver.execute(f"PRAGMA max_page_count = {row['page_count'] if full else 1_000_000_000}")


@pytest.fixture
def sqlite_only(database_url: str) -> None:
    if not database_url.startswith("sqlite"):
        pytest.skip("max_page_count and query_only are SQLite's")


async def test_a_full_store_is_507_nothing_saved_and_healthz_degraded_until_a_write_succeeds(
        api: Api, sqlite_only: None) -> None:
    assert set(await health(api)) == {"status", "store", "engine_version"}  # the ok answer keeps its shape
    assert (await health(api))["status"] == "ok"
    status, out = await api.post("datasets/create", dataset("before"))
    assert status == 200, out
    await sqlite_full(api, True)

    status, out = await api.post("datasets/create", dataset("too big"))
    assert (status, out) == (507, {"detail": FULL})
    # A small row may still fit a page's free space: links are made until the page is full too.
    made = 0
    for _ in range(400):
        status, out = await api.post("uploads/create", {"purpose": "dataset_import", "filename": "x.csv"})
        if status != 200:
            break
        made += 1
    assert (status, out) == (507, {"detail": FULL})
    status, listed = await api.post("list/upload", {"limit": 500})
    assert status == 200 and len(listed["items"]) == made
    # The same refusal through the tool protocol: a tool error, not a transport fault.
    async with api.client.post("/mcp", headers=api.headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "datasets", "arguments": {"action": "create", **dataset("by mcp")}}}) as resp:
        assert resp.status == 200
        result = (await resp.json())["result"]
    assert result["isError"] and result["structuredContent"] == {"detail": FULL, "status": 507}

    degraded = await health(api)
    assert degraded["status"] == "degraded" and degraded["reason"] == "the store is full: database or disk is full"
    assert degraded["since"] and degraded["store"] == "sqlite" and degraded["engine_version"]
    assert await names(api) == ["before"]  # nothing of the refused requests

    await sqlite_full(api, False)
    # The refused transaction is gone: the next one begins and commits (it once found the
    # writer still inside the failed one and every later write failed).
    status, out = await api.post("datasets/create", dataset("after"))
    assert status == 200, out
    assert await names(api) == ["before", "after"]
    healthy = await health(api)
    assert healthy["status"] == "ok" and "reason" not in healthy and "since" not in healthy


@pytest.fixture
async def read_only(database_url: str, tmp_path: Path) -> AsyncIterator[tuple[str, Any]]:
    """(the URL the app opens, a switch factory): on PostgreSQL a role of this test's own, whose
    sessions `ALTER ROLE ... SET default_transaction_read_only` turns read-only (the pool's
    connections are replaced so the setting applies at once); on SQLite `PRAGMA query_only`
    on the writer connection."""
    if database_url.startswith("sqlite"):
        yield database_url, None
        return
    assert PG_URL
    role = f"ro_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(PG_URL)
    try:
        await admin.execute(f"CREATE ROLE {role} LOGIN SUPERUSER PASSWORD '{role}'")
        parts = urlsplit(database_url)
        url = urlunsplit(parts._replace(netloc=f"{role}:{role}@{parts.hostname}:{parts.port or 5432}"))
        yield url, (admin, role)
    finally:
        with contextlib.suppress(asyncpg.PostgresError):
            await admin.execute(f"REASSIGN OWNED BY {role} TO CURRENT_USER; DROP OWNED BY {role}; DROP ROLE {role}")
        await admin.close()


def switch(api: Api, how: Any) -> Switch:
    async def turn(on: bool) -> None:
        driver = inner(api)
        if how is None:
            await driver.execute(f"PRAGMA query_only = {'ON' if on else 'OFF'}")
            return
        admin, role = how
        await admin.execute(f"ALTER ROLE {role} SET default_transaction_read_only = {'on' if on else 'off'}")
        await driver.pool.expire_connections()

    return turn


async def test_a_read_only_store_is_507_and_healthz_recovers(aiohttp_client: Any, read_only: tuple[str, Any],
                                                               tmp_path: Path) -> None:
    url, how = read_only
    config = Config(database_url=url, rate_limit_per_minute=10_000, job_concurrency=1, cpu_workers=1,
                    token_cache_seconds=0.0, data_dir=str(tmp_path / "files"))
    api = Api(await aiohttp_client(create_app(config)), await token_create(config, "alice", ["read", "write"]))
    turn = switch(api, how)
    await turn(True)
    status, out = await api.post("datasets/create", dataset("refused"))
    assert status == 507, out
    # SQLite's words, or PostgreSQL's naming the statement it refused (INSERT, UPDATE)
    said = "attempt to write a readonly database" if how is None else out["detail"].split(": ", 1)[1][:-19]
    assert how is None or (said.startswith("cannot execute ") and said.endswith(" in a read-only transaction"))
    assert out == {"detail": f"the store is read-only: {said}; nothing was saved"}
    status, out = await api.post("uploads/create", {"purpose": "dataset_import", "filename": "x.csv"})
    assert status == 507 and out["detail"].startswith("the store is read-only: "), out
    degraded = await health(api)
    # the last refusal's words (the upload link's INSERT, on PostgreSQL)
    assert degraded["status"] == "degraded" and degraded["reason"] == out["detail"].removesuffix("; nothing was saved")
    assert await names(api) == []  # reads still served

    await turn(False)
    status, out = await api.post("datasets/create", dataset("accepted"))
    assert status == 200, out
    assert (await health(api))["status"] == "ok"
    assert await names(api) == ["accepted"]


def test_postgres_disk_full_is_recognised() -> None:
    """Mocked: the server's disk cannot be filled here. asyncpg raises this class for SQLSTATE 53100."""
    err = asyncpg.exceptions.DiskFullError('could not extend file "base/16384/16385": No space left on device')
    fault = write_fault(err)
    assert fault is not None and fault.source == "store" and fault.detail == (
        'the store is full: could not extend file "base/16384/16385": No space left on device; nothing was saved')
    assert write_fault(asyncpg.exceptions.UniqueViolationError("duplicate key")) is None


# -- a full file system under the uploads ------------------------------------------------

@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A small tmpfs: a real ENOSPC once it is full (needs root and a sandbox that allows mounts)."""
    where.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path, leave: int = 0) -> Path:
    """Take every byte of the disk but about `leave`, in one file."""
    rest = disk / "rest"
    with contextlib.suppress(OSError), rest.open("wb", buffering=0) as fh:
        while True:
            fh.write(b"\0" * 4096)
    if leave:
        rest.write_bytes(b"\0" * (os.path.getsize(rest) - leave))
    return rest


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "small", "256k") as where:
        yield where


async def test_a_disk_full_at_commit_is_507_and_the_store_writes_again_once_room_is_made(
        aiohttp_client: Any, tmp_path: Path) -> None:
    """The audit's case: the SQLite file on a disk that fills up, refused when the transaction
    commits (its pages go to the write-ahead log then)."""
    with tmpfs(tmp_path / "disk", "4m") as disk:
        config = Config(database_url=f"sqlite:///{disk / 'bathtub.sqlite3'}", rate_limit_per_minute=10_000,
                        job_concurrency=1, cpu_workers=1, token_cache_seconds=0.0, data_dir=str(disk / "files"))
        api = Api(await aiohttp_client(create_app(config)), await token_create(config, "alice", ["read", "write"]))
        rest = fill(disk)
        status, out = await api.post("datasets/create", dataset("refused"))
        assert (status, out) == (507, {"detail": FULL})
        assert (await health(api))["reason"] == "the store is full: database or disk is full"
        assert await names(api) == []
        rest.unlink()
        status, out = await api.post("datasets/create", dataset("accepted"))
        assert status == 200, out
        assert await names(api) == ["accepted"] and (await health(api))["status"] == "ok"
        await api.client.close()  # before the disk goes


async def test_an_upload_onto_a_full_disk_is_507_and_leaves_the_link_unused(
        aiohttp_client: Any, database_url: str, small_disk: Path) -> None:
    config = Config(database_url=database_url, rate_limit_per_minute=10_000, job_concurrency=1, cpu_workers=1,
                    token_cache_seconds=0.0, data_dir=str(small_disk))
    api = Api(await aiohttp_client(create_app(config)), await token_create(config, "alice", ["read", "write"]))
    made = await link(api)
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * (200 * 1024))  # most of the room gone
    status, out = await send(api, made["url"], b"time\n" + b"1.5\n" * 30_000)  # 120 KB: refused mid-stream
    assert (status, out) == (507, {"detail": "the file store is full: No space left on device; nothing was saved"})
    assert sorted(os.listdir(small_disk / "uploads")) == []  # the partial file went with the refusal
    status, got = await api.post("get/upload", {"id": made["upload_id"]})
    assert status == 200 and got["state"] == "unused" and not got["stored"], got
    # The partial file's room is free again, and /healthz's probe says so.
    assert (await health(api))["status"] == "ok"
    fill(small_disk)  # every byte taken: the next send is refused at its first write
    status, out = await send(api, made["url"], b"time\n1.5\n")
    assert status == 507, out
    degraded = await health(api)
    assert degraded["status"] == "degraded" and degraded["reason"] == \
        "the file store is full: No space left on device"

    filler.unlink()  # room again: the health probe sees it, and the same link takes the file
    (small_disk / "rest").unlink()
    assert (await health(api))["status"] == "ok"
    status, out = await send(api, made["url"], b"time\n1.5\n2.5\n")
    assert status == 200, out


async def test_a_photo_onto_a_full_disk_is_507_and_leaves_no_file(aiohttp_client: Any, database_url: str,
                                                                  small_disk: Path) -> None:
    config = Config(database_url=database_url, rate_limit_per_minute=10_000, job_concurrency=1, cpu_workers=1,
                    token_cache_seconds=0.0, data_dir=str(small_disk))
    api = Api(await aiohttp_client(create_app(config)), await token_create(config, "alice", ["read", "write"]))
    target = await some_dataset(api)
    noise = io.BytesIO()  # random pixels: its PNG stays ~120 KB however it is re-encoded
    Image.frombytes("RGB", (200, 200), os.urandom(200 * 200 * 3)).save(noise, "PNG")
    (small_disk / "photos").mkdir(mode=0o700)
    fill(small_disk, leave=8192)  # the photo's file is cut short
    status, out = await post_photo(api, target, noise.getvalue(), content_type="image/png")
    assert (status, out) == (507, {"detail": "the file store is full: No space left on device; nothing was saved"})
    assert os.listdir(small_disk / "photos") == []
    status, listed = await api.get("/api/v1/maintenance/photos", params={"target_id": target})
    assert status == 200 and listed["photos"] == [], listed


# -- jobs ----------------------------------------------------------------------------------

GATE: dict[str, asyncio.Event] = {}


class Big(Strict):
    size: int
    gate: str


def big_registry() -> Registry:
    reg = default_registry()

    @reg.job("testing.big")
    async def big(ctx: JobCtx, args: dict[str, Any]) -> dict[str, Any]:
        await GATE.setdefault(args["gate"], asyncio.Event()).wait()
        return {"text": "x" * args["size"]}

    @reg.action("testing", "big", request=Big, summary="test job with a large result", heavy=True)
    async def submit(ctx: Ctx, req: Big) -> dict[str, Any]:
        return await ctx.jobs.submit(ctx.user.id, "testing.big", req.model_dump())

    return reg


@pytest.fixture
def registry() -> Registry:
    return big_registry()


async def job_when(api: Api, job_id: str, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    for _ in range(600):
        status, job = await api.post("get/job", {"id": job_id})
        assert status == 200, job
        if done(job):
            return dict(job)
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {job_id}: {job}")


async def test_a_job_whose_result_cannot_be_stored_fails_saying_so_and_the_runner_goes_on(
        api: Api, sqlite_only: None) -> None:
    gate = uuid.uuid4().hex
    status, queued = await api.post("testing/big", {"size": 400_000, "gate": gate})
    assert status == 200, queued
    await job_when(api, queued["job_id"], lambda j: j["status"] == "running")
    await sqlite_full(api, True)
    GATE.setdefault(gate, asyncio.Event()).set()
    job = await job_when(api, queued["job_id"], lambda j: j["status"] != "running")
    assert job["status"] == "failed" and job["message"] == f"its result could not be stored: {FULL}", job

    await sqlite_full(api, False)
    gate = uuid.uuid4().hex
    GATE.setdefault(gate, asyncio.Event()).set()
    status, queued = await api.post("testing/big", {"size": 10, "gate": gate})
    assert status == 200, queued
    job = await job_when(api, queued["job_id"], lambda j: j["status"] != "running" and j["status"] != "queued")
    assert job["status"] == "done" and job["result"] == {"text": "x" * 10}
