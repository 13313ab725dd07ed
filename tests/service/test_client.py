"""The Python client against the real service on a loopback port (SQLite and PostgreSQL), not mocks:
every action has a method, results equal REST and the tool protocol byte for byte, every refusal of
the spec's error table is the one error type with the right status, 429s are retried after their
Retry-After, jobs are waited on with progress, and uploads go link → bytes → import."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import dataclasses
import inspect
import io
import os
import socket
import textwrap
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from aiohttp import web
from PIL import Image

from bathtub.client import SPEC, AsyncClient, Client, _spec
from bathtub.engine import EngineError
from bathtub.errors import ApiError, BathtubError, InputError
from bathtub_api import openapi
from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.registry import Registry
from tests.service.test_rbd_service import two_of_three

TIMES = [120.0, 340.0, 560.0, 610.0, 790.0, 905.0, 1100.0, 1320.0, 1500.0, 1710.0]
EVENTS = [1, 1, 0, 1, 1, 0, 1, 1, 1, 0]


class Served:
    """The app on 127.0.0.1 (a free port) in a thread with its own event loop, so the blocking
    client can call it from the test."""

    def __init__(self, config: Config) -> None:
        with socket.socket() as probe:  # a free port, so the service's own base URL (its links) is right
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        config = dataclasses.replace(config, base_url=self.url)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.runner = web.AppRunner(create_app(config))
        self._run(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", port)
        self._run(site.start())

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=60)

    def close(self) -> None:
        self._run(self.runner.cleanup())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        self.loop.close()


@pytest.fixture
async def served(config: Config) -> Any:
    s = Served(config)
    try:
        yield s
    finally:
        await asyncio.to_thread(s.close)


@pytest.fixture
async def token(config: Config) -> str:
    return await token_create(config, "alice", ["read", "write"])


@pytest.fixture
def bt(served: Served, token: str) -> Iterator[Client]:
    with Client(served.url, token, max_retries=0) as c:
        yield c


def test_every_action_and_route_has_a_method(registry: Registry) -> None:
    names = {a.operation_id: a.summary for a in registry.actions.values()}
    names.update({r.operation_id: r.summary for r in registry.routes})
    for cls in (Client, AsyncClient):
        missing = [n for n in names if not callable(getattr(cls, n, None))]
        assert not missing, f"{cls.__name__} has no method for {missing}"
        for name, summary in names.items():
            assert getattr(cls, name).__doc__.startswith(summary)
    # Typed keyword arguments from the request model's fields.
    create = inspect.signature(Client.datasets_create).parameters
    assert create["name"].annotation == "str" and create["name"].default is inspect.Parameter.empty
    assert create["csv"].annotation == "str | None" and create["notes"].default == ""
    assert inspect.iscoroutinefunction(AsyncClient.get_dataset)


def test_snapshot_is_the_services_own_document(registry: Registry) -> None:
    """The spec shipped with the client is compact() of the service's OpenAPI document. When a tool
    changes, refresh it: BATHTUB_REFRESH_CLIENT_SPEC=1 wt-test tests/service/test_client.py -k snapshot"""
    current = _spec.compact(openapi.build(registry))
    if os.environ.get("BATHTUB_REFRESH_CLIENT_SPEC") == "1":
        _spec.SNAPSHOT.write_bytes(_spec.dumps(current))
    assert _spec.dumps(current) == _spec.SNAPSHOT.read_bytes(), "stale client snapshot: refresh it (see docstring)"
    assert SPEC == current


def test_one_base_for_every_refusal() -> None:
    for cls in (ApiError, InputError, EngineError):
        assert issubclass(cls, BathtubError)
    assert issubclass(InputError, ValueError) and issubclass(EngineError, ValueError)
    from bathtub import _engine
    assert _engine.EngineError is EngineError  # the engine raises the library's class itself


async def test_results_equal_rest_and_mcp_byte_for_byte(served: Served, bt: Client, token: str) -> None:
    ds = await asyncio.to_thread(bt.datasets_create, name="pumps", data={"time": TIMES, "failed": EVENTS})
    calls = [
        ("get_dataset", "get/dataset", ("get", {"kind": "dataset"}), {"id": ds["id"], "limit": 4}),
        ("list_dataset", "list/dataset", ("list", {"kind": "dataset"}), {}),
        ("guide", "guide", ("guide", {}), {"topic": "uploads"}),
        ("strategy_optimal_replacement", "strategy/optimal_replacement",
         ("strategy", {"action": "optimal_replacement"}),
         {"distribution_id": "weibull", "params": [1000.0, 2.5], "planned_cost": 1.0, "unplanned_cost": 10.0}),
    ]
    auth = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=served.url, headers=auth, timeout=60) as raw:
        for method, path, (tool, selector), args in calls:
            rest = await raw.post(f"/api/v1/{path}", json=args)
            assert rest.status_code == 200, rest.text
            mcp = await raw.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                               "params": {"name": tool, "arguments": {**selector, **args}}})
            result = await asyncio.to_thread(getattr(bt, method), **args)
            assert orjson.dumps(result) == rest.content
            assert mcp.json()["result"]["content"][0]["text"].encode() == rest.content


async def test_every_refusal_in_the_error_table_is_one_type(served: Served, bt: Client, config: Config) -> None:
    reader = await token_create(config, "bob", ["read"])

    def refused(call: Any) -> ApiError:
        with pytest.raises(BathtubError) as info:
            call()
        assert isinstance(info.value, ApiError)
        return info.value

    def run() -> dict[int, ApiError]:
        with Client(served.url, "bt_not_a_real_token", max_retries=0) as stranger, \
             Client(served.url, reader, max_retries=0) as ro:
            return {
                401: refused(lambda: stranger.list_dataset()),
                403: refused(lambda: ro.datasets_create(name="x", csv="a\n1\n")),
                404: refused(lambda: bt.get_dataset(id="ds_nope")),
                422: refused(lambda: bt.datasets_create(name="")),
            }

    errors = await asyncio.to_thread(run)
    for status, err in errors.items():
        assert err.status == status and err.detail and str(err).startswith(str(status))
    assert errors[422].detail.startswith("name:")
    assert errors[404].detail == "no dataset with id 'ds_nope'"
    with pytest.raises(TypeError):  # an unknown argument is refused before anything is sent
        bt.datasets_create(name="x", colour="red")


@pytest.fixture
def limited(config: Config) -> Config:
    return dataclasses.replace(config, rate_limit_per_minute=120)


async def test_429_raises_then_is_retried_after_retry_after(limited: Config) -> None:
    served = Served(limited)
    try:
        tok = await token_create(limited, "carol", ["read"])
        seen: list[int] = []

        class Counting(httpx.HTTPTransport):
            def handle_request(self, request: httpx.Request) -> httpx.Response:
                resp = super().handle_request(request)
                seen.append(resp.status_code)
                return resp

        def run() -> Any:
            with Client(served.url, tok, max_retries=0) as hasty, \
                 Client(served.url, tok, max_retries=3, transport=Counting()) as patient:
                err = None
                for _ in range(1000):  # the bucket holds 120 and refills 2 a second
                    try:
                        hasty.list_dataset()
                    except ApiError as e:
                        err = e
                        break
                assert err is not None and err.status == 429 and "rate" in err.detail.lower()
                return patient.list_dataset()

        page = await asyncio.to_thread(run)
        assert page["items"] == []
        assert seen[0] == 429 and seen[-1] == 200  # refused, waited Retry-After, then answered
    finally:
        await asyncio.to_thread(served.close)


async def test_wait_shows_progress_and_returns_the_result(bt: Client, capsys: pytest.CaptureFixture[str]) -> None:
    def run() -> tuple[dict[str, Any], dict[str, Any]]:
        rbd = bt.rbd_create(**two_of_three())
        queued = bt.rbd_analysis_analyze(id=rbd["id"], horizon=100.0, replications=2000, seed=3, grid=5)
        bt.show_progress = True
        return queued, bt.wait(queued["job_id"], poll=0.05)

    queued, job = await asyncio.to_thread(run)
    assert job["status"] == "done" and job["result"]["run_id"] == queued["run_id"]
    err = capsys.readouterr().err
    assert f"job {queued['job_id']} [" in err and "100.0%" in err and err.endswith("\n")
    with pytest.raises(ApiError) as info:
        bt.wait("job_nope")
    assert info.value.status == 404


async def test_wait_is_silent_off_a_terminal(bt: Client, capsys: pytest.CaptureFixture[str]) -> None:
    rbd = await asyncio.to_thread(bt.rbd_create, **two_of_three())
    q = await asyncio.to_thread(bt.rbd_analysis_analyze, id=rbd["id"], horizon=50.0, replications=500, seed=1)
    job = await asyncio.to_thread(bt.wait, q["job_id"], poll=0.05)  # stderr is captured: not a terminal
    assert job["status"] == "done"
    assert capsys.readouterr().err == ""


async def test_upload_helper_creates_sends_and_imports(bt: Client, tmp_path: Any) -> None:
    csv = "time,failed\n" + "".join(f"{t},{e}\n" for t, e in zip(TIMES, EVENTS))
    path = tmp_path / "pumps.csv"
    path.write_text(csv)
    created = await asyncio.to_thread(bt.upload, path, "dataset_import", name="from a file")
    page = await asyncio.to_thread(bt.get_dataset, id=created["id"])
    assert [r["time"] for r in page["rows"]] == TIMES and page["row_count"] == len(TIMES)
    upload = await asyncio.to_thread(bt.get_upload, id=created["upload_id"]) if "upload_id" in created else None
    assert upload is None or upload["status"] in ("imported", "used")
    with pytest.raises(ApiError) as info:
        await asyncio.to_thread(bt.upload, b"a,b\n1,2\n", "nonsense")
    assert info.value.status == 422


async def test_original_routes(bt: Client) -> None:
    def run() -> None:
        ds = bt.post_datasets(name="orig", data={"time": TIMES[:4], "failed": EVENTS[:4]})
        added = bt.post_ingest_datasets_dataset_id_lives(ds["id"], content="time,failed\n2000,1\n")
        assert added["appended"] == 1, added
        again = bt.get_datasets_dataset_id(ds["id"], query_params={"limit": 2})
        assert len(again["rows"]) == 2 and again["next_offset"] == 2
        listed = bt.get_datasets()
        assert ds["id"] in [d["id"] for d in listed["items"]]
        buf = io.BytesIO()
        Image.new("RGB", (8, 8), (200, 30, 30)).save(buf, format="PNG")
        photo = bt.post_maintenance_photos(content=buf.getvalue(), content_type="image/png", target_id=ds["id"],
                                           caption="seal")
        assert photo["caption"] == "seal"
        image = bt.get_maintenance_photos_photo_id(photo["id"])  # not JSON: the bytes themselves
        assert isinstance(image, bytes) and Image.open(io.BytesIO(image)).size == (8, 8)
        bt.delete_datasets_dataset_id(ds["id"])
        with pytest.raises(ApiError) as info:
            bt.get_datasets_dataset_id(ds["id"])
        assert info.value.status == 404

    await asyncio.to_thread(run)


async def test_async_client(served: Served, token: str) -> None:
    async with AsyncClient(served.url, token) as abt:
        ds = await abt.datasets_create(name="pumps", csv="time,failed\n120,1\n340,0\n")
        page = await abt.get_dataset(id=ds["id"])
        assert page["row_count"] == 2
        rbd = await abt.rbd_create(**two_of_three())
        q = await abt.rbd_analysis_analyze(id=rbd["id"], horizon=50.0, replications=500, seed=1)
        assert (await abt.wait(q["job_id"], poll=0.05))["status"] == "done"
        with pytest.raises(ApiError) as info:
            await abt.get_job(id="job_nope")
        assert info.value.status == 404


def test_a_deprecation_header_becomes_a_warning() -> None:
    """No route is deprecated today, so the service's answer is stood in for at the transport."""
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"items": [], "next_offset": None},
                              headers={"Deprecation": "@1798761600", "Sunset": "Sat, 01 Jul 2028 00:00:00 GMT"})

    with Client("http://bathtub.test", "bt_x", transport=httpx.MockTransport(answer)) as c, \
         pytest.warns(DeprecationWarning, match=r"POST /api/v1/list/dataset is deprecated .*after Sat, 01 Jul 2028"):
        assert c.list_dataset() == {"items": [], "next_offset": None}


