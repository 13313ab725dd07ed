"""Parameter uncertainty carried through a diagram: a two-level Monte Carlo.

The outer loop draws a parameter set for every saved fitted model a block's life or repair
names (`bathtub.models.draws`: normal on the fit's unconstrained scale with its covariance;
the exact chi-squared law for a complete-data exponential; a regression's coefficients, with
a Cox model's Breslow baseline given them; Crow's exact law for a power law, the rate's
chi-squared pivot for an HPP, the covariance of a Kijima GRP's (alpha, beta, q)), and a block on a
drawn regression record takes its life at its covariates as usual; the inner loop analyses the
diagram on that draw, by the engine's replications (`replications_per_draw` of them) or, for a non-repairable
diagram that has a closed form, exactly. A model named by several blocks is one draw for all
of them: they share the fitted parameters, so their uncertainty is shared too.

Streams: model m's draw i comes from `SeedSequence([seed, crc32(m)])`'s child i and draw i's
replications from the engine seed `SeedSequence([seed, 1, i])` gives, so draw i depends on
(seed, i) only: the same numbers on any thread count, on a dask cluster (each draw's run is
spread there in chunks, `bathtub.engine.scaleout`) and when draws [0, k) and [k, n) are run
apart and merged (`merge`).

What a figure reports over the draws (`summary`):
- `interval`: the 5th and 95th percentiles of the per-draw figure (the parameter-uncertainty
  interval, 90%); each per-draw figure carries its own simulation noise, so a small `replications_per_draw`
  widens it: the shares below say how much;
- `parameter_variance` / `simulation_variance`: the law of total variance over draws,
  Var(Y_i) = Var(E[Y | theta]) + E[Var(Y_i | theta)], with the second term estimated by the
  mean of each draw's squared standard error (unbiased) and subtracted, floored at 0;
  `parameter_share` is the first over their sum (null for a figure whose run gives no
  standard error, such as the MTBF);
- by block (`sources`): the first-order share of the headline figure's parameter variance
  due to each saved model, estimated from the same draws (no extra runs) by a linear
  regression of the figure on that model's drawn coordinates (the fit's unconstrained scale)
  with the adjusted R² (so chance fit to simulation noise is taken out): a linear first-order
  (Sobol-like) share. Shares need not add to 1 (non-linear effects, interactions); they are
  null when no parameter variance is left once the simulation's is taken out (raise `replications_per_draw`).

Blocks on inline (not fitted) models have no parameter uncertainty: they are listed under
`fixed_blocks` with share 0. A saved model whose kind has no sampling distribution to draw
(`bathtub.models.draws` says which: non-parametric, degradation, a record saved before its fit
stored a covariance) is refused naming the block's field.
"""

from __future__ import annotations

import math
import threading
import zlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from bathtub import engine, inference
from bathtub.errors import InputError
from bathtub.models import draws
from bathtub.rbd import blocks as rbd_blocks
from bathtub.rbd.analysis import RunOptions, check_options, closed_form, plan, simulate
from bathtub.rbd.diagram import check_diagram
from bathtub.rbd.quote import quote
from bathtub.rbd.resolve import engine_form
from bathtub.rbd.schema import integer
from bathtub.rbd.states import with_initial_states
from bathtub.validate import check_enum

MODES = ("none", "parameters")
DEFAULT_DRAWS = 100
DEFAULT_REPLICATIONS_PER_DRAW = {True: 200, False: 1000}
MAX_DRAWS = 5000
MAX_WORK = 100_000_000  # draws x replications_per_draw replications, the most one analysis runs
# What a saved model keeps in a run's inputs: what resolution and drawing read (not its curves).
MODEL_KEYS = ("kind", "distribution", "base_distribution", "options", "params", "covariance", "n", "n_failures",
              "unit", "method",  # method: only an MLE from exact failures takes the exponential's exact law
              # a regression block's life at its covariates and its draw (Cox: baseline and Breslow terms)
              "coefficients", "design", "means", "strata_column", "baseline", "breslow_terms", "mu", "sigma", "gamma",
              # a power law's exact draw, the covariates that keep it from being one block's life, and
              # an HPP's stopping rule (failure-terminated: the exact pivot)
              "sampling", "covariate_effects", "termination")
