"""fleets: items with a life model, their usage, failure forecasts, usage ingest and alert rules.

A fleet is one item (kind `fleet`): a saved parametric life model (`model_id`; item use in that
model's unit), a `period_label`, a horizon of `periods`, a `default_rate` of use per period,
`rate_source` (manual: each item's manual rate, else the default; estimated: the rate estimated
from meter readings first), `replace_failed` (forecast with renewal or not), `confidence` of the
count intervals, the items {name, current_use, rate?} and alert rules. Usage ingest applies
meter readings by the spec's rules (bathtub.fleet.usage), recomputes the forecast, evaluates the
alert rules and queues one email per crossing in a durable outbox (bathtub_api.mailer).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, ClassVar, Literal

from aiohttp import web
from pydantic import ConfigDict, Field

from bathtub import models
from bathtub.errors import InputError
from bathtub.fleet.plan import (
    DRAW_CELLS_RULE,
    DRAWS,
    MAX_DRAWS,
    NOT_IN_FLEET,
    REPEATED_ITEM,
    check_covariates,
    check_uncertainty,
    fleet_forecast,
    ingest_readings,
)
from bathtub.fleet.readings import check_readings
from bathtub_api import idempotency, mailer, tables
from bathtub_api.errors import ApiError, not_found
from bathtub_api.fields import Text, integer
from bathtub_api.ids import iso, new_id, now
from bathtub_api.registry import Ctx, Registry, read_json
from bathtub_api.tools.common import INSTANT_PATTERN, ListRequest, Open, Strict, load_item, page
from bathtub_api.tools.life import load_model

Name = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\x00]*$")]
NonNeg = Annotated[float, Field(ge=0, allow_inf_nan=False)]
MAX_ITEMS = 200_000
Covariates = Annotated[dict[Text, float | str], Field(max_length=200)]
RuleKind = Literal["expected_failures_next_period", "expected_failures_horizon", "item_failure_probability"]
Uncertainty = Literal["none", "parameters"]
Draws = integer(ge=10, le=MAX_DRAWS)
Seed = integer(ge=0, le=2**63 - 1)
UNCERTAINTY_TEXT = ("none: the forecast's interval is the point model's (the fitted parameters taken as exact); "
                    "parameters: also `parameter_uncertainty`, the forecast over draws of the model's parameters "
                    "from its fit's sampling distribution, with the predictive interval of each period's count "
                    "(wider by what the data leave unknown). A new fleet's default is none.")
DRAWS_TEXT = f"Parameter draws of a forecast with uncertainty: parameters (a new fleet's default {DRAWS})."
SEED_TEXT = ("Seed of the parameter draws: draw i depends on (seed, i) only, so the same seed gives the same "
             "forecast (a new fleet's default 0).")
UNCERTAINTY_RULES = (f"draws: {DRAW_CELLS_RULE}",
                     "uncertainty: parameters needs a saved parametric life model whose fit has a covariance (or "
                     "a complete-data exponential)")


class FleetItemIn(Strict):
    name: Name
    current_use: NonNeg = Field(description="use so far (meter reading), in the life model's unit")
    rate: NonNeg | None = Field(None, description="manual use per period")
    covariates: Covariates | None = Field(None, description="with a regression life model: this item's covariate "
                                                            "values (each missing one from default_covariates)")


class AlertRuleIn(Strict):
    """Fires (one email) when its figure crosses above `threshold`; again only after it has cleared."""

    kind: RuleKind = Field(description="expected_failures_next_period: the fleet's expected failures in the next "
                                       "period; expected_failures_horizon: over the whole horizon; "
                                       "item_failure_probability: any item's chance of failing within `periods`")
    threshold: NonNeg
    periods: integer(ge=1, le=1200) = 1
    # Whitespace spelt out: `\s` differs between JSON Schema's regexes (ECMA: U+FEFF, not U+0085) and
    # the validator's (Unicode White_Space: U+0085, not U+FEFF); both are refused here.
    email: Annotated[str, Field(min_length=3, max_length=254, pattern=r"^[^@\s\x85\uFEFF]+@[^@\s\x85\uFEFF]+$")]
    name: Annotated[str, Field(max_length=200)] = ""


class FleetCreate(Strict):
    cross_field = UNCERTAINTY_RULES
    name: Name
    model_id: Annotated[str, Field(min_length=1, max_length=64)]
    # period_label, replace_failed, default_covariates: described once for create and update (glossary.toml)
    period_label: Annotated[str, Field(min_length=1, max_length=40)] = "months"
    periods: integer(ge=1, le=240) = 12
    default_rate: NonNeg | None = None
    rate_source: Literal["manual", "estimated"] = "manual"
    replace_failed: bool = False
    default_covariates: Covariates | None = None
    confidence: Annotated[float, Field(gt=0.5, lt=1)] = 0.9
    uncertainty: Uncertainty = Field("none", description=UNCERTAINTY_TEXT)
    draws: Draws = Field(DRAWS, description=DRAWS_TEXT)
    seed: Seed = Field(0, description=SEED_TEXT)
    items: Annotated[list[FleetItemIn], Field(max_length=MAX_ITEMS)] = Field(default_factory=list)
    alert_rules: Annotated[list[AlertRuleIn], Field(max_length=50)] = Field(default_factory=list)


class FleetUpdate(Strict):
    """Change settings; `items` adds or replaces items by name, `remove_items` removes by name;
    `alert_rules`, when given, replaces the rules."""

    cross_field = UNCERTAINTY_RULES
    id: Annotated[str, Field(min_length=1, max_length=64)]
    name: Name | None = None
    model_id: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    period_label: Annotated[str, Field(min_length=1, max_length=40)] | None = None
    periods: integer(ge=1, le=240) | None = None
    default_rate: NonNeg | None = None
    rate_source: Literal["manual", "estimated"] | None = None
    replace_failed: bool | None = None
    default_covariates: Covariates | None = None
    confidence: Annotated[float, Field(gt=0.5, lt=1)] | None = None
    uncertainty: Uncertainty | None = Field(None, description=UNCERTAINTY_TEXT)
    draws: Draws | None = Field(None, description=DRAWS_TEXT)
    seed: Seed | None = Field(None, description=SEED_TEXT)
    items: Annotated[list[FleetItemIn], Field(max_length=MAX_ITEMS)] | None = None
    remove_items: Annotated[list[Name], Field(max_length=MAX_ITEMS)] | None = None
    alert_rules: Annotated[list[AlertRuleIn], Field(max_length=50)] | None = None


class FleetId(Strict):
    id: Annotated[str, Field(min_length=1, max_length=64)]


class FleetGet(FleetId):
    cross_field = UNCERTAINTY_RULES
    items_offset: integer(ge=0, le=MAX_ITEMS) = 0
    items_limit: integer(ge=0, le=5000) = 500
    per_item: bool = Field(False, description="true: add `per_item`, the forecast's rows per item (expected "
                                              "failures over the horizon, failure probability next period)")
    uncertainty: Uncertainty | None = Field(None, description="this forecast only: none or parameters (default: "
                                                              "the fleet's own setting)")
    draws: Draws | None = Field(None, description="this forecast only: parameter draws (default: the fleet's)")
    seed: Seed | None = Field(None, description="this forecast only: the draws' seed (default: the fleet's)")

    def settings(self) -> dict[str, Any]:
        """The forecast settings this request overrides."""
        return {k: v for k in ("uncertainty", "draws", "seed") if (v := getattr(self, k)) is not None}


def fleet_url(ctx: Ctx, fleet_id: str) -> str:
    return ctx.url(f"/api/v1/fleets/{fleet_id}/forecast")


def _item(i: FleetItemIn, old: dict[str, Any] | None = None) -> dict[str, Any]:
    kept = {k: v for k, v in (old or {}).items() if k in ("read_at", "baseline_use", "baseline_at", "estimated_rate")}
    out = {**kept, "name": i.name, "current_use": i.current_use, "rate": i.rate}
    if i.covariates is not None:
        out["covariates"] = i.covariates
    return out


def _unique(items: list[FleetItemIn], field: str) -> None:
    seen: set[str] = set()
    for j, i in enumerate(items):
        if i.name in seen:
            raise InputError(f"{field}[{j}].name", f"item {i.name!r} appears twice")
        seen.add(i.name)


async def _life(ctx: Ctx, model_id: str) -> tuple[Any, dict[str, Any]]:
    """(what the fleet's items draw their lives from, as the model's kind says; the model's record)."""
    body = (await load_model(ctx, model_id))["body"]
    return models.from_record(body).fleet_life(model_id), body


def _check(life: Any, record: dict[str, Any], body: dict[str, Any]) -> None:
    check_covariates(life, body)
    check_uncertainty(record, body)


def _rules(rules: list[AlertRuleIn]) -> list[dict[str, Any]]:
    return [{"id": f"rule_{k + 1}", **r.model_dump(), "active": False} for k, r in enumerate(rules)]


async def create(ctx: Ctx, req: FleetCreate) -> dict[str, Any]:
    life, record = await _life(ctx, req.model_id)
    _unique(req.items, "items")
    fleet_id = new_id("fleet")
    body = {**req.model_dump(exclude={"items", "alert_rules"}), "items": [_item(i) for i in req.items],
            "alert_rules": _rules(req.alert_rules)}
    await ctx.jobs.run_cpu(_check, life, record, body)
    await ctx.store.insert_item(ctx.user.id, "fleet", fleet_id, req.name, body)
    return await _record(ctx, await load_item(ctx, "fleet", fleet_id), FleetGet(id=fleet_id))


async def update(ctx: Ctx, req: FleetUpdate) -> dict[str, Any]:
    for _ in range(20):
        item = await load_item(ctx, "fleet", req.id)
        body = dict(item["body"])
        changes = req.model_dump(exclude={"id", "items", "remove_items", "alert_rules"}, exclude_none=True)
        body.update(changes)
        life, record = await _life(ctx, body["model_id"])
        by_name = {i["name"]: i for i in body["items"]}
        for j, name in enumerate(req.remove_items or []):
            if name not in by_name:
                raise InputError(f"remove_items[{j}]", f"no item {name!r} in the fleet")
            del by_name[name]
        if req.items is not None:
            _unique(req.items, "items")
            for i in req.items:
                by_name[i.name] = _item(i, by_name.get(i.name))
        if len(by_name) > MAX_ITEMS:
            raise InputError("items", f"a fleet holds at most {MAX_ITEMS} items")
        body["items"] = list(by_name.values())
        if req.alert_rules is not None:
            body["alert_rules"] = _rules(req.alert_rules)
        await ctx.jobs.run_cpu(_check, life, record, body)
        name = body["name"]
        if await ctx.store.update_item(ctx.user.id, "fleet", req.id, name, body, if_version=item["version"]):
            return await _record(ctx, await load_item(ctx, "fleet", req.id), FleetGet(id=req.id))
    raise ApiError(409, "id: the fleet is being changed by others too often; try again")


async def _forecast(ctx: Ctx, item: dict[str, Any], settings: dict[str, Any] | None = None
                    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The fleet's forecast, with `settings` (uncertainty, draws, seed) overriding the fleet's own."""
    life, record = await _life(ctx, item["body"]["model_id"])
    body = {**item["body"], **(settings or {})}
    if settings:
        await ctx.jobs.run_cpu(check_uncertainty, record, body)
    return await ctx.jobs.run_cpu(fleet_forecast, life, body, record)


async def _record(ctx: Ctx, item: dict[str, Any], req: FleetGet) -> dict[str, Any]:
    b = item["body"]
    items = b["items"][req.items_offset: req.items_offset + req.items_limit]
    end = req.items_offset + len(items)
    return {"id": item["id"], "name": item["name"], "model_id": b["model_id"], "period_label": b["period_label"],
            "periods": b["periods"], "default_rate": b.get("default_rate"), "rate_source": b["rate_source"],
            "replace_failed": b["replace_failed"], "confidence": b["confidence"],
            "uncertainty": b.get("uncertainty", "none"), "draws": b.get("draws", DRAWS), "seed": b.get("seed", 0),
            "item_count": len(b["items"]),
            "default_covariates": b.get("default_covariates"),
            "items": items, "items_next_offset": end if end < len(b["items"]) else None,
            "alert_rules": b["alert_rules"], "created_at": iso(item["created_at"]),
            "updated_at": iso(item["updated_at"]), "url": fleet_url(ctx, item["id"])}


def _forecast_answer(item: dict[str, Any], fc: dict[str, Any], rows: list[dict[str, Any]] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"fleet": {"id": item["id"], "name": item["name"], "model_id": item["body"]["model_id"]},
                           "forecast": fc}
    if rows is not None:
        out["per_item"] = rows
    return out


def _parse_csv_body(raw: bytes) -> tuple[list[str], list[Any]]:
    try:
        text = raw.decode("utf-8-sig", errors="strict")
    except UnicodeDecodeError:
        raise InputError("body", "CSV must be UTF-8 text") from None
    return tables.parse_csv(text, "body")


async def ingest_rows(request: web.Request, field: str = "readings") -> tuple[list[str] | None, list[Any], str, bytes]:
    """(CSV names or None, rows, field, the request as bytes for its idempotency key): a JSON
    {field: [...]}, a bare JSON array, or CSV text (rows then named body[i])."""
    if request.content_type in ("text/csv", "text/plain", "application/csv"):
        raw = await request.read()
        # Decoding and parsing a large CSV holds the GIL for long stretches: on a thread, so the
        # loop keeps answering (issue 26 item 3, as the dataset ingests do).
        names, rows = await asyncio.to_thread(_parse_csv_body, raw)
        return names, rows, "body", b"csv\n" + raw
    body = await read_json(request)
    if isinstance(body, dict) and set(body) == {field}:
        body = body[field]
    if isinstance(body, list):
        return None, body, field, b"json\n" + await asyncio.to_thread(idempotency.canonical, body)
    raise InputError(field, f"send {{\"{field}\": [...]}} (or a JSON array, or text/csv)")


class UsageReading(Strict):
    """One meter reading of usage ingest (a CSV row has the same columns)."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"anyOf": [
        {"required": ["name"], "properties": {"name": {"type": "string"}}},
        {"required": ["id"], "properties": {"id": {"type": "string"}}}]})
    name: Name | None = Field(None, description="the item's name in the fleet (or give `id`)")
    id: Name | None = Field(None, description="the item's name, under the column name other tools export")
    current_use: NonNeg = Field(description="the meter reading, in the life model's unit")
    rate: NonNeg | None = Field(None, description="a manual use per period for the item from now on")
    read_at: Annotated[str, Field(max_length=64, pattern=INSTANT_PATTERN)] | None = Field(
        None, description="when it was read (ISO 8601; without a zone, UTC; default: now)")


