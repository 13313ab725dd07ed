"""tracked_fleets: items whose condition is measured over time, each with its predicted remaining life.

A tracked fleet (kind `tracked_fleet`) is bound to a saved degradation model (`model_id`; a
random_effects model is the joint, condition-based one); its items are named. Measurements
(item, time, value) are appended by `POST /api/ingest/tracking/{fleet_id}/measurements` (times in
the model's unit) into their own table; every ingest re-predicts the remaining life of the items
it touched (bathtub.degradation.tracking) and stores it on the fleet, so `get` answers at once.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar

from aiohttp import web
from pydantic import Field

from bathtub.degradation.paths import Path
from bathtub.degradation.tracking import check_model, predict
from bathtub.errors import InputError
from bathtub.validate import check_row
from bathtub_api import idempotency
from bathtub_api.errors import ApiError, not_found
from bathtub_api.fields import integer
from bathtub_api.ids import iso, new_id
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import ListRequest, Open, Strict, load_item, page
from bathtub_api.tools.fleets import ingest_rows

KIND = "tracked_fleet"
Name = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\x00]*$")]
Id = Annotated[str, Field(min_length=1, max_length=64)]
Probability = Annotated[float, Field(gt=0, lt=1)]
MAX_ITEMS = 10_000
MAX_ROWS = 100_000  # measurements per ingest request
MAX_PER_ITEM = 100_000  # measurements kept per item
NOT_TRACKED = "must name an item of the tracked fleet"
REPEATED = "must not repeat an (item, time) pair"
FORWARD = "times must go forward"
INSIDE_PATH = "must lie inside the model's path"
PER_ITEM = f"at most {MAX_PER_ITEM} measurements per item"


class TrackedItemIn(Strict):
    name: Name


class TrackedCreate(Strict):
    """A tracked fleet on a saved degradation model; `probability` is the central interval reported."""

    name: Name
    model_id: Id = Field(description="a saved degradation model (random_effects: the joint model; or "
                                     "pseudo_failure on a linear or exponential path)")
    probability: Probability = Field(0.9, description="probability of each item's remaining-life interval")
    items: Annotated[list[TrackedItemIn], Field(max_length=MAX_ITEMS)] = Field(default_factory=list)


class TrackedUpdate(Strict):
    """Change settings (a new model or probability re-predicts every item); `items` adds items by
    name (existing ones are kept), `remove_items` removes items with their measurements."""

    id: Id
    name: Name | None = None
    model_id: Id | None = None
    probability: Probability | None = None
    items: Annotated[list[TrackedItemIn], Field(max_length=MAX_ITEMS)] | None = None
    remove_items: Annotated[list[Name], Field(max_length=MAX_ITEMS)] | None = None


class TrackedId(Strict):
    id: Id


class TrackedGet(TrackedId):
    items_offset: integer(ge=0, le=MAX_ITEMS) = 0
    items_limit: integer(ge=0, le=5000) = 500


def tracked_url(ctx: Ctx, fleet_id: str) -> str:
    return ctx.url(f"/api/v1/tracked_fleets/{fleet_id}")


async def _model(ctx: Ctx, model_id: str) -> dict[str, Any]:
    item = await ctx.store.get_item(ctx.user.id, "degradation_model", model_id)
    if item is None:
        if await ctx.store.get_item(ctx.user.id, "model", model_id) is not None:
            raise InputError("model_id", f"model {model_id} is a life model; a tracked fleet needs a degradation "
                                         "model (degradation create)")
        raise not_found("degradation model", model_id)
    check_model(item["body"])
    return item["body"]


def _unique(items: list[TrackedItemIn], field: str) -> None:
    seen: set[str] = set()
    for j, i in enumerate(items):
        if i.name in seen:
            raise InputError(f"{field}[{j}].name", f"item {i.name!r} appears twice")
        seen.add(i.name)


def _record(ctx: Ctx, item: dict[str, Any], req: TrackedGet) -> dict[str, Any]:
    b = item["body"]
    items = b["items"][req.items_offset: req.items_offset + req.items_limit]
    end = req.items_offset + len(items)
    return {"id": item["id"], "name": item["name"], "model_id": b["model_id"], "unit": b.get("unit"),
            "probability": b["probability"], "item_count": len(b["items"]), "items": items,
            "items_next_offset": end if end < len(b["items"]) else None, "created_at": iso(item["created_at"]),
            "updated_at": iso(item["updated_at"]), "url": tracked_url(ctx, item["id"])}


async def create(ctx: Ctx, req: TrackedCreate) -> dict[str, Any]:
    record = await _model(ctx, req.model_id)
    _unique(req.items, "items")
    names = [i.name for i in req.items]
    rows = await ctx.jobs.run_cpu(predict, record, {}, names, req.probability)
    fleet_id = new_id(KIND)
    body = {"model_id": req.model_id, "unit": record.get("unit"), "probability": req.probability,
            "items": [rows[n] for n in names]}
    await ctx.store.insert_item(ctx.user.id, KIND, fleet_id, req.name, body)
    return _record(ctx, await load_item(ctx, KIND, fleet_id), TrackedGet(id=fleet_id))


async def update(ctx: Ctx, req: TrackedUpdate) -> dict[str, Any]:
    for _ in range(20):
        item = await load_item(ctx, KIND, req.id)
        body = dict(item["body"])
        if req.model_id is not None:
            body["model_id"] = req.model_id
        if req.probability is not None:
            body["probability"] = req.probability
        record = await _model(ctx, body["model_id"])
        body["unit"] = record.get("unit")
        by_name = {i["name"]: i for i in body["items"]}
        removed = []
        for j, name in enumerate(req.remove_items or []):
            if name not in by_name:
                raise InputError(f"remove_items[{j}]", f"no item {name!r} in the tracked fleet")
            del by_name[name]
            removed.append(name)
        fresh = []
        if req.items is not None:
            _unique(req.items, "items")
            fresh = [i.name for i in req.items if i.name not in by_name]
            if len(by_name) + len(fresh) > MAX_ITEMS:
                raise InputError("items", f"a tracked fleet holds at most {MAX_ITEMS} items")
            for name in fresh:
                by_name[name] = {}
        repredict = req.model_id is not None or req.probability is not None
        names = list(by_name) if repredict else fresh
        series = await ctx.store.tracking_measurements(ctx.user.id, req.id, names) if repredict else {}
        rows = await ctx.jobs.run_cpu(predict, record, series, names, body["probability"])
        body["items"] = [rows.get(n, by_name[n]) for n in by_name]
        name = req.name if req.name is not None else item["name"]
        outcome = await ctx.store.commit_tracking(ctx.user.id, req.id, name, body, item["version"],
                                                  remove_items=removed)
        if outcome == "ok":
            return _record(ctx, await load_item(ctx, KIND, req.id), TrackedGet(id=req.id))
    raise ApiError(409, "id: the tracked fleet is being changed by others too often; try again")


class Measurement(Strict):
    """One measurement of ingest (a CSV row has the same columns)."""

    item: Name = Field(description="the item's name in the tracked fleet")
    time: Annotated[float, Field(ge=0, allow_inf_nan=False)] = Field(description="in the degradation model's unit")
    value: Annotated[float, Field(allow_inf_nan=False)] = Field(description="the measured degradation")


class MeasurementsIngest(Strict):
    """The JSON form of measurement ingest; a bare array or CSV text with the same columns is read
    the same way."""

    cross_field: ClassVar[tuple[str, ...]] = (
        f"measurements[].item: {NOT_TRACKED}", f"measurements[]: {REPEATED}", f"measurements[].time: {FORWARD}",
        f"measurements[].value: {INSIDE_PATH}", f"measurements: {PER_ITEM}",
        "body: must hold at least one measurement")  # the CSV form: a header and no rows
    measurements: Annotated[list[Measurement], Field(min_length=1, max_length=MAX_ROWS)] = Field(
        description="all applied, or none")


def _number(value: Any, where: str, rule: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(where, rule)
    return float(value)


def check_rows(names: list[str] | None, rows: list[Any], field: str, items: dict[str, dict[str, Any]],
               path: Path) -> list[tuple[str, float, float, str]]:
    """Rows into (item, time, value, row name), all checked before anything is applied: an unknown
    item, a non-finite or negative time, a non-finite value or one outside the path's domain, a
    repeated (item, time) and a time not after the item's previous measurement refuse the request."""
    if not rows:
        raise InputError(field, "must hold at least one measurement (no measurements)")
    if len(rows) > MAX_ROWS:
        raise InputError(field, f"at most {MAX_ROWS} measurements per request")
    out = []
    seen: dict[tuple[str, float], str] = {}
    for i, raw in enumerate(rows):
        where = f"{field}[{i}]"
        row = check_row(names, raw, where, ("item", "time", "value"), "{item, time, value}")
        key = row.get("item")
        if key is None or key == "" or isinstance(key, (bool, dict, list)):
            raise InputError(f"{where}.item", "required: the item's name")
        key = str(key)
        if key not in items:
            raise InputError(f"{where}.item", f"{NOT_TRACKED} (no item {key!r})")
        t = _number(row.get("time"), f"{where}.time", "required: a finite number >= 0 (in the model's unit)")
        if t < 0:
            raise InputError(f"{where}.time", "must be >= 0")
        v = _number(row.get("value"), f"{where}.value", "required: a finite number")
        try:
            path.h([v], "value")
        except InputError:
            raise InputError(f"{where}.value", f"{INSIDE_PATH} (the {path.y} of {v:g} is not defined)") from None
        if (key, t) in seen:
            raise InputError(where, f"{REPEATED} (item {key!r} at time {t:g} appears twice, also {seen[key, t]})")
        seen[key, t] = where
        out.append((key, t, v, where))
    latest: dict[str, tuple[float, str]] = {}
    for key, t, _, where in out:
        stored = items[key].get("last_time")
        if key in latest and t <= latest[key][0]:
            raise InputError(f"{where}.time", f"time {t:g} is not after item {key!r}'s previous measurement at "
                                              f"{latest[key][0]:g} ({latest[key][1]}): {FORWARD}")
        if stored is not None and t <= stored:
            raise InputError(f"{where}.time", f"time {t:g} is not after item {key!r}'s latest stored measurement "
                                              f"at {stored:g}: {FORWARD}")
        latest[key] = (t, where)
    return out