# figure -> (its standard-error key in the results or None, unit: "fraction", "count" or "time")
FIGURES = {
    True: {"mean_availability": ("mean_availability_std_error", "fraction"),
           "expected_failures": ("expected_failures_std_error", "count"),
           "mtbf": (None, "time"), "mttr": (None, "time")},
    False: {"reliability": ("binomial", "fraction"), "mttf": ("mttf_std_error", "time")},
}
HEADLINE = {True: "mean_availability", False: "reliability"}


@dataclass(frozen=True)
class UncertaintyOptions:
    """`draws` parameter draws, each analysed with `replications_per_draw` replications (ignored where the
    diagram answers in closed form)."""

    draws: int
    replications_per_draw: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_uncertainty(raw: Mapping[str, Any], repairable: bool) -> UncertaintyOptions | None:
    """The run's uncertainty options from `raw` (uncertainty, draws, replications_per_draw, with the run's
    method and precision); None for `uncertainty: none`."""
    mode = check_enum(raw.get("uncertainty", "none"), "uncertainty", MODES)
    if mode == "none":
        for key in ("draws", "replications_per_draw"):
            if raw.get(key) is not None:
                raise InputError(key, "only with uncertainty: parameters")
        return None
    if raw.get("method") == "failure_biasing":
        raise InputError("method", "failure_biasing does not take uncertainty: parameters (give method auto or "
                                   "simulation)")
    if raw.get("precision") is not None:
        raise InputError("precision", "not with uncertainty: parameters (each parameter draw runs "
                                      "`replications_per_draw` replications: give replications and "
                                      "replications_per_draw)")
    draws = integer(2, MAX_DRAWS)(raw.get("draws", DEFAULT_DRAWS), "draws")
    per_draw = integer(2, 10_000_000)(raw.get("replications_per_draw", DEFAULT_REPLICATIONS_PER_DRAW[repairable]),
                                      "replications_per_draw")
    if draws * per_draw > MAX_WORK:
        raise InputError("replications_per_draw", f"draws x replications_per_draw must be at most {MAX_WORK} "
                                                  f"replications (got {draws * per_draw})")
    return UncertaintyOptions(draws=draws, replications_per_draw=per_draw)


@dataclass
class Source:
    """One saved model the diagram's blocks draw from, and the block fields naming it."""

    model_id: str
    fields: list[str] = field(default_factory=list)
    form: dict[str, Any] = field(default_factory=dict)


