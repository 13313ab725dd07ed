"""Maintenance-strategy calculators: the strategy tool, its original routes, and saved
`strategy_analysis` items (RCM evidence and reports refer to them by id)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bathtub import strategy
from bathtub.currency import DESCRIPTION as CURRENCY_DESCRIPTION
from bathtub.currency import PATTERN as CURRENCY_PATTERN
from bathtub.distribution_schema import cross_field_rules, params_rules
from bathtub.distributions import FAMILIES, MIXTURE
from bathtub.errors import InputError
from bathtub.strategy import demonstration_schema, uncertain
from bathtub.strategy.demonstration import MAX_FAILURES
from bathtub.strategy.guard import NON_FINITE_RULE, OVER_BUDGET_RULE, cpu_budget
from bathtub.strategy.inputs import BELOW_ZERO_RULE, DEGENERATE_RULE
from bathtub.strategy.saved_life import COX_RULE, KIJIMA_MINIMAL_RULE, NO_COVARIATES_RULE, saved_life
from bathtub.strategy.shuts import COST_OVERFLOW_RULE, MAX_HORIZON_DAYS, TOO_MANY_SHUTS, USAGE_OVERFLOW_RULE
from bathtub.units import units_clash
from bathtub_api.fields import DATE_PATTERN, Id, Name, Text, Unit, integer, text
from bathtub_api.ids import iso, new_id
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import ListRequest, Open, Strict, load_item, page
from bathtub_api.tools.life import ParamIn, load_model

LIFE_FAMILIES = (*FAMILIES, MIXTURE)  # a mixture names its base_distribution_id
PARAM_NAMES = "; ".join(f"{k} ({', '.join(f.names)})" for k, f in FAMILIES.items())
Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Probability = Annotated[float, Field(gt=0, lt=1)]
Date = text(pattern=DATE_PATTERN, description="A calendar date, YYYY-MM-DD")
Currency = Annotated[str, Field(pattern=CURRENCY_PATTERN, description=CURRENCY_DESCRIPTION)]
Covariates = Annotated[dict[Text, float | str], Field(max_length=200, description=(
    "With a saved regression model (weibull_ph, lognormal_aft, loglogistic_aft) or a power law fitted with "
    "covariates: the unit's value of every covariate the model has, {column: number or level}; the calculator "
    "reads the unit's own life at those values"))]


class LifeModelIn(Strict):
    """The part's life model: inline `distribution_id` + `params`, or a `saved_model_id` (the
    model's unit is used unless `unit` is given): a parametric life model; a regression model
    (weibull_ph, lognormal_aft, loglogistic_aft) at the unit's `covariates`; or a repairable
    system's process (crow_amsaa or power_law, with `covariates` if fitted with them; kijima1 or
    kijima2; hpp) read as a new unit's life (guide strategy)."""

    model_config = ConfigDict(json_schema_extra={"allOf": params_rules(base_field="base_distribution_id",
                                                                       lifetime=True)})
    cross_field = (*cross_field_rules(mixture=True), f"params: {BELOW_ZERO_RULE}", f"params: {DEGENERATE_RULE}",
                   f"*: {NON_FINITE_RULE}", f"*: {OVER_BUDGET_RULE}",
                   "saved_model_id: a parametric life, a weibull_ph, lognormal_aft or loglogistic_aft regression, or "
                   "a crow_amsaa, power_law, kijima1, kijima2 or hpp process", f"saved_model_id: {COX_RULE}",
                   "covariates.*: every covariate of the saved model is required, and only those",
                   f"covariates: a model that {NO_COVARIATES_RULE} takes none")

    exactly_one = ("distribution_id", "saved_model_id")
    companions: ClassVar[dict[str, tuple[str, ...]]] = {"distribution_id": ("params", "base_distribution_id"),
                                                        "saved_model_id": ("covariates",)}
    requires: ClassVar[dict[str, tuple[str, ...]]] = {"distribution_id": ("params",)}
    distribution_id: Literal[LIFE_FAMILIES] | None = None
    params: Annotated[list[ParamIn] | list[float], Field(
        description="The distribution's parameters, [{name, value}] or values in this order: " + PARAM_NAMES
                    + "; the model must put (almost) no lifetimes at or below 0")] | None = None
    base_distribution_id: Literal[tuple(FAMILIES)] | None = Field(  # type: ignore[valid-type]
        None, description="A mixture's family (only with distribution_id mixture; its params are alpha1, beta1, "
                          "weight1, alpha2, ..., weights adding to 1). A uniform's b must exceed its a.")
    saved_model_id: Id | None = None
    covariates: Covariates | None = None
    unit: Unit | None = None
    save: bool = False
    name: Name | None = None


