"""The real `bathtub serve` killed with SIGKILL, on both stores: no child process (pool
worker, forkserver) outlives it, even one busy computing, and its running job is recovered
by the next instance once the job's lease ran out."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from bathtub_api.cli import token_create
from bathtub_api.config import Config
from tests.service.serving import (
    ON_PROC,
    ROOT,
    Client,
    Server,
    descendants,
    job_row,
    start_long_job,
    wait_gone,
)

pytestmark = ON_PROC


@pytest.mark.slow  # real `bathtub serve` processes killed and restarted
async def test_kill_9_leaves_no_process_and_the_lease_recovers_the_job(database_url: str, tmp_path: Path,
                                                                        servers: list[Server]) -> None:
    token = await token_create(Config(database_url=database_url), "alice", ["read", "write"])
    async with aiohttp.ClientSession() as http:
        servers.append(first := Server(database_url, tmp_path / "serve.log"))
        await first.ready(http)
        job_id = await start_long_job(Client(http, first, token))
        children = descendants(first.proc.pid)
        assert children
        first.proc.kill()
        first.proc.wait()
        assert await wait_gone(children) == set()  # the pool and the forkserver died with it
        row = await job_row(database_url, job_id)
        assert row["status"] == "running" and row["attempts"] == 1  # nobody could hand it back

        servers.append(second := Server(database_url, tmp_path / "serve.log"))
        await second.ready(http)
        # Its lease runs out (LEASE_S after the last heartbeat): the new instance requeues it and runs it.
        await Client(http, second, token).job_when(job_id, lambda j: j["status"] == "running" and j["progress"] > 0)
        row = await job_row(database_url, job_id)
        assert row["attempts"] == 2 and row["lease_owner"] and row["lease_owner"] != "" and row["message"] is None
        second.proc.send_signal(signal.SIGTERM)
        assert second.proc.wait(timeout=60) == 0


WORKER = """
import asyncio
from bathtub_api.jobs import JobRunner
from tests.service import jobwork

async def main():
    runner = JobRunner(None, None, concurrency=1, cpu_workers=1, retention_days=1.0)
    spin = asyncio.ensure_future(runner.run_cpu(jobwork.spin, 600.0))
    # run_cpu submits from a thread (the first submit starts the worker, which must not wait on the
    # loop): wait until the pool has its worker before naming it
    while runner._pool is None or not runner._pool._processes:
        await asyncio.sleep(0.01)
    print(*[p.pid for p in runner._pool._processes.values()], flush=True)
    await spin

asyncio.run(main())
"""


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[11])  # utime


@pytest.mark.slow  # real `bathtub serve` processes killed
async def test_a_busy_pool_worker_dies_with_a_killed_service() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), str(ROOT)])}
    proc = subprocess.Popen([sys.executable, "-c", WORKER], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        workers = {int(p) for p in proc.stdout.readline().split()}
        assert len(workers) == 1
        (worker,) = workers
        start = time.monotonic()
        while cpu_ticks(worker) < 20 and time.monotonic() - start < 60:  # spinning (0.2 s of CPU)
            await asyncio.sleep(0.05)
        assert cpu_ticks(worker) >= 20
        everyone = descendants(proc.pid)
        proc.kill()
        proc.wait()
        # Ten minutes of spinning left, yet the worker (and the forkserver) end with the service.
        assert await wait_gone(everyone | workers) == set()
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