async def ingest_measurements(ctx: Ctx, request: web.Request) -> dict[str, Any]:
    fleet_id = request.match_info["fleet_id"]
    names, rows, field, raw = await ingest_rows(request, "measurements")
    key = idempotency.key_use(ctx, f"tracking:{fleet_id}", raw)
    if key is not None and (first := await idempotency.replay(ctx, key)) is not None:
        return {**first, "replayed": True}
    for _ in range(20):
        item = await ctx.store.get_item(ctx.user.id, KIND, fleet_id)
        if item is None:
            raise not_found("tracked fleet", fleet_id)
        body = item["body"]
        record = await _model(ctx, body["model_id"])
        by_name = {i["name"]: i for i in body["items"]}
        checked = check_rows(names, rows, field, by_name, Path.parse(record["path"]))
        touched = list(dict.fromkeys(k for k, *_ in checked))
        series = await ctx.store.tracking_measurements(ctx.user.id, fleet_id, touched)
        for k, t, v, _ in checked:
            ts, vs = series.setdefault(k, ([], []))
            ts.append(t)
            vs.append(v)
        for k in touched:
            if len(series[k][0]) > MAX_PER_ITEM:
                raise InputError(field, f"{PER_ITEM} (item {k!r} would hold more)")
        fresh = await ctx.jobs.run_cpu(predict, record, series, touched, body["probability"])
        new_body = {**body, "items": [fresh.get(i["name"], i) for i in body["items"]]}
        answer = {"fleet": {"id": fleet_id, "name": item["name"]}, "updated": len(touched), "appended": len(checked),
                  "items": [fresh[k] for k in touched]}
        outcome = await ctx.store.commit_tracking(ctx.user.id, fleet_id, item["name"], new_body, item["version"],
                                                  add=[(k, t, v) for k, t, v, _ in checked], key=key, answer=answer)
        done = await idempotency.settled(ctx, outcome, key, answer)
        if done is not None:
            return done
    raise ApiError(409, "fleet_id: the tracked fleet is being changed by others too often; try again")