class UsageIngest(Strict):
    """The JSON form of usage ingest; a bare array of readings or CSV text with the same columns
    is read the same way."""

    cross_field: ClassVar[tuple[str, ...]] = (
        f"readings[].name: {NOT_IN_FLEET}", f"readings[].name: {REPEATED_ITEM}",
        "body: must hold at least one reading",  # the CSV form: a header and no rows
        "body[].*: unknown field")  # the CSV form: a column that is none of a reading's fields
    readings: list[UsageReading] = Field(min_length=1, description="all applied, or none")


async def ingest_usage(ctx: Ctx, request: web.Request) -> dict[str, Any]:
    fleet_id = request.match_info["fleet_id"]
    names, rows, field, raw = await ingest_rows(request)
    key = idempotency.key_use(ctx, f"fleet_usage:{fleet_id}", raw)
    if key is not None and (first := await idempotency.replay(ctx, key)) is not None:
        return {**first, "replayed": True}
    readings = check_readings(names, rows, field, now)
    for _ in range(20):
        item = await ctx.store.get_item(ctx.user.id, "fleet", fleet_id)
        if item is None:
            raise not_found("fleet", fleet_id)
        life, record = await _life(ctx, item["body"]["model_id"])
        body, updated, fc, fired = await ctx.jobs.run_cpu(ingest_readings, item["body"], readings, life, record)
        mails = [mailer.alert_mail(item["name"], fleet_id, f, fc) for f in fired]
        answer = {"fleet": {"id": fleet_id, "name": item["name"]}, "updated_items": updated, "forecast": fc,
                  "alerts_fired": len(fired)}
        outcome = await ctx.store.update_item_with_outbox(ctx.user.id, "fleet", fleet_id, item["name"], body,
                                                          item["version"], mails, key, answer)
        done = await idempotency.settled(ctx, outcome, key, answer)
        if done is not None:
            return done
    raise ApiError(409, "fleet_id: the fleet is being changed by others too often; try again")