DRAWS = 100  # parameter draws of a calculation with uncertainty: parameters, unless asked
MAX_DRAWS = 1000
DRAWS_PER_BUDGET = 10  # a calculation with parameter uncertainty gets one CPU budget per this many draws
NEEDS_SAVED_RULE = "parameters needs saved_model_id (an inline model has no sampling distribution to draw from)"
UNCERTAINTY_CROSS = (f"uncertainty: {NEEDS_SAVED_RULE}",
                     "uncertainty: parameters needs a saved model whose fit stores its sampling distribution (a "
                     "covariance, or an exact pivot: complete-data exponential, power law, hpp); a record saved "
                     "before its fit stored one is refused: refit it")
# JSON Schema's form of the first rule, so a schema-valid request is never refused for it
NEEDS_SAVED = {"if": {"required": ["uncertainty"], "properties": {"uncertainty": {"const": "parameters"}}},
               "then": {"required": ["saved_model_id"], "properties": {"saved_model_id": {"type": "string"}}}}


class UncertaintyIn(LifeModelIn):
    """A calculator whose optimum can be read over a saved model's parameter uncertainty."""

    model_config = ConfigDict(json_schema_extra={"allOf": [*params_rules(base_field="base_distribution_id",
                                                                         lifetime=True), NEEDS_SAVED]})
    cross_field = (*LifeModelIn.cross_field, *UNCERTAINTY_CROSS)
    uncertainty: Literal["none", "parameters"] = Field(
        "none", description="none: the optimum of the point estimate; parameters (with saved_model_id): also "
                            "`parameter_uncertainty`, the optimum over draws of the model's parameters from its "
                            "fit's sampling distribution (5th-95th percentiles) and what acting on the point "
                            "estimate costs")
    draws: integer(ge=10, le=MAX_DRAWS) = Field(DRAWS, description="Parameter draws with uncertainty: parameters "
                                                                   f"(default {DRAWS}); each is one calculation")
    seed: integer(ge=0, le=2**63 - 1) = Field(0, description="Seed of the parameter draws: draw i depends on (seed, "
                                                             "i) only, so the same seed gives the same answer")

    @model_validator(mode="after")
    def _drawable(self) -> UncertaintyIn:
        if self.uncertainty == "parameters" and self.saved_model_id is None:
            raise InputError("uncertainty", NEEDS_SAVED_RULE)
        return self


class OptimalReplacementIn(UncertaintyIn):
    cross_field = (*UncertaintyIn.cross_field, f"policy: {KIJIMA_MINIMAL_RULE}")
    planned_cost: NonNegative
    unplanned_cost: NonNegative
    currency: Currency | None = None
    policy: Literal["age", "block", "minimal_repair"] = "age"
    curve_points: integer(ge=10, le=5000) = 200


class FailureFindingIn(UncertaintyIn):
    # the interval a target needs depends on the life model: a bound on the pair, not on one field
    cross_field = (*UncertaintyIn.cross_field,
                   "target_availability: needs a test interval outside floating-point range for this life model",
                   "target_availability: cannot be met: this life model's mean availability is not resolvable in "
                   "floating point near that target")
    target_availability: Probability


class CalendarShut(Strict):
    """A planned shut: every `every` `every_unit` from `start` (whole numbers for months and
    years, at least one day), or a list of `dates`."""

    exactly_one = ("every", "dates")
    # the least `every` depends on every_unit (1 day, 1/7 week, a whole month or year)
    cross_field = ("every: must be at least one day", "every: must be a whole number with every_unit")
    companions: ClassVar[dict[str, tuple[str, ...]]] = {"every": ("start",)}
    name: Name
    cost: NonNegative
    every: Positive | None = None
    every_unit: Literal["days", "weeks", "months", "years"] = "days"
    start: Date | None = None
    dates: Annotated[list[Date], Field(min_length=1)] | None = None