def register(reg: Registry) -> None:
    reg.action("tracked_fleets", "create", request=TrackedCreate, response=Open, scope="write",
               summary="A tracked fleet: named items on a saved degradation model, each with its predicted "
                       "remaining life from its measurements")(create)
    reg.action("tracked_fleets", "update", request=TrackedUpdate, response=Open, scope="write",
               summary="Rename, rebind to another degradation model, change the interval probability, add or "
                       "remove items (a new model or probability re-predicts every item)")(update)

    @reg.action("tracked_fleets", "delete", request=TrackedId, scope="write",
                summary="Delete a tracked fleet and its measurements (owner only)")
    async def delete(ctx: Ctx, req: TrackedId) -> dict[str, Any]:
        if not await ctx.store.delete_item(ctx.user.id, KIND, req.id):
            raise not_found("tracked fleet", req.id)
        return {"id": req.id, "deleted": True}

    @reg.action("get", KIND, request=TrackedGet, response=Open, selector="kind",
                summary="A tracked fleet with a page of its items and each item's predicted remaining life")
    async def get_tracked(ctx: Ctx, req: TrackedGet) -> dict[str, Any]:
        return _record(ctx, await load_item(ctx, KIND, req.id), req)

    @reg.action("list", KIND, request=ListRequest, response=Open, selector="kind",
                summary="The caller's tracked fleets")
    async def list_tracked(ctx: Ctx, req: ListRequest) -> dict[str, Any]:
        items, next_offset = await page(ctx, KIND, req)
        return {"items": [{"id": i["id"], "name": i["name"], "model_id": i["body"]["model_id"],
                           "item_count": len(i["body"]["items"]), "created_at": iso(i["created_at"]),
                           "url": tracked_url(ctx, i["id"])} for i in items], "next_offset": next_offset}

    @reg.route("GET", "/api/v1/tracked_fleets/{fleet_id}", response=Open,
               summary="A tracked fleet with its first page of items and their predicted remaining lives")
    async def get_route(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        fleet_id = request.match_info["fleet_id"]
        return _record(ctx, await load_item(ctx, KIND, fleet_id), TrackedGet(id=fleet_id))

    reg.route("POST", "/api/ingest/tracking/{fleet_id}/measurements", scope="write", request=MeasurementsIngest,
              content_types=("application/json", "text/csv"),
              summary="Append (item, time, value) measurements to a tracked fleet and re-predict the remaining "
                      "life of the items they touch",
              description="JSON {measurements: [{item, time, value}]} (or a bare array) or CSV with columns item, "
                          "time, value; times in the degradation model's unit. All or nothing: an unknown item, a "
                          "non-finite time or value, a time not after the item's previous measurement, or a "
                          "repeated (item, time) refuses the whole request naming the row. Answers {fleet, "
                          "updated (items re-predicted), appended (measurements), items (their rows with "
                          "remaining_life)}. With an Idempotency-Key header a retry replays the first answer and "
                          "changes nothing (the same key with another body: 409).")(ingest_measurements)