def _walk(body: Mapping[str, Any], diagrams: Mapping[str, Mapping[str, Any]],
          prefix: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(field of a block's model, the model) for every block model, through subsystems."""
    for n in body["nodes"]:
        f = f"{prefix}nodes.{n['id']}"
        for key, m in rbd_blocks.node_models(n):
            yield f"{f}.{key}", m
        sub = n.get("subsystem_rbd_id")
        if sub and sub in diagrams:
            yield from _walk(diagrams[sub], diagrams, f"{f}.subsystem.")


def sources(body: Mapping[str, Any], models: Mapping[str, Mapping[str, Any]],
            diagrams: Mapping[str, Mapping[str, Any]]) -> tuple[list[Source], list[str]]:
    """The saved models to draw (ordered by id) and the block model fields on inline models
    (no parameter uncertainty). Refuses a saved model that cannot be drawn, naming the block's
    field, and a diagram with nothing to draw, naming `uncertainty`."""
    found: dict[str, Source] = {}
    fixed: list[str] = []
    for f, m in _walk(body, diagrams):
        mid = m.get("saved_model_id")
        if not mid:
            fixed.append(f)
            continue
        if "joint_unit" in m:
            raise InputError(f"{f}.joint_unit", "a joint unit's conditional life is not drawn under uncertainty: "
                                                "parameters (its record holds no sampling distribution to draw)")
        if mid not in models:
            raise InputError(f"{f}.saved_model_id", f"no saved model {mid}: uncertainty: parameters draws saved "
                                                    "fitted models only")
        if mid not in found:
            found[mid] = Source(mid, form=draws.sampling_form(models[mid], f"{f}.saved_model_id"))
        found[mid].fields.append(f)
    if not found:
        raise InputError("uncertainty", "no block's life or repair is a saved fitted model: there is no parameter "
                                        "uncertainty to carry (save a fit and name it by saved_model_id)")
    return [found[k] for k in sorted(found)], fixed


def model_stream_seed(seed: int, model_id: str) -> int:
    """The seed of model `model_id`'s draws in a run of `seed`."""
    return int(np.random.SeedSequence([seed, zlib.crc32(model_id.encode())]).generate_state(1, np.uint64)[0])


def draw_seed(seed: int, i: int) -> int:
    """The engine seed of draw i's replications (below 2**63, as the service's seeds)."""
    return int(np.random.SeedSequence([seed, 1, i]).generate_state(1, np.uint64)[0]) >> 1


def _figures(results: Mapping[str, Any], repairable: bool, replications: int | None) -> dict[str, list[Any]]:
    """{figure: [value, standard error or None]} from one draw's results."""
    out: dict[str, list[Any]] = {}
    for name, (se_key, _) in FIGURES[repairable].items():
        value = results.get(name)
        se: float | None
        if results.get("exact"):
            se = 0.0  # a closed form has no simulation noise
        elif se_key == "binomial":
            se = None if value is None or not replications else math.sqrt(value * (1 - value) / replications)
        else:
            se = results.get(se_key) if se_key else None
        out[name] = [value, se]
    return out


@contextmanager
def _linked(outer: engine.RunControl | None) -> Iterator[list[engine.RunControl]]:
    """A slot for the running draw's control, cancelled when `outer` is (watched every 0.1 s)."""
    slot: list[engine.RunControl] = [engine.RunControl()]
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.1):
            if outer is not None and outer.cancelled:
                slot[0].cancel()

    t = threading.Thread(target=watch, name="bathtub-outer-watch", daemon=True)
    t.start()
    try:
        yield slot
    finally:
        stop.set()
        t.join()


@contextmanager
def _one_client(cluster: Any) -> Iterator[Any]:
    """One dask client for every draw's run (an address is connected to once, not per draw)."""
    if cluster is None or not isinstance(cluster, str):
        yield cluster
        return
    from distributed import Client

    client = Client(cluster, set_as_default=False, timeout=30)
    try:
        yield client
    finally:
        client.close()


def draw_rows(body: Mapping[str, Any], models: Mapping[str, Mapping[str, Any]],
              diagrams: Mapping[str, Mapping[str, Any]], opts: RunOptions, unc: UncertaintyOptions, *,
              exact: bool, crews: int = 0, states: Mapping[str, Any] | None = None, first: int = 0,
              threads: int | None = None, control: engine.RunControl | None = None,
              cluster: Any = None) -> list[dict[str, Any]]:
    """Draws `first` .. `first + draws - 1`: per draw {index, figures: {name: [value, se]},
    coordinates: {model_id: [unconstrained values]}}. `exact`: the diagram answers in closed
    form (non-repairable, method auto), so each draw is exact."""
    srcs, _ = sources(body, models, diagrams)
    repairable = bool(body.get("repairable"))
    rows = []
    planned = unc.draws * (1 if exact else unc.replications_per_draw)
    with _linked(control) as slot, _one_client(cluster) as client:
        for i in range(first, first + unc.draws):
            if control is not None and control.cancelled:
                raise engine.Cancelled("the run was cancelled")
            drawn = dict(models)
            coords: dict[str, list[float]] = {}
            for s in srcs:
                values = draws.draw_values(s.form, draws.stream(model_stream_seed(opts.seed, s.model_id), i))
                coords[s.model_id] = [float(v) for v in draws.coordinates(s.form, values)]
                drawn[s.model_id] = draws.with_values(models[s.model_id], values)
            d = engine_form(body, drawn, diagrams)
            if states:
                d = with_initial_states(d, states, repairable=repairable)
            if exact:
                out = closed_form(d, opts)
            else:
                o = RunOptions(**{**opts.to_dict(), "replications": unc.replications_per_draw, "precision": None,
                                  "seed": draw_seed(opts.seed, i)})
                slot[0] = engine.RunControl()
                out = simulate(d, repairable, o, crews=crews, threads=threads, control=slot[0], cluster=client)
            rows.append({"index": i, "figures": _figures(out["results"], repairable, unc.replications_per_draw),
                         "coordinates": coords})
            if control is not None:
                control.report(len(rows) * (1 if exact else unc.replications_per_draw), planned)
    return rows


def merge(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows of two runs of adjacent draw ranges as one run's (refused if they overlap or
    leave a gap): a summary of the result is the whole run's to the bit."""
    rows = sorted([*a, *b], key=lambda r: r["index"])
    if [r["index"] for r in rows] != list(range(rows[0]["index"], rows[0]["index"] + len(rows))):
        raise InputError("merge", "the two runs' draws must be adjacent ranges (no gap, no overlap)")
    return [dict(r) for r in rows]


def _adjusted_r2(y: np.ndarray, x: np.ndarray) -> float:
    """The adjusted R² of y on [1, x] by least squares (0 when there are too few draws)."""
    n, p = x.shape
    if n <= p + 2 or float(np.var(y)) == 0.0:
        return 0.0
    a = np.column_stack([np.ones(n), x])
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    resid = y - a @ coef
    tss = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum(resid**2)) / tss
    return 1.0 - (1.0 - r2) * (n - 1) / (n - p - 1)


