"""What each kind's page shows: the item's record read through the registry's own `get` action for
its owner (so a page shows exactly what the API answers), curves evaluated by the library, and
the figures drawn from them. A section is one item: a share page shows one, a report several."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bathtub.degradation.paths import Path
from bathtub.distributions import FAMILIES, MIXTURE
from bathtub.errors import InputError
from bathtub.life import saved
from bathtub.life.cumulative_incidence import step_value
from bathtub.life.data import LifeData
from bathtub.life.evaluate import model_dist
from bathtub.life.paper import cdf_band, paper_of, plotting_positions
from bathtub.recurrent import data as recurrent_data
from bathtub.recurrent import mcf
from bathtub.recurrent.expected import cumulative_intensity
from bathtub_api.errors import ApiError
from bathtub_api.pages import plots
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tables import by_column

# The kinds a link or a report may show; a recurrent model is stored as a model.
KINDS = ("model", "recurrent_model", "dataset", "rbd", "rbd_run", "strategy_analysis", "degradation_model",
         "rcm_study", "fleet")
KIND_TITLES = {"model": "Life model", "recurrent_model": "Recurrent-event model", "dataset": "Dataset",
               "rbd": "Reliability block diagram", "rbd_run": "Availability simulation",
               "strategy_analysis": "Maintenance strategy analysis", "degradation_model": "Degradation model",
               "rcm_study": "RCM worksheet", "fleet": "Fleet forecast", "report": "Report",
               "missing": "No longer available"}
DATASET_ROWS = 50  # rows a dataset page shows
RESULT_LABELS = {"mttf": "MTTF", "optimal_time": "Optimal interval", "optimal_cost_rate": "Cost rate at the optimum",
                 "run_to_failure_cost_rate": "Cost rate running to failure",
                 "beneficial": "Preventive replacement pays", "planned_cost": "Planned (preventive) cost",
                 "unplanned_cost": "Unplanned (failure) cost"}
LIFE_FAMILIES_PLOTTED = ("distribution",)  # record kinds with one CDF (not regression, ALT, demand, ...)
PLOTTED_DISTRIBUTIONS = (*FAMILIES, MIXTURE)


@dataclass
class Section:
    kind: str  # the page kind (a recurrent model's is recurrent_model)
    id: str
    name: str
    record: dict[str, Any]
    figures: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    note: str | None = None  # a report's note, shown above the section (plain text, escaped)

    @property
    def title(self) -> str:
        return KIND_TITLES[self.kind]


@dataclass(frozen=True)
class Source:
    """The item owner's view of the store (read-only) and the registry's handlers."""

    ctx: Ctx
    registry: Registry

    async def get(self, kind: str, **args: Any) -> dict[str, Any]:
        action = self.registry.actions[("get", kind)]
        return await action.handler(self.ctx, action.request.model_validate(args))  # type: ignore[no-any-return]

    async def columns(self, dataset_id: str | None) -> dict[str, list[Any]] | None:
        """The columns of a dataset of the owner's (the data a model was fitted on), or None."""
        if not dataset_id:
            return None
        item = await self.ctx.store.get_item(self.ctx.user.id, "dataset", dataset_id)
        if item is None:
            return None
        rows = await self.ctx.store.dataset_rows(dataset_id)
        return await asyncio.to_thread(by_column, [c["name"] for c in item["body"]["columns"]], rows)

    async def source_of(self, kind: str, item_id: str) -> dict[str, Any]:
        item = await self.ctx.store.get_item(self.ctx.user.id, kind, item_id)
        return {} if item is None else (item["body"].get("source") or item["body"].get("fitted_on") or {})


async def section(src: Source, kind: str, item_id: str) -> Section:
    """One item's section; 404 (ApiError) when the owner has no such item of that kind."""
    return await VIEWS[kind](src, item_id)


# ---- life and recurrent models ---------------------------------------------------------------
async def _model(src: Source, item_id: str) -> Section:
    record = await src.get("model", id=item_id)
    if record.get("kind") == "recurrent":
        return await _recurrent_from(src, record)
    sec = Section("model", item_id, record["name"], record)
    incidence = record.get("cumulative_incidence")
    if isinstance(incidence, dict) and incidence.get("modes"):
        sec.figures["incidence"] = await asyncio.to_thread(_incidence_figure, incidence, record)
    curve = record.get("curve")
    if record.get("kind") == "nonparametric" and isinstance(curve, dict) and curve.get("time"):
        sec.figures["survival"] = await asyncio.to_thread(
            plots.step_survival, curve["time"], curve["sf"], curve.get("lower"), curve.get("upper"),
            record.get("unit"), f"{record['name']}: {record['distribution'].replace('_', '-')} estimate",
            float(record.get("confidence") or 0.95))
    if record.get("kind") not in LIFE_FAMILIES_PLOTTED or record.get("distribution") not in PLOTTED_DISTRIBUTIONS:
        return sec
    source = await src.source_of("model", item_id)
    columns = await src.columns(record.get("dataset_id"))
    sec.figures = await asyncio.to_thread(_life_figures, record, source.get("mapping"), columns)
    sec.extra["paper"] = paper_of(record["distribution"]).name
    return sec


