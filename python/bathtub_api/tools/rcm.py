"""RCM studies: `rcm create`, `rcm update` (mode merge), `get rcm_study`, `list rcm_study`.

The worksheet rules, merge, outline and evidence checks are `bathtub.rcm`'s; this module stores
the worksheet, stamps each written decision with the version of the item its evidence cites, and
on every read loads the cited items and asks the library for each decision's check."""

from __future__ import annotations

import secrets
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from bathtub import rcm
from bathtub.rcm import worksheet
from bathtub_api.errors import ApiError
from bathtub_api.fields import NUL_RULE, FreeObject
from bathtub_api.ids import iso, new_id
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import ListRequest, Open, Strict, load_item, page

KIND = "rcm_study"
Name = Annotated[str, Field(min_length=1, max_length=200)]
NodeId = Annotated[str, Field(min_length=1, max_length=worksheet.ID_MAX)]
Text = Annotated[str, Field(max_length=worksheet.TEXT_MAX)]
NodeText = Annotated[str, Field(min_length=1, max_length=worksheet.TEXT_MAX)]
NODE_PREFIX = {"function": "fn", "failure": "ff", "mode": "fm"}


class RcmEvidence(Strict):
    type: Literal["model", "strategy_analysis", "degradation_model"]
    id: NodeId


class RcmDecision(Strict):
    model_config = ConfigDict(json_schema_extra=worksheet.decision_rules())
    # rules against the mode's consequence (stored, or given beside the decision)
    cross_field = ("outcome: failure finding applies only to hidden failures",
                   "outcome: run to failure is not acceptable with",
                   f"check*: {NUL_RULE}")  # the schema states it for check's own keys and strings; deeper too
    outcome: Literal["on_condition", "fixed_interval", "rtf", "failure_finding", "redesign", "accept"]
    rtf_basis: Literal["random", "uneconomic"] | None = Field(None, description="required when outcome is rtf")
    task: Text | None = None
    interval: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = Field(
        None, description="in interval_unit; on_condition, fixed_interval and failure_finding only")
    interval_unit: Annotated[str, Field(min_length=1, max_length=worksheet.UNIT_MAX)] | None = Field(
        None, description="hours, days, weeks, months (30.44 days), years (365.25 days), cycles, km, ...")
    notes: Text | None = None
    evidence: RcmEvidence | None = None
    check: FreeObject | None = Field(None, description="read-only: ignored on write")


class RcmMode(Strict):
    id: NodeId | None = Field(None, description="from get rcm_study: updates that mode; omit for a new one")
    text: NodeText | None = Field(None, description="required for a new mode")
    effects: Text | None = None
    consequence: Literal["safety", "environmental", "operational", "non_operational", "hidden"] | None = None
    notes: Text | None = None
    decision: RcmDecision | None = Field(None, description="omit if undecided; null on update clears it")


class RcmFailure(Strict):
    id: NodeId | None = None
    text: NodeText | None = Field(None, description="required for a new failure")
    modes: list[RcmMode] | None = None


class RcmFunction(Strict):
    id: NodeId | None = None
    text: NodeText | None = Field(None, description="required for a new function")
    standard: Text | None = None
    failures: list[RcmFailure] | None = None


# A new study's nodes: every node is new, so none has an id yet and each needs its text (the
# merge's rules for a new node, stated in the schema rather than found by a refusal).
NEW_ID = Field(None, description="a new study has no nodes yet: omit ids")


def _no_id(value: Any) -> None:
    if value is not None:
        raise PydanticCustomError("new_node_id", "a new study has no nodes yet: omit ids")


NewId = Annotated[None, BeforeValidator(_no_id)]


class RcmNewMode(RcmMode):
    id: NewId = NEW_ID  # type: ignore[assignment]
    text: NodeText  # type: ignore[assignment]


class RcmNewFailure(RcmFailure):
    id: NewId = NEW_ID  # type: ignore[assignment]
    text: NodeText  # type: ignore[assignment]
    modes: list[RcmNewMode] | None = None  # type: ignore[assignment]


class RcmNewFunction(RcmFunction):
    id: NewId = NEW_ID  # type: ignore[assignment]
    text: NodeText  # type: ignore[assignment]
    failures: list[RcmNewFailure] | None = None  # type: ignore[assignment]


class RcmCreate(Strict):
    name: Name
    functions: list[RcmNewFunction]


class RcmUpdate(Strict):
    """Merge into a study: nodes with an id update that node (given fields replace, null clears an
    optional field, children merge the same way), nodes without one are added; `remove` lists node
    ids to delete with everything under them (applied first). A decision given is written whole and
    re-takes its evidence's current version."""

    id: str
    mode: Literal["merge"]
    name: Name | None = None
    functions: list[RcmFunction] | None = None
    remove: Annotated[list[NodeId], Field(max_length=10_000)] | None = None


class RcmGet(Strict):
    id: str
    function_id: NodeId | None = Field(None, description="one function in full (for a study shown as an outline)")


class RcmStudy(Open):
    id: str
    name: str
    outline: bool
    mode_count: int
    functions: list[dict[str, Any]]
    scheduled_tasks: list[dict[str, Any]] | None = None


class RcmList(Open):
    items: list[dict[str, Any]]
    next_offset: int | None


def _node_id(level: str) -> str:
    return f"{NODE_PREFIX[level]}_{secrets.token_hex(6)}"