def _query_settings(request: web.Request) -> dict[str, Any]:
    """The forecast route's uncertainty, draws and seed, checked as the request models check them."""
    q = request.query
    out: dict[str, Any] = {}
    if "uncertainty" in q:
        if q["uncertainty"] not in ("none", "parameters"):
            raise InputError("uncertainty", "must be none or parameters")
        out["uncertainty"] = q["uncertainty"]
    for name, low, high in (("draws", 10, MAX_DRAWS), ("seed", 0, 2**63 - 1)):
        if name in q:
            text = q[name]
            if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
                raise InputError(name, f"must be a whole number from {low} to {high}")
            out[name] = int(text)
    return out


def register(reg: Registry) -> None:
    reg.action("fleets", "create", request=FleetCreate, response=Open, scope="write",
               summary="A fleet: a saved life model, items with their use and usage rates, alert rules")(create)
    reg.action("fleets", "update", request=FleetUpdate, response=Open, scope="write",
               summary="Change a fleet's settings, add, replace or remove items, replace its alert rules")(update)

    @reg.action("fleets", "delete", request=FleetId, scope="write", summary="Delete a fleet (owner only)")
    async def delete(ctx: Ctx, req: FleetId) -> dict[str, Any]:
        if not await ctx.store.delete_item(ctx.user.id, "fleet", req.id):
            raise not_found("fleet", req.id)
        return {"id": req.id, "deleted": True}

    @reg.action("get", "fleet", request=FleetGet, response=Open, selector="kind",
                summary="A fleet with a page of its items and its forecast")
    async def get_fleet(ctx: Ctx, req: FleetGet) -> dict[str, Any]:
        item = await load_item(ctx, "fleet", req.id)
        record = await _record(ctx, item, req)
        record["forecast"], rows = await _forecast(ctx, item, req.settings())
        if req.per_item:
            record["per_item"] = rows
        return record

    @reg.action("list", "fleet", request=ListRequest, response=Open, selector="kind", summary="The caller's fleets")
    async def list_fleets(ctx: Ctx, req: ListRequest) -> dict[str, Any]:
        items, next_offset = await page(ctx, "fleet", req)
        return {"items": [{"id": i["id"], "name": i["name"], "model_id": i["body"]["model_id"],
                           "item_count": len(i["body"]["items"]), "created_at": iso(i["created_at"]),
                           "url": fleet_url(ctx, i["id"])} for i in items], "next_offset": next_offset}

    @reg.route("GET", "/api/v1/fleets/{fleet_id}/forecast", query=(
        ("per_item", False, "false: leave out the per-item rows"),
        ("uncertainty", False, "none or parameters: this forecast only (default: the fleet's setting)",
         {"type": "string", "enum": ["none", "parameters"]}),
        ("draws", False, "parameter draws, this forecast only (default: the fleet's)",
         {"type": "integer", "minimum": 10, "maximum": MAX_DRAWS}),
        ("seed", False, "the draws' seed, this forecast only (default: the fleet's)",
         {"type": "integer", "minimum": 0, "maximum": 2**63 - 1})),
               summary="The fleet's failure forecast: expected failures per period with intervals, per-item rows")
    async def forecast_route(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        item = await load_item(ctx, "fleet", request.match_info["fleet_id"])
        fc, rows = await _forecast(ctx, item, _query_settings(request))
        return _forecast_answer(item, fc, None if request.query.get("per_item") == "false" else rows)

    reg.route("POST", "/api/ingest/fleets/{fleet_id}/usage", scope="write", request=UsageIngest,
              content_types=("application/json", "text/csv"),
              summary="Meter readings: update items' use and estimated rates, recompute the forecast, check alerts",
              description="JSON {readings: [{name or id, current_use, rate?, read_at?}]} or CSV with those columns. "
                          "All or nothing: an unknown or repeated item, a negative use or a time that is not ISO 8601 "
                          "refuses the whole request naming the row. A reading at least a day after the item's "
                          "baseline updates its estimated rate (EWMA 0.3); a lower one restarts the baseline; an "
                          "older one is ignored. Alert emails go through a durable outbox: a mail problem never "
                          "fails the ingest. With an Idempotency-Key header a retry replays the first answer and "
                          "changes nothing (the same key with another body: 409).")(ingest_usage)