def _life_figures(record: dict[str, Any], mapping: dict[str, str] | None,
                  columns: dict[str, list[Any]] | None) -> dict[str, str]:
    points: dict[str, list[float]] = {"t": [], "F": []}
    if mapping and columns is not None and "mode" not in mapping:
        try:
            points = plotting_positions(LifeData.from_columns(columns, mapping))
        except InputError:
            pass  # the dataset no longer reads as this model's data: the line is drawn alone
    dist = model_dist(record)
    paper = paper_of(record["distribution"])
    lo = float(dist.ppf(0.005))
    hi = float(dist.ppf(0.995))
    if points["t"]:
        lo, hi = min(lo, min(points["t"]) * 0.8), max(hi, max(points["t"]) * 1.2)
    grid = np.geomspace(max(lo, hi * 1e-6), hi, 160) if paper.x == "log" and hi > 0 else np.linspace(lo, hi, 160)
    band = cdf_band(record, grid)
    curves = saved.evaluate_curves(record, 200)
    title = record["name"]
    return {
        "probability": plots.probability_plot(paper, points, band, record.get("unit"), f"{title}: probability plot"),
        "curves": plots.reliability_and_hazard(curves["x"], curves["sf"], curves["hf"], record.get("unit"),
                                               f"{title}: reliability and hazard rate"),
    }


def _incidence_figure(incidence: dict[str, Any], record: dict[str, Any]) -> str:
    """Every mode's Aalen–Johansen incidence on one time grid, stacked (the record's own steps)."""
    modes = incidence["modes"]
    grid = sorted({float(v) for m in modes for v in m["time"]})
    stacks = [(m["mode"], [step_value(m, u) for u in grid]) for m in modes]
    return plots.stacked_incidence(grid, stacks, record.get("unit"),
                                   f"{record['name']}: cumulative incidence by failure mode")


async def _recurrent(src: Source, item_id: str) -> Section:
    record = await src.get("model", id=item_id)
    if record.get("kind") != "recurrent":
        raise ApiError(404, f"id: no recurrent model {item_id}")
    return await _recurrent_from(src, record)


async def _recurrent_from(src: Source, record: dict[str, Any]) -> Section:
    sec = Section("recurrent_model", record["id"], record["name"], record)
    source = await src.source_of("model", record["id"])
    columns = await src.columns(record.get("dataset_id"))
    sec.figures = await asyncio.to_thread(_recurrent_figures, record, source, columns)
    return sec


def _recurrent_figures(record: dict[str, Any], source: dict[str, Any],
                       columns: dict[str, list[Any]] | None) -> dict[str, str]:
    curve = record.get("curve")  # an mcf record carries its own curve
    if curve is None and columns is not None and source.get("mapping"):
        try:
            data = recurrent_data.from_columns(columns, source["mapping"],
                                               termination=(source.get("options") or {}).get("termination"))
        except InputError:
            data = None
        if isinstance(data, recurrent_data.EventData):
            curve = mcf.mcf(data, float(record.get("confidence") or 0.95))
    if curve is None:
        return {}
    t = [float(v) for v in curve["time"]]
    end = float(record.get("at") or (t[-1] if t else 1.0))
    grid = np.linspace(0.0, max(end, t[-1] if t else end), 200)
    model = cumulative_intensity(record, grid)
    title = f"{record['name']}: mean cumulative events"
    systems = record.get("systems") or 1
    return {"mcf": _mcf_figure(t, curve, grid, model, record, title, systems)}


def _mcf_figure(t: list[float], curve: dict[str, Any], grid: np.ndarray, model: np.ndarray | None,
                record: dict[str, Any], title: str, systems: int) -> str:
    lower = curve.get("lower_lawless_nadeau") or curve.get("lower_nelson") or curve.get("lower")
    upper = curve.get("upper_lawless_nadeau") or curve.get("upper_nelson") or curve.get("upper")
    return plots.mean_cumulative(t, list(curve["mcf"]), lower, upper, grid.tolist(),
                                 None if model is None else model.tolist(), record.get("unit"), title,
                                 record.get("model") or record.get("distribution") or "model",
                                 "events" if systems == 1 else "mean events per system")


# ---- datasets, diagrams, runs -----------------------------------------------------------------
async def _dataset(src: Source, item_id: str) -> Section:
    record = await src.get("dataset", id=item_id, limit=DATASET_ROWS)
    return Section("dataset", item_id, record["name"], record)


async def _rbd(src: Source, item_id: str) -> Section:
    record = await src.get("rbd", id=item_id)
    sec = Section("rbd", item_id, record["name"], record)
    sec.figures["diagram"] = await asyncio.to_thread(plots.diagram, record["nodes"], record["edges"],
                                                     f"{record['name']}: block diagram")
    return sec


