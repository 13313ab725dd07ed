"""The Python client: `Client(base_url, token)` and `AsyncClient`.

One method per tool action and original route, generated at import time from the snapshot of
the service's OpenAPI document that ships beside this module (names are the operation ids, each a
Python identifier: `datasets_create`, `get_dataset`, `fit_life`, `rbd_analysis_analyze`,
`post_strategy_optimal_replacement`, ...). `help(Client.fit_life)` says what each argument means,
with its type, unit and default (the same declarations as OpenAPI and the tool protocol), what the
call returns and which refusals it raises. Every refusal raises `bathtub.errors.ApiError` (a
`BathtubError`, like the library's `InputError` and the engine's `EngineError`) with `.status` and
`.detail`. A 429 is retried after its Retry-After.

A fit answers at once with the saved model; long work (a simulation) answers a job, and
`wait(job_id)` polls it to its result (`tests/service/test_client.py` runs this example as written):

    from bathtub.client import Client

    with Client("http://127.0.0.1:8080", token) as bt:     # token: a bt_... from `bathtub token create`
        ds = bt.datasets_create(name="pumps", csv="time,state\\n120,F\\n340,S\\n410,F\\n95,F\\n")
        model = bt.fit_life(name="pump life", dataset_id=ds["id"], distribution="weibull",
                            mapping={"x": "time", "c": "state"}, unit="h")
        print([(p["name"], round(p["value"], 1)) for p in bt.get_model(id=model["id"])["params"]])
        pump = {"distribution_id": "exponential", "mean": 1000.0}
        plant = bt.rbd_create(name="one pump", repairable=True, nodes=[
            {"id": "in", "type": "input"}, {"id": "out", "type": "output"},
            {"id": "p1", "type": "component", "model": pump,
             "repair": {"distribution_id": "exponential", "mean": 10.0}}],
            edges=[{"source": "in", "target": "p1"}, {"source": "p1", "target": "out"}])
        job = bt.rbd_analysis_analyze(id=plant["id"], horizon=1000, replications=200, seed=1)
        run = bt.wait(job["job_id"])["result"]
        print(run["run_id"])
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import IO, Any

import httpx

from bathtub.client import _spec
from bathtub.client._methods import (
    IMPORTERS,
    Request,
    finished,
    generate,
    progress_line,
    result_of,
    retry_after,
    warn_if_deprecated,
)
from bathtub.errors import ApiError, BathtubError

__all__ = ["SPEC", "ApiError", "AsyncClient", "BathtubError", "Client"]

SPEC = _spec.load()
Source = bytes | str | Path | IO[bytes]


def _read(source: Source, filename: str | None) -> tuple[bytes, str]:
    if isinstance(source, bytes):
        return source, filename or "upload"
    if isinstance(source, (str, Path)):
        p = Path(source)
        return p.read_bytes(), filename or p.name
    data = source.read()
    return data, filename or Path(getattr(source, "name", "upload")).name


class _Base:
    def __init__(self, base_url: str, token: str | None, max_retries: int, show_progress: bool | None) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.max_retries = max_retries
        self.show_progress = show_progress

    def _headers(self, req: Request) -> dict[str, str]:
        headers = {}
        if req.auth and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if req.content_type:
            headers["Content-Type"] = req.content_type
        return {**headers, **(req.headers or {})}

    def _progress(self) -> bool:
        return self.show_progress if self.show_progress is not None else sys.stderr.isatty()

    def _url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else f"{self.base_url}{path}"


class Client(_Base):
    """A synchronous client bound to one token. Use as a context manager, or call `close()`."""

    def __init__(self, base_url: str, token: str | None = None, *, timeout: float = 60.0, max_retries: int = 3,
                 show_progress: bool | None = None, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(base_url, token, max_retries, show_progress)
        self._http = httpx.Client(timeout=timeout, transport=transport)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(self, req: Request) -> Any:
        for attempt in range(self.max_retries + 1):
            resp = self._http.request(req.method, self._url(req.path), params=req.params or None, json=req.json,
                                      content=req.content, headers=self._headers(req))
            if resp.status_code == 429 and attempt < self.max_retries:
                time.sleep(retry_after(resp.headers.get("Retry-After"), attempt))
                continue
            warn_if_deprecated(req.method, req.path, resp.headers)
            return result_of(resp.status_code, resp.headers.get("content-type", ""), resp.content)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def wait(self, job_id: str, *, timeout: float | None = None, poll: float = 0.25,
             max_poll: float = 5.0) -> dict[str, Any]:
        """Poll a job until it is done (its final status, with `result`), backing off from `poll`
        to `max_poll` seconds; a progress bar on stderr when it is a terminal. A failed job raises
        ApiError(422), a cancelled one ApiError(409); past `timeout` seconds, TimeoutError."""
        start, delay, bar = time.monotonic(), poll, self._progress()
        try:
            while True:
                job = self.get_job(id=job_id)  # type: ignore[attr-defined]
                if bar:
                    sys.stderr.write(progress_line(job))
                    sys.stderr.flush()
                if (done := finished(job)) is not None:
                    return done
                if timeout is not None and time.monotonic() - start + delay > timeout:
                    raise TimeoutError(f"job {job_id} still {job['status']} after {timeout} s")
                time.sleep(delay)
                delay = min(max_poll, delay * 1.5)
        finally:
            if bar:
                sys.stderr.write("\n")

    def upload(self, source: Source, purpose: str, *, filename: str | None = None, **import_args: Any) -> Any:
        """Create an upload link, send the bytes to it, then import them with the purpose's action
        (dataset_import → datasets_upload, excel_import → uploads_import_excel, rbd_import →
        uploads_import_rbd, outage_log → rbd_upload_outage_log) given `import_args`."""
        if purpose not in IMPORTERS:
            raise ApiError(422, f"purpose: must be one of {', '.join(IMPORTERS)}")
        data, name = _read(source, filename)
        link = self.uploads_create(purpose=purpose, filename=name)  # type: ignore[attr-defined]
        self._call(Request("PUT", link["url"], {}, content=data, content_type="application/octet-stream",
                           auth=False))
        return getattr(self, IMPORTERS[purpose])(upload_id=link["upload_id"], **import_args)


class AsyncClient(_Base):
    """The asynchronous client: the same methods as `Client`, as coroutines."""

    def __init__(self, base_url: str, token: str | None = None, *, timeout: float = 60.0, max_retries: int = 3,
                 show_progress: bool | None = None, transport: httpx.AsyncBaseTransport | None = None) -> None:
        super().__init__(base_url, token, max_retries, show_progress)
        self._http = httpx.AsyncClient(timeout=timeout, transport=transport)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def _call(self, req: Request) -> Any:
        for attempt in range(self.max_retries + 1):
            resp = await self._http.request(req.method, self._url(req.path), params=req.params or None,
                                            json=req.json, content=req.content, headers=self._headers(req))
            if resp.status_code == 429 and attempt < self.max_retries:
                await asyncio.sleep(retry_after(resp.headers.get("Retry-After"), attempt))
                continue
            warn_if_deprecated(req.method, req.path, resp.headers)
            return result_of(resp.status_code, resp.headers.get("content-type", ""), resp.content)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def wait(self, job_id: str, *, timeout: float | None = None, poll: float = 0.25,
                   max_poll: float = 5.0) -> dict[str, Any]:
        """As `Client.wait`, without blocking the event loop."""
        start, delay, bar = time.monotonic(), poll, self._progress()
        try:
            while True:
                job = await self.get_job(id=job_id)  # type: ignore[attr-defined]
                if bar:
                    sys.stderr.write(progress_line(job))
                    sys.stderr.flush()
                if (done := finished(job)) is not None:
                    return done
                if timeout is not None and time.monotonic() - start + delay > timeout:
                    raise TimeoutError(f"job {job_id} still {job['status']} after {timeout} s")
                await asyncio.sleep(delay)
                delay = min(max_poll, delay * 1.5)
        finally:
            if bar:
                sys.stderr.write("\n")

    async def upload(self, source: Source, purpose: str, *, filename: str | None = None,
                     **import_args: Any) -> Any:
        """As `Client.upload`."""
        if purpose not in IMPORTERS:
            raise ApiError(422, f"purpose: must be one of {', '.join(IMPORTERS)}")
        data, name = _read(source, filename)
        link = await self.uploads_create(purpose=purpose, filename=name)  # type: ignore[attr-defined]
        await self._call(Request("PUT", link["url"], {}, content=data, content_type="application/octet-stream",
                                 auth=False))
        return await getattr(self, IMPORTERS[purpose])(upload_id=link["upload_id"], **import_args)


generate(Client, SPEC, Client._call, is_async=False)
generate(AsyncClient, SPEC, AsyncClient._call, is_async=True)
