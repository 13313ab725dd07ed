"""Queued calculations: a job row in the store, run by an aiojobs scheduler with a limit.

Status moves queued -> running -> done | failed | cancelled. The work itself never blocks
the event loop: native engine calls run on a thread (the engine releases the GIL) and
pure-Python number crunching runs in a process pool whose workers die with the service.

A running job is leased to this instance: a heartbeat renews the lease and publishes its
progress; an instance recovers (requeues, or fails after `max_attempts`) only jobs whose
lease ran out, so several instances on one store never take each other's live work. The
engine polls its job's cancel flag between replications, so a cancel (by the owner, or
because the service is stopping) ends a simulation within a second. Stopping requeues the
jobs it interrupted; the next start runs them again from their stored inputs (same seed,
same numbers).

Progress: engine runs report replications done against planned; other work reports
through `JobHandle.report`, or stays at 0 (eta_s null) until it finishes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import functools
import logging
import multiprocessing
import os
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, TypeVar

import aiojobs

from bathtub.engine import Cancelled, RunControl
from bathtub.engine import progress as engine_progress
from bathtub.errors import InputError
from bathtub_api.errors import ApiError, not_found
from bathtub_api.ids import iso, now
from bathtub_api.store import Store
from bathtub_api.write_faults import WriteRefused

log = logging.getLogger("bathtub_api.jobs")
T = TypeVar("T")

PURGE_EVERY_S = 3600.0
CANCEL_WAIT_S = 5.0  # a cancel answers once the work stopped, or after this long
ENGINE_STOP_S = 1.0  # the engine stops within a replication; past this, the job's task is cancelled
STATES = ("queued", "running", "done", "failed", "cancelled")


def gave_up(attempts: int) -> str:
    return (f"the service running this job stopped {attempts} times before it finished; "
            "submit it again (with fewer replications or a shorter horizon if it is large)")


@dataclass
class JobHandle:
    """A job running on this instance: its engine control, start time and outcome flags."""

    job_id: str
    control: RunControl = field(default_factory=RunControl)
    started: float = field(default_factory=time.monotonic)
    task: asyncio.Task[None] | None = None
    requeue: bool = False  # the service is stopping: hand the job back to the queue
    lost: bool = False  # the store says it is no longer ours (cancelled, or recovered elsewhere)
    _reported: float = 0.0
    _shown: float = 0.0

    def report(self, fraction: float) -> None:
        """Progress of work that does not run through the engine, in [0, 1]."""
        self._reported = min(1.0, max(0.0, float(fraction)))

    def progress(self) -> float:
        """Fraction done, never going back (a precision run revises its plan upwards)."""
        now_p = engine_progress(self.control) if self.control.planned else self._reported
        self._shown = max(self._shown, now_p)
        return self._shown

    def eta_s(self) -> float | None:
        p = self.progress()
        if p <= 0.0:
            return None
        return (time.monotonic() - self.started) * (1.0 - p) / p


@dataclass(frozen=True)
class JobCtx:
    """What a queued calculation may use: its owner, the store, the off-loop runners, and its
    handle (`handle.control` to pass to engine runs: cancel and progress; `handle.report` for
    progress of pure-Python work)."""

    owner: str
    store: Store
    jobs: JobRunner
    handle: JobHandle


JobHandler = Callable[[JobCtx, dict[str, Any]], Awaitable[Any]]


class JobRunner:
    def __init__(self, store: Store, job_kinds: Mapping[str, JobHandler], *, concurrency: int, cpu_workers: int,
                 retention_days: float,
                 cpu_limit_s: float = 600.0, lease_s: float = 20.0, heartbeat_s: float = 2.0, max_attempts: int = 3,
                 grace_s: float = 5.0, engine_threads: int | None = None, cluster: str | None = None):
        self.store = store
        self.job_kinds = job_kinds
        self.concurrency = concurrency
        self.cpu_workers = cpu_workers
        self.retention_s = retention_days * 86400.0
        self.cpu_limit_s = cpu_limit_s
        self.lease_s = lease_s
        self.heartbeat_s = heartbeat_s
        self.max_attempts = max_attempts
        self.grace_s = grace_s
        # Each engine run gets its own threads (not rayon's shared pool): two jobs then never
        # wait on each other's replications, so a cancelled job stops at once.
        self.engine_threads = engine_threads or os.cpu_count() or 1
        # A dask scheduler address: simulations then run in chunks there (bathtub.engine.scaleout).
        self.cluster = cluster
        # Host and pid make a lease's owner easy to find; the random part keeps it unique.
        self.instance = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._scheduler: aiojobs.Scheduler | None = None
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._background: concurrent.futures.ThreadPoolExecutor | None = None
        self._loops: list[asyncio.Task[None]] = []
        self._running: dict[str, JobHandle] = {}
        self._spawned: set[str] = set()  # queued here, not finished yet
        self._stopping = False
        self._stoppers: set[asyncio.Task[None]] = set()  # referenced until done (asyncio keeps weak refs)

    async def start(self) -> None:
        self._scheduler = aiojobs.Scheduler(limit=self.concurrency, pending_limit=100_000)
        try:
            await self.recover()
            await self.purge()
        except BaseException:
            await self._scheduler.close()
            raise
        self._loops = [asyncio.create_task(self._purge_loop()), asyncio.create_task(self._lease_loop())]

    async def close(self) -> None:
        """Stop: cancel the running jobs' work and requeue them, then stop the pool workers.
        Jobs still queued stay queued in the store for the next start. The scheduler is closed
        whatever happens on the way (its watcher task must not outlive the event loop)."""
        self._stopping = True
        try:
            for t in self._loops:
                t.cancel()
            await asyncio.gather(*self._loops, return_exceptions=True)
            handles = list(self._running.values())
            for h in handles:
                h.requeue = True
            self._stop_pool()  # pure-Python work cannot be interrupted: its workers are stopped
            await asyncio.gather(*(self._stop(h, self.grace_s) for h in handles))
            for h in handles:
                if h.job_id in self._running:  # did not hand back in time: requeue it ourselves
                    await self.store.requeue_job(h.job_id, self.instance)
                    log.warning("job %s did not stop within %.0f s; requeued", h.job_id, self.grace_s)
        finally:
            if self._scheduler:
                await self._scheduler.close()
            if self._background is not None:  # its runs were cancelled above: nothing to wait for
                self._background.shutdown(wait=False, cancel_futures=True)

    @property
    def running(self) -> frozenset[str]:
        """Ids of the jobs whose work is under way in this instance right now."""
        return frozenset(self._running)

    # -- submitting, watching, cancelling ----------------------------------------------------
    def check_quote(self, quote: dict[str, Any], field_name: str, also: str) -> None:
        """Refuse a job quoted (in seconds on one core) above the per-job limit, naming the
        field to lower (`also`: the other input that drives the cost)."""
        seconds = float(quote["seconds"])
        if seconds <= self.cpu_limit_s:
            return
        raise InputError(
            field_name,
            f"this run is quoted at {seconds / 60:,.1f} CPU-minutes ({seconds:,.0f} s on one core: "
            f"{quote['replications']:,} replications x {quote['events_per_replication']:,.0f} events), over the "
            f"limit of {self.cpu_limit_s / 60:g} CPU-minutes per job; lower {field_name} or {also}",
        )

    async def submit(self, owner: str, kind: str, args: dict[str, Any]) -> dict[str, Any]:
        """Queue `kind` with JSON-ready `args`; answers at once with the job id."""
        if kind not in self.job_kinds:
            raise ValueError(f"unknown job kind {kind!r}")
        if self._stopping:
            raise ApiError(503, "the service is stopping; submit the job again in a moment")
        job_id = await self.store.create_job(owner, kind, args)
        job = await self.store.get_job(owner, job_id)
        assert job is not None
        position = await self.store.queue_position(job_id, job["created_at"])
        await self._spawn(job_id, owner, kind, args)
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
            out["progress"] = 0.0
        elif job["status"] == "running":
            here = self._running.get(job_id)
            if here is not None:
                out["progress"], out["eta_s"] = here.progress(), here.eta_s()
            else:  # running on another instance: what its last heartbeat published
                out["progress"] = job["progress"] or 0.0
                out["eta_s"] = job["eta_s"]
        elif job["status"] == "done":
            out["progress"] = 1.0
            out["result"] = job["result"]
        else:
            out["message"] = job["message"]
        return out

    async def cancel(self, owner: str, job_id: str) -> dict[str, Any]:
        """Cancel a queued or running job (owner only: another user's id is not found)."""
        job = await self.store.get_job(owner, job_id)
        if job is None:
            raise not_found("job", job_id)
        if job["status"] in ("done", "failed"):
            raise ApiError(409, f"id: job {job_id} is already {job['status']}; only a queued or running job "
                                "can be cancelled")
        if job["status"] == "queued" or job["status"] == "running":
            if not await self.store.cancel_job(owner, job_id, "cancelled by its owner"):
                return await self.cancel(owner, job_id)  # it moved on meanwhile: answer for its new state
            here = self._running.get(job_id)
            if here is not None:
                here.lost = True
                await self._stop(here, CANCEL_WAIT_S)
            # A job running on another instance stops at that instance's next heartbeat.
        return await self.status(owner, job_id)

    async def _stop(self, h: JobHandle, wait_s: float) -> None:
        """Stop a job's work: the engine at its next replication (it then raises Cancelled);
        work that is not the engine's (awaiting something else) by cancelling its task."""
        h.control.cancel()
        if h.task is None or h.task is asyncio.current_task():
            return
        done, _ = await asyncio.wait({h.task}, timeout=min(ENGINE_STOP_S, wait_s))
        if not done:
            h.task.cancel()
            await asyncio.wait({h.task}, timeout=wait_s)

    # -- running -------------------------------------------------------------------------
    async def _spawn(self, job_id: str, owner: str, kind: str, args: dict[str, Any]) -> None:
        assert self._scheduler is not None, "JobRunner.start() was not awaited"
        self._spawned.add(job_id)
        await self._scheduler.spawn(self._run(job_id, owner, kind, args))

    async def _run(self, job_id: str, owner: str, kind: str, args: dict[str, Any]) -> None:
        try:
            if self._stopping or not await self.store.claim_job(job_id, self.instance, now() + self.lease_s):
                return  # stopping (it stays queued), or already taken, cancelled or purged
            handle = JobHandle(job_id, task=asyncio.current_task())
            self._running[job_id] = handle
            try:
                await self._work(handle, owner, kind, args)
            except WriteRefused as e:
                # Not even its failure could be stored (full or read-only store): it stays
                # running under a lease nobody renews, so it is retried once the lease ran out.
                log.error("job %s (%s): its outcome could not be stored: %s; retried after its lease", job_id,
                          kind, e.reason)
            finally:
                del self._running[job_id]
        finally:
            self._spawned.discard(job_id)

    async def _work(self, h: JobHandle, owner: str, kind: str, args: dict[str, Any]) -> None:
        handler = self.job_kinds.get(kind)
        try:
            if handler is None:
                raise ApiError(500, f"this service no longer knows job kind {kind!r}")
            result = await handler(JobCtx(owner, self.store, self, h), args)
        except (Cancelled, asyncio.CancelledError, BrokenProcessPool) as e:
            if h.requeue:
                await self.store.requeue_job(h.job_id, self.instance)
            elif not h.lost:  # a worker process died under it
                await self.store.fail_job(h.job_id, self.instance, f"internal error while computing: "
                                                                   f"{type(e).__name__}")
            if isinstance(e, asyncio.CancelledError):
                raise
        except (InputError, ApiError) as e:
            await self.store.fail_job(h.job_id, self.instance, str(e))
        except WriteRefused as e:  # what it stored on the way (a result item) was refused
            await self.store.fail_job(h.job_id, self.instance, e.detail)
        except Exception as e:
            log.exception("job %s (%s) failed", h.job_id, kind)
            await self.store.fail_job(h.job_id, self.instance, f"internal error while computing: {type(e).__name__}")
        else:
            try:
                await self.store.finish_job(h.job_id, self.instance, result)
            except WriteRefused as e:
                # A result too large for the room left: say so on the job (a short message may
                # still fit) instead of leaving it to be computed again to the same end.
                await self.store.fail_job(h.job_id, self.instance, f"its result could not be stored: {e.detail}")

    async def run_cpu(self, fn: Callable[..., T], *args: Any) -> T:
        """Pure-Python CPU work in a worker process, so the event loop never stalls."""
        call = functools.partial(fn, *args)
        while True:
            if self._stopping:
                raise ApiError(503, "the service is stopping; try again in a moment")
            if self._pool is None:
                # forkserver: forking a process that runs an event loop and threads is unsafe.
                ctx = multiprocessing.get_context("forkserver")
                # The forkserver imports the service once and each worker is forked with it: else
                # every new pool's worker (after a cancelled job's pool was stopped, or each app in
                # the tests) imported it again before its first call (~3 CPU-s). Read only when
                # this process's forkserver starts; its imports start no thread (numpy's BLAS pool
                # is fork-safe, rayon's pool starts at the first engine call).
                ctx.set_forkserver_preload(["bathtub_api.tools"])
                self._pool = concurrent.futures.ProcessPoolExecutor(
                    self.cpu_workers, mp_context=ctx, initializer=die_with, initargs=(os.getpid(),))
            pool = self._pool
            try:
                future = await _submit(pool, call)
                break
            except BrokenProcessPool:
                self._stop_pool()
                raise
            except RuntimeError:  # "cannot schedule new futures after shutdown"
                if self._pool is pool:
                    raise
                # The pool was stopped (a cancelled job's workers, or the service stopping) while
                # this call was being submitted: it goes to the next pool, or is refused if stopping.
        try:
            return await asyncio.wrap_future(future)
        except BrokenProcessPool:
            # A worker died (killed, out of memory): start a fresh pool for the next call.
            self._stop_pool()
            raise

    def _stop_pool(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        # The executor has no public way to stop busy workers (before Python 3.14): kill them,
        # so no computation outlives the service and shutdown does not wait on one.
        for p in list(getattr(pool, "_processes", {}).values()):
            with contextlib.suppress(Exception):
                p.kill()
        pool.shutdown(wait=False, cancel_futures=True)

    async def run_native(self, fn: Callable[..., T], *args: Any) -> T:
        """Engine calls on a thread: they release the GIL, so threads run them in parallel."""
        return await asyncio.to_thread(fn, *args)

    async def run_background(self, fn: Callable[..., T], *args: Any) -> T:
        """A job's engine run (it releases the GIL) on a thread of lower scheduling priority,
        which the engine's own threads inherit: on a busy machine the event loop, and so every
        request, gets a core before the simulations do (two jobs use every core)."""
        if self._background is None:
            self._background = concurrent.futures.ThreadPoolExecutor(
                max(1, self.concurrency), thread_name_prefix="bathtub-job", initializer=_lower_priority)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._background, functools.partial(fn, *args))

    # -- leases, recovery, purge -------------------------------------------------------
    async def recover(self) -> None:
        """Requeue (or fail, past max_attempts) jobs whose lease expired, then start every
        queued job this instance is not already holding."""
        requeued, failed = await self.store.recover_expired_jobs(now(), self.max_attempts, gave_up(self.max_attempts))
        if requeued or failed:
            log.warning("recovered jobs whose instance stopped: %d requeued, %d failed", requeued, failed)
        for job in await self.store.queued_jobs():  # their inputs are stored, so run them
            if job["id"] not in self._spawned and not self._stopping:
                await self._spawn(job["id"], job["owner"], job["action"], job["args"])

    async def _heartbeat(self) -> None:
        for h in list(self._running.values()):
            ours = await self.store.renew_lease(h.job_id, self.instance, now() + self.lease_s, h.progress(), h.eta_s())
            if not ours and not h.requeue and not h.lost:
                # Cancelled through another instance (or, after a stall, recovered by one):
                # stop computing something nobody will store.
                h.lost = True
                stopper = asyncio.create_task(self._stop(h, CANCEL_WAIT_S))
                self._stoppers.add(stopper)
                stopper.add_done_callback(self._stoppers.discard)

    async def _lease_loop(self) -> None:
        last_recovery = time.monotonic()
        while True:
            await asyncio.sleep(self.heartbeat_s)
            try:
                await self._heartbeat()
                if time.monotonic() - last_recovery >= self.lease_s / 2:
                    last_recovery = time.monotonic()
                    await self.recover()
            except Exception:
                log.exception("job heartbeat or recovery failed; will retry")

    async def purge(self) -> int:
        return await self.store.purge_jobs(now() - self.retention_s)

    async def _purge_loop(self) -> None:
        while True:
            await asyncio.sleep(PURGE_EVERY_S)
            try:
                await self.purge()
            except Exception:
                log.exception("job purge failed; will retry")


BACKGROUND_NICE = 10  # added to job threads' niceness: below requests, still well above idle work


def _lower_priority() -> None:
    """Job thread initializer. Linux sets a niceness per thread (setpriority on the thread id),
    and threads a thread starts inherit it; elsewhere, or where refused, the thread keeps the
    service's priority."""
    with contextlib.suppress(OSError, AttributeError):
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + BACKGROUND_NICE))


