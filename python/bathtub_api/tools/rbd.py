"""Reliability block diagrams: the `rbd` tool (create, edit), `rbd_analysis analyze`, and
get/list of `rbd` and `rbd_run` items.

Diagrams are stored in the library's checked form (`bathtub.rbd.check_diagram`); every
analysis resolves saved models and subsystems, refuses what the engine does not simulate
yet (naming the node and field), then answers at once in closed form or queues an
`rbd.simulate` job that stores an `rbd_run`.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Annotated, Any, ClassVar, Literal

from aiohttp import web
from pydantic import ConfigDict, Field, WithJsonSchema

from bathtub import engine, rbd
from bathtub.errors import InputError
from bathtub.models import upgrade
from bathtub.rbd import blocks as rbd_blocks
from bathtub.rbd import diagram as rbd_diagram
from bathtub.rbd import stages as rbd_stages
from bathtub.rbd import uncertainty as rbd_uncertainty
from bathtub.rbd.analysis import RunOptions
from bathtub.rbd.resolve import check_saved
from bathtub.rbd.states import MAX_STATES
from bathtub_api import plans
from bathtub_api.errors import ApiError
from bathtub_api.fields import Id, Name, Text, Unit, integer
from bathtub_api.ids import iso, new_id
from bathtub_api.jobs import JobCtx
from bathtub_api.registry import Ctx, Registry
from bathtub_api.store import Store
from bathtub_api.tools.common import ListRequest, Open, Strict, load_item, page

JOB_KIND = "rbd.simulate"
SCAN_PAGE = 500


def _by_repairable(field: str, repairable: dict[str, Any], not_repairable: dict[str, Any]) -> dict[str, Any]:
    """A field's schema that depends on the diagram's `repairable` flag (default false)."""
    return {"if": {"required": ["repairable"], "properties": {"repairable": {"const": True}}},
            "then": {"properties": {field: repairable}}, "else": {"properties": {field: not_repairable}}}


def _nodes_of(repairable: bool) -> dict[str, Any]:
    return {"items": rbd_blocks.node_schema(repairable), **rbd_diagram.ONE_INPUT_AND_OUTPUT}


def _setting(key: str) -> Any:
    """A diagram setting's type with the library check's schema (what `set` and create accept)."""
    return WithJsonSchema({"anyOf": [rbd.SETTINGS[key].schema, {"type": "null"}]})


class RbdCreate(Strict):
    """A diagram from `nodes` + `edges` (RbdNode, RbdEdge) or from compact `stages`, with
    any of the diagram settings an edit `set` takes (so a diagram whose blocks name a
    maintenance group, say, can be created whole: what is stored must analyse)."""

    model_config = ConfigDict(json_schema_extra={
        "allOf": [{"properties": {"nodes": {"items": rbd_blocks.node_models_schema()}}},
                  _by_repairable("nodes", _nodes_of(True), _nodes_of(False)),
                  _by_repairable("stages", rbd_stages.stages_schema(True), rbd_stages.stages_schema(False))],
        "description": "A diagram from nodes + edges or from compact stages. What JSON Schema cannot say is "
                       "refused naming the field: " + rbd_diagram.GRAPH_RULES + " " + rbd_blocks.NODE_RULES
                       + " Saved models and subsystem diagrams named must be yours; what analyze refuses "
                         "(a field this engine does not simulate) is refused here too."})

    exactly_one = ("nodes", "stages")
    cross_field = (*rbd_diagram.GRAPH_CROSS_FIELD, *rbd_stages.STAGE_CROSS_FIELD)
    companions: ClassVar[dict[str, tuple[str, ...]]] = {"nodes": ("edges",)}
    name: Name
    unit: Unit | None = None
    repairable: bool = False
    nodes: Annotated[list[dict[Text, Any]], Field(min_length=1, max_length=rbd_diagram.MAX_NODES,
                                                  description="RbdNode objects (guide topic rbds)")] | None = None
    edges: Annotated[list[dict[Text, Any]], Field(description="RbdEdge objects, from -> to"),
                     WithJsonSchema({"anyOf": [{"type": "array", "items": rbd_diagram.EDGE_SCHEMA},
                                               {"type": "null"}]})] | None = None
    stages: Annotated[list[dict[Text, Any]], Field(
        min_length=1, description="Compact form: stages in series, each with components in parallel")] | None = None
    repair_crews: integer(ge=0, le=1_000_000) | None = None
    ccf: Annotated[list[dict[Text, Any]] | None, WithJsonSchema(
        {"anyOf": [{"type": "array", "items": rbd_diagram.CCF_GROUP.schema, "maxItems": 1000},
                   {"type": "null"}]})] = None
    maintenance_groups: Annotated[dict[Text, Any] | None, _setting("maintenance_groups")] = None
    safety_function: bool | None = None
    target_sil: integer(ge=0, le=4) | None = None
    costs: Annotated[dict[Text, Any] | None, _setting("costs")] = None
    production: Annotated[dict[Text, Any] | None, _setting("production")] = None
    phases: Annotated[list[dict[Text, Any]] | None, _setting("phases")] = None
    network: Annotated[bool | dict[Text, Any] | None, _setting("network")] = None
    currency: Annotated[str | None, _setting("currency")] = None


class RbdEdit(Strict):
    """`ops`: the spec's edit operations, applied in order; all apply or none does.
    `revision` (from get/rbd), when given, refuses the edit if the diagram changed since."""

    id: Id
    ops: Annotated[list[dict[Text, Any]], Field(min_length=1, max_length=1000)]
    revision: Id | None = None


class RbdGet(Strict):
    id: Id


class RunGet(Strict):
    id: Id
    include_curve: bool = False


class RunList(ListRequest):
    rbd_id: Id | None = None


class BlockState(Strict):
    """Where a block is when the run starts (all optional): `age` running, this old since new
    or last renewed; `failed` (non-repairable runs) for good; `down` (repairable runs) in
    repair, for `since` already (0: just failed)."""

    failed: bool | None = None
    down: bool | None = None
    since: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    age: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None


InitialStates = Annotated[dict[Id, BlockState], Field(
    max_length=MAX_STATES,
    description="Block id (outer/inner inside subsystems) to its BlockState: the run starts from the plant as it is "
                "now. Component, series and parallel blocks; failed in non-repairable runs, down (with since) in "
                "repairable ones; not on blocks with preventive, inspection or repair_quality.")]


def states_of(states: dict[str, BlockState] | None) -> dict[str, dict[str, Any]] | None:
    """The request's initial states as plain BlockState dicts (None when none given)."""
    return {k: v.model_dump(exclude_none=True) for k, v in states.items()} if states else None