def _percentile(v: np.ndarray, q: float) -> float:
    return float(np.quantile(v, q))


def figure_summary(rows: Sequence[Mapping[str, Any]], name: str, unit: str) -> dict[str, Any]:
    """One figure over the draws: mean, 5th-95th percentile interval and the variance split."""
    pairs = [r["figures"][name] for r in rows if r["figures"][name][0] is not None]
    out: dict[str, Any] = {"unit": unit, "draws": len(pairs), "mean": None, "interval": None,
                           "total_variance": None, "parameter_variance": None, "simulation_variance": None,
                           "parameter_share": None, "simulation_share": None}
    if len(pairs) < 2:
        return out
    y = np.array([p[0] for p in pairs], dtype=float)
    total = float(np.var(y, ddof=1))
    out.update(mean=float(y.mean()), interval=[_percentile(y, 0.05), _percentile(y, 0.95)], total_variance=total)
    if all(p[1] is not None for p in pairs):
        sim = float(np.mean([float(p[1]) ** 2 for p in pairs]))
        par = max(0.0, total - sim)
        out.update(parameter_variance=par, simulation_variance=sim)
        if par + sim > 0:
            out.update(parameter_share=par / (par + sim), simulation_share=sim / (par + sim))
    return out


def summary(rows: Sequence[Mapping[str, Any]], body: Mapping[str, Any], models: Mapping[str, Mapping[str, Any]],
            diagrams: Mapping[str, Mapping[str, Any]], unc: UncertaintyOptions, *, exact: bool) -> dict[str, Any]:
    """What a run reports: per figure its parameter-uncertainty interval and variance split,
    and per saved model its first-order share of the headline figure's parameter variance."""
    repairable = bool(body.get("repairable"))
    unit_of = {"fraction": "fraction", "count": "failures per horizon", "time": body.get("unit") or "time units"}
    figures = {name: figure_summary(rows, name, unit_of[kind]) for name, (_, kind) in FIGURES[repairable].items()}
    head = HEADLINE[repairable]
    srcs, fixed = sources(body, models, diagrams)
    keep = [r for r in rows if r["figures"][head][0] is not None]
    y = np.array([r["figures"][head][0] for r in keep], dtype=float)
    par = figures[head]["parameter_variance"]
    total = figures[head]["total_variance"]
    by_source = []
    for s in srcs:
        x = np.array([r["coordinates"][s.model_id] for r in keep], dtype=float)
        explained = max(0.0, _adjusted_r2(y, x)) * (total or 0.0) if len(keep) else 0.0
        # no parameter variance left after the simulation's is taken out: no share to give
        share = min(1.0, explained / par) if par else None
        by_source.append({"model_id": s.model_id, "blocks": s.fields, "law": s.form["law"],
                          "share_of_parameter_variance": share})
    by_source.sort(key=lambda r: -(r["share_of_parameter_variance"] or 0.0))
    return {
        "mode": "parameters", "draws": len(rows), "replications_per_draw": None if exact else unc.replications_per_draw,
        "draw_method": "closed_form" if exact else "simulation",
        "first_draw": rows[0]["index"] if rows else 0,
        "interval_level": 0.90,
        "figures": figures,
        "headline": head,
        "sources": by_source,
        "fixed_blocks": fixed,
        "decomposition": "linear first-order share: adjusted R² of the headline figure on each saved model's "
                         "drawn parameters (the fit's unconstrained scale), over its parameter variance",
    }