class ShutPlanIn(LifeModelIn):
    # how many dates the shuts give depends on every, start, dates and horizon_days together
    cross_field = (*LifeModelIn.cross_field, f"shuts: {TOO_MANY_SHUTS}", f"usage_rate: {USAGE_OVERFLOW_RULE}",
                   f"shuts.cost: {COST_OVERFLOW_RULE}")
    current_age: NonNegative
    usage_rate: Positive
    horizon_days: Annotated[float, Field(ge=1, le=MAX_HORIZON_DAYS)]
    failure_cost: NonNegative
    shuts: Annotated[list[CalendarShut], Field(min_length=1)]
    currency: Currency | None = None
    today: Date | None = None


class DemonstrationIn(Strict):
    """A demonstration test: give what is known, and `solve_for` names the one unknown (read from
    what is missing when left out). Constant-rate tests (`method` mtbf, or any of mtbf,
    design_mtbf, total_test_time, discrimination_ratio) solve total_test_time, mtbf (what a test
    shows), confidence or failures; attribute and Weibayes tests solve units,
    test_time_per_unit, reliability, confidence or failures. With a design value and a
    producer_risk the plan meeting both risks is solved (`plan`); `method` sequential plans a
    sequential probability-ratio test."""

    model_config = ConfigDict(json_schema_extra=demonstration_schema.request_rules())
    cross_field = demonstration_schema.CROSS_FIELD
    reliability: Probability | None = None
    confidence: Probability | None = Field(None, description="default 0.95; 1 − the consumer's risk")
    consumer_risk: Probability | None = Field(None, description="instead of confidence (= 1 − confidence)")
    producer_risk: Probability | None = Field(
        None, description="chance that a design at design_mtbf / design_reliability fails the test; with a design "
                          "value it makes the plan meet both risks")
    mission_time: Positive | None = None
    failures: integer(ge=0, le=MAX_FAILURES) | None = Field(
        None, description="failures allowed (default 0); for a failure-terminated test the failure it stops at")
    test_multiple: Positive | None = None
    test_time_per_unit: Positive | None = Field(None, description="given test length per unit (to solve for "
                                                                  "reliability, confidence or failures)")
    total_test_time: Positive | None = Field(None, description="given total time on test (constant-rate tests)")
    shape: Positive | None = None
    units: integer(ge=1, le=10**9) | None = None
    method: Literal["auto", "binomial", "weibayes", "mtbf", "sequential"] | None = None
    solve_for: Literal["units", "test_time_per_unit", "total_test_time", "mtbf", "reliability", "confidence",
                       "failures", "plan"] | None = None
    sided: Literal["one", "two"] = "one"
    termination: Literal["time", "failure"] = "time"
    mtbf: Positive | None = None
    design_reliability: Probability | None = None
    design_mtbf: Positive | None = None
    discrimination_ratio: Annotated[float, Field(gt=1)] | None = Field(
        None, description="design MTBF over required MTBF, instead of design_mtbf")
    b_life: Annotated[float, Field(gt=0, lt=100)] | None = None
    shape_interval: Annotated[list[Positive], Field(min_length=2, max_length=2)] | None = None
    unit: Unit | None = None
    save: bool = False
    name: Name | None = None


class OptimalReplacementOut(Open):
    distribution: str
    unit: str | None
    mttf: float | None
    beneficial: bool
    optimal_time: float | None
    optimal_cost_rate: float | None
    planned_cost: float
    unplanned_cost: float
    currency: str | None = Field(None, description="the ISO 4217 code the costs were given in, when one was")
    parameter_uncertainty: dict[str, Any] | None = Field(None, description=(
        "With uncertainty: parameters only. Over the parameter draws (5th, 50th, 95th percentiles as {lower, "
        "median, upper}): optimal_time (in the model's unit; null where a draw says run to failure) and "
        "optimal_cost_rate (cost per unit time); beneficial_share (draws in which replacement pays); "
        "cost_rate_at_point_optimum (the point estimate's interval priced under each draw); expected_regret (its "
        "mean excess over each draw's own optimum, cost per unit time) and expected_regret_share (that over the "
        "mean optimal cost rate); draws, seed, confidence."))


class FailureFindingOut(Open):
    distribution: str
    unit: str | None
    mttf: float | None
    target_availability: float
    interval: float | None
    method: str
    note: str
    parameter_uncertainty: dict[str, Any] | None = Field(None, description=(
        "With uncertainty: parameters only. Over the parameter draws (5th, 50th, 95th percentiles as {lower, "
        "median, upper}): interval, each draw's own test interval meeting the target (in the model's unit; testing "
        "every `lower` meets it in 95% of draws); mean_unavailability_at_interval, the point estimate's interval's "
        "mean unavailability under each draw; chance_target_missed and expected_shortfall (the mean of "
        "max(0, U - (1 - target))); draws, seed, confidence."))