async def _run(src: Source, item_id: str) -> Section:
    record = await src.get("rbd_run", id=item_id, include_curve=True)
    sec = Section("rbd_run", item_id, f"{record.get('rbd_name') or record['rbd_id']} ({record['method']})", record)
    sec.extra["labels"] = block_labels(record)
    sec.extra["unit"] = _run_unit(record)
    sec.figures = await asyncio.to_thread(_run_figures, record)
    return sec


def _run_figures(record: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    curve = record.get("curve") or {}
    unit = _run_unit(record)
    name = record.get("rbd_name") or record["rbd_id"]
    if "availability" in curve:
        out["curve"] = plots.curve_with_band(curve["t"], curve["availability"], curve.get("lower"), curve.get("upper"),
                                             "availability A(t)", unit, f"{name}: availability over time")
    elif "reliability" in curve:
        out["curve"] = plots.curve_with_band(curve["t"], curve["reliability"], curve.get("lower"), curve.get("upper"),
                                             "reliability R(t)", unit, f"{name}: reliability over time")
    blocks = (record.get("results") or {}).get("blocks") or []
    if blocks:
        labels = block_labels(record)
        out["blocks"] = plots.bars([labels.get(b["id"], b["id"]) for b in blocks],
                                   [100.0 * b["share_of_system_downtime"] for b in blocks],
                                   "share of system downtime (%)", f"{name}: block contributions")
    return out


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
            f"{record['name']}: cost rate against the replacement interval")
    sec.extra["scalars"] = [(k, v) for k, v in result.items()
                            if isinstance(v, (int, float, str, bool)) and k not in ("reason",)]
    sec.extra["labels"] = RESULT_LABELS
    return sec


async def _degradation(src: Source, item_id: str) -> Section:
    record = await src.get("degradation_model", id=item_id)
    sec = Section("degradation_model", item_id, record["name"], record)
    fitted_on = record.get("fitted_on") or {}
    columns = await src.columns(fitted_on.get("dataset_id"))
    sec.figures = await asyncio.to_thread(_degradation_figures, record, fitted_on, columns)
    return sec


def _degradation_figures(record: dict[str, Any], fitted_on: dict[str, Any],
                         columns: dict[str, list[Any]] | None) -> dict[str, str]:
    path = Path.parse(record["path"])
    mapping = fitted_on.get("mapping") or {}
    readings: dict[str, tuple[list[float], list[float]]] = {}
    if columns is not None and {"i", "x", "y"} <= set(mapping) and all(c in columns for c in mapping.values()):
        for unit, x, y in zip(columns[mapping["i"]], columns[mapping["x"]], columns[mapping["y"]]):
            xs, ys = readings.setdefault(str(unit), ([], []))
            xs.append(float(x))
            ys.append(float(y))
    paths = []
    for u in record.get("units") or []:
        if u.get("intercept") is None or u.get("slope") is None:
            continue
        end = u.get("crossing_time") or u.get("last_reading") or 1.0
        end = min(float(end), float(u.get("last_reading") or end) * float(record.get("extrapolation") or 3.0))
        start = 0.0 if path.time_linear else max(end * 1e-3, 1e-12)
        grid = np.linspace(start, end, 100)
        xs, ys = readings.get(str(u["id"]), ([], []))
        paths.append({"id": u["id"], "x": xs, "y": ys, "fit_x": grid.tolist(),
                      "fit_y": path.value(u["intercept"], u["slope"], grid).tolist()})
    if not paths:
        return {}
    return {"paths": plots.degradation_paths(paths, float(record["threshold"]), record.get("unit"),
                                             f"{record['name']}: degradation paths and threshold")}


async def _rcm(src: Source, item_id: str) -> Section:
    record = await src.get("rcm_study", id=item_id)
    if record.get("outline"):
        # A page shows the whole worksheet: each function read in full, as get rcm_study gives it.
        full = [await src.get("rcm_study", id=item_id, function_id=f["id"]) for f in record["functions"]]
        record = {**record, "functions": [f["functions"][0] for f in full],
                  "scheduled_tasks": [t for f in full for t in f.get("scheduled_tasks") or []]}
    return Section("rcm_study", item_id, record["name"], record)


async def _fleet(src: Source, item_id: str) -> Section:
    record = await src.get("fleet", id=item_id)
    sec = Section("fleet", item_id, record["name"], record)
    fc = record.get("forecast") or {}
    if fc.get("expected_failures"):
        interval = fc.get("interval") or {}
        label = record.get("period_label") or "period"
        sec.figures["forecast"] = await asyncio.to_thread(
            plots.bars, [str(k + 1) for k in range(len(fc["expected_failures"]))], fc["expected_failures"],
            "expected failures", f"{record['name']}: forecast failures by {label}", interval.get("lower"),
            interval.get("upper"), f"{round(100 * (interval.get('confidence') or 0.9))}% interval", label)
    return sec


VIEWS: dict[str, Callable[[Source, str], Awaitable[Section]]] = {
    "model": _model, "recurrent_model": _recurrent, "dataset": _dataset, "rbd": _rbd, "rbd_run": _run,
    "strategy_analysis": _strategy, "degradation_model": _degradation, "rcm_study": _rcm, "fleet": _fleet,
}
