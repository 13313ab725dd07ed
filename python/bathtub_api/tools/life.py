"""Life-data models: fit (original route and tool), models list/get, reliability evaluation,
model import, demand-data analysis, and the refit that dataset ingest triggers."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from aiohttp import web
from pydantic import Field, WithJsonSchema

from bathtub.distributions import FAMILIES, MIXTURE, Lifetime
from bathtub.errors import InputError
from bathtub.life import records, saved
from bathtub.life.demand import analyse_demands
from bathtub_api.errors import ApiError
from bathtub_api.fields import Id, Name, Text, Unit, integer, text
from bathtub_api.ids import iso, new_id
from bathtub_api.registry import Ctx, Registry, read_json
from bathtub_api.tools import datasets
from bathtub_api.tools.common import ListRequest, Open, Strict, load_item

Role = Literal["x", "c", "n", "xl", "xr", "mode"]
FIT_CHOICES = (*FAMILIES, MIXTURE, "best", "kaplan_meier", "turnbull")
Probability = Annotated[float, Field(gt=0, lt=1)]
DISTRIBUTIONS = ("A distribution id: exponential, weibull, normal, lognormal, gamma, loglogistic, gumbel, logistic, "
                 "uniform, beta, expo_weibull, mixture")


class ParamIn(Strict):
    name: Id
    value: float


class FitIn(Strict):
    """Fit a life model to a saved dataset. `mapping` roles: `x` time, `c` censoring code,
    `n` count, `xl`/`xr` interval ends, `mode` failure mode (fits competing risks)."""

    name: Name
    dataset_id: Id
    distribution: Literal[FIT_CHOICES] = Field(description="A family, or best, mixture, kaplan_meier, turnbull")
    mapping: Annotated[dict[Role, Id], Field(min_length=1, description="Role -> a column of the dataset")]
    unit: Unit | None = None
    options: Annotated[dict[Text, Any], Field(
        description="offset, zi, lfp (booleans), method (mle, rrx, rry), bounds (fisher, likelihood), "
                    "modes (2 or 3), base_distribution, median_ranks")] | None = None


class FitOut(Strict):
    id: str
    name: str
    kind: str
    distribution: str
    n: int
    unit: str | None
    created_at: str | None
    url: str


class ModelRecord(Open):
    id: str
    name: str
    distribution: str
    kind: str
    unit: str | None
    n: int | None
    params: list[dict[str, Any]]
    coefficients: list[Any]
    metrics: dict[str, Any] | None
    gof: list[dict[str, Any]]


class ModelSummary(Strict):
    id: str
    name: str
    kind: str
    distribution: str
    n: int | None
    unit: str | None
    created_at: str | None
    url: str


class ModelList(Strict):
    models: list[ModelSummary]


class ModelGet(Strict):
    id: Id


class ReliabilityIn(Strict):
    t: Annotated[float, Field(ge=0)] | None = None
    covariates: Annotated[dict[Text, float], Field(description="Only for models with covariates")] | None = None
    points: integer(ge=2, le=5000) = 200


class ImportData(Strict):
    """Life data to refit: times `x`, censoring codes `c` (0/F failure, 1/S suspension), counts `n`;
    arrays of one length."""

    x: Annotated[list[float], Field(min_length=1)]
    c: list[Annotated[Any, WithJsonSchema({"type": ["integer", "string"]})]] | None = None
    n: list[Annotated[float, Field(gt=0)]] | None = None


class ImportIn(Strict):
    """A model from `data` (refitted; `options` as for fits) or from `params` (params-only;
    `extras` such as metrics go with params)."""

    exactly_one = ("data", "params")
    companions: ClassVar[dict[str, tuple[str, ...]]] = {"params": ("extras",)}
    name: Name
    distribution: text(min_length=1, max_length=200, description=DISTRIBUTIONS)
    unit: Unit | None = None
    data: ImportData | None = None
    params: list[ParamIn] | None = None
    options: dict[Text, Any] | None = None
    extras: dict[Text, Any] | None = None
    base_distribution_id: Id | None = None


class ImportOut(Strict):
    id: str
    name: str
    distribution: str
    params_only: bool
    url: str


class DemandBatchIn(Strict):
    demands: integer(ge=1)
    failures: Annotated[integer(ge=0), Field(description="At most demands")]
    label: text(max_length=80) | None = None


class DemandIn(Strict):
    name: Name
    batches: Annotated[list[DemandBatchIn], Field(min_length=1)]
    confidence: Probability = 0.95
    scores: Annotated[list[float], Field(description="One score per batch (for the trend test)")] | None = None


def model_url(ctx: Ctx, model_id: str) -> str:
    return ctx.url(f"/api/v1/models/{model_id}")


async def load_model(ctx: Ctx, model_id: str) -> dict[str, Any]:
    return await load_item(ctx, "model", model_id)


def _summary(ctx: Ctx, item: dict[str, Any]) -> dict[str, Any]:
    body = item["body"]
    return {"id": item["id"], "name": item["name"], "kind": body.get("kind", "distribution"),
            "distribution": body.get("distribution", ""), "n": body.get("n"), "unit": body.get("unit"),
            "created_at": iso(item["created_at"]), "url": model_url(ctx, item["id"])}


def model_record(ctx: Ctx, item: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in item["body"].items() if k not in ("source",)}
    return {"id": item["id"], "name": item["name"], **body, "created_at": iso(item["created_at"]),
            "updated_at": iso(item["updated_at"]), "url": model_url(ctx, item["id"]),
            "dataset_id": (item["body"].get("source") or {}).get("dataset_id")}


async def saved_lifetime(ctx: Ctx, model_id: str) -> tuple[Lifetime, str | None]:
    """A saved parametric model as a `Lifetime` for the calculators and the engine."""
    body = (await load_model(ctx, model_id))["body"]
    dist = body.get("distribution")
    opts = body.get("options") or {}
    if body.get("kind") != "distribution" or (dist not in FAMILIES and dist != MIXTURE):
        raise InputError("saved_model_id", f"model {model_id} is {dist!r}; a parametric life model is needed")
    if opts.get("zi") or opts.get("lfp"):
        raise InputError("saved_model_id", "zero-inflated and limited-population models cannot be used here")
    values = {p["name"]: p["value"] for p in body["params"]}
    return Lifetime(dist, values, body.get("base_distribution")), body.get("unit")


async def _fit_and_store(ctx: Ctx, name: str, unit: str | None, source: dict[str, Any],
                         columns: dict[str, list[Any]], model_id: str | None = None) -> dict[str, Any]:
    record = await ctx.jobs.run_cpu(saved.fit_columns, columns, source["mapping"], source["distribution"],
                                    source.get("options"))
    body = {**record, "unit": unit, "source": source}
    if model_id is None:
        model_id = new_id("model")
        await ctx.store.insert_item(ctx.user.id, "model", model_id, name, body)
    else:
        await ctx.store.update_item(ctx.user.id, "model", model_id, name, body)
    item = await load_model(ctx, model_id)
    return _summary(ctx, item)


async def fit(ctx: Ctx, req: FitIn) -> dict[str, Any]:
    _, columns = await datasets.dataset_columns(ctx, req.dataset_id)
    source = {"dataset_id": req.dataset_id, "mapping": req.mapping, "distribution": req.distribution,
              "options": req.options or {}}
    return await _fit_and_store(ctx, req.name, req.unit, source, columns)


async def refit(ctx: Ctx, dataset_id: str) -> list[dict[str, str]]:
    """Refit, in place, every model fitted on this dataset (after rows were appended)."""
    _, columns = await datasets.dataset_columns(ctx, dataset_id)
    out = []
    offset = 0
    while True:
        page = await ctx.store.list_items(ctx.user.id, "model", 500, offset)
        for item in page:
            source = item["body"].get("source") or {}
            if source.get("dataset_id") == dataset_id:
                await _fit_and_store(ctx, item["name"], item["body"].get("unit"), source, columns, item["id"])
                out.append({"id": item["id"], "name": item["name"]})
        if len(page) < 500:
            return out
        offset += 500


async def get_model(ctx: Ctx, req: ModelGet) -> dict[str, Any]:
    return model_record(ctx, await load_model(ctx, req.id))


async def list_models(ctx: Ctx, req: ListRequest) -> dict[str, Any]:
    items = await ctx.store.list_items(ctx.user.id, "model", req.limit, req.offset)
    return {"models": [_summary(ctx, i) for i in items]}


async def reliability(ctx: Ctx, model_id: str, req: ReliabilityIn) -> dict[str, Any]:
    item = await load_model(ctx, model_id)
    body = item["body"]
    if req.covariates:
        raise InputError("covariates", f"model {model_id} has no covariates")
    out: dict[str, Any] = {"model": {"id": model_id, "name": item["name"], "distribution": body.get("distribution")},
                           "unit": body.get("unit")}
    if req.t is not None:
        out["at"] = await ctx.jobs.run_cpu(saved.evaluate_at, body, req.t)
    else:
        out["curves"] = await ctx.jobs.run_cpu(saved.evaluate_curves, body, req.points)
    return out


async def import_model(ctx: Ctx, req: ImportIn) -> dict[str, Any]:
    data = None if req.data is None else req.data.model_dump(exclude_none=True)
    params = None if req.params is None else [p.model_dump() for p in req.params]
    record = await ctx.jobs.run_cpu(_import, req.distribution, data, params, req.options, req.extras,
                                    req.base_distribution_id)
    model_id = new_id("model")
    body = {**record, "unit": req.unit, "source": {"import": True}}
    await ctx.store.insert_item(ctx.user.id, "model", model_id, req.name, body)
    return {"id": model_id, "name": req.name, "distribution": record["distribution"],
            "params_only": bool(record.get("params_only")), "url": model_url(ctx, model_id)}


def _import(distribution: str, data: Any, params: Any, options: Any, extras: Any, base: str | None) -> dict[str, Any]:
    return records.import_model(distribution, data=data, params=params, options=options, extras=extras,
                                base_distribution_id=base)


async def demand(ctx: Ctx, req: DemandIn) -> dict[str, Any]:
    batches = [b.model_dump(exclude_none=True) for b in req.batches]
    analysis = analyse_demands(batches, confidence=req.confidence, scores=req.scores).to_dict()
    model_id = new_id("model")
    pooled = analysis["pooled"]
    body = {**analysis, "kind": "demand", "distribution": "binomial", "n": pooled["demands"], "unit": "demands",
            "params": [], "coefficients": [], "gof": [], "metrics": None}
    await ctx.store.insert_item(ctx.user.id, "model", model_id, req.name, body)
    return {"id": model_id, "name": req.name, **analysis, "url": model_url(ctx, model_id)}


def register(reg: Registry) -> None:
    datasets.REFITTERS["life"] = refit
    reg.action("fit", "life", request=FitIn, response=FitOut, scope="write",
               summary="Fit a life distribution (or best, mixture, kaplan_meier, turnbull; competing risks with "
                       "a mode column) to a saved dataset and save the model")(fit)
    reg.action("fit", "demand", request=DemandIn, response=Open, scope="write",
               summary="Probability of failure on demand from demand batches: exact and Jeffreys intervals, "
                       "homogeneity and trend tests; saved as a model")(demand)
    reg.action("get", "model", request=ModelGet, response=ModelRecord, selector="kind",
               summary="A saved life model in full")(get_model)
    reg.action("list", "model", request=ListRequest, response=ModelList, selector="kind",
               summary="The caller's models, oldest first")(list_models)

    async def models_route(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        return await list_models(ctx, ListRequest(limit=500))

    async def model_route(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        return await get_model(ctx, ModelGet(id=request.match_info["model_id"]))

    async def reliability_route(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        body = await read_json(request, empty={})
        if not isinstance(body, dict):
            raise ApiError(422, "body: must be a JSON object")
        return await reliability(ctx, request.match_info["model_id"], ReliabilityIn.model_validate(body))

    reg.body_route("POST", "/api/v1/fit", fit, request=FitIn, response=FitOut, scope="write",
                   summary="Fit a life model to a dataset (original route)")
    reg.route("GET", "/api/v1/models", summary="List models", response=ModelList)(models_route)
    reg.route("GET", "/api/v1/models/{model_id}", summary="A model record", response=ModelRecord)(model_route)
    reg.route("POST", "/api/v1/models/{model_id}/reliability", request=ReliabilityIn, response=Open,
              summary="Reliability, failure, hazard, cumulative hazard and density at t, or whole curves")(
        reliability_route)
    reg.body_route("POST", "/api/import/models", import_model, request=ImportIn, response=ImportOut, scope="write",
                   summary="Import a model from params (params-only) or from data (refitted)")
