"""Queued calculations: a job row in the store, run by an aiojobs scheduler with a limit.

Status moves queued -> running -> done | failed. The work itself never blocks the event
loop: native engine calls run on a thread (the engine releases the GIL) and pure-Python
number crunching runs in a process pool.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import multiprocessing
from collections.abc import Callable
from typing import Any, TypeVar

import aiojobs

from bathtub.errors import InputError
from bathtub_api.errors import ApiError, not_found
from bathtub_api.ids import iso, now
from bathtub_api.registry import JobCtx, Registry
from bathtub_api.store import Store

log = logging.getLogger("bathtub_api.jobs")
T = TypeVar("T")

ORPHANED = "the service stopped while this job was running; submit it again"
PURGE_EVERY_S = 3600.0


class JobRunner:
    def __init__(self, store: Store, registry: Registry, *, concurrency: int, cpu_workers: int, retention_days: float):
        self.store = store
        self.registry = registry
        self.concurrency = concurrency
        self.cpu_workers = cpu_workers
        self.retention_s = retention_days * 86400.0
        self._scheduler: aiojobs.Scheduler | None = None
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._purger: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._scheduler = aiojobs.Scheduler(limit=self.concurrency, pending_limit=100_000)
        failed = await self.store.fail_running_jobs(ORPHANED)
        if failed:
            log.warning("failed %d job(s) left running by a stopped process", failed)
        await self.purge()
        for job in await self.store.queued_jobs():  # still queued: their inputs are stored, so run them
            await self._scheduler.spawn(self._run(job["id"], job["owner"], job["action"], job["args"]))
        self._purger = asyncio.create_task(self._purge_loop())

    async def close(self) -> None:
        if self._purger:
            self._purger.cancel()
        if self._scheduler:
            await self._scheduler.close()
        if self._pool:
            self._pool.shutdown(wait=False, cancel_futures=True)

    async def submit(self, owner: str, kind: str, args: dict[str, Any]) -> dict[str, Any]:
        """Queue `kind` with JSON-ready `args`; answers at once with the job id."""
        if kind not in self.registry.job_kinds:
            raise ValueError(f"unknown job kind {kind!r}")
        assert self._scheduler is not None, "JobRunner.start() was not awaited"
        job_id = await self.store.create_job(owner, kind, args)
        job = await self.store.get_job(owner, job_id)
        assert job is not None
        position = await self.store.queue_position(job_id, job["created_at"])
        await self._scheduler.spawn(self._run(job_id, owner, kind, args))
        return {"job_id": job_id, "status": "queued", "queue_position": position}

    async def status(self, owner: str, job_id: str) -> dict[str, Any]:
        job = await self.store.get_job(owner, job_id)
        if job is None:
            raise not_found("job", job_id)
        out: dict[str, Any] = {
            "id": job["id"],
            "kind": job["action"],
            "status": job["status"],
            "created_at": iso(job["created_at"]),
            "started_at": iso(job["started_at"]),
            "finished_at": iso(job["finished_at"]),
        }
        if job["status"] == "queued":
            out["queue_position"] = await self.store.queue_position(job["id"], job["created_at"])
        elif job["status"] == "done":
            out["result"] = job["result"]
        elif job["status"] == "failed":
            out["message"] = job["message"]
        return out

    async def _run(self, job_id: str, owner: str, kind: str, args: dict[str, Any]) -> None:
        if not await self.store.mark_job_running(job_id):
            return  # already taken or purged
        handler = self.registry.job_kinds.get(kind)
        try:
            if handler is None:
                raise ApiError(500, f"this service no longer knows job kind {kind!r}")
            result = await handler(JobCtx(owner, self.store, self), args)
        except (InputError, ApiError) as e:
            await self.store.fail_job(job_id, str(e))
        except Exception as e:
            log.exception("job %s (%s) failed", job_id, kind)
            await self.store.fail_job(job_id, f"internal error while computing: {type(e).__name__}")
        else:
            await self.store.finish_job(job_id, result)

    async def run_cpu(self, fn: Callable[..., T], *args: Any) -> T:
        """Pure-Python CPU work in a worker process, so the event loop never stalls."""
        if self._pool is None:
            # forkserver: forking a process that runs an event loop and threads is unsafe.
            ctx = multiprocessing.get_context("forkserver")
            self._pool = concurrent.futures.ProcessPoolExecutor(self.cpu_workers, mp_context=ctx)
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool, functools.partial(fn, *args))
        except concurrent.futures.process.BrokenProcessPool:
            # A worker died (killed, out of memory): start a fresh pool for the next call.
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
            raise

    async def run_native(self, fn: Callable[..., T], *args: Any) -> T:
        """Engine calls on a thread: they release the GIL, so threads run them in parallel."""
        return await asyncio.to_thread(fn, *args)

    async def purge(self) -> int:
        return await self.store.purge_jobs(now() - self.retention_s)

    async def _purge_loop(self) -> None:
        while True:
            await asyncio.sleep(PURGE_EVERY_S)
            try:
                await self.purge()
            except Exception:
                log.exception("job purge failed; will retry")
