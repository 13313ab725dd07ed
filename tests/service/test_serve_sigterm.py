"""The real `bathtub serve` (a subprocess on a loopback port), on both stores: SIGTERM stops
it within the grace, hands its running job back to the queue for the next start, and no
child process outlives it."""

from __future__ import annotations

import signal
from pathlib import Path

import aiohttp
import pytest

from bathtub_api.cli import token_create
from bathtub_api.config import Config
from tests.service.serving import (
    ON_PROC,
    Client,
    Server,
    descendants,
    job_row,
    start_long_job,
    wait_gone,
)

pytestmark = ON_PROC


@pytest.mark.slow  # real `bathtub serve` processes stopped and restarted
async def test_sigterm_requeues_the_running_job_and_leaves_no_process(database_url: str, tmp_path: Path,
                                                                       servers: list[Server]) -> None:
    token = await token_create(Config(database_url=database_url), "alice", ["read", "write"])
    async with aiohttp.ClientSession() as http:
        servers.append(first := Server(database_url, tmp_path / "serve.log"))
        await first.ready(http)
        c = Client(http, first, token)
        job_id = await start_long_job(c)
        children = descendants(first.proc.pid)
        assert children  # the forkserver and its pool worker at least
        first.proc.send_signal(signal.SIGTERM)
        # Uncancelled, the job would hold the process for hours: it stops within the grace.
        assert first.proc.wait(timeout=60) == 0
        assert await wait_gone(children) == set()
        row = await job_row(database_url, job_id)
        assert (row["status"], row["started_at"], row["lease_owner"], row["attempts"]) == ("queued", None, None, 0)
        assert (tmp_path / "serve.log").read_bytes().count(b"Traceback") == 0

        # The next start picks it up again.
        servers.append(second := Server(database_url, tmp_path / "serve.log"))
        await second.ready(http)
        job = await Client(http, second, token).job_when(job_id, lambda j: j["status"] == "running")
        assert job["started_at"] is not None
        second.proc.send_signal(signal.SIGTERM)
        assert second.proc.wait(timeout=60) == 0
        assert (await job_row(database_url, job_id))["status"] == "queued"