class Analyze(Strict):
    """`horizon` (repairable) or `mission_time` (non-repairable; a phased mission's is the
    phases' total duration: omit it, or give that value) in the diagram unit;
    `replications`, or `precision` (relative 95% half-width of mean unavailability to reach,
    up to `max_replications`); `seed`; `grid` curve points; `method` auto (closed form where
    exact), simulation, or failure_biasing (see the field); `recompute` reruns even when a run
    of the same inputs exists; `initial_states` starts the run from the blocks' states now
    (BlockState per block id). Exactly one of `horizon` and `mission_time`, as the diagram
    needs (neither with failure_biasing); `precision` (repairable only) excludes `replications`."""

    id: Id
    horizon: Annotated[float, Field(gt=0)] | None = None
    mission_time: Annotated[float, Field(gt=0)] | None = None
    replications: integer(ge=1, le=10_000_000) | None = None
    precision: Annotated[float, Field(gt=0, lt=1)] | None = None
    max_replications: integer(ge=2, le=10_000_000) | None = None
    seed: integer(ge=0, le=2**63 - 1) | None = None
    grid: integer(ge=2, le=2001) | None = None
    method: Annotated[Literal["auto", "simulation", "failure_biasing"], Field(description=(
        "auto: closed form where exact, else simulation; simulation: always Monte Carlo over the horizon; "
        "failure_biasing (repairable diagrams whose every block has an exponential life and an exponential "
        "repair, with the diagram's repair crews; no proof tests, planned or imperfect repair, instant repair, "
        "initial states, common-cause or maintenance groups, costs, capacity or safety function, else 422 naming "
        "`method` and the rule): the steady-state unavailability of a highly available system by regenerative "
        "simulation with balanced failure biasing (importance sampling, unbiased), with its 95% delta-method "
        "interval, failure frequency, MTBF and mean down time; no horizon and no grid (no curve); replications "
        "count regenerative cycle pairs (default 10000), or give precision (relative half-width) up to "
        "max_replications (default 1000000)"))] = "auto"
    variance_reduction: Annotated[Literal["none", "control", "auto", "antithetic", "stratified"], Field(description=(
        "Variance reduction of a repairable simulation's mean availability (not with failure_biasing or a "
        "non-repairable diagram, else 422 naming `variance_reduction`): none (default: the plain estimator, the "
        "numbers every earlier run of the same seed keeps); control (control variates with known means: each "
        "plain exponential block's downtime, and the system's unavailability under independence where the blocks "
        "form a tree, combined by regression with the interval on its degrees of freedom); auto (control, and "
        "where an input of the output node is a tree of such blocks, its downtime integrated exactly given the "
        "rest: conditional Monte Carlo). The same replications are drawn; results.variance_reduction gives the "
        "method used, the factor achieved (plain variance over reduced, both from the run) and why the plain "
        "estimator stood when it did; precision is reached on the reduced estimator. antithetic: replications "
        "drawn in pairs from one stream read as U and 1 - U (every life by inversion: other numbers than a "
        "plain run of the seed), the mean of the pairs' means with its t interval on pairs - 1 degrees of "
        "freedom; factor = per-replication variance / (2 x variance of pair means); efficiency = factor / 1.2 "
        "(a pair member's CPU over a plain replication's), a fallback note when it is not above 1; with precision, "
        "pairs that do not pay after a 400-pair pilot turn to plain streams (method antithetic+plain). stratified: "
        "sets of 16 replications whose first uniforms, one per unit up to 64 (its first life), are a Latin hypercube "
        "over the set, the mean of set means with its t interval on sets - 1 degrees of freedom; efficiency = "
        "factor / 1.035 (a set member's CPU over a plain replication's); with precision, sets that do not pay "
        "after a 400-set pilot turn to plain streams (method stratified+plain)"))] | None = None
    recompute: bool = False
    initial_states: InitialStates | None = None
    uncertainty: Annotated[Literal["none", "parameters"], Field(description=(
        "none: the run at the fitted models' point estimates; parameters: also a two-level Monte Carlo that draws "
        "every saved fitted model a block names from its fit's sampling distribution (`draws` parameter draws, each "
        "analysed with `replications_per_draw` replications, or exactly where the diagram has a closed form) and "
        "reports each figure's "
        "parameter-uncertainty interval (5th-95th percentile over draws) beside its Monte Carlo interval, the "
        "share of variance due to parameters vs simulation, and which saved models contribute most. Blocks on "
        "inline models add no parameter uncertainty; saved cox, weibull_ph, AFT and crow_amsaa models are drawn "
        "too (guide rbd_analysis); a saved model that cannot be drawn (other regression and recurrent kinds, "
        "non-parametric, joint unit, a record saved before its fit stored its covariance) is refused naming the "
        "block; not with precision or failure_biasing"))] = "none"
    draws: integer(ge=2, le=rbd_uncertainty.MAX_DRAWS, description=(
        "uncertainty parameters only: parameter draws (default 100); the quote and plan limits count draws x "
        "replications_per_draw replications")) | None = None
    replications_per_draw: integer(ge=2, le=10_000_000, description=(
        "uncertainty parameters only: replications per parameter draw (default 200 repairable, 1000 "
        "non-repairable; unused where the diagram answers in closed form); draws x replications_per_draw at most "
        "100,000,000")) | None = None

    cross_field = ("draws: only with uncertainty: parameters",
                   "replications_per_draw: only with uncertainty: parameters",
                   "precision: not with uncertainty: parameters",
                   "method: failure_biasing does not take uncertainty: parameters",
                   "replications_per_draw: draws x replications_per_draw must be at most 100000000 replications")


