"""Accelerated life tests in the service: `alt bootstrap`, a job that refits the model's data
B times in the engine and stores percentile and BCa bounds on the model (`bootstrap`).

Fitting goes through `POST /api/v1/fit` (life.py) with an ALT `distribution` id, and the
use-stress evaluation through the reliability route, both by the library's model registry.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from bathtub.alt import AltModel
from bathtub.alt.bootstrap import MAX_REPLICATES, bootstrap_bounds
from bathtub.alt.columns import alt_arrays
from bathtub.alt.data import alt_data
from bathtub.errors import InputError
from bathtub.models import upgrade
from bathtub_api import plans
from bathtub_api.errors import ApiError, not_found
from bathtub_api.fields import integer
from bathtub_api.jobs import JobCtx
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tables import by_column
from bathtub_api.tools.common import Strict
from bathtub_api.tools.jobs import JobQueued

JOB_KIND = "alt.bootstrap"


class BootstrapIn(Strict):
    """Bootstrap bounds of a saved ALT model (a job). `kind` parametric simulates from the fit
    with each unit's censoring time; nonparametric resamples units within each stress level."""

    model_id: str
    replicates: integer(ge=100, le=MAX_REPLICATES) = 2000
    kind: Literal["parametric", "nonparametric"] = "parametric"
    seed: integer(ge=0, le=2**63 - 1) = 0
    use_stress: float | None = None
    use_stress2: float | None = None
    confidence: Annotated[float, Field(ge=0.5, lt=1)] = 0.95
    b_lives: list[Annotated[float, Field(gt=0, lt=1)]] = Field(default_factory=lambda: [0.01, 0.1], min_length=1,
                                                               max_length=20)


async def _alt_model(store: Any, owner: str, model_id: str, field: str = "model_id") -> dict[str, Any]:
    item = await store.get_item(owner, "model", model_id)
    if item is None:
        raise not_found("model", model_id)
    if item["body"].get("kind") != "alt":
        raise InputError(field, f"model {model_id} is {item['body'].get('kind')!r}; an ALT model is needed")
    return item


async def bootstrap(ctx: Ctx, req: BootstrapIn) -> dict[str, Any]:
    """Check everything a bootstrap needs, then queue it."""
    item = await _alt_model(ctx.store, ctx.user.id, req.model_id)
    model = AltModel.from_record(upgrade(item["body"]))
    if req.use_stress is not None:
        model.stress_vector(req.use_stress, req.use_stress2, fields=("use_stress", "use_stress2"))
    elif req.use_stress2 is not None:
        raise InputError("use_stress", "use_stress2 needs use_stress")
    # A bootstrap's resamples are its replications under the caller's plan (402). It has no quote:
    # its cost is the refits, bounded by MAX_REPLICATES and the model's size.
    plans.check_job(ctx.plan, replications=req.replicates)
    args = req.model_dump()
    return await ctx.jobs.submit(ctx.user.id, JOB_KIND, args)


def _compute(record: dict[str, Any], columns: dict[str, list[Any]], args: dict[str, Any]) -> dict[str, Any]:
    source = record["source"]
    model = AltModel.from_record(upgrade(record))
    t, failed, s1, s2 = alt_arrays(columns, source["mapping"], record["distribution"])
    data = alt_data(model.spec, t, failed, s1, s2)
    use = None if args["use_stress"] is None else (args["use_stress"], args["use_stress2"])
    return bootstrap_bounds(model, data, count=args["replicates"], kind=args["kind"], seed=args["seed"],
                            confidence=args["confidence"], use=use, b_lives=args["b_lives"])


async def run_job(ctx: JobCtx, args: dict[str, Any]) -> dict[str, Any]:
    item = await _alt_model(ctx.store, ctx.owner, args["model_id"])
    source = item["body"].get("source") or {}
    if "dataset_id" not in source:
        raise InputError("model_id", "the model was not fitted from a dataset: there are no units to resample")
    snap = await ctx.store.dataset_snapshot(ctx.owner, source["dataset_id"])
    if snap is None:
        raise not_found("dataset", source["dataset_id"])
    names = [c["name"] for c in snap.body["columns"]]
    # every row of the dataset turned into columns: off the loop, which serves other requests meanwhile
    columns = await asyncio.to_thread(by_column, names, await ctx.store.dataset_rows(snap.id))
    result = await ctx.jobs.run_native(_compute, item["body"], columns, args)
    # Store on the model only if it is still the fit that was bootstrapped (an ingest refits it).
    current = await ctx.store.get_item(ctx.owner, "model", args["model_id"])
    if current is None:
        raise not_found("model", args["model_id"])
    now = [c["value"] for c in current["body"].get("coefficients", [])]
    if not np.array_equal(np.asarray(now, float), np.asarray(result["coefficients"], float)):
        raise ApiError(409, "model_id: the model was refitted while the bootstrap ran; submit it again")
    body = {**current["body"], "bootstrap": result}
    if not await ctx.store.update_item(ctx.owner, "model", current["id"], current["name"], body,
                                       if_version=current["version"]):
        raise ApiError(409, "model_id: the model changed while the bootstrap was stored; submit it again")
    return {"model_id": args["model_id"], **{k: v for k, v in result.items() if k != "coefficients"}}


def register(reg: Registry) -> None:
    reg.action("alt", "bootstrap", request=BootstrapIn, response=JobQueued, scope="write", heavy=True,
               summary="Queue bootstrap bounds (percentile and BCa) of a saved ALT model: B replicate refits "
                       "in the engine; the result is stored on the model as `bootstrap`")(bootstrap)
    reg.job(JOB_KIND)(run_job)