def monte_carlo_interval(results: Mapping[str, Any], name: str, repairable: bool) -> list[float] | None:
    """The point run's 95% Monte Carlo interval of a figure: the run's own where it gives one,
    else value -/+ z·(its standard error); None for a figure the run gives no error for."""
    if results.get(f"{name}_interval") is not None:
        return [float(v) for v in results[f"{name}_interval"]]
    value = results.get(name)
    se_key = FIGURES[repairable][name][0]
    se = 0.0 if results.get("exact") else (results.get(se_key) if se_key and se_key != "binomial" else None)
    if value is None or se is None:
        return None
    half = inference.z(0.95) * float(se)
    return [float(value) - half, float(value) + half]


def parameter_section(body: Mapping[str, Any], models: Mapping[str, Mapping[str, Any]],
                      diagrams: Mapping[str, Mapping[str, Any]], opts: RunOptions, unc: UncertaintyOptions,
                      point: Mapping[str, Any], *, exact: bool, crews: int = 0,
                      states: Mapping[str, Any] | None = None, threads: int | None = None,
                      control: engine.RunControl | None = None, cluster: Any = None) -> dict[str, Any]:
    """A run's `uncertainty` section: the draws' `summary`, each figure with the point run's
    value and its Monte Carlo interval beside its parameter-uncertainty interval."""
    rows = draw_rows(body, models, diagrams, opts, unc, exact=exact, crews=crews, states=states, threads=threads,
                     control=control, cluster=cluster)
    out = summary(rows, body, models, diagrams, unc, exact=exact)
    repairable = bool(body.get("repairable"))
    for name, fig in out["figures"].items():
        fig["point"] = point.get(name)
        fig["monte_carlo_interval"] = monte_carlo_interval(point, name, repairable)
    return out


def uncertainty_quote(d: Mapping[str, Any], opts: RunOptions, unc: UncertaintyOptions, point: Mapping[str, Any] | None,
                      *, exact: bool) -> dict[str, Any]:
    """The plain run's quote plus the draws x replications_per_draw work (a closed-form draw costs about one
    engine compile: quoted as one replication)."""
    reps = 1 if exact else unc.replications_per_draw
    q = quote(d, replications=reps, horizon=opts.horizon)
    seconds = unc.draws * q.seconds + (float(point["seconds"]) if point else 0.0)
    replications = unc.draws * reps + (int(point["replications"]) if point else 0)
    return {"seconds": seconds, "replications": replications, "events_per_replication": q.events_per_replication,
            "basis": f"{q.basis}: the point run plus {unc.draws} parameter draws x {reps} "
                     f"{'closed-form evaluation' if exact else 'replications'}"}


def slim_models(models: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Saved model records cut to what resolving and drawing read (a run's stored inputs)."""
    return {k: {f: m[f] for f in MODEL_KEYS if f in m} for k, m in models.items()}


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
    """`bathtub.rbd.analyze` with `uncertainty` ("none" or "parameters"), `draws` and `replications_per_draw`
    among `options`: the plain analysis at the fits' point estimates (its numbers and Monte
    Carlo intervals as without uncertainty), and with parameters an `uncertainty` section
    (`summary`) from `draws` draws; the quote counts the draws x replications_per_draw work."""
    models = models or {}
    diagrams = diagrams or {}
    body = check_diagram(diagram)
    warnings: list[str] = []
    resolved = engine_form(body, models, diagrams, warnings=warnings)
    opts = check_options(body["repairable"], options, phases_end=engine.phases_end(resolved))
    unc = check_uncertainty(options, body["repairable"])
    crews = int(body.get("repair_crews", 0))
    what = plan(resolved, body["repairable"], opts, crews)
    exact = what["method"] == "closed_form"
    out = closed_form(resolved, opts) if exact else simulate(resolved, body["repairable"], opts, crews=crews,
                                                              threads=threads, control=control, cluster=cluster)
    result = {**what, **out, "warnings": warnings + out.get("warnings", [])}
    if unc is None:
        return result
    result["quote"] = uncertainty_quote(resolved, opts, unc, what["quote"], exact=exact)
    result["uncertainty"] = parameter_section(body, models, diagrams, opts, unc, out["results"], exact=exact,
                                              crews=crews, threads=threads, control=control, cluster=cluster)
    return result
