"""Decisions on a stored diagram: `rbd_analysis what_to_improve` and
`rbd_analysis interval_search`, each a job (`bathtub.rbd.decisions` computes; this module
resolves the diagram, refuses bad input before queueing, quotes and queues).

A request is checked whole at the door: the library runs its own checks and the engine
compiles every candidate design with no replications, so a queued job fails only if
cancelled or over its time limit.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from bathtub import engine, rbd
from bathtub.errors import InputError
from bathtub.rbd import decisions
from bathtub.rbd.quote import quote
from bathtub_api import plans
from bathtub_api.fields import Id, Text, integer
from bathtub_api.jobs import JobCtx
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import Open, Strict, load_item
from bathtub_api.tools.rbd import InitialStates, resolve_diagram, states_of

IMPROVE_JOB = "rbd.what_to_improve"
SEARCH_JOB = "rbd.interval_search"
Time = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class WhatToImprove(Strict):
    """Per block of diagram `id`: importance measures and "what if" gains (MTBF doubled, MTTR
    halved) on common random numbers. `horizon` (repairable) or `mission_time`
    (non-repairable) as in analyze; `objective` the figure compared (default: pfd_avg for a
    safety function, availability for other repairable diagrams, reliability otherwise;
    cost_rate needs costs); `blocks` the blocks whose what-if changes to run (default all;
    at most 199 changes a run, so a large diagram names them), importance is for all;
    `initial_states` starts every design from the blocks' states now (as in analyze)."""

    id: Id
    horizon: Time | None = None
    mission_time: Time | None = None
    objective: Literal["availability", "pfd_avg", "cost_rate", "reliability"] | None = None
    blocks: Annotated[list[Text], Field(min_length=1, max_length=decisions.MAX_CHANGES)] | None = None
    replications: integer(ge=decisions.MIN_REPLICATIONS, le=1_000_000) = 2000
    seed: integer(ge=0, le=2**63 - 1) = 1
    initial_states: InitialStates | None = None


class IntervalSearch(Strict):
    """The best `knob` interval (preventive: planned replacement; proof_test) for `blocks`,
    or for the blocks of maintenance group `group` (all on one interval), over `points`
    candidates evenly from `low` to `high`, simulated over `horizon` on common random
    numbers. `objective` cost_rate (minimised; the default), or availability / pfd_avg with
    `target` (met at least cost, else at the longest interval) or without (best value);
    `target_sil` (1-4, a safety function) is the pfd_avg target at the upper bound of that
    SIL's band (SIL n while PFDavg < 10^-n). `initial_states` as in analyze."""

    exactly_one = ("blocks", "group")
    cross_field = ("high: must be greater than low",)
    id: Id
    blocks: Annotated[list[Text], Field(min_length=1, max_length=100)] | None = None
    group: Annotated[Text, Field(min_length=1, max_length=200)] | None = None
    knob: Literal["preventive", "proof_test"]
    low: Time
    high: Time
    points: integer(ge=2, le=decisions.MAX_CANDIDATES) = 21
    horizon: Time
    objective: Literal["cost_rate", "availability", "pfd_avg"] | None = None
    target: Annotated[float, Field(gt=0, lt=1)] | None = None
    target_sil: integer(ge=1, le=4) | None = None
    replications: integer(ge=decisions.MIN_REPLICATIONS, le=1_000_000) = 2000
    seed: integer(ge=0, le=2**63 - 1) = 1
    initial_states: InitialStates | None = None


def check_time_field(repairable: bool, horizon: float | None, mission_time: float | None) -> None:
    if repairable and mission_time is not None:
        raise InputError("mission_time", "a repairable diagram is analysed over a horizon: give horizon")
    if not repairable and horizon is not None:
        raise InputError("horizon", "a non-repairable diagram is analysed over a mission: give mission_time")
    if (horizon if repairable else mission_time) is None:
        raise InputError("horizon" if repairable else "mission_time", "required")


def quote_designs(ctx: Ctx, diagram: dict[str, Any], replications: int, horizon: float | None, lanes: int,
            field: str) -> dict[str, Any]:
    """The run's cost: one base run's quote times the designs simulated (plus one for the
    importance measures), refused over the per-job limit naming `field`."""
    q = quote(diagram, replications=replications, horizon=horizon).to_dict()
    q["seconds"] *= lanes
    q["events_per_replication"] *= lanes
    q["basis"] += f", x {lanes} designs on common random numbers"
    ctx.jobs.check_quote(q, field, "horizon" if horizon is not None else "mission_time")
    # Then the caller's plan (402): the replications asked for (each design runs them, on common
    # random numbers), and the quote, which counts every design.
    plans.check_job(ctx.plan, replications=replications, seconds=float(q["seconds"]))
    return q


