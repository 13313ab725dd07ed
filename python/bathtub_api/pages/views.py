"""What each kind's page shows: the item's record read through the registry's own `get` action for
its owner (so a page shows exactly what the API answers), curves evaluated by the library, and
the figures drawn from them. A section is one item: a share page shows one, a report several.
Fitted models' sections are in `views_models`."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np

from bathtub import models
from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub_api.errors import ApiError
from bathtub_api.pages import plots, plots_operations
from bathtub_api.pages.readings import label, mean_of
from bathtub_api.pages.section import KIND_TITLES, KINDS, Section, Source
from bathtub_api.pages.views_models import degradation_view, model_view, recurrent_view
from bathtub_api.pages.views_tracked import tracked_view

__all__ = ["KINDS", "KIND_TITLES", "Section", "Source", "section"]
# result fields that are times (shown with the analysis's unit)
TIMED = ("mttf", "optimal_time", "interval", "approximate_interval", "test_time_per_unit", "total_test_time")
COST_KINDS = ("repair", "replacement", "preventive", "inspection", "set_up", "downtime", "acquisition")
DATASET_ROWS = 50  # rows a dataset page shows
RESULT_LABELS = {"mttf": "MTTF", "optimal_time": "Optimal interval", "optimal_cost_rate": "Cost rate at the optimum",
                 "run_to_failure_cost_rate": "Cost rate running to failure",
                 "beneficial": "Preventive replacement pays", "planned_cost": "Planned (preventive) cost",
                 "unplanned_cost": "Unplanned (failure) cost", "interval": "Test interval",
                 "approximate_interval": "Classic approximation 2(1 − A)/λ", "method": "Method",
                 "target_availability": "Target availability", "mean_unavailability": "Mean unavailability"}


async def section(src: Source, kind: str, item_id: str) -> Section:
    """One item's section; 404 (ApiError) when the owner has no such item of that kind."""
    return await VIEWS[kind](src, item_id)


# ---- datasets, diagrams, runs -----------------------------------------------------------------
async def _dataset(src: Source, item_id: str) -> Section:
    record = await src.get("dataset", id=item_id, limit=DATASET_ROWS)
    return Section("dataset", item_id, record["name"], record)


async def _rbd(src: Source, item_id: str) -> Section:
    record = await src.get("rbd", id=item_id)
    sec = Section("rbd", item_id, record["name"], record)
    sec.figures["diagram"] = await asyncio.to_thread(plots.diagram, record["nodes"], record["edges"],
                                                     f"{record['name']}: block diagram")
    # A block on a saved model shows that model's name and family, not its id; repairs their MTTR.
    saved = {n["model"]["saved_model_id"] for n in record["nodes"]
             if isinstance(n.get("model"), dict) and n["model"].get("saved_model_id")}
    models: dict[str, dict[str, Any]] = {}
    for model_id in sorted(saved):
        try:
            models[model_id] = await src.get("model", id=model_id)
        except ApiError as e:
            if e.status != 404:
                raise
    sec.extra["models"] = models
    sec.extra["mttr"] = {n["id"]: mean_of(n.get("repair")) for n in record["nodes"]}
    return sec


async def _run(src: Source, item_id: str) -> Section:
    record = await src.get("rbd_run", id=item_id, include_curve=True)
    sec = Section("rbd_run", item_id, f"{record.get('rbd_name') or record['rbd_id']} ({record['method']})", record)
    labels = block_labels(record)
    try:  # a run's stored inputs keep no labels: the diagram's own, while it exists, name the blocks
        diagram = await src.get("rbd", id=record["rbd_id"])
        labels |= {n["id"]: str(n["label"]) for n in diagram["nodes"] if n.get("label")}
    except ApiError as e:
        if e.status != 404:
            raise
    sec.extra["labels"] = labels
    sec.extra["unit"] = _run_unit(record)
    sec.figures = await asyncio.to_thread(_run_figures, record, labels)
    if record.get("uncertainty"):
        await _uncertainty_extra(src, sec, record["uncertainty"], labels)
    return sec


UNCERTAIN_FIGURES = {"mean_availability": "Mean availability", "expected_failures": "Expected system failures",
                     "mtbf": "MTBF", "mttr": "MTTR", "reliability": "Reliability over the mission", "mttf": "MTTF"}
MODEL_ROLES = {"model": "life", "repair": "repair", "switch.life": "switch life"}


def _block_field(field: str, labels: dict[str, str]) -> str:
    """'nodes.p1.model' as 'Pump 1 (life)'; inside subsystems the innermost block, by its id."""
    parts = field.split(".")
    at = max(i for i, p in enumerate(parts) if p == "nodes")
    block = parts[at + 1]
    role = ".".join(parts[at + 2:])
    role = MODEL_ROLES.get(role, role.replace("units[", "unit ").replace("].", " ").replace("model", "life"))
    return f"{labels.get(block, block) if at == 0 else block} ({role})"


