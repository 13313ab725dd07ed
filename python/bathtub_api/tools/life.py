"""Life-data models: fit (original route and tool), models list/get, reliability evaluation,
model import, demand-data analysis, and the refit that dataset ingest triggers."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, ClassVar, Literal

from aiohttp import web
from pydantic import ConfigDict, Field, WithJsonSchema

from bathtub import distribution_schema, models
from bathtub.life import names, records, saved
from bathtub_api.errors import ApiError
from bathtub_api.fields import Id, Name, Text, Unit, integer, text
from bathtub_api.ids import iso, new_id
from bathtub_api.registry import Ctx, Registry, read_json
from bathtub_api.tools import datasets, degradation
from bathtub_api.tools.common import ListRequest, Open, Strict, load_item, page

FIT_CHOICES = models.FIT_DISTRIBUTIONS
Role = Literal[models.FIT_ROLES]  # type: ignore[valid-type]
Probability = Annotated[float, Field(gt=0, lt=1)]


class ParamIn(Strict):
    name: Id
    value: float


class CoxOptions(Strict):
    """Cox model options: tie handling, a stratum column (own baseline, no coefficient; a stratum
    without failures is fitted, adds nothing to the partial likelihood, keeps survival 1 and is listed
    in the record's diagnostics.strata.without_events), a cluster column (robust standard errors
    clustered by it)."""

    tie_method: Literal["efron", "breslow", "exact", "kalbfleisch-prentice"] = "efron"
    strata_column: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    cluster_column: Annotated[str, Field(min_length=1, max_length=200)] | None = None


class FitIn(Strict):
    """Fit a life model to a saved dataset. `mapping` roles: `x` time, `c` censoring code,
    `n` count, `xl`/`xr` interval ends, `mode` failure mode of each failed row (fits competing
    risks: per-mode fits and every mode's cumulative incidence; `group` adds Gray's test). With
    `covariates` or `formula` a regression model (`cox`, `weibull_ph`, `lognormal_aft`,
    `loglogistic_aft`, `royston_parmar`, `proportional_odds`, `additive_hazards`, `buckley_james`,
    `fine_gray` on `mode` with options.failure_mode, or `best` by AIC): roles `x`, `c`, and `i`
    (item) with `xl`/`xr` start/stop rows (or successive
    stop times in `x`) for time-varying covariates; the shared-frailty models `weibull_frailty` and
    `cox_frailty` also read `group` (units of a group share a frailty). An ALT `distribution`
    (life_relationship, e.g. weibull_arrhenius) reads `stress` (and `stress2`)."""

    name: Name
    dataset_id: Id
    distribution: Literal[FIT_CHOICES] = Field(
        description="A life distribution family, or best, mixture, kaplan_meier, turnbull; a regression model (with "
                    "covariates or formula); a recurrent-event model; an ALT model (life_relationship)")
    mapping: Annotated[dict[Role, Id], Field(min_length=1, description="Role -> a column of the dataset")]
    unit: Unit | None = None
    options: Annotated[dict[Text, Any], Field(
        description="offset, zi, lfp (booleans), method (mle, rrx, rry), bounds (fisher, likelihood), "
                    "modes (2 or 3), base_distribution, median_ranks; regression: reference, confidence, "
                    "ph_transform, knots (royston_parmar, proportional_odds: a count or knot times), bootstrap "
                    "(buckley_james resamples); competing risks: confidence, cif_variance (aalen as cmprsk's "
                    "cuminc, or delta); fine_gray: failure_mode (required: the mode whose incidence is regressed), "
                    "confidence, reference, cif_variance")] | None = None
    covariates: Annotated[list[Annotated[str, Field(min_length=1, max_length=200)]],
                          Field(min_length=1, max_length=100)] | None = None
    formula: Annotated[str, Field(min_length=1, max_length=1000)] | None = None
    cox_options: CoxOptions | None = None


class FitOut(Strict):
    id: str
    name: str
    kind: str
    distribution: str
    n: int
    unit: str | None
    created_at: str | None
    url: str


class Row(Open):
    """One estimate, the same shape in every model kind's record: a parameter, a regression or ALT
    coefficient, an ALT use-level figure, a bootstrap interval ({name, value, se, ci} and the
    row's documented extras)."""

    name: str
    value: float | None
    se: float | None = None
    ci: Annotated[list[float | None], Field(min_length=2, max_length=2)] | None = None


class Covariance(Strict):
    """A fit's covariance: the matrix of the estimates `names`, on the scale the names say."""

    names: list[str]
    matrix: list[list[float | None]] | None


class GofRow(Open):
    id: str
    label: str
    value: float | None


class ModelRecord(Open):
    """Every model kind's record (`bathtub.models.RECORD_SCHEMA`), plus its kind's own blocks."""

    id: str
    name: str
    distribution: str
    kind: str
    unit: str | None
    n: int | None
    params: list[Row]
    coefficients: list[Row]
    metrics: dict[str, Any] | None
    gof: list[GofRow]
    life: list[dict[str, Any]] | dict[str, Any] | None
    covariance: Covariance | None = None


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
    """GET /api/v1/models: the original route's shape."""

    models: list[ModelSummary]


class ModelPage(Strict):
    """list/model: the shape every list/<kind> answers."""

    items: list[ModelSummary]
    next_offset: int | None


class ModelGet(Strict):
    id: Id


class ReliabilityIn(Strict):
    t: Annotated[float, Field(ge=0)] | None = None
    covariates: Annotated[dict[Text, float | str], Field(
        description="Only for models with covariates (a stratified Cox also takes its stratum)")] | None = None
    points: integer(ge=2, le=5000) = 200
    stress: float | None = Field(None, description="use stress of an ALT model (required for one)")
    stress2: float | None = Field(None, description="second use stress of a two-stress ALT model")


class ImportData(Strict):
    """Life data to refit: times `x`, censoring codes `c` (0/F failure, 1/S suspension), counts `n`;
    arrays of one length."""

    cross_field = ("c: like the other columns", "n: like the other columns")
    x: Annotated[list[float], Field(min_length=1)]
    c: list[Annotated[Any, WithJsonSchema({"type": ["integer", "string"]})]] | None = None
    n: list[Annotated[float, Field(gt=0)]] | None = None


def _import_params_description() -> str:
    """Which parameter names each other tool's name takes (their names; Bathtub's where they do
    not clash), from the library's table of names. Stated, not given as rules: with the families'
    rules beside them they are more than the schema generators the fuzz uses can combine."""
    parts = [f"{f.name} ({', '.join((*f.their_names, *f.extras))})" for f in names.FOREIGN if f.their_names]
    return "Parameters: a Bathtub id takes its family's (bounded as published); " + "; ".join(parts)


class ImportExtras(Strict):
    """What a params-only model may add to its family's parameters (checked by the import)."""

    gamma: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = Field(
        None, description="a location (weibull, exponential, lognormal, loglogistic, gamma)")
    p: Annotated[float, Field(gt=0, le=1)] | None = Field(None, description="susceptible share (limited failure "
                                                                           "population)")
    f0: Annotated[float, Field(ge=0, lt=1)] | None = Field(None, description="zero-inflation mass")


class ImportIn(Strict):
    """A model from `data` (refitted; `options` as for fits) or from `params` (params-only;
    `extras` such as metrics go with params)."""

    model_config = ConfigDict(json_schema_extra={"allOf": distribution_schema.params_rules("distribution", "params")})
    exactly_one = ("data", "params")
    # another tool's names (Weibull_3P, WeibullFitter, ...) map to a family and its parameters only
    # after the name is resolved, and whether any family fits a sample depends on the sample
    cross_field = ("params.*: not a parameter of", "params.gamma: required for",
                   "data: no distribution could be fitted to these data", "extras.gamma: a location applies to",
                   "extras: give p or f0, not both", "extras: a mixture takes no extras",
                   "params.gamma: has no location", "params: a mixture needs at least 2 modes",
                   "data.*: times must be >= 0")
    companions: ClassVar[dict[str, tuple[str, ...]]] = {"params": ("extras",), "data": ("options",)}
    name: Name
    distribution: Annotated[str, Field(min_length=1, max_length=200), WithJsonSchema(
        {"enum": names.accepted_names(), "description": "A Bathtub distribution id, or a name another tool uses "
                                                        "(reliability's Weibull_2P, lifelines' WeibullFitter, ...), "
                                                        "its parameters in that tool's convention. Also accepted in "
                                                        "any case, with spaces, _ and - ignored."})]
    unit: Unit | None = None
    data: ImportData | None = None
    params: Annotated[list[ParamIn], Field(description=_import_params_description())] | None = None
    options: dict[Text, Any] | None = None
    extras: ImportExtras | None = None
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
    cross_field = ("batches[].failures: must be at most demands",)
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
    """The stored model in the one record shape (a record an earlier release stored is upgraded
    as it is read, so old models answer like new ones)."""
    body = {k: v for k, v in models.upgrade(item["body"]).items() if k not in ("source",)}
    return {"id": item["id"], "name": item["name"], **body, "created_at": iso(item["created_at"]),
            "updated_at": iso(item["updated_at"]), "url": model_url(ctx, item["id"]),
            "dataset_id": (item["body"].get("source") or {}).get("dataset_id")}


async def _fit_record(ctx: Ctx, source: dict[str, Any], columns: dict[str, list[Any]]) -> dict[str, Any]:
    """The fitted record of a model's `source` on a dataset's columns (only the columns its fit
    reads cross to the worker)."""
    used = await asyncio.to_thread(models.columns_read, columns, source)
    return await ctx.jobs.run_cpu(models.fit_source, used, source)


async def fit(ctx: Ctx, req: FitIn) -> dict[str, Any]:
    """Fit and save, only if the dataset is still the one fitted (else fit its rows again), so
    no model is saved fitted on rows an ingest or delete has since changed."""
    source = {"dataset_id": req.dataset_id, "mapping": req.mapping, "distribution": req.distribution,
              "options": req.options or {}}
    if req.covariates is not None or req.formula is not None or req.cox_options is not None:
        source |= {"covariates": req.covariates, "formula": req.formula,
                   "cox_options": None if req.cox_options is None else req.cox_options.model_dump(exclude_none=True)}
    model_id = new_id("model")

    async def fitted(columns: dict[str, list[Any]], snap: Any) -> dict[str, Any]:
        return {**await _fit_record(ctx, source, columns), "unit": req.unit, "source": source}

    await datasets.insert_fitted(ctx, req.dataset_id, "model", model_id, req.name, fitted)
    return _summary(ctx, await load_model(ctx, model_id))


def _check_rows(body: dict[str, Any], columns: dict[str, list[Any]]) -> None:
    source = body.get("source") or {}
    saved.check_model_rows(columns, source.get("mapping") or {})


async def _refit(ctx: Ctx, body: dict[str, Any], columns: dict[str, list[Any]]) -> dict[str, Any]:
    source = body["source"]
    return {**await _fit_record(ctx, source, columns), "unit": body.get("unit"), "source": source}


async def get_model(ctx: Ctx, req: ModelGet) -> dict[str, Any]:
    return model_record(ctx, await load_model(ctx, req.id))


async def list_models(ctx: Ctx, req: ListRequest) -> dict[str, Any]:
    items, next_offset = await page(ctx, "model", req)
    return {"items": [_summary(ctx, i) for i in items], "next_offset": next_offset}


async def reliability(ctx: Ctx, model_id: str, req: ReliabilityIn) -> dict[str, Any]:
    item = await load_model(ctx, model_id)
    body = item["body"]
    out = await ctx.jobs.run_cpu(models.evaluate, body, model_id, req.t, req.points, req.covariates, req.stress,
                                 req.stress2)
    return {"model": {"id": model_id, "name": item["name"], "distribution": body.get("distribution")},
            "unit": body.get("unit"), **out}


async def import_model(ctx: Ctx, req: ImportIn) -> dict[str, Any]:
    data = None if req.data is None else req.data.model_dump(exclude_none=True)
    params = None if req.params is None else [p.model_dump() for p in req.params]
    extras = None if req.extras is None else req.extras.model_dump(exclude_none=True)
    record = await ctx.jobs.run_cpu(_import, req.distribution, data, params, req.options, extras,
                                    req.base_distribution_id)
    model_id = new_id("model")
    body = {**record, "unit": req.unit, "source": {"import": True, "distribution_name": req.distribution}}
    await ctx.store.insert_item(ctx.user.id, "model", model_id, req.name, body)
    return {"id": model_id, "name": req.name, "distribution": record["distribution"],
            "params_only": bool(record.get("params_only")), "url": model_url(ctx, model_id)}


def _import(distribution: str, data: Any, params: Any, options: Any, extras: Any, base: str | None) -> dict[str, Any]:
    return records.import_model(distribution, data=data, params=params, options=options, extras=extras,
                                base_distribution_id=base)


async def demand(ctx: Ctx, req: DemandIn) -> dict[str, Any]:
    batches = [b.model_dump(exclude_none=True) for b in req.batches]
    body = models.fit(None, {}, kind="demand", batches=batches, confidence=req.confidence, scores=req.scores)
    model_id = new_id("model")
    await ctx.store.insert_item(ctx.user.id, "model", model_id, req.name, body)
    return {"id": model_id, "name": req.name, **body, "url": model_url(ctx, model_id)}


def register(reg: Registry) -> None:
    datasets.MODEL_HOOKS["life"] = datasets.ModelHooks(check_rows=_check_rows, refit=_refit)
    reg.action("fit", "life", request=FitIn, response=FitOut, scope="write",
               summary="Fit a life distribution (or best, mixture, kaplan_meier, turnbull; competing risks with "
                       "a mode column; a regression model with covariates, fine_gray for a mode's incidence) to a "
                       "saved dataset and save the model")(fit)
    reg.action("fit", "demand", request=DemandIn, response=Open, scope="write",
               summary="Probability of failure on demand from demand batches: exact and Jeffreys intervals, "
                       "homogeneity and trend tests; saved as a model")(demand)
    reg.action("get", "model", request=ModelGet, response=ModelRecord, selector="kind",
               summary="A saved life or recurrent model in full")(get_model)
    reg.action("list", "model", request=ListRequest, response=ModelPage, selector="kind",
               summary="The caller's models, oldest first")(list_models)

    async def models_route(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        """Life models, then degradation models (the spec: kinds include both)."""
        out = await list_models(ctx, ListRequest(limit=500))
        items = await ctx.store.list_items(ctx.user.id, degradation.KIND, 500, 0)
        return {"models": out["items"] + [degradation.summary(ctx, i) for i in items]}

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