async def what_to_improve(ctx: Ctx, req: WhatToImprove) -> dict[str, Any]:
    item = await load_item(ctx, "rbd", req.id)
    body = item["body"]
    repairable = bool(body["repairable"])
    check_time_field(repairable, req.horizon, req.mission_time)
    diagram = rbd.with_initial_states(await resolve_diagram(ctx.store, ctx.user.id, body),
                                      states_of(req.initial_states),
                                      repairable=repairable)
    args = {"diagram": diagram, "repairable": repairable, "horizon": req.horizon, "mission_time": req.mission_time,
            "objective": req.objective, "replications": req.replications, "seed": req.seed,
            "crews": int(body.get("repair_crews", 0)), "blocks": req.blocks}
    await ctx.jobs.run_native(_check_improve, args)
    blocks = req.blocks or await ctx.jobs.run_native(engine.compile_diagram, diagram)
    lanes = 1 + len(blocks) * (2 if repairable else 1) + 1
    q = quote_designs(ctx, diagram, req.replications, req.horizon, lanes, "replications")
    queued = await ctx.jobs.submit(ctx.user.id, IMPROVE_JOB, {"rbd_id": req.id, "rbd_name": item["name"],
                                                             "quote": q, "args": args})
    return {**queued, "quote": q}


def _check_improve(args: dict[str, Any]) -> None:
    decisions.what_to_improve(**args, check_only=True)


async def interval_search(ctx: Ctx, req: IntervalSearch) -> dict[str, Any]:
    if req.high <= req.low:
        raise InputError("high", "must be greater than low")
    item = await load_item(ctx, "rbd", req.id)
    body = item["body"]
    if not body["repairable"]:
        raise InputError("id", "interval search needs a repairable diagram (replacements and proof tests repair)")
    diagram = rbd.with_initial_states(await resolve_diagram(ctx.store, ctx.user.id, body),
                                      states_of(req.initial_states),
                                      repairable=True)
    args = {"diagram": diagram, "blocks": req.blocks, "group": req.group, "knob": req.knob,
            "intervals": decisions.candidate_intervals(req.low, req.high, req.points), "horizon": req.horizon,
            "objective": req.objective, "target": req.target, "target_sil": req.target_sil,
            "replications": req.replications, "seed": req.seed, "crews": int(body.get("repair_crews", 0))}
    await ctx.jobs.run_native(_check_search, args)
    q = quote_designs(ctx, diagram, req.replications, req.horizon, req.points, "replications")
    queued = await ctx.jobs.submit(ctx.user.id, SEARCH_JOB, {"rbd_id": req.id, "rbd_name": item["name"],
                                                            "quote": q, "args": args})
    return {**queued, "quote": q}


def _check_search(args: dict[str, Any]) -> None:
    decisions.interval_search(**args, check_only=True)


async def improve_job(ctx: JobCtx, job: dict[str, Any]) -> dict[str, Any]:
    out = await ctx.jobs.run_background(_run_improve, job["args"], ctx.jobs.engine_threads, ctx.handle.control)
    return {"rbd_id": job["rbd_id"], "rbd_name": job["rbd_name"], "quote": job["quote"], **out}


def _run_improve(args: dict[str, Any], threads: int, control: engine.RunControl) -> dict[str, Any]:
    return decisions.what_to_improve(**args, threads=threads, control=control)


async def search_job(ctx: JobCtx, job: dict[str, Any]) -> dict[str, Any]:
    out = await ctx.jobs.run_background(_run_search, job["args"], ctx.jobs.engine_threads, ctx.handle.control)
    return {"rbd_id": job["rbd_id"], "rbd_name": job["rbd_name"], "quote": job["quote"], **out}


def _run_search(args: dict[str, Any], threads: int, control: engine.RunControl) -> dict[str, Any]:
    return decisions.interval_search(**args, threads=threads, control=control)


def register(reg: Registry) -> None:
    reg.action("rbd_analysis", "what_to_improve", request=WhatToImprove, response=Open, scope="write", heavy=True,
               summary="Queue a what-to-improve job: block importance (Birnbaum, criticality, Fussell-Vesely, RAW, "
                       "RRW, shares of downtime and cost) and what-if gains (MTBF doubled, MTTR halved) with "
                       "intervals on common random numbers, ranked")(what_to_improve)
    reg.action("rbd_analysis", "interval_search", request=IntervalSearch, response=Open, scope="write", heavy=True,
               summary="Queue an interval-search job: the planned-replacement or proof-test interval of chosen "
                       "blocks or a maintenance group minimising cost rate or meeting an availability / PFDavg / SIL "
                       "target, with the objective curve and the optimum's uncertainty, on common random "
                       "numbers")(interval_search)
    reg.job(IMPROVE_JOB)(improve_job)
    reg.job(SEARCH_JOB)(search_job)
