"""`bathtub serve --workers N` (a real multi-process server on a loopback port): every worker
answers on the one port from the one store, SIGTERM stops them all and leaves no process,
a worker that dies is replaced, the supervisor's death (kill -9) takes the workers with it,
and a port another program holds, or a setting out of range, is one plain line (exit 2)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from bathtub_api.cli import main, token_create
from bathtub_api.config import Config
from tests.service.serving import ON_PROC, ROOT, Server, descendants, wait_gone

pytestmark = ON_PROC


def workers_of(server: Server) -> set[int]:
    """The supervisor's worker processes (spawned interpreters running a service)."""
    found = set()
    for pid in descendants(server.proc.pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (FileNotFoundError, ProcessLookupError):
            continue
        if b"spawn_main" in cmd and ppid == server.proc.pid:
            found.add(pid)
    return found


async def all_listening(server: Server, log: Path) -> None:
    """Until the supervisor says every worker listens (the first answers /healthz before that)."""
    for _ in range(1200):
        assert server.proc.poll() is None, log.read_text()
        if "bathtub: serving on" in log.read_text():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(log.read_text())


async def read_on_fresh_connections(base: str, token: str, dataset_id: str, n: int) -> list[dict]:
    """`n` get/dataset calls, each on a new connection (SO_REUSEPORT spreads connections)."""
    answers = []
    connector = aiohttp.TCPConnector(force_close=True)
    async with aiohttp.ClientSession(connector=connector, headers={"Authorization": f"Bearer {token}"}) as s:
        for _ in range(n):
            async with s.post(f"{base}/api/v1/get/dataset", json={"id": dataset_id, "limit": 5}) as r:
                assert r.status == 200, await r.text()
                answers.append(await r.json())
    return answers


@pytest.mark.slow  # real `bathtub serve` worker processes
async def test_two_workers_share_the_port_and_the_store_and_stop_on_sigterm(
        database_url: str, tmp_path: Path, servers: list[Server]) -> None:
    token = await token_create(Config(database_url=database_url), "alice", ["read", "write"])
    log = tmp_path / "serve.log"
    async with aiohttp.ClientSession() as http:
        servers.append(server := Server(database_url, log, "--workers", "2"))
        await all_listening(server, log)
        assert "2 worker processes" in log.read_text()
        pids = workers_of(server)
        assert len(pids) == 2
        async with http.post(f"{server.base}/api/v1/datasets", headers={"Authorization": f"Bearer {token}"},
                             json={"name": "d", "csv": "t,state\n1,F\n2,S\n3,F\n"}) as r:
            created = await r.json()
            assert r.status == 200, created
        # 40 connections: the chance that the kernel sent every one to the same worker is 2^-39.
        answers = await read_on_fresh_connections(server.base, token, created["id"], 40)
        # Whichever worker answered, it read the row the other may have written: one store.
        assert all(a["rows"] == [{"t": 1, "state": "F"}, {"t": 2, "state": "S"}, {"t": 3, "state": "F"}]
                   for a in answers)
        served_by = set(re.findall(r"INFO (worker-\d) bathtub_api\.access: POST /api/v1/get/dataset 200",
                                   log.read_text()))
        assert served_by == {"worker-0", "worker-1"}

        everything = descendants(server.proc.pid)
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=60) == 0
        assert await wait_gone(everything) == set()
        text = log.read_text()
        assert "bathtub: stopped" in text and "Traceback" not in text


@pytest.mark.slow  # real `bathtub serve` worker processes
async def test_a_dead_worker_is_replaced_and_kill_9_takes_every_worker_along(tmp_path: Path,
                                                                             servers: list[Server]) -> None:
    url = f"sqlite:///{tmp_path / 'bathtub.sqlite3'}"
    token = await token_create(Config(database_url=url), "alice", ["read", "write"])
    async with aiohttp.ClientSession() as http:
        servers.append(server := Server(url, tmp_path / "serve.log", "--workers", "2"))
        await all_listening(server, tmp_path / "serve.log")
        first = workers_of(server)
        assert len(first) == 2
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        for _ in range(600):  # the supervisor starts another in its slot
            now = workers_of(server)
            if len(now) == 2 and victim not in now:
                break
            await asyncio.sleep(0.05)
        assert len(now) == 2 and victim not in now
        async with http.post(f"{server.base}/api/v1/datasets", headers={"Authorization": f"Bearer {token}"},
                             json={"name": "d", "csv": "t\n1\n"}) as r:
            assert r.status == 200
        everything = descendants(server.proc.pid)
        server.proc.kill()  # no chance to stop anyone: the workers' parent-death signal does it
        server.proc.wait()
        assert await wait_gone(everything) == set()


def test_a_port_held_by_another_program_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as held:  # an ordinary listener: no SO_REUSEPORT, so no worker can share it
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
        out = subprocess.run([sys.executable, "-m", "bathtub_api.cli", "--db", str(tmp_path / "b.sqlite3"), "serve",
                              "--port", str(port), "--workers", "2"], env=env, capture_output=True, text=True,
                             timeout=120)
    assert out.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in out.stderr
    assert "Traceback" not in out.stderr + out.stdout


def test_worker_and_token_cache_settings_out_of_range_are_one_line(monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["serve", "--workers", "0"])
    assert stop.value.code == 2 and "--workers: must be a whole number >= 1 (got '0')" in capsys.readouterr().err
    monkeypatch.setenv("BATHTUB_WORKERS", "0")
    assert main(["serve"]) == 2
    assert capsys.readouterr().err.strip() == "bathtub: workers (BATHTUB_WORKERS) must be at least 1"
    monkeypatch.setenv("BATHTUB_WORKERS", "3")
    monkeypatch.setenv("BATHTUB_TOKEN_CACHE_SECONDS", "0.5")
    config = Config.from_env()
    assert (config.workers, config.token_cache_seconds) == (3, 0.5)
    monkeypatch.setenv("BATHTUB_TOKEN_CACHE_SECONDS", "-1")
    assert main(["serve"]) == 2
    assert "token_cache_seconds (BATHTUB_TOKEN_CACHE_SECONDS) must be >= 0" in capsys.readouterr().err