# -- pool workers die with the service -------------------------------------------------------
PR_SET_PDEATHSIG = 1
WATCH_EVERY_S = 0.5


def die_with(service_pid: int) -> None:
    """Pool worker initializer: end this worker when the service ends, however it ends
    (kill -9 included). The kernel kills it when its parent (the forkserver) exits; a
    watcher thread also ends it when the service process itself is gone."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    parent = os.getppid()
    threading.Thread(target=_watch, args=(service_pid, parent), name="die-with-service", daemon=True).start()


def _alive(pid: int) -> bool:
    if os.path.isdir("/proc/self"):  # procfs tells a zombie (ended, not yet reaped) from a live process
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
        except (FileNotFoundError, ProcessLookupError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _watch(service_pid: int, parent: int) -> None:
    while os.getppid() == parent and _alive(service_pid):
        time.sleep(WATCH_EVERY_S)
    os._exit(1)


async def _submit(pool: concurrent.futures.ProcessPoolExecutor, call: Callable[[], T]) -> concurrent.futures.Future[T]:
    """`pool.submit(call)` on a thread. A submit may start a worker process, and with forkserver it
    waits until the server has forked it: at a pool's first call, until the forkserver itself has
    started and imported the service (seconds). On the loop, that stalled every request meanwhile
    (the first upload import of a process: 2.6-4.8 s)."""
    submitted = asyncio.ensure_future(asyncio.to_thread(pool.submit, call))
    try:
        return await asyncio.shield(submitted)
    except asyncio.CancelledError:
        # Cancelled while submitting: cancel the work once queued, as cancelling an await of it does.
        submitted.add_done_callback(_cancel_submitted)
        raise


def _cancel_submitted(submitted: asyncio.Future[concurrent.futures.Future[Any]]) -> None:
    if not submitted.cancelled() and submitted.exception() is None:
        submitted.result().cancel()
