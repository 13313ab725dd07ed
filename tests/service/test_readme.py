"""The README's examples run: the library snippet (whose diagram must be one `rbd/create`
accepts), the Python client quick start against the real service, and every curl JSON body parses."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
from pathlib import Path
from typing import Any

import orjson

from bathtub_api.cli import token_create
from bathtub_api.config import Config
from tests.conftest import Api
from tests.service.test_client import Served

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def _run(code: str, namespace: dict[str, Any]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), namespace)
    return out.getvalue()


async def test_the_library_diagram_is_one_the_service_accepts(api: Api) -> None:
    library = next(b for b in _blocks("python") if "simulate_availability" in b)
    ns: dict[str, Any] = {}
    await asyncio.to_thread(_run, library, ns)
    lo, hi = ns["run"].mean_availability_interval
    # Two independent alternating renewal pumps (MTBF 1000, MTTR 10), one of two needed: the
    # stationary 1 - (10/1010)^2, nudged up by the start as new; within the run's own interval.
    assert lo - 2e-5 <= 1 - (10 / 1010) ** 2 <= hi
    status, created = await api.post("rbd/create", ns["plant"])
    assert status == 200, created


async def test_the_client_quick_start_runs(config: Config) -> None:
    token_for_alice = await token_create(config, "alice", ["read", "write"])
    quick = next(b for b in _blocks("python") if "from bathtub.client import Client" in b)
    served = Served(config)
    try:
        code = quick.replace('"http://127.0.0.1:8080"', repr(served.url))
        printed = await asyncio.to_thread(_run, code, {"token": token_for_alice})
    finally:
        await asyncio.to_thread(served.close)
    lines = printed.strip().splitlines()
    assert "alpha" in lines[0] and "beta" in lines[0]
    assert lines[1] == "404 no dataset with id 'ds_nope'"


def test_every_curl_body_is_json() -> None:
    bodies = [b for block in _blocks("sh") for b in re.findall(r"-d '(.*?)'", block, flags=re.S)]
    assert len(bodies) >= 15
    for body in bodies:
        assert isinstance(orjson.loads(body), dict), body