async def _evidence_items(ctx: Ctx, functions: list[dict[str, Any]]) -> dict[str, dict[str, Any] | None]:
    ids = {m["decision"]["evidence"]["id"] for _, _, m in worksheet.walk(functions)
           if (m.get("decision") or {}).get("evidence")}
    return {i: await ctx.store.owned_item(ctx.user.id, i) for i in sorted(ids)}


async def _stamp(ctx: Ctx, functions: list[dict[str, Any]], written: set[str]) -> None:
    """Record, with each decision just written, the version of the item its evidence cites."""
    items = await _evidence_items(ctx, functions)
    for _, _, m in worksheet.walk(functions):
        d = m.get("decision")
        if m["id"] in written and d and d.get("evidence"):
            item = items.get(d["evidence"]["id"])
            d["seen"] = None if item is None else {"version": item["version"], "updated_at": item["updated_at"]}


def _changed(seen: dict[str, Any] | None, item: dict[str, Any]) -> bool:
    return seen is None or item["version"] != seen["version"] or item["updated_at"] > seen["updated_at"]


async def _checks(ctx: Ctx, functions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    items = await _evidence_items(ctx, functions)
    out = {}
    for _, _, m in worksheet.walk(functions):
        d = m.get("decision")
        if d and d.get("evidence"):
            item = items.get(d["evidence"]["id"])
            changed = item is not None and _changed(d.get("seen"), item)
            out[m["id"]] = rcm.check_evidence(d, item, changed)
    return out


async def _answer(ctx: Ctx, item: dict[str, Any], function_id: str | None = None) -> dict[str, Any]:
    functions = item["body"]["functions"]
    head = {"id": item["id"], "name": item["name"], "created_at": iso(item["created_at"]),
            "updated_at": iso(item["updated_at"]), "mode_count": rcm.mode_count(functions)}
    if function_id is not None:
        one = rcm.find_function(functions, function_id)
        if one is None:
            raise ApiError(404, f"function_id: no function {function_id} in study {item['id']}")
        functions = [one]  # type: ignore[list-item]
    checks = await _checks(ctx, functions)
    if function_id is None and head["mode_count"] > rcm.OUTLINE_MODES:
        return {**head, "outline": True, "functions": rcm.outline(functions, checks),
                "scheduled_task_count": len(rcm.scheduled_tasks(functions)),
                "note": f"over {rcm.OUTLINE_MODES} failure modes: an outline; get rcm_study with function_id "
                        "returns one function in full with its decisions, checks and scheduled tasks"}
    return {**head, "outline": False, "functions": rcm.public(functions, checks),
            "scheduled_tasks": rcm.scheduled_tasks(functions)}


def _plain(functions: list[RcmFunction] | None) -> list[dict[str, Any]]:
    # exclude_unset keeps "given as null" (clears) apart from "not given" (kept).
    return [f.model_dump(exclude_unset=True) for f in functions or ()]


async def create(ctx: Ctx, req: RcmCreate) -> dict[str, Any]:
    functions, written = rcm.build(_plain(req.functions), _node_id)
    await _stamp(ctx, functions, written)
    study_id = new_id(KIND)
    await ctx.store.insert_item(ctx.user.id, KIND, study_id, req.name, {"functions": functions})
    return await _answer(ctx, await load_item(ctx, KIND, study_id))


async def update(ctx: Ctx, req: RcmUpdate) -> dict[str, Any]:
    for _ in range(5):
        item = await load_item(ctx, KIND, req.id)
        functions, written = rcm.merge(item["body"]["functions"], _plain(req.functions), req.remove, _node_id)
        await _stamp(ctx, functions, written)
        name = req.name or item["name"]
        if await ctx.store.update_item(ctx.user.id, KIND, req.id, name, {**item["body"], "functions": functions},
                                       if_version=item["version"]):
            return await _answer(ctx, await load_item(ctx, KIND, req.id))
    raise ApiError(409, "id: the study is being changed by others too often; try again")


async def get(ctx: Ctx, req: RcmGet) -> dict[str, Any]:
    return await _answer(ctx, await load_item(ctx, KIND, req.id), req.function_id)


async def list_studies(ctx: Ctx, req: ListRequest) -> dict[str, Any]:
    items, next_offset = await page(ctx, KIND, req)
    out = []
    for i in items:
        functions = i["body"]["functions"]
        out.append({"id": i["id"], "name": i["name"], "function_count": len(functions),
                    "mode_count": rcm.mode_count(functions),
                    "scheduled_task_count": len(rcm.scheduled_tasks(functions)),
                    "created_at": iso(i["created_at"]), "updated_at": iso(i["updated_at"])})
    return {"items": out, "next_offset": next_offset}


def register(reg: Registry) -> None:
    reg.action("rcm", "create", request=RcmCreate, response=RcmStudy, scope="write",
               summary="Create an RCM study: functions, functional failures, failure modes and decisions; answers "
                       "the study as get rcm_study does, with node ids and evidence checks")(create)
    reg.action("rcm", "update", request=RcmUpdate, response=RcmStudy, scope="write",
               summary="Merge into an RCM study: nodes with an id update it, nodes without one are added, "
                       "`remove` deletes nodes (with their children)")(update)
    reg.action("get", KIND, request=RcmGet, response=RcmStudy, selector="kind",
               summary="An RCM worksheet with node ids, each decision's evidence check and the scheduled tasks; "
                       f"over {rcm.OUTLINE_MODES} failure modes an outline (function_id returns one function in "
                       "full)")(get)
    reg.action("list", KIND, request=ListRequest, response=RcmList, selector="kind",
               summary="The caller's RCM studies")(list_studies)

