"""`rbd_analysis cheapest_design`, a job: the cheapest design of a stored diagram meeting
a target, each block with options on one of them (`bathtub.rbd.cheapest` searches; this
module loads the diagram and the options' saved models, refuses bad input before
queueing, quotes and queues).

The request is checked whole at the door: every option is compiled in the diagram and the
search's plan (its method and the most designs it may simulate) is quoted against the
caller's plan, so a queued job fails only if cancelled or over its time limit.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, WithJsonSchema

from bathtub import engine
from bathtub.errors import InputError
from bathtub.models import upgrade
from bathtub.rbd import cheapest, decisions
from bathtub.rbd import schema as rbd_schema
from bathtub.rbd.blocks import model_schema
from bathtub.rbd.design_space import MAX_BLOCKS, MAX_OPTIONS, MAX_UNITS
from bathtub.rbd.quote import quote
from bathtub_api.fields import Id, Text, integer
from bathtub_api.jobs import JobCtx
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import Open, Strict, load_item
from bathtub_api.tools.rbd import resolve_diagram
from bathtub_api.tools.rbd_decisions import check_time_field, quote_designs

CHEAPEST_JOB = "rbd.cheapest_design"
Time = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class DesignOption(Strict):
    """One alternative for a block, replacing it in the design. Active redundancy: `units`
    n identical copies (`<id>#1`...`<id>#n`, every field of the block kept) of which
    `required` k must work (a k-of-n gate with the block's id); n = 1 is the block itself
    on other models (an alternative component). Standby: `spares` s with `required` k
    running and `dormancy` (idle ageing relative to running: 0 cold, the default, to 1 hot;
    warm spares need k = 1). `model` / `repair` (BlockModel, inline or a saved model) and
    `inspection` (ProofTest, active component units) replace the block's own. `cost` is the
    option's capital cost as installed, whole (all its units)."""

    name: Text | None = None
    cost: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    units: integer(ge=1, le=MAX_UNITS) | None = None
    required: integer(ge=1, le=MAX_UNITS) | None = None
    spares: integer(ge=0, le=MAX_UNITS - 1) | None = None
    dormancy: Annotated[float, Field(ge=0, le=1)] | None = None
    # published as what the diagram checks take (a block's model, a proof test), checked there
    model: Annotated[Open, WithJsonSchema(model_schema())] | None = None
    repair: Annotated[Open, WithJsonSchema(model_schema())] | None = None
    inspection: Annotated[Open, WithJsonSchema(rbd_schema.PROOF_TEST.schema)] | None = None


class Target(Strict):
    """`availability` (time average over the horizon, at least `value`), `pfd_avg` (below
    `value`) or `sil` (`value` 1..4: PFDavg below 10^-value's band end, 10^-(value-1)) for a
    repairable diagram (pfd_avg and sil: a safety function); `reliability` at the mission
    time (at least `value`) for a non-repairable one."""

    figure: Literal["availability", "pfd_avg", "sil", "reliability"]
    value: Annotated[float, Field(gt=0, allow_inf_nan=False)]


class CheapestDesign(Strict):
    """The cheapest design of diagram `id` meeting `target`: each block named in `options`
    takes one of its options (a list: include the block as it is, at its cost, if keeping it
    is an option). Cost = the sum of the chosen options' `cost` (capital); blocks without
    options and the diagram's running costs are not counted (with costs on the diagram each
    design reports its simulated running cost beside). Exact (every design in closed form,
    or every design simulated) where the space allows, else a stated greedy heuristic
    (`method`). The winner and up to `top` - 1 runners-up are verified by simulation on
    common random numbers, each with its 95% interval and whether it meets the target with
    95% one-sided confidence. `horizon` (repairable) or `mission_time` (non-repairable).
    The job's result (`get job`): target, method (exact | simulated | heuristic) with
    method_description, closed_form {available, reason}, cost_basis, space {designs,
    enumerated, pruned, simulated}, winner, designs (winner first: rank, cost, choices, closed_form,
    value, std_error, interval, meets_target, meets_target_with_confidence, versus_winner
    (paired difference), running_cost, sil for PFDavg), best_available when none meets the
    target, crn_variance_ratio_median."""

    id: Id
    options: Annotated[dict[Text, Annotated[list[DesignOption], Field(min_length=1, max_length=MAX_OPTIONS)]],
                       Field(min_length=1, max_length=MAX_BLOCKS)]
    target: Target
    horizon: Time | None = None
    mission_time: Time | None = None
    top: integer(ge=1, le=cheapest.MAX_TOP) = 5
    replications: integer(ge=decisions.MIN_REPLICATIONS, le=1_000_000) = 2000
    seed: integer(ge=0, le=2**63 - 1) = 1


async def _saved_models(ctx: Ctx, options: dict[str, list[DesignOption]]) -> dict[str, Any]:
    """The caller's saved models the options name (another user's id is "no such id")."""
    out: dict[str, Any] = {}
    for bid, lst in options.items():
        for i, o in enumerate(lst):
            for key in ("model", "repair"):
                m = getattr(o, key)
                mid = m.model_dump().get("saved_model_id") if m is not None else None
                if isinstance(mid, str) and mid not in out:
                    item = await ctx.store.get_item(ctx.user.id, "model", mid)
                    if item is None:
                        raise InputError(f"options.{bid}[{i}].{key}.saved_model_id", f"no model with id {mid!r}")
                    out[mid] = upgrade(item["body"])  # rows and covariance in the one shape
    return out


async def cheapest_design(ctx: Ctx, req: CheapestDesign) -> dict[str, Any]:
    item = await load_item(ctx, "rbd", req.id)
    body = item["body"]
    repairable = bool(body["repairable"])
    check_time_field(repairable, req.horizon, req.mission_time)
    diagram = await resolve_diagram(ctx.store, ctx.user.id, body)
    saved = await _saved_models(ctx, req.options)
    options = {b: [o.model_dump(exclude_none=True) for o in lst] for b, lst in req.options.items()}
    args = {"diagram": diagram, "repairable": repairable, "horizon": req.horizon, "mission_time": req.mission_time,
            "options": options, "target": req.target.model_dump(), "top": req.top,
            "replications": req.replications, "seed": req.seed, "crews": int(body.get("repair_crews", 0)),
            "saved": saved, "unit": body.get("unit")}
    plan = await ctx.jobs.run_native(_check, args)
    q = _quote(ctx, plan, req.replications, req.horizon)
    q["search"] = {"method": plan["method"], "designs": plan["designs"], "designs_simulated_at_most":
                   plan["lanes_bound"]}
    queued = await ctx.jobs.submit(ctx.user.id, CHEAPEST_JOB, {"rbd_id": req.id, "rbd_name": item["name"],
                                                              "quote": q, "args": args})
    return {**queued, "quote": q}


def _quote(ctx: Ctx, plan: dict[str, Any], replications: int, horizon: float | None) -> dict[str, Any]:
    """The search's quote: its largest design run once per design it may simulate. Over the
    per-job limit because of the space (one design's run would fit), the refusal names
    `options`; else `replications`, as every decision job does."""
    lanes = int(plan["lanes_bound"])
    try:
        return quote_designs(ctx, plan["largest_design"], replications, horizon, lanes, "replications")
    except InputError:
        one = quote(plan["largest_design"], replications=replications, horizon=horizon).seconds
        if one > ctx.jobs.cpu_limit_s:
            raise
        raise InputError("options", f"the {plan['method']} search of this space ({plan['designs']:,} designs) may "
                                    f"simulate up to {lanes:,} designs, quoted at {one * lanes / 60:,.1f} "
                                    f"CPU-minutes, over the limit of {ctx.jobs.cpu_limit_s / 60:g} CPU-minutes per "
                                    "job; give fewer options (exponential lives and repairs let the search rank "
                                    "designs in closed form and simulate only the best) or lower replications"
                           ) from None


def _check(args: dict[str, Any]) -> dict[str, Any]:
    return cheapest.cheapest_design(**args, check_only=True)


async def cheapest_job(ctx: JobCtx, job: dict[str, Any]) -> dict[str, Any]:
    out = await ctx.jobs.run_background(_run, job["args"], ctx.jobs.engine_threads, ctx.handle.control)
    return {"rbd_id": job["rbd_id"], "rbd_name": job["rbd_name"], "quote": job["quote"], **out}


def _run(args: dict[str, Any], threads: int, control: engine.RunControl) -> dict[str, Any]:
    return cheapest.cheapest_design(**args, threads=threads, control=control)


def register(reg: Registry) -> None:
    reg.action("rbd_analysis", "cheapest_design", request=CheapestDesign, response=Open, scope="write", heavy=True,
               summary="Queue a cheapest-design job: per block, options (k-of-n active copies, standby spares, "
                       "alternative components with their own cost and life/repair models); the least-capital-cost "
                       "design meeting an availability, PFDavg / SIL or mission-reliability target, exact by "
                       "enumeration with closed-form pruning where the space allows, else a stated greedy "
                       "heuristic; the winner and runners-up verified on common random numbers with intervals")(
        cheapest_design)
    reg.job(CHEAPEST_JOB)(cheapest_job)