class Tradeoff(Open):
    failures: list[int]
    rows: list[dict[str, Any]]


class DemonstrationOut(Open):
    method: str
    solve_for: str
    units: int | None
    test_time_per_unit: float | None
    total_test_time: float | None
    failures: int
    demonstrated_reliability: float | None
    consumer_risk: float | None
    summary: str
    assumptions: list[str]
    tradeoff: Tradeoff
    confidence: float | None = None
    producer_risk: float | None = None
    pass_probability: float | None = None
    mtbf: float | None = None
    demonstrated_mtbf: float | None = None
    mtbf_upper: float | None = None
    reliability_upper: float | None = None
    operating_characteristic: dict[str, list[float]] | None = None
    sequential: dict[str, Any] | None = None


class ShutPlanOut(Open):
    plan: list[dict[str, Any]]
    expected_cost: float
    expected_failures: float
    currency: str | None = Field(None, description="the ISO 4217 code the costs were given in, when one was")


class AnalysisGet(Strict):
    id: Id


class AnalysisOut(Open):
    id: str
    name: str
    calculator: str
    inputs: dict[str, Any]
    result: dict[str, Any]
    created_at: str | None


class AnalysisList(Open):
    items: list[dict[str, Any]]
    next_offset: int | None


async def _life_kwargs(ctx: Ctx, req: LifeModelIn, record: dict[str, Any] | None) -> dict[str, Any]:
    """The calculator's life arguments; `record`: the saved model's, loaded by the caller."""
    if req.saved_model_id is not None and record is not None:
        if req.distribution_id is not None or req.params is not None:
            raise InputError("saved_model_id", "give saved_model_id or distribution_id with params, not both")
        lifetime = saved_life(record, req.saved_model_id, covariates=req.covariates,
                              policy=getattr(req, "policy", None))
        unit = record.get("unit")
        if units_clash(req.unit, unit):
            # The saved model's times are in its unit; another label would mislabel every figure.
            raise InputError("unit", f"model {req.saved_model_id} is in {unit!r}, not {req.unit!r}: omit unit or "
                                     "give the model's")
        return {"lifetime": lifetime, "unit": req.unit or unit}
    params = None if req.params is None else [p.model_dump() if isinstance(p, ParamIn) else p for p in req.params]
    return {"distribution_id": req.distribution_id, "params": params,
            "base_distribution_id": req.base_distribution_id, "unit": req.unit}


async def _saved(ctx: Ctx, calculator: str, req: BaseModel, result: dict[str, Any]) -> dict[str, Any]:
    """Store the analysis when asked; the answer then carries its id."""
    if not getattr(req, "save", False):
        return result
    # an analysis without parameter uncertainty keeps the inputs it always had
    plain = {"uncertainty", "draws", "seed"} if getattr(req, "uncertainty", "none") == "none" else set()
    inputs = req.model_dump(exclude={"save", "name", *plain}, exclude_none=True)
    analysis_id = new_id("strategy_analysis")
    name = getattr(req, "name", None) or calculator.replace("_", " ")
    body = {"calculator": calculator, "inputs": inputs, "result": result}
    await ctx.store.insert_item(ctx.user.id, "strategy_analysis", analysis_id, name, body)
    return {**result, "analysis_id": analysis_id}


