"""get/job, list/job and jobs cancel: a queued calculation's status, progress and result; stopping one."""

from __future__ import annotations

from typing import Any, Literal

from bathtub_api.fields import Id
from bathtub_api.ids import iso
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import ListRequest, Strict


class JobGet(Strict):
    id: Id


class JobStatus(Strict):
    id: str
    kind: str
    status: Literal["queued", "running", "done", "failed", "cancelled"]
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    queue_position: int | None = None
    progress: float | None = None
    eta_s: float | None = None
    result: Any = None
    message: str | None = None


class JobQueued(Strict):
    job_id: str
    status: Literal["queued"]
    queue_position: int


async def get_job(ctx: Ctx, req: JobGet) -> dict[str, Any]:
    return await ctx.jobs.status(ctx.user.id, req.id)


async def cancel_job(ctx: Ctx, req: JobGet) -> dict[str, Any]:
    return await ctx.jobs.cancel(ctx.user.id, req.id)


async def list_jobs(ctx: Ctx, req: ListRequest) -> dict[str, Any]:
    rows = await ctx.store.list_jobs(ctx.user.id, req.limit + 1, req.offset, **req.filters())
    more = len(rows) > req.limit
    items = [{"id": r["id"], "kind": r["action"], "status": r["status"], "message": r["message"],
              "created_at": iso(r["created_at"]), "started_at": iso(r["started_at"]),
              "finished_at": iso(r["finished_at"])} for r in rows[: req.limit]]
    return {"items": items, "next_offset": req.offset + req.limit if more else None}


def register(reg: Registry) -> None:
    reg.action("list", "job", request=ListRequest, selector="kind",
               summary="The caller's jobs, oldest first (kept a week): id, kind, status, message and times; "
                       "name_contains matches the kind. get/job gives one job's progress and result.")(list_jobs)
    reg.action("get", "job", request=JobGet, response=JobStatus, selector="kind",
               summary="A job's status: queued (with queue_position), running (with progress 0..1 and eta_s, "
                       "seconds left, once known), done (with result), failed (with message) or cancelled. "
                       "Poll every few seconds; jobs are kept a week.")(get_job)
    reg.action("jobs", "cancel", request=JobGet, response=JobStatus, scope="write",
               summary="Cancel a queued or running job (yours only): a simulation stops within about a second "
                       "and nothing is stored. A finished job answers 409; cancelling twice is harmless.")(cancel_job)
