"""Repairable systems: `fit recurrent` fits a recurrent-event model (power law / Crow-AMSAA,
log-linear, HPP, Duane, Kijima I/II generalised renewal, Nelson's MCF and its power-law fit) to a saved dataset and
saves it as a model of kind `recurrent`. POST /api/v1/fit takes the same model ids in
`distribution` (the life tool's fit path dispatches them to `bathtub.recurrent`); both read
back through `get model` and GET /api/v1/models/{id}."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from bathtub.recurrent.data import ROLES
from bathtub.recurrent.record import MODELS
from bathtub_api.fields import Id, Name, Unit, integer, text
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools import life
from bathtub_api.tools.common import Strict

# The request is validated again as the life tool's FitIn: its field types are the same ones, so
# what this schema publishes is what that check enforces (fields.py), with the recurrent roles.
Role = Literal[ROLES]


class RecurrentOptions(Strict):
    termination: Literal["time", "failure"] | None = None
    covariates: Annotated[list[text(min_length=1, max_length=200)], Field(max_length=50)] | None = None
    confidence: Annotated[float, Field(ge=0.5, lt=1)] | None = None
    systems: integer(ge=1, le=10_000_000) | None = None
    variance: Literal["nelson", "per_row"] | None = None


class RecurrentFitIn(Strict):
    """Fit a recurrent-event model. `model`: crow_amsaa (= power_law), loglinear, hpp, duane,
    kijima1, kijima2, mcf, mcf_power_law (least squares of (t/alpha)^beta on the MCF). `mapping`
    roles: event data `t` (event time, age), `system`, `end`
    (end of observation: time-terminated; omit for failure-terminated at each last event),
    `cause`, `group` (two populations, mcf); grouped data `interval_end` and `count`."""

    name: Name
    dataset_id: Id
    model: Literal["crow_amsaa", "power_law", "loglinear", "hpp", "duane", "kijima1", "kijima2", "mcf",
                   "mcf_power_law"]
    mapping: Annotated[dict[Role, Id], Field(min_length=1, description="Role -> a column of the dataset")]
    unit: Unit | None = None
    options: RecurrentOptions | None = None


async def fit(ctx: Ctx, req: RecurrentFitIn) -> dict[str, Any]:
    options = None if req.options is None else req.options.model_dump(exclude_none=True)
    return await life.fit(ctx, life.FitIn(name=req.name, dataset_id=req.dataset_id, distribution=req.model,
                                          mapping=req.mapping, unit=req.unit, options=options))


assert set(RecurrentFitIn.model_fields["model"].annotation.__args__) == set(MODELS)  # type: ignore[union-attr]


def register(reg: Registry) -> None:
    reg.action("fit", "recurrent", request=RecurrentFitIn, response=life.FitOut, scope="write",
               summary="Fit a repairable-system (recurrent-event) model to a saved dataset and save it: growth "
                       "verdict, ROCOF and MTBF with bounds, trend and goodness-of-fit tests, MCF, Kijima "
                       "repair effectiveness")(fit)