def _calculator(name: str, run: Callable[..., dict[str, Any]], life: bool) -> Callable[[Ctx, Any], Any]:
    async def handler(ctx: Ctx, req: Any) -> dict[str, Any]:
        fields = req.model_dump(exclude={"save", "name", "distribution_id", "params", "base_distribution_id",
                                         "saved_model_id", "covariates", "unit", "currency", "uncertainty", "draws",
                                         "seed"})
        saved = getattr(req, "saved_model_id", None)
        record = (await load_model(ctx, saved))["body"] if life and saved is not None else None
        kwargs = await _life_kwargs(ctx, req, record) if life else {"unit": req.unit}
        if name == "shut_plan":
            fields["shuts"] = [s.model_dump(exclude_none=True) for s in req.shuts]
            fields["today"] = req.today or dt.date.today().isoformat()
        # Calculators are quick (well under a second) but pure Python: run them off the loop, in
        # the process pool. Extreme inputs can still make one slow, so each runs under a CPU
        # budget that its loops check (a pool worker cannot be killed alone without breaking the
        # pool for every request sharing it): past it the answer is a 422 naming the inputs.
        budget, calculate = ctx.config.strategy_cpu_limit_seconds, run
        if getattr(req, "uncertainty", "none") == "parameters":
            # one calculation per draw: the budget grows with the draws asked for
            budget *= max(1.0, req.draws / DRAWS_PER_BUDGET)
            calculate, kwargs = UNCERTAIN[name], {**kwargs, "record": record, "draws": req.draws, "seed": req.seed,
                                            "model_id": req.saved_model_id, "covariates": req.covariates}
        result = await ctx.jobs.run_cpu(_call, calculate, {**fields, **kwargs}, budget)
        if getattr(req, "currency", None) is not None:
            result = {**result, "currency": req.currency}  # the costs' unit, carried beside them
        return await _saved(ctx, name, req, result)

    return handler


def _call(run: Callable[..., dict[str, Any]], kwargs: dict[str, Any], budget_s: float) -> dict[str, Any]:
    with cpu_budget(budget_s):
        return run(**kwargs)


async def get_analysis(ctx: Ctx, req: AnalysisGet) -> dict[str, Any]:
    item = await load_item(ctx, "strategy_analysis", req.id)
    return {"id": item["id"], "name": item["name"], **item["body"], "created_at": iso(item["created_at"])}


async def list_analyses(ctx: Ctx, req: ListRequest) -> dict[str, Any]:
    items, next_offset = await page(ctx, "strategy_analysis", req)
    return {
        "items": [{"id": i["id"], "name": i["name"], "calculator": i["body"]["calculator"],
                   "created_at": iso(i["created_at"])} for i in items],
        "next_offset": next_offset,
    }


# (action, original route or None, request, response, library function, takes a life model, summary)
Calculator = tuple[str, str | None, type[BaseModel], type[BaseModel], Callable[..., dict[str, Any]], bool, str]
CALCULATORS: list[Calculator] = [
    ("optimal_replacement", "/api/v1/strategy/optimal-replacement", OptimalReplacementIn, OptimalReplacementOut,
     strategy.optimal_replacement, True,
     "Replacement age minimising cost per unit time (age, block or minimal-repair policy), with the curve"),
    ("failure_finding", "/api/v1/strategy/failure-finding", FailureFindingIn, FailureFindingOut,
     strategy.failure_finding_interval, True,
     "Proof-test interval of a hidden function meeting a target mean availability"),
    ("demonstration_test", "/api/v1/strategy/demonstration-test", DemonstrationIn, DemonstrationOut,
     strategy.demonstration_test, False,
     "Demonstration-test plan: units, test time, allowed failures, consumer risk, trade-off table"),
    ("shut_plan", None, ShutPlanIn, ShutPlanOut, strategy.shut_plan, True,
     "At which planned shuts to replace a part so expected cost over the horizon is least"),
]


# the calculators that can read their optimum over a saved model's parameter uncertainty
UNCERTAIN: dict[str, Callable[..., dict[str, Any]]] = {
    "optimal_replacement": uncertain.optimal_replacement_uncertain,
    "failure_finding": uncertain.failure_finding_uncertain,
}


def _writes_if(req: Any) -> str | None:
    """A calculation stores only with save: true, and then needs the write scope."""
    return "save: true stores a strategy_analysis item" if getattr(req, "save", False) else None


def register(reg: Registry) -> None:
    for action, path, request, response, run, life, summary in CALCULATORS:
        handler = _calculator(action, run, life)
        reg.action("strategy", action, request=request, response=response, summary=summary, writes_if=_writes_if,
                   description=summary + ". With save: true (needs the write scope) the analysis is stored as a "
                                         "strategy_analysis item and the answer carries its analysis_id.")(handler)

        if path is None:  # a tool action only: the original routes are the spec's three
            continue
        reg.body_route("POST", path, handler, request=request, response=response, writes_if=_writes_if,
                       summary=f"{summary} (original route)")
    reg.action("get", "strategy_analysis", request=AnalysisGet, response=AnalysisOut, selector="kind",
               summary="A saved strategy analysis: calculator, inputs and result")(get_analysis)
    reg.action("list", "strategy_analysis", request=ListRequest, response=AnalysisList, selector="kind",
               summary="The caller's saved strategy analyses")(list_analyses)