async def test_the_module_example_runs_as_written(served: Served, token: str) -> None:
    """help(bathtub.client)'s example, run as printed (the token and URL are the only names it
    takes from outside): it fits, reads the params and waits on a simulation job."""
    import bathtub.client

    doc = bathtub.client.__doc__ or ""
    block = doc[doc.index("    from bathtub.client import Client"):]
    code = textwrap.dedent(block).replace('"http://127.0.0.1:8080"', repr(served.url))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        await asyncio.to_thread(exec, compile(code, "bathtub.client.__doc__", "exec"), {"token": token})
    params, run_id = out.getvalue().strip().splitlines()
    assert [name for name, _ in ast.literal_eval(params)] == ["alpha", "beta"]
    assert run_id.startswith("run_")


def test_every_method_name_is_an_identifier_and_its_help_explains_each_argument() -> None:
    for op in SPEC["operations"]:
        assert op["name"].isidentifier(), op["name"]
        doc = getattr(Client, op["name"]).__doc__
        for section in ("Parameters\n----------", "Returns\n-------", "Raises\n------"):
            assert section in doc or (section.startswith("Parameters") and not op["fields"]), (op["name"], section)
        for f in op["fields"]:
            assert f"\n{f['arg']} : {f['type']}" in doc, (op["name"], f["arg"])
    help_text = Client.post_strategy_optimal_replacement.__doc__
    assert "planned_cost : " in help_text and "dict" in help_text.split("Returns")[1]
