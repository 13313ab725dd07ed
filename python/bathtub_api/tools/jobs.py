"""get/job: a queued calculation's status and, when done, its result."""

from __future__ import annotations

from typing import Any, Literal

from bathtub_api.fields import Id
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import Strict


class JobGet(Strict):
    id: Id


class JobStatus(Strict):
    id: str
    kind: str
    status: Literal["queued", "running", "done", "failed"]
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    queue_position: int | None = None
    result: Any = None
    message: str | None = None


class JobQueued(Strict):
    job_id: str
    status: Literal["queued"]
    queue_position: int


async def get_job(ctx: Ctx, req: JobGet) -> dict[str, Any]:
    return await ctx.jobs.status(ctx.user.id, req.id)


def register(reg: Registry) -> None:
    reg.action("get", "job", request=JobGet, response=JobStatus, selector="kind",
               summary="A job's status (queued with queue_position, running, done with result, failed with "
                       "message). Poll every few seconds; jobs are kept a week.")(get_job)