def rbd_url(ctx: Ctx, rbd_id: str) -> str:
    return ctx.url(f"/api/v1/rbds/{rbd_id}")  # answers a GET (the route below), like every listed url


async def _references(store: Store, owner: str, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every saved model and diagram a diagram names, through its subsystems (the owner's
    only: another user's id is "no such id"). Refusals name the node."""
    models: dict[str, Any] = {}
    diagrams: dict[str, Any] = {}
    pending = [("", body)]
    while pending:
        prefix, d = pending.pop()
        for n in d["nodes"]:
            f = f"{prefix}nodes.{n['id']}"
            for key, m in rbd_blocks.node_models(n):
                mid = m.get("saved_model_id")
                if mid and mid not in models:
                    # a joint unit's model is a degradation model (its own kind of item)
                    joint = "joint_unit" in m
                    item = await store.get_item(owner, "degradation_model" if joint else "model", mid)
                    if item is None and joint and await store.get_item(owner, "model", mid) is not None:
                        raise InputError(f"{f}.{key}.joint_unit", f"model {mid} is a life model; a joint unit needs a "
                                                                  "saved condition-based (random_effects degradation) "
                                                                  "model")
                    if item is None:
                        raise InputError(f"{f}.{key}.saved_model_id", f"no model with id {mid!r}")
                    if joint and item["body"].get("model") != "random_effects":
                        raise InputError(f"{f}.{key}.saved_model_id", f"degradation model {mid} is "
                                         f"{item['body'].get('model')}; a joint unit needs a random_effects one")
                    if not joint:
                        check_saved(item["body"], mid, f"{f}.{key}.saved_model_id", d.get("unit"), m.get("covariates"))
                    models[mid] = upgrade(item["body"])  # rows and covariance in the one shape
            sub = n.get("subsystem_rbd_id")
            if sub and sub not in diagrams:
                if len(diagrams) > 200:
                    raise InputError(f"{f}.subsystem_rbd_id", "more than 200 embedded diagrams")
                item = await store.get_item(owner, "rbd", sub)
                if item is None:
                    raise InputError(f"{f}.subsystem_rbd_id", f"no rbd with id {sub!r}")
                diagrams[sub] = item["body"]
                pending.append((f"{f}.subsystem.", item["body"]))
    return models, diagrams


async def _checked(ctx: Ctx, rbd_id: str, body: dict[str, Any]) -> None:
    """What analyze would refuse is refused before storing, by the very checks analyze runs
    (resolution, then `rbd.check_runnable` off the event loop): create, edit and analyze
    cannot drift apart, and a stored diagram is one that analyses."""
    models, diagrams = await _references(ctx.store, ctx.user.id, body)
    rbd.check_no_cycle(rbd_id, body, diagrams)
    await ctx.jobs.run_native(_check_runnable, body, models, diagrams)


def _check_runnable(body: dict[str, Any], models: dict[str, Any], diagrams: dict[str, Any]) -> None:
    rbd.check_runnable(rbd.engine_form(body, models, diagrams), body["repairable"])


def _record(ctx: Ctx, item: dict[str, Any]) -> dict[str, Any]:
    body = item["body"]
    return {"id": item["id"], **rbd.view(body), "content_hash": rbd.content_hash(body), "revision": rbd.revision(body),
            "created_at": iso(item["created_at"]), "updated_at": iso(item["updated_at"]),
            "url": rbd_url(ctx, item["id"])}


async def create(ctx: Ctx, req: RbdCreate) -> dict[str, Any]:
    raw: dict[str, Any] = {"name": req.name, "unit": req.unit, "repairable": req.repairable}
    if req.stages is not None:
        if req.nodes is not None or req.edges is not None:
            raise InputError("stages", "give stages or nodes and edges, not both")
        raw.update(rbd.stages_to_diagram(req.stages, repairable=req.repairable))
    elif req.nodes is not None:
        raw.update(nodes=req.nodes, edges=req.edges or [])
    else:
        raise InputError("nodes", "give nodes and edges, or stages")
    settings = req.model_dump(include={"repair_crews", "ccf", *rbd.SETTINGS}, exclude_none=True)
    return (await store_diagrams(ctx, [{**raw, **settings}]))[0]


async def store_diagrams(ctx: Ctx, raws: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Check every diagram as analyze would, then store them all; if storing one fails, the ones
    stored are removed (create and imports share this, so nothing half-imported remains)."""
    checked = []
    for raw in raws:
        body = rbd.check_diagram(raw)
        rbd_id = new_id("rbd")
        await _checked(ctx, rbd_id, body)
        checked.append((rbd_id, body))
    stored: list[str] = []
    try:
        for rbd_id, body in checked:
            await ctx.store.insert_item(ctx.user.id, "rbd", rbd_id, body["name"], body)
            stored.append(rbd_id)
    except BaseException:
        for rbd_id in stored:
            await ctx.store.delete_item(ctx.user.id, "rbd", rbd_id)
        raise
    return [_record(ctx, await load_item(ctx, "rbd", rbd_id)) for rbd_id in stored]


EDIT_RETRIES = 20


async def edit(ctx: Ctx, req: RbdEdit) -> dict[str, Any]:
    """Apply the ops to the stored diagram and write it back only if nobody wrote in
    between (a version check); otherwise re-read and re-apply, so concurrent edits all land."""
    for _ in range(EDIT_RETRIES):
        item = await load_item(ctx, "rbd", req.id)
        if req.revision is not None and req.revision != rbd.revision(item["body"]):
            raise InputError("revision", "the diagram changed since you read it; get it again and redo the edit")
        body = rbd.apply_edits(item["body"], req.ops)
        await _checked(ctx, req.id, body)
        if await ctx.store.update_item(ctx.user.id, "rbd", req.id, body["name"], body, if_version=item["version"]):
            return _record(ctx, await load_item(ctx, "rbd", req.id))
    raise ApiError(409, "the diagram is being edited by others too often to apply this edit; try again")


async def get_rbd(ctx: Ctx, req: RbdGet) -> dict[str, Any]:
    item = await load_item(ctx, "rbd", req.id)
    out = _record(ctx, item)
    for n in out["nodes"]:
        if n.get("subsystem_rbd_id"):
            sub = await ctx.store.get_item(ctx.user.id, "rbd", n["subsystem_rbd_id"])
            n["subsystem_name"] = None if sub is None else sub["name"]
    return out


async def list_rbds(ctx: Ctx, req: ListRequest) -> dict[str, Any]:
    items, next_offset = await page(ctx, "rbd", req)
    return {
        "items": [
            {"id": i["id"], "name": i["name"], "unit": i["body"].get("unit"), "repairable": i["body"]["repairable"],
             "block_count": rbd.view(i["body"])["block_count"], "placeholders": rbd.placeholders(i["body"]),
             "created_at": iso(i["created_at"]), "updated_at": iso(i["updated_at"]), "url": rbd_url(ctx, i["id"])}
            for i in items
        ],
        "next_offset": next_offset,
    }


# ---------------------------------------------------------------------------------------
# Analyses


def _inputs_hash(inputs: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


async def resolve_diagram(store: Store, owner: str, body: dict[str, Any],
                   warnings: list[str] | None = None) -> dict[str, Any]:
    models, diagrams = await _references(store, owner, body)
    return rbd.engine_form(body, models, diagrams, warnings=warnings)


async def _uncertainty_inputs(store: Store, owner: str, body: dict[str, Any], req: Analyze) -> dict[str, Any] | None:
    """The run's parameter-uncertainty inputs (what each draw resolves: the diagram, its saved
    models cut to their parameters and covariance, its subsystems), refused at the door as the
    draws would refuse them; None for uncertainty none."""
    raw = req.model_dump(include={"uncertainty", "draws", "replications_per_draw", "method", "precision"},
                         exclude_none=True)
    unc = rbd_uncertainty.check_uncertainty(raw, body["repairable"])
    if unc is None:
        return None
    models, diagrams = await _references(store, owner, body)
    rbd_uncertainty.sources(body, models, diagrams)
    return {**unc.to_dict(), "body": body, "models": rbd_uncertainty.slim_models(models), "diagrams": diagrams}


async def _find_run(ctx: Ctx, rbd_id: str, key: str) -> dict[str, Any] | None:
    offset = 0
    found = None
    while True:
        page = await ctx.store.list_items(ctx.user.id, "rbd_run", SCAN_PAGE, offset)
        for item in page:
            b = item["body"]
            if b.get("rbd_id") == rbd_id and b.get("inputs_hash") == key:
                found = item  # the newest matching run wins (pages are oldest first)
        if len(page) < SCAN_PAGE:
            return found
        offset += SCAN_PAGE


def _run_summary(run_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """What the job result and the at-once answers carry: the run without its curve."""
    keep = ("rbd_id", "method", "reason", "results", "precision", "quote", "duration_s", "cpu_s", "engine_version",
            "placeholders", "warnings")
    out = {"run_id": run_id, "status": "done", **{k: body.get(k) for k in keep}}
    if "uncertainty" in body:
        out["uncertainty"] = body["uncertainty"]
    return out


async def analyze(ctx: Ctx, req: Analyze) -> dict[str, Any]:
    item = await load_item(ctx, "rbd", req.id)
    body = item["body"]
    warnings: list[str] = []
    diagram = await resolve_diagram(ctx.store, ctx.user.id, body, warnings)
    states = states_of(req.initial_states)
    diagram = rbd.with_initial_states(diagram, states, repairable=body["repairable"])
    raw = req.model_dump(exclude={"id", "recompute", "initial_states", "uncertainty", "draws", "replications_per_draw"},
                         exclude_none=True)
    opts = rbd.check_options(body["repairable"], raw, phases_end=engine.phases_end(diagram))
    uncertain = await _uncertainty_inputs(ctx.store, ctx.user.id, body, req)
    crews = int(body.get("repair_crews", 0))
    inputs = {"diagram": diagram, "repairable": body["repairable"], "unit": body.get("unit"),
              "options": opts.to_dict(), "crews": crews}
    if body.get("currency"):
        inputs["currency"] = body["currency"]  # only when set: runs of diagrams without one keep their hash
    if states:
        # Kept apart too: get rbd_run compares the diagram as it is now, with these states, to the run's.
        inputs["initial_states"] = states
    if uncertain is not None:
        inputs["uncertainty"] = uncertain  # absent without it: a plain run's inputs (and cache key) are as before
    key = _inputs_hash(inputs)
    if not req.recompute:
        cached = await _find_run(ctx, req.id, key)
        if cached is not None:
            return {**_run_summary(cached["id"], cached["body"]), "cached": True}
    # Compiling and reducing a large diagram takes a while: off the event loop.
    what = await ctx.jobs.run_native(rbd.plan, diagram, body["repairable"], opts, crews)
    await ctx.store.check_room_for_item(ctx.user.id)  # the run is a stored item of the owner's plan
    run_id = new_id("rbd_run")
    args = {"run_id": run_id, "rbd_id": req.id, "rbd_name": item["name"], "inputs": inputs, "inputs_hash": key,
            "diagram_hash": rbd.content_hash(body), "plan": what, "placeholders": rbd.placeholders(body),
            "warnings": warnings}
    if uncertain is not None:
        unc = rbd_uncertainty.UncertaintyOptions(draws=uncertain["draws"],
                                                 replications_per_draw=uncertain["replications_per_draw"])
        what["quote"] = rbd_uncertainty.uncertainty_quote(diagram, opts, unc, what["quote"],
                                                          exact=what["method"] == "closed_form")
    elif what["method"] == "closed_form":
        run = await _execute(ctx.store, ctx.user.id, ctx.jobs, args)
        return {**run, "cached": False}
    # The quote is the run's cost on one core: a run over the per-job limit is refused here,
    # naming what to lower, before anything is queued.
    if uncertain is not None:
        ctx.jobs.check_quote(what["quote"], "draws", "replications_per_draw")
    elif what["method"] == "failure_biasing":
        ctx.jobs.check_quote(what["quote"], "replications" if opts.precision is None else "max_replications",
                             "precision")
    elif body["repairable"]:
        ctx.jobs.check_quote(what["quote"], "replications" if opts.precision is None else "max_replications",
                             "horizon")
    else:
        ctx.jobs.check_quote(what["quote"], "replications", "mission_time")
    # Then the caller's plan (402): the service-wide limit above is no plan's to lift.
    plans.check_job(ctx.plan, replications=int(what["quote"]["replications"]), seconds=float(what["quote"]["seconds"]))
    queued = await ctx.jobs.submit(ctx.user.id, JOB_KIND, args)
    return {**queued, "run_id": run_id, "method": what["method"], "reason": what["reason"], "quote": what["quote"],
            "cached": False, "warnings": warnings}


def _compute(inputs: dict[str, Any], method: str, threads: int, control: engine.RunControl | None,
             cluster: str | None = None) -> dict[str, Any]:
    opts = RunOptions(**inputs["options"])
    if method == "closed_form":
        out = rbd.closed_form(inputs["diagram"], opts)
    else:
        out = rbd.simulate(inputs["diagram"], inputs["repairable"], opts, crews=inputs["crews"], threads=threads,
                           control=control, cluster=cluster)
    u = inputs.get("uncertainty")
    if u is not None:
        unc = rbd_uncertainty.UncertaintyOptions(draws=u["draws"], replications_per_draw=u["replications_per_draw"])
        out["uncertainty"] = rbd_uncertainty.parameter_section(
            u["body"], u["models"], u["diagrams"], opts, unc, out["results"], exact=method == "closed_form",
            crews=inputs["crews"], states=inputs.get("initial_states"), threads=threads, control=control,
            cluster=cluster)
    return out


async def _execute(store: Store, owner: str, jobs: Any, args: dict[str, Any],
                   control: engine.RunControl | None = None) -> dict[str, Any]:
    """Run an analysis off the event loop, store its rbd_run, answer its summary. A run
    cancelled through `control` raises engine.Cancelled and stores nothing."""
    plan = args["plan"]
    start = time.perf_counter()
    # A queued run (it has a control) is a background job: below requests in priority.
    run = jobs.run_native if control is None else jobs.run_background
    # The control also counts the CPU time of the engine's own threads (not the process's,
    # which other requests share); a cluster's workers and a closed form are not counted.
    ctl = control if control is not None else engine.RunControl()
    out = await run(_compute, args["inputs"], plan["method"], jobs.engine_threads, ctl, jobs.cluster)
    duration = time.perf_counter() - start
    cpu = ctl.cpu_seconds if plan["method"] != "closed_form" and jobs.cluster is None else None
    body = {
        "rbd_id": args["rbd_id"],
        "rbd_name": args["rbd_name"],
        "method": plan["method"],
        "reason": plan["reason"],
        "results": out["results"],
        "precision": out["precision"],
        "curve": out["curve"],
        "inputs": args["inputs"],
        "currency": args["inputs"].get("currency"),  # the unit of every cost in results.costs
        "inputs_hash": args["inputs_hash"],
        "diagram_hash": args["diagram_hash"],
        "engine_version": {"engine": engine.engine_version, "library": _library_version()},
        "quote": plan["quote"],
        "duration_s": duration,
        "cpu_s": cpu,
        "placeholders": args["placeholders"],
        "warnings": args.get("warnings", []) + out.get("warnings", []),
    }
    if "uncertainty" in out:
        body["uncertainty"] = out["uncertainty"]
    # Its room under the owner's plan was checked when the analysis was asked for (a queued run
    # must not fail at its end because the owner stored something meanwhile).
    await store.insert_item(owner, "rbd_run", args["run_id"], f"{args['rbd_name']} ({plan['method']})", body,
                            counted=False)
    return _run_summary(args["run_id"], body)


def _library_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bathtub")
    except PackageNotFoundError:
        return "unknown"


async def run_job(ctx: JobCtx, args: dict[str, Any]) -> dict[str, Any]:
    return await _execute(ctx.store, ctx.owner, ctx.jobs, args, ctx.handle.control)


async def get_run(ctx: Ctx, req: RunGet) -> dict[str, Any]:
    item = await load_item(ctx, "rbd_run", req.id)
    body = item["body"]
    out = {"id": req.id, **{k: v for k, v in body.items() if k not in ("curve", "inputs_hash")}}
    current = await ctx.store.get_item(ctx.user.id, "rbd", body["rbd_id"])
    if current is None:
        out["diagram_changed"] = True
        out["inputs_changed"] = True
    else:
        out["diagram_changed"] = rbd.content_hash(current["body"]) != body["diagram_hash"]
        try:
            now_diagram = rbd.with_initial_states(await resolve_diagram(ctx.store, ctx.user.id, current["body"]),
                                                  body["inputs"].get("initial_states"),
                                                  repairable=bool(current["body"]["repairable"]))
            out["inputs_changed"] = now_diagram != body["inputs"]["diagram"]
        except InputError:
            out["inputs_changed"] = True  # the diagram as it is now could not run at all
    if req.include_curve:
        out["curve"] = body["curve"]
    out["created_at"] = iso(item["created_at"])
    return out


async def list_runs(ctx: Ctx, req: RunList) -> dict[str, Any]:
    if req.rbd_id is not None:
        await load_item(ctx, "rbd", req.rbd_id)
    rows: list[dict[str, Any]] = []
    offset, skipped, more = 0, 0, False
    while True:
        page = await ctx.store.list_items(ctx.user.id, "rbd_run", SCAN_PAGE, offset, **req.filters())
        for item in page:
            b = item["body"]
            if req.rbd_id is not None and b.get("rbd_id") != req.rbd_id:
                continue
            if skipped < req.offset:
                skipped += 1
                continue
            if len(rows) == req.limit:
                more = True
                break
            rows.append({"id": item["id"], "name": item["name"], "rbd_id": b["rbd_id"], "method": b["method"],
                         "results": b["results"], "created_at": iso(item["created_at"])})
        if more or len(page) < SCAN_PAGE:
            break
        offset += SCAN_PAGE
    return {"items": rows, "next_offset": req.offset + req.limit if more else None}


def register(reg: Registry) -> None:
    reg.action("rbd", "create", request=RbdCreate, response=Open, scope="write",
               summary="Create a reliability block diagram from nodes and edges or compact stages")(create)
    reg.action("rbd", "edit", request=RbdEdit, response=Open, scope="write",
               summary="Apply a list of edit operations to a diagram, atomically (all or none)")(edit)
    reg.action("get", "rbd", request=RbdGet, response=Open, selector="kind",
               summary="A diagram in compact node form; blocks on placeholder models marked")(get_rbd)

    async def rbd_route(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        return await get_rbd(ctx, RbdGet(id=request.match_info["rbd_id"]))

    reg.route("GET", "/api/v1/rbds/{rbd_id}", summary="A diagram (as get/rbd): the url rbd answers carry")(rbd_route)
    reg.action("list", "rbd", request=ListRequest, response=Open, selector="kind",
               summary="The caller's diagrams, oldest first")(list_rbds)
    reg.action("rbd_analysis", "analyze", request=Analyze, response=Open, scope="write", heavy=True,
               summary="Quote and queue an availability or reliability analysis (a job that stores an rbd_run); "
                       "exact non-repairable diagrams answer at once in closed form")(analyze)
    reg.action("get", "rbd_run", request=RunGet, response=Open, selector="kind",
               summary="One analysis run: results with intervals, inputs, engine versions, precision, quote, "
                       "whether the diagram changed since; include_curve adds A(t) or R(t) with its band")(get_run)
    reg.action("list", "rbd_run", request=RunList, response=Open, selector="kind",
               summary="The caller's analysis runs, oldest first (rbd_id filters)")(list_runs)
    reg.job(JOB_KIND)(run_job)

