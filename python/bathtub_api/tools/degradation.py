"""Degradation models: create from a dataset's readings (pseudo-failure or random-effects),
get, list, and a running unit's remaining life from its own readings (the joint model)."""

from __future__ import annotations

from typing import Annotated, Any

from aiohttp import web
from pydantic import Field

from bathtub import degradation, models
from bathtub.errors import InputError
from bathtub_api.ids import iso, new_id
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools import datasets
from bathtub_api.tools.common import ListRequest, Open, Strict, load_item, page

KIND = "degradation_model"
Name = Annotated[str, Field(min_length=1, max_length=200)]
Unit = Annotated[str, Field(max_length=40)]


class DegradationCreate(Strict):
    """Fit a degradation model to a dataset's readings. `mapping` roles: `i` unit, `x` time,
    `y` value. `path`: linear, exponential, power, logarithmic, or {t, y} transforms (identity,
    log, sqrt). `model`: pseudo_failure (per-unit crossing times, a fitted `life_distribution`)
    or random_effects (unit-level random slope, `options.random_intercept`, `options.method`
    ml|reml). `options.extrapolation` (pseudo_failure, default 3): a unit whose path reaches
    the threshold only beyond that multiple of its last reading time is right-censored there.
    `potential_failure`: the level at which a defect can be seen (P, in the threshold's unit, on
    the near side of it); the record then carries `pf_interval`, the time from crossing P to
    crossing the threshold (median and the central 90% range among units), which the RCM
    evidence check of an on-condition decision reads."""

    name: Name
    dataset_id: str
    mapping: dict[str, str]
    path: str | dict[str, str] = "linear"
    threshold: float
    direction: str
    model: str
    life_distribution: str = "weibull"
    unit: Unit | None = None
    options: dict[str, Any] | None = None
    potential_failure: float | None = None


class DegradationGet(Strict):
    id: str


class RemainingLifeIn(Strict):
    """A running unit: its `age` and its own [age, value] `readings` (at most 2000);
    `probability` of the central interval reported."""

    id: str
    age: Annotated[float, Field(ge=0)]
    readings: Annotated[list[Annotated[list[float], Field(min_length=2, max_length=2)]],
                        Field(max_length=2000, default_factory=list)]
    probability: Annotated[float, Field(gt=0, lt=1)] = 0.9


def degradation_url(ctx: Ctx, item_id: str) -> str:
    return ctx.url(f"/api/v1/degradation_models/{item_id}")


def summary(ctx: Ctx, item: dict[str, Any]) -> dict[str, Any]:
    """The models list's row for a degradation model (GET /api/v1/models lists them too)."""
    body = item["body"]
    return {"id": item["id"], "name": item["name"], "kind": KIND, "distribution": body.get("distribution", ""),
            "n": body.get("n"), "unit": body.get("unit"), "created_at": iso(item["created_at"]),
            "url": degradation_url(ctx, item["id"])}


def record(ctx: Ctx, item: dict[str, Any]) -> dict[str, Any]:
    """The saved model in the one record shape (params, gof and covariance of its life or its
    path model, filled in as read for models saved before they were stored)."""
    body = models.upgrade(item["body"])
    return {"id": item["id"], "name": item["name"], **body, "kind": KIND, "created_at": iso(item["created_at"]),
            "updated_at": iso(item["updated_at"]), "url": degradation_url(ctx, item["id"])}


def _used(columns: dict[str, list[Any]], mapping: dict[str, str]) -> dict[str, list[Any]]:
    return {c: columns[c] for c in set(mapping.values()) if c in columns} if all(
        isinstance(c, str) and c in columns for c in mapping.values()) else columns


def _build(columns: dict[str, list[Any]], req: dict[str, Any]) -> dict[str, Any]:
    return models.fit(None, columns, kind="degradation", **req)


async def create(ctx: Ctx, req: DegradationCreate) -> dict[str, Any]:
    """Fit on a snapshot of the dataset and save only if the dataset is still that snapshot."""
    spec = {"mapping": req.mapping, "path": req.path, "threshold": req.threshold, "direction": req.direction,
            "model": req.model, "life_distribution": req.life_distribution, "options": req.options or {},
            **({"potential_failure": req.potential_failure} if req.potential_failure is not None else {})}
    item_id = new_id(KIND)

    async def fitted(columns: dict[str, list[Any]], snap: Any) -> dict[str, Any]:
        body = await ctx.jobs.run_cpu(_build, _used(columns, req.mapping), spec)
        if "pf_interval" in body:
            body["pf_interval"] = {**body["pf_interval"], "unit": req.unit}
        return {**body, "unit": req.unit, "fitted_on": {"dataset_id": req.dataset_id, "version": snap.version, **spec}}

    await datasets.insert_fitted(ctx, req.dataset_id, KIND, item_id, req.name, fitted)
    return record(ctx, await load_item(ctx, KIND, item_id))


async def get(ctx: Ctx, req: DegradationGet) -> dict[str, Any]:
    return record(ctx, await load_item(ctx, KIND, req.id))


async def list_models(ctx: Ctx, req: ListRequest) -> dict[str, Any]:
    items, next_offset = await page(ctx, KIND, req)
    return {"items": [summary(ctx, i) for i in items], "next_offset": next_offset}


def _remaining(body: dict[str, Any], age: float, readings: list[list[float]], probability: float) -> dict[str, Any]:
    return degradation.summarise(degradation.conditional_life(body, age, readings), probability)


async def remaining_life(ctx: Ctx, req: RemainingLifeIn) -> dict[str, Any]:
    item = await load_item(ctx, KIND, req.id)
    if item["body"].get("model") != "random_effects":
        raise InputError("id", f"degradation model {req.id} is {item['body'].get('model')}; a unit's remaining life "
                               "needs a random_effects model (its unit effects are what the readings update)")
    out = await ctx.jobs.run_cpu(_remaining, item["body"], req.age, req.readings, req.probability)
    return {"id": req.id, "age": req.age, "readings": len(req.readings), "unit": item["body"].get("unit"), **out}


def register(reg: Registry) -> None:
    reg.action("degradation", "create", request=DegradationCreate, response=Open, scope="write",
               summary="Fit a degradation model (pseudo-failure times with a life distribution, or a random-effects "
                       "path model) to a dataset's unit/time/value readings and save it")(create)
    reg.action("degradation", "remaining_life", request=RemainingLifeIn, response=Open,
               summary="A running unit's remaining life (median, interval) from its age and its own readings, "
                       "by a random-effects degradation model (the joint model)")(remaining_life)
    reg.action("get", KIND, request=DegradationGet, response=Open, selector="kind",
               summary="A saved degradation model in full")(get)
    reg.action("list", KIND, request=ListRequest, response=Open, selector="kind",
               summary="The caller's degradation models, oldest first")(list_models)

    @reg.route("GET", "/api/v1/degradation_models/{model_id}", response=Open,
               summary="A saved degradation model in full (the `url` of its listing)")
    async def get_route(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        return record(ctx, await load_item(ctx, KIND, request.match_info["model_id"]))
