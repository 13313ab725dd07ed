"""`rbd_analysis compare`: two of the caller's stored runs side by side (`bathtub.rbd.compare_runs`
computes; this module loads the runs, the owner's only, and refuses what cannot be compared).

What it answers: did the figures change beyond Monte Carlo noise (before and after `recompute`
on a new engine, or two seeds), do the inputs differ, and which run was faster."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from bathtub import rbd
from bathtub.errors import InputError
from bathtub_api.fields import Id
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import Open, Strict, load_item


class CompareRuns(Strict):
    """Run b (`run_ids[1]`) against run a (`run_ids[0]`): differences are b - a."""

    # uniqueItems: the published schema states the rule the handler refuses (the same run twice)
    run_ids: Annotated[list[Id], Field(min_length=2, max_length=2, json_schema_extra={"uniqueItems": True},
                                       description=(
        "Two of your rbd_run ids [a, b] (from analyze or list rbd_run), of the same kind (both availability over "
        "a horizon, both failure biasing, or both missions): b is compared with a."))]
    confidence: Annotated[float, Field(ge=0.5, lt=1, description=(
        "Probability that runs estimating the same quantities have no figure called changed (the family-wise "
        "confidence, Holm's correction over every figure compared); default 0.95."))] = 0.95


async def compare(ctx: Ctx, req: CompareRuns) -> dict[str, Any]:
    first, second = req.run_ids
    if first == second:
        raise InputError("run_ids", "the same run twice: give two runs (e.g. before and after recompute)")
    a = await load_item(ctx, "rbd_run", first)
    b = await load_item(ctx, "rbd_run", second)
    out = rbd.compare_runs(a["body"], b["body"], confidence=req.confidence, field="run_ids")
    return {"run_ids": [first, second], "rbd_ids": [a["body"]["rbd_id"], b["body"]["rbd_id"]], **out}


def register(reg: Registry) -> None:
    reg.action("rbd_analysis", "compare", request=CompareRuns, response=Open, scope="read",
               summary="Two stored runs figure by figure: difference, its standard error and a verdict (same "
                       "within Monte Carlo noise or changed, Holm-corrected), inputs that differ, speed ratio")(compare)
