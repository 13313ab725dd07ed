"""Helpers for tests that run the real `bathtub serve` as a subprocess on a loopback port
(short job leases, one engine thread per job) and read processes from /proc (Linux)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bathtub_api.store import open_store
from tests.service.test_job_control import forty_in_series

ON_PROC = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads processes from /proc")

ROOT = Path(__file__).resolve().parents[2]
LEASE_S = 1.5
WEIBULL = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": 1000.0}, {"name": "beta", "value": 2.5}]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def descendants(pid: int) -> set[int]:
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError):
                continue
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - found
        found |= frontier
    return found


async def wait_gone(pids: set[int]) -> set[int]:
    """The pids still alive after up to 20 s (they should end within about a second)."""
    for _ in range(200):
        if not any(alive(p) for p in pids):
            return set()
        await asyncio.sleep(0.1)
    return {p for p in pids if alive(p)}


class Server:
    def __init__(self, database_url: str, log: Path, *args: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "BATHTUB_DATABASE_URL": database_url,
               "BATHTUB_JOB_LEASE_SECONDS": str(LEASE_S), "BATHTUB_JOB_HEARTBEAT_SECONDS": str(LEASE_S / 5),
               "BATHTUB_JOB_CPU_LIMIT_SECONDS": "1e9", "BATHTUB_JOB_ENGINE_THREADS": "1",
               "BATHTUB_FREE_JOB_CPU_SECONDS": "1e9"}  # the free plan's limit too: hours-long runs
        self.log = log.open("ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "bathtub_api.cli", "serve", "--host", "127.0.0.1",
                                      "--port", str(self.port), *args], env=env, stdout=self.log, stderr=self.log)

    async def ready(self, http: aiohttp.ClientSession) -> None:
        # up to 120 s: on a loaded 2-core machine importing the service alone has taken 50 s
        for _ in range(2400):
            assert self.proc.poll() is None, "the server exited during start-up"
            try:
                async with http.get(f"{self.base}/healthz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
        raise AssertionError("the server never answered /healthz")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


async def stop_all(started: list[Server]) -> None:
    for s in started:
        s.stop()


class Client:
    def __init__(self, http: aiohttp.ClientSession, server: Server, token: str) -> None:
        self.http, self.server, self.token = http, server, token

    async def post(self, path: str, body: Any) -> tuple[int, Any]:
        async with self.http.post(f"{self.server.base}{path}", json=body,
                                  headers={"Authorization": f"Bearer {self.token}"}) as r:
            return r.status, await r.json()

    async def job_when(self, job_id: str, ok: Any) -> dict[str, Any]:
        for _ in range(600):
            status, job = await self.post("/api/v1/get/job", {"id": job_id})
            assert status == 200, job
            if ok(job):
                return job
            await asyncio.sleep(0.05)
        raise AssertionError(f"job {job_id}: {job}")


async def job_row(database_url: str, job_id: str) -> dict[str, Any]:
    store = await open_store(database_url)
    try:
        job = await store.get_job(None, job_id)
        assert job is not None
        return job
    finally:
        await store.close()


async def start_long_job(c: Client) -> str:
    """The pool of pure-Python workers started, and a simulation of hours running."""
    status, out = await c.post("/api/v1/strategy/optimal-replacement",
                               {**WEIBULL, "planned_cost": 100.0, "unplanned_cost": 1000.0})
    assert status == 200, out  # computed in a pool worker process, which stays for the next call
    status, created = await c.post("/api/v1/rbd/create", forty_in_series())
    assert status == 200, created
    status, queued = await c.post("/api/v1/rbd_analysis/analyze", {"id": created["id"], "horizon": 1e5,
                                                                    "replications": 1_000_000})
    assert status == 200, queued
    await c.job_when(queued["job_id"], lambda j: j["status"] == "running" and j["progress"] > 0)
    return str(queued["job_id"])


