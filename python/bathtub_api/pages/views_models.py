"""The sections of fitted models: life distributions (probability paper, R(t), F(t), h(t) with
bands), regression (Cox curves and forest plot), ALT (stress–life), recurrent events (MCF,
log-log growth, MTBF) and degradation paths. Curves come from the library; plots only draw."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from bathtub.degradation.paths import Path
from bathtub.distributions import FAMILIES, MIXTURE
from bathtub.errors import InputError
from bathtub.life import saved
from bathtub.life.cumulative_incidence import step_value
from bathtub.life.data import LifeData
from bathtub.life.evaluate import model_dist
from bathtub.life.paper import cdf_band, hazard_band, paper_of, plotting_positions
from bathtub.recurrent import data as recurrent_data
from bathtub.recurrent import mcf
from bathtub.recurrent.expected import cumulative_intensity
from bathtub_api.errors import ApiError
from bathtub_api.pages import plots, plots_models
from bathtub_api.pages.readings import per_time
from bathtub_api.pages.section import Section, Source

LIFE_FAMILIES_PLOTTED = ("distribution",)  # record kinds with one CDF (not regression, ALT, demand, ...)
PLOTTED_DISTRIBUTIONS = (*FAMILIES, MIXTURE)


async def model_view(src: Source, item_id: str) -> Section:
    record = await src.get("model", id=item_id)
    if record.get("kind") == "recurrent":
        return await _recurrent_from(src, record)
    sec = Section("model", item_id, record["name"], record)
    incidence = record.get("cumulative_incidence")
    if isinstance(incidence, dict) and incidence.get("modes"):
        sec.figures["incidence"] = await asyncio.to_thread(incidence_figure, incidence, record)
    curve = record.get("curve")
    if record.get("kind") == "nonparametric" and isinstance(curve, dict) and curve.get("time"):
        sec.figures["survival"] = await asyncio.to_thread(
            plots.step_survival, curve["time"], curve["sf"], curve.get("lower"), curve.get("upper"),
            record.get("unit"), f"{record['name']}: {record['distribution'].replace('_', '-')} estimate",
            float(record.get("confidence") or 0.95))
    if record.get("kind") == "regression" and record.get("distribution") == "cox":
        sec.figures.update(await asyncio.to_thread(cox_figures, record))
        return sec
    if record.get("kind") == "alt" and record.get("stress_life"):
        sec.figures["stress_life"] = await asyncio.to_thread(
            plots_models.stress_life, record["stress_life"], record.get("use"),
            "stress", record.get("unit"), f"{record['name']}: stress–life")
        return sec
    if record.get("kind") not in LIFE_FAMILIES_PLOTTED or record.get("distribution") not in PLOTTED_DISTRIBUTIONS:
        return sec
    source = await src.source_of("model", item_id)
    columns = await src.columns(record.get("dataset_id"))
    sec.figures.update(await asyncio.to_thread(_life_figures, record, source.get("mapping"), columns))
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
    lo = float(dist.quantile(0.005))
    hi = float(dist.quantile(0.995))
    if points["t"]:
        lo, hi = min(lo, min(points["t"]) * 0.8), max(hi, max(points["t"]) * 1.2)
    grid = np.geomspace(max(lo, hi * 1e-6), hi, 160) if paper.x == "log" and hi > 0 else np.linspace(lo, hi, 160)
    band = cdf_band(record, grid)
    curves = saved.evaluate_curves(record, 200)
    # R(t) and F(t) bands are the CDF's pointwise band (one band, read both ways), on a linear grid
    lin = np.linspace(0.0 if curves["x"][0] >= 0 else curves["x"][0], curves["x"][-1], 160)
    fb = cdf_band(record, lin)
    has_band = any(v is not None for v in fb["lower"])
    hb = hazard_band(record, np.asarray(curves["x"], dtype=float))
    h_band = any(v is not None for v in hb["lower"])
    unit, title = record.get("unit"), record["name"]

    def flip(v: list[Any]) -> list[Any]:
        return [None if x is None else 1.0 - x for x in v]

    return {
        "probability": plots.probability_plot(paper, points, band, unit, f"{title}: probability plot"),
        "reliability": plots.life_curve(lin, flip(fb["F"]), flip(fb["upper"]) if has_band else None,
                                        flip(fb["lower"]) if has_band else None, "reliability R(t)", unit,
                                        f"{title}: reliability R(t)"),
        "unreliability": plots.life_curve(lin, fb["F"], fb["lower"] if has_band else None,
                                          fb["upper"] if has_band else None, "unreliability F(t)", unit,
                                          f"{title}: unreliability F(t)"),
        "hazard": plots.life_curve(curves["x"], curves["hf"], hb["lower"] if h_band else None,
                                   hb["upper"] if h_band else None, "hazard rate h(t)", unit,
                                   f"{title}: hazard rate h(t)", plots.WARN,
                                   ylabel=f"failures {per_time(unit)}"),
    }


def cox_figures(record: dict[str, Any]) -> dict[str, str]:
    """The forest plot of hazard ratios, and survival curves at the covariates' means with the most
    significant covariate set to its smallest and largest value in the data."""
    from bathtub.models import from_record  # a record's curves, by the library's registry

    def evaluate_curves(rec: dict[str, Any], points: int, covariates: dict[str, Any]) -> dict[str, Any]:
        return from_record(rec).curves(points, covariates)

    coefs = record.get("coefficients") or []
    out: dict[str, str] = {}
    rows = [c for c in coefs if c.get("exp_ci") and c.get("exp_coef") is not None]
    if rows:
        out["forest"] = plots_models.forest([c["name"] for c in rows], [c["exp_coef"] for c in rows],
                                            [c["exp_ci"][0] for c in rows], [c["exp_ci"][1] for c in rows],
                                            float(rows[0].get("confidence") or 0.95),
                                            f"{record['name']}: hazard ratios")
    terms = {t["column"]: t for t in (record.get("design") or {}).get("terms") or [] if t.get("kind") == "numeric"}
    means = dict(zip((record.get("design") or {}).get("covariates") or [], record.get("means") or []))
    if record.get("strata_column") or not means or len(means) != len(terms):
        return out  # stratified or with categorical terms: no single "average unit" to draw
    at_means = evaluate_curves(record, 200, means)
    curves = [{"label": "at the covariates' means", "x": at_means["x"], "sf": at_means["sf"]}]
    top = min((c for c in coefs if c.get("p") is not None and c["name"] in terms), key=lambda c: c["p"], default=None)
    if top is not None:
        name = top["name"]
        for v in (terms[name]["min"], terms[name]["max"]):
            got = evaluate_curves(record, 200, {**means, name: v})
            curves.append({"label": f"{name} = {v:g}, others at means", "x": got["x"], "sf": got["sf"]})
    out["survival"] = plots_models.adjusted_survival(curves, record.get("unit"),
                                                     f"{record['name']}: adjusted survival curves")
    return out


async def recurrent_view(src: Source, item_id: str) -> Section:
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
    ylabel = "events" if systems == 1 else "mean events per system"
    out = {"mcf": _mcf_figure(t, curve, grid, model, record, title, systems)}
    if record.get("distribution") == "crow_amsaa" and model is not None:
        out["loglog"] = plots_models.growth_loglog(t, [float(v) for v in curve["mcf"]], grid.tolist(),
                                                   model.tolist(), record.get("unit"), ylabel,
                                                   f"{record['name']}: cumulative {ylabel}, log-log")
        beta = next((p["value"] for p in record.get("params") or [] if p["name"] == "beta"), None)
        if beta:
            inside = grid > 0
            # per system: cumulative MTBF t / Λ(t); the power law's instantaneous one t / (β Λ(t))
            cum = (grid[inside] / model[inside]).tolist()
            inst = (grid[inside] / (beta * model[inside])).tolist()
            out["mtbf"] = plots_models.mtbf_curves(grid[inside].tolist(), cum, inst, record.get("unit"),
                                                   f"{record['name']}: MTBF over time (per system)")
    return out


def _mcf_figure(t: list[float], curve: dict[str, Any], grid: np.ndarray, model: np.ndarray | None,
                record: dict[str, Any], title: str, systems: int) -> str:
    lower = curve.get("lower_lawless_nadeau") or curve.get("lower_nelson") or curve.get("lower")
    upper = curve.get("upper_lawless_nadeau") or curve.get("upper_nelson") or curve.get("upper")
    return plots.mean_cumulative(t, list(curve["mcf"]), lower, upper, grid.tolist(),
                                 None if model is None else model.tolist(), record.get("unit"), title,
                                 record.get("model") or record.get("distribution") or "model",
                                 "events" if systems == 1 else "mean events per system")


async def degradation_view(src: Source, item_id: str) -> Section:
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




def incidence_figure(incidence: dict[str, Any], record: dict[str, Any]) -> str:
    """Every mode's Aalen–Johansen incidence on one time grid, stacked (the record's own steps)."""
    modes = incidence["modes"]
    grid = sorted({float(v) for m in modes for v in m["time"]})
    stacks = [(m["mode"], [step_value(m, u) for u in grid]) for m in modes]
    return plots_models.stacked_incidence(grid, stacks, record.get("unit"),
                                          f"{record['name']}: cumulative incidence by failure mode")
