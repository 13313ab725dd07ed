"""Plans (free, pro): what each allows, and the 402 a call past a limit gets.

The numbers are configuration (Config.<plan>_*, env BATHTUB_FREE_* / BATHTUB_PRO_*); a user's
plan is a column of `users`, set with `bathtub user plan USER free|pro`. Limits are checked at
the door (pro-only tools, replications and CPU-seconds per job) or inside the very transaction
that would store (stored items, concurrent jobs), so a refused call changes nothing and two
concurrent calls cannot both take the last place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bathtub_api.errors import ApiError

if TYPE_CHECKING:
    from bathtub_api.config import Config

PLANS = ("free", "pro")
GUIDE_HINT = 'see the guide topic `plans` (POST /api/v1/guide {"topic": "plans"})'


@dataclass(frozen=True)
class PlanLimits:
    """What one plan allows (0 means none of it)."""

    plan: str
    stored_items: int
    replications_per_job: int
    job_cpu_seconds: float
    concurrent_jobs: int
    pro_tools: bool

    def as_dict(self) -> dict[str, Any]:
        return {"plan": self.plan, "stored_items": self.stored_items,
                "replications_per_job": self.replications_per_job, "job_cpu_seconds": self.job_cpu_seconds,
                "concurrent_jobs": self.concurrent_jobs, "pro_tools": self.pro_tools}


def limits(config: Config, plan: str) -> PlanLimits:
    """A plan's limits from the configuration. An unknown plan (a row edited by hand) gets the
    free plan's: never more than was granted."""
    p = plan if plan in PLANS else "free"
    cpu = getattr(config, f"{p}_job_cpu_seconds")
    # The service-wide per-job limit (422, no plan lifts it) bounds every plan's.
    cpu = config.job_cpu_limit_seconds if cpu is None else min(float(cpu), config.job_cpu_limit_seconds)
    return PlanLimits(p, getattr(config, f"{p}_stored_items"), getattr(config, f"{p}_replications_per_job"),
                      cpu, getattr(config, f"{p}_concurrent_jobs"), p == "pro")


def all_limits(config: Config) -> dict[str, PlanLimits]:
    return {p: limits(config, p) for p in PLANS}


class PlanRefusal(ApiError):
    """402: a plan limit stops the call. The detail names the limit, its value and the plan, and
    points at the guide topic."""

    def __init__(self, plan: str, limit: str, value: float | int, what: str) -> None:
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        super().__init__(
            402,
            f"plan.{limit}: the {plan} plan allows {what} ({limit} = {shown}); {GUIDE_HINT}",
        )
        self.plan = plan
        self.limit = limit
        self.value = value


def check_tool(plan: PlanLimits, tool: str, action: str | None) -> None:
    if not plan.pro_tools:
        name = f"{tool}/{action}" if action else tool
        raise PlanRefusal(plan.plan, "pro_tools", 0, f"no pro-only tools ({name} is pro-only)")


def check_job(plan: PlanLimits, *, replications: int, seconds: float | None = None) -> None:
    """A job's size against the plan: replications, then (where the job is quoted) CPU-seconds."""
    if replications > plan.replications_per_job:
        raise PlanRefusal(plan.plan, "replications_per_job", plan.replications_per_job,
                          f"at most {plan.replications_per_job:,} replications per job; this one asks "
                          f"{replications:,}")
    if seconds is not None and seconds > plan.job_cpu_seconds:
        raise PlanRefusal(plan.plan, "job_cpu_seconds", plan.job_cpu_seconds,
                          f"at most {plan.job_cpu_seconds:g} CPU-seconds per job; this one is quoted at "
                          f"{seconds:,.1f} s on one core")


def stored_items_refusal(plan: PlanLimits) -> PlanRefusal:
    items = "item" if plan.stored_items == 1 else "items"
    return PlanRefusal(plan.plan, "stored_items", plan.stored_items,
                       f"at most {plan.stored_items:,} stored {items}; delete some, or ask for the pro plan")


def concurrent_jobs_refusal(plan: PlanLimits) -> PlanRefusal:
    return PlanRefusal(plan.plan, "concurrent_jobs", plan.concurrent_jobs,
                       f"at most {plan.concurrent_jobs} queued or running jobs at once; wait for one to "
                       "finish or cancel one")
