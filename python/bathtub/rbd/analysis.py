"""Analyses of a resolved (engine-form) diagram: what will run, and running it.

A repairable diagram is simulated over [0, horizon] (availability), or, with method
`failure_biasing`, its steady-state unavailability is estimated by regenerative simulation
with importance sampling (`bathtub.rbd.rare`; Markovian diagrams). A non-repairable one
answers in closed form when it qualifies (`bathtub.rbd.exact`), else it is simulated to
system failure (reliability over [0, mission_time]). Results are JSON-ready dicts, split
into `results` (figures with 95% intervals), `curve` (A(t) or R(t) with its band) and
`precision` (what the run reached).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from bathtub import engine
from bathtub.errors import InputError
from bathtub.rbd import exact, rare
from bathtub.rbd.diagram import check_diagram
from bathtub.rbd.quote import quote
from bathtub.rbd.resolve import engine_form
from bathtub.rbd.schema import enum, integer, number

METHODS = ("auto", "simulation", rare.METHOD)
DEFAULT_REPLICATIONS = {True: 2000, False: 10_000}


@dataclass(frozen=True)
class RunOptions:
    """horizon (repairable) or mission_time (non-repairable), in the diagram unit;
    replications or precision (relative 95% half-width of the mean unavailability to reach,
    repairable only) up to max_replications; seed; grid points of the curve; method `auto`
    (closed form where exact), `simulation` (always simulate) or `failure_biasing`
    (repairable: steady-state unavailability, no horizon and no curve; replications are
    regenerative cycle pairs)."""

    horizon: float | None
    mission_time: float | None
    replications: int | None
    precision: float | None
    max_replications: int
    seed: int
    grid: int
    method: str
    # Variance reduction of a repairable simulation (`engine.VARIANCE_REDUCTION`).
    variance_reduction: str = "none"

    def to_dict(self) -> dict[str, Any]:
        # "none" is left out: the stored options (and so the inputs' hash) of every plain run
        # stay what they were before the option existed.
        d = asdict(self)
        if d["variance_reduction"] == "none":
            del d["variance_reduction"]
        return d


def check_options(repairable: bool, raw: Mapping[str, Any], phases_end: float | None = None) -> RunOptions:
    """Validated options; the one of horizon / mission_time the diagram needs is required.
    A phased mission (`phases_end`: the phases' total duration, `engine.phases_end`) is the
    phases: mission_time may be omitted (it is their total), and another value is refused,
    so the per-phase table and the mission's reliability describe one mission."""
    method = raw.get("method", "auto")
    if method not in METHODS:
        raise InputError("method", f"must be one of {', '.join(METHODS)}")
    reduction = raw.get("variance_reduction")
    if reduction is not None and (method == rare.METHOD or not repairable):
        raise InputError("variance_reduction", "only for a repairable diagram's simulation (not failure_biasing, "
                                               "not a mission)")
    if method == rare.METHOD:
        return _rare_options(repairable, raw)
    horizon = mission = None
    if repairable:
        if raw.get("mission_time") is not None:
            raise InputError("mission_time", "a repairable diagram is analysed over a horizon: give horizon")
        if raw.get("horizon") is None:
            raise InputError("horizon", "required for a repairable diagram (time span in the diagram unit)")
        horizon = number(0.0, lo_open=True)(raw["horizon"], "horizon")
    else:
        if raw.get("horizon") is not None:
            raise InputError("horizon", "a non-repairable diagram is analysed over a mission: give mission_time")
        if raw.get("mission_time") is None and phases_end is not None:
            mission = phases_end
        elif raw.get("mission_time") is None:
            raise InputError("mission_time", "required for a non-repairable diagram (in the diagram unit)")
        else:
            mission = number(0.0, lo_open=True)(raw["mission_time"], "mission_time")
        if phases_end is not None and mission != phases_end:
            raise InputError("mission_time", f"must equal the phases' total duration {phases_end:g} "
                                             f"(got {mission:g}); omit it to use the phases")
    reps = None if raw.get("replications") is None else integer(1, 10_000_000)(raw["replications"], "replications")
    precision = None
    if raw.get("precision") is not None:
        if not repairable:
            raise InputError("precision", "only for repairable diagrams (give replications)")
        if reps is not None:
            raise InputError("precision", "give replications or precision, not both")
        precision = number(0.0, 1.0, lo_open=True, hi_open=True)(raw["precision"], "precision")
    max_reps = integer(2, 10_000_000)(raw.get("max_replications", 100_000), "max_replications")
    if reps is None and precision is None:
        reps = DEFAULT_REPLICATIONS[repairable]
    return RunOptions(
        horizon=horizon,
        mission_time=mission,
        replications=reps,
        precision=precision,
        max_replications=max_reps,
        seed=integer(0, 2**63 - 1)(raw.get("seed", 1), "seed"),
        grid=integer(2, 2001)(raw.get("grid", 101), "grid"),
        method=method,
        variance_reduction=enum(*engine.VARIANCE_REDUCTION)(reduction or "none", "variance_reduction"),
    )


def _rare_options(repairable: bool, raw: Mapping[str, Any]) -> RunOptions:
    """Options of a failure-biasing run: a steady-state figure, so no horizon and no curve."""
    if not repairable:
        raise InputError("method", f"{rare.METHOD} estimates a repairable diagram's steady-state unavailability; "
                                   "this diagram is not repairable")
    for key in ("horizon", "mission_time", "grid"):
        if raw.get(key) is not None:
            raise InputError(key, f"{rare.METHOD} estimates the long-run (steady-state) unavailability: no horizon "
                                  "and no curve; omit it")
    reps = None if raw.get("replications") is None else integer(2, 10_000_000)(raw["replications"], "replications")
    precision = None
    if raw.get("precision") is not None:
        if reps is not None:
            raise InputError("precision", "give replications or precision, not both")
        precision = number(0.0, 1.0, lo_open=True, hi_open=True)(raw["precision"], "precision")
    if reps is None and precision is None:
        reps = rare.DEFAULT_CYCLES
    return RunOptions(
        horizon=None,
        mission_time=None,
        replications=reps,
        precision=precision,
        max_replications=integer(2, 10_000_000)(raw.get("max_replications", 1_000_000), "max_replications"),
        seed=integer(0, 2**63 - 1)(raw.get("seed", 1), "seed"),
        grid=0,
        method=rare.METHOD,
    )


def check_runnable(d: Mapping[str, Any], repairable: bool) -> None:
    """Everything an analysis refuses about a resolved (engine-form) diagram whatever its run
    options: the engine's field checks, its compile (shape) and the settings the diagram's
    kind of run cannot honour. `plan` starts with it, and the service runs it on every create
    and edit, so a diagram that is stored is one that analyses, with the same refusals."""
    engine.check_run_kind(d, repairable=repairable)
    try:
        engine.compile_diagram(d)
    except engine.EngineError as e:
        raise InputError("diagram", str(e)) from None


def plan(d: Mapping[str, Any], repairable: bool, opts: RunOptions, crews: int = 0) -> dict[str, Any]:
    """What an analysis will do: {method: closed_form | simulation | failure_biasing,
    reason, quote}. Checks the diagram first (`check_runnable`, and for failure biasing
    that the diagram is Markovian, naming `method`), so a bad one is refused before queueing."""
    check_runnable(d, repairable)
    if opts.method == rare.METHOD:
        rare.check(d, crews)
        reps = opts.replications if opts.replications is not None else opts.max_replications
        q = rare.quote(d, replications=reps)
        return {"method": rare.METHOD, "reason": "repairable, Markovian: steady-state unavailability by regenerative "
                                                 "simulation with balanced failure biasing", "quote": q.to_dict()}
    if not repairable:
        ex = exact.structure(d)
        if ex.exact and opts.method == "auto":
            return {"method": "closed_form", "reason": ex.reason, "quote": None}
        reason = ex.reason if not ex.exact else "simulation asked for (method: simulation)"
        q = quote(d, replications=opts.replications or 0, horizon=None)
        return {"method": "simulation", "reason": reason, "quote": q.to_dict()}
    reps = opts.replications if opts.replications is not None else opts.max_replications
    q = quote(d, replications=reps, horizon=opts.horizon)
    return {"method": "simulation", "reason": "repairable: availability by Monte Carlo", "quote": q.to_dict()}


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def closed_form(d: Mapping[str, Any], opts: RunOptions) -> dict[str, Any]:
    """Exact R(t) over [0, mission_time], R at the mission end and the MTTF."""
    ex = exact.structure(d)
    if not ex.exact or ex.formula is None:
        raise InputError("method", f"no closed form: {ex.reason}")
    assert opts.mission_time is not None
    t = np.linspace(0.0, opts.mission_time, opts.grid)
    r = exact.evaluate(ex.formula, t)
    end = float(r[-1])
    results = {
        "exact": True,
        "reliability": end,
        "reliability_interval": [end, end],
        "probability_of_failure": 1.0 - end,
        "mttf": _finite(exact.mttf(ex.formula)),
        "mission_time": opts.mission_time,
        "note": f"{ex.reason}; no simulation ran",
    }
    curve = {"t": t.tolist(), "reliability": r.tolist(), "lower": r.tolist(), "upper": r.tolist()}
    return {"results": results, "curve": curve, "precision": {"exact": True}}


def simulate(d: Mapping[str, Any], repairable: bool, opts: RunOptions, crews: int = 0,
             threads: int | None = None, control: engine.RunControl | None = None,
             cluster: Any = None) -> dict[str, Any]:
    """Run the engine (blocking; the engine releases the GIL, so call it on a thread).
    `control` cancels it from another thread (engine.Cancelled) and counts its progress;
    `cluster` (a dask client, cluster or scheduler address) runs it there in chunks (a
    failure-biasing run is not split: it always runs here)."""
    try:
        if opts.method == rare.METHOD:
            return rare.run(d, crews=crews, replications=opts.replications, precision=opts.precision,
                            max_replications=opts.max_replications, seed=opts.seed, threads=threads,
                            control=control)
        if repairable:
            assert opts.horizon is not None
            a = engine.simulate_availability(
                d, horizon=opts.horizon, replications=opts.replications, target_half_width=opts.precision,
                max_replications=opts.max_replications, seed=opts.seed, grid=opts.grid, crews=crews, threads=threads,
                control=control, cluster=cluster, variance_reduction=opts.variance_reduction,
            )
            body = a.to_dict(include_curve=True)
            curve = body.pop("curve")
            precision = {"replications": a.replications, "relative_half_width": _finite(a.relative_half_width),
                         "target": a.target_half_width, "target_reached": a.target_reached}
            return {"results": _clean(body), "curve": _clean(curve), "precision": precision,
                    "warnings": coinciding_warnings(a, d.get("unit"))}
        assert opts.mission_time is not None and opts.replications is not None
        m = engine.simulate_mission(d, mission_time=opts.mission_time, replications=opts.replications,
                                    seed=opts.seed, grid=opts.grid, threads=threads, control=control,
                                    cluster=cluster)
        body = m.to_dict()
        curve = body.pop("curve")
        half = (m.probability_of_failure_interval[1] - m.probability_of_failure_interval[0]) / 2.0
        body["exact"] = False
        body["reliability"] = 1.0 - m.probability_of_failure
        body["reliability_interval"] = [1.0 - m.probability_of_failure_interval[1],
                                        1.0 - m.probability_of_failure_interval[0]]
        precision = {"replications": m.replications, "half_width_probability_of_failure": half}
        return {"results": _clean(body), "curve": _clean(curve), "precision": precision}
    except engine.EngineError as e:
        raise InputError("diagram", str(e)) from None


def coinciding_warnings(a: engine.AvailabilityResult, unit: str | None) -> list[str]:
    """A warning per set of redundant blocks whose calendar replacements coincide (they
    stop together and take the system down), with what the run's planned outages cost:
    hours (diagram unit) per horizon and share of the system's downtime."""
    u = f" {unit}" if unit else ""
    down = (1.0 - a.mean_availability) * a.horizon
    share = a.planned_downtime / down if down > 0 else 0.0
    return [f"Planned replacements coincide on redundant blocks {', '.join(ids)}: on one calendar interval they "
            f"stop together and take the system down; planned outages cost {a.planned_downtime:.4g}{u} of system "
            f"downtime per {a.horizon:.6g}{u} horizon ({100 * share:.3g}% of the system's downtime). Give them "
            f"different intervals to keep the redundancy during planned work."
            for ids in a.coinciding_preventive]


def _clean(x: Any) -> Any:
    """JSON-ready: NaN and infinities (no figure) become null."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def analyze(
    diagram: Mapping[str, Any],
    *,
    models: Mapping[str, Mapping[str, Any]] | None = None,
    diagrams: Mapping[str, Mapping[str, Any]] | None = None,
    threads: int | None = None,
    control: engine.RunControl | None = None,
    cluster: Any = None,
    **options: Any,
) -> dict[str, Any]:
    """What the service's `rbd_analysis analyze` computes, without a server: check the
    diagram, resolve saved `models` / subsystem `diagrams` (bodies by id), plan, and run in
    closed form or by simulation. `options` as `check_options` takes them (horizon or
    mission_time, replications or precision, seed, grid, method: auto, simulation or
    failure_biasing). `control` (engine.RunControl)
    cancels a simulation from another thread and reports its progress; `cluster` runs it on a
    dask cluster (`bathtub.engine.scaleout`) with the same numbers. Returns {method, reason, quote,
    results, curve, precision, warnings} (warnings: covariate values clipped to a saved
    regression model's fitted range)."""
    body = check_diagram(diagram)
    warnings: list[str] = []
    resolved = engine_form(body, models or {}, diagrams or {}, warnings=warnings)
    opts = check_options(body["repairable"], options, phases_end=engine.phases_end(resolved))
    crews = int(body.get("repair_crews", 0))
    what = plan(resolved, body["repairable"], opts, crews)
    if what["method"] == "closed_form":
        out = closed_form(resolved, opts)
    else:
        out = simulate(resolved, body["repairable"], opts, crews=crews, threads=threads,
                       control=control, cluster=cluster)
    return {**what, **out, "warnings": warnings + out.get("warnings", [])}