async def _model_name(src: Source, model_id: str | None) -> str | None:
    """A saved model's own name for a page (never its id); None when there is none or it is gone."""
    if not model_id:
        return None
    try:
        return str((await src.get("model", id=model_id))["name"])
    except ApiError as e:
        if e.status != 404:
            raise
        return None


async def _uncertainty_extra(src: Source, sec: Section, unc: dict[str, Any], labels: dict[str, str]) -> None:
    """Names for the parameter-uncertainty table: each saved model's own name (never its id)
    and the blocks drawing from it."""
    names: dict[str, str] = {}
    for row in unc.get("sources") or []:
        if (name := await _model_name(src, row["model_id"])) is not None:
            names[row["model_id"]] = name
    sec.extra["figure_labels"] = UNCERTAIN_FIGURES
    sec.extra["model_names"] = names
    sec.extra["unc_blocks"] = {row["model_id"]: ", ".join(_block_field(f, labels) for f in row["blocks"])
                               for row in unc.get("sources") or []}
    sec.extra["unc_fixed"] = ", ".join(_block_field(f, labels) for f in unc.get("fixed_blocks") or [])


def _run_figures(record: dict[str, Any], labels: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    curve = record.get("curve") or {}
    unit = _run_unit(record)
    name = record.get("rbd_name") or record["rbd_id"]
    means = curve.get("interval_mean")
    if means and means.get("availability"):
        # interval means, not the point curve: a point read just before a PM start never sees
        # the PM window, and the curve's time-average should be the mean availability
        out["curve"] = plots_operations.interval_availability(
            means["start"], means["end"], means["availability"], means.get("lower"), means.get("upper"),
            (record.get("results") or {}).get("mean_availability"), unit,
            f"{name}: mean availability over each interval")
    elif "availability" in curve:
        out["curve"] = plots.curve_with_band(curve["t"], curve["availability"], curve.get("lower"), curve.get("upper"),
                                             "availability A(t)", unit, f"{name}: availability over time",
                                             mean=(record.get("results") or {}).get("mean_availability"))
    elif "reliability" in curve:
        out["curve"] = plots.curve_with_band(curve["t"], curve["reliability"], curve.get("lower"), curve.get("upper"),
                                             "reliability R(t)", unit, f"{name}: reliability over time")
    results = record.get("results") or {}
    blocks = results.get("blocks") or []
    if blocks:
        out["blocks"] = plots_operations.pareto([labels.get(b["id"], b["id"]) for b in blocks],
                                                [100.0 * b["share_of_system_downtime"] for b in blocks],
                                                f"{name}: downtime Pareto")
    by_block = (results.get("costs") or {}).get("by_block") or {}
    kinds = [k for k in COST_KINDS if any((row.get(k) or 0) > 0 for row in by_block.values())]
    if by_block and kinds:
        ids = list(by_block)
        out["costs"] = plots_operations.cost_breakdown([labels.get(i, i) for i in ids], [label(k) for k in kinds],
                                                       [[by_block[i].get(k) or 0.0 for i in ids] for k in kinds],
                                                       f"{name}: expected cost by block", _currency(record))
    return out


def _currency(record: dict[str, Any]) -> str | None:
    """The ISO 4217 code a run's costs are in (runs before currencies carry none)."""
    return record.get("currency") or (record.get("inputs") or {}).get("currency")


def _run_unit(record: dict[str, Any]) -> str | None:
    inputs = record.get("inputs") or {}
    return inputs.get("unit") or (inputs.get("diagram") or {}).get("unit")


def block_labels(record: dict[str, Any]) -> dict[str, str]:
    """Block id -> its label in the diagram the run ran on (the id where it has none)."""
    nodes = ((record.get("inputs") or {}).get("diagram") or {}).get("nodes") or []
    return {n["id"]: str(n.get("label") or n["id"]) for n in nodes}


# ---- strategy, degradation, RCM, fleets --------------------------------------------------------
async def _strategy(src: Source, item_id: str) -> Section:
    record = await src.get("strategy_analysis", id=item_id)
    sec = Section("strategy_analysis", item_id, record["name"], record)
    result = record.get("result") or {}
    curve = result.get("curve") or {}
    if "cost_rate" in curve:
        sec.figures["cost"] = await asyncio.to_thread(
            plots.cost_rate, curve["t"], curve["cost_rate"], result.get("optimal_time"),
            result.get("optimal_cost_rate"), result.get("run_to_failure_cost_rate"), result.get("unit"),
            f"{record['name']}: cost rate against the replacement interval", result.get("currency"),
            _optimum_range(result))
    if record.get("calculator") == "failure_finding" and result.get("interval"):
        life = await _saved_life(src, record.get("inputs") or {})
        sec.figures["unavailability"] = await asyncio.to_thread(_unavailability_figure, record, life)
    sec.extra["model_name"] = await _model_name(src, (record.get("inputs") or {}).get("saved_model_id"))
    sec.extra["scalars"] = [(k, v) for k, v in result.items()
                            if isinstance(v, (int, float, str, bool)) and k not in ("reason", "note")]
    sec.extra["labels"] = RESULT_LABELS
    sec.extra["timed"] = TIMED
    sec.extra["rates"] = ("optimal_cost_rate", "run_to_failure_cost_rate")
    sec.extra["costs"] = ("planned_cost", "unplanned_cost", "expected_cost", "failure_cost")
    sec.extra["shares"] = ("target_availability", "mean_unavailability")
    return sec


def _optimum_range(result: dict[str, Any]) -> tuple[float, float] | None:
    """Where the optimal interval lies over the parameter draws (5th–95th percentiles), when the
    analysis carried parameter uncertainty; an upper end of null (draws in which replacement does
    not pay) reaches past the plot."""
    spread = (result.get("parameter_uncertainty") or {}).get("optimal_time") or {}
    lo, hi = spread.get("lower"), spread.get("upper")
    return (float(lo), math.inf if hi is None else float(hi)) if lo is not None else None


async def _saved_life(src: Source, inputs: dict[str, Any]) -> Lifetime | None:
    """The saved model a calculation ran on, as it is now (a refit moves it), while it exists and is
    parametric (else None: no figure)."""
    model_id = inputs.get("saved_model_id")
    if not model_id:
        return None
    try:
        record = await src.get("model", id=model_id)
    except ApiError as e:
        if e.status != 404:
            raise
        return None
    try:
        return models.from_record(record).lifetime(model_id)  # type: ignore[no-any-return]
    except InputError:
        return None


def _unavailability_figure(record: dict[str, Any], saved: Lifetime | None = None) -> str | None:
    """Mean unavailability against the test interval, by the library's own U(T), up to twice the
    interval found (the inline inputs' life model, or the saved model it ran on)."""
    from bathtub.strategy.failure_finding import mean_unavailability

    inputs, result = record.get("inputs") or {}, record["result"]
    if inputs.get("distribution_id"):
        life = Lifetime.from_input(inputs["distribution_id"], inputs["params"], inputs.get("base_distribution_id"))
    elif saved is not None:
        life = saved
    else:
        return None
    grid = np.linspace(0.0, 2.0 * float(result["interval"]), 120)
    q = [mean_unavailability(life, float(t)) for t in grid]
    return plots_operations.unavailability(grid.tolist(), q, float(result["interval"]),
                                           1.0 - float(result["target_availability"]), result.get("unit"),
                                           f"{record['name']}: unavailability against the test interval")


async def _rcm(src: Source, item_id: str) -> Section:
    record = await src.get("rcm_study", id=item_id)
    if record.get("outline"):
        # A page shows the whole worksheet: each function read in full, as get rcm_study gives it.
        full = [await src.get("rcm_study", id=item_id, function_id=f["id"]) for f in record["functions"]]
        record = {**record, "functions": [f["functions"][0] for f in full],
                  "scheduled_tasks": [t for f in full for t in f.get("scheduled_tasks") or []]}
    return Section("rcm_study", item_id, record["name"], record)


async def _fleet(src: Source, item_id: str) -> Section:
    record = await src.get("fleet", id=item_id, per_item=True)
    # the actionable part: items by their chance of failing over the horizon, most at risk first
    record["per_item"] = sorted(record.get("per_item") or [], key=lambda r: -(r.get("expected_failures") or 0.0))
    sec = Section("fleet", item_id, record["name"], record)
    period = record.get("period_label") or "period"
    sec.extra["period"] = period[:-1] if period.endswith("s") else period  # "months" -> "next month"
    fc = record.get("forecast") or {}
    if fc.get("expected_failures"):
        interval = fc.get("interval") or {}
        label = record.get("period_label") or "period"
        pct = round(100 * (interval.get("confidence") or 0.9))
        wide = (fc.get("parameter_uncertainty") or {}).get("interval")
        sec.figures["forecast"] = await asyncio.to_thread(
            plots.bars, [str(k + 1) for k in range(len(fc["expected_failures"]))], fc["expected_failures"],
            "expected failures", f"{record['name']}: forecast failures by {label}", interval.get("lower"),
            interval.get("upper"), f"{pct}% interval, point model" if wide else f"{pct}% interval", label,
            (wide["lower"], wide["upper"], f"{pct}% interval with parameter uncertainty") if wide else None)
    return sec


VIEWS: dict[str, Callable[[Source, str], Awaitable[Section]]] = {
    "model": model_view, "recurrent_model": recurrent_view, "dataset": _dataset, "rbd": _rbd, "rbd_run": _run,
    "strategy_analysis": _strategy, "degradation_model": degradation_view, "rcm_study": _rcm, "fleet": _fleet,
    "tracked_fleet": tracked_view,
}
