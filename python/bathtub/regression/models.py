"""Model records of fitted regression models, and their reliability for given covariates.

A record is plain JSON: coefficients, params, gof, validation, diagnostics, the design spec
that rebuilds a unit's covariate row, and what the curves need (Cox: the Breslow baseline
cumulative hazard per stratum at the covariate means; parametric: μ, σ and γ).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import special, stats

from bathtub import inference
from bathtub.errors import InputError, RowError
from bathtub.inference import standard_terms
from bathtub.regression import additive, cox, cox_sampling, design, parametric, zph
from bathtub.regression.record_parts import (
    BASELINE_MAX,
    NO_HAZARD,
    Request,
    Rows,
    check_time,
    chi2_test,
    coefficient_rows,
    fit_tests,
    thin_baseline,
    unit_design_row,
    validation_block,
)
from bathtub.validate import check_integer


def step_cumhaz(time: Sequence[float], cumhaz: Sequence[float], at: np.ndarray) -> np.ndarray:
    """A Breslow step baseline read at times `at` (0 before its first step). A stratum without events
    has no step at all: 0 everywhere (survival 1), as R's survfit(coxph) gives it."""
    at = np.asarray(at, dtype=float)
    if len(time) == 0:
        return np.zeros(at.shape)
    idx = np.searchsorted(np.asarray(time, dtype=float), at, side="right") - 1
    return np.where(idx >= 0, np.asarray(cumhaz, dtype=float)[np.maximum(idx, 0)], 0.0)


def cox_record(fit: cox.CoxFit, d: design.Design, rows: Rows, confidence: float, transform: str,
               options: dict[str, Any]) -> dict[str, Any]:
    p = fit.beta.size
    coefficients = coefficient_rows(fit.names, fit.beta, fit.var, fit.robust_var, confidence, "hazard ratio")
    gof = fit_tests(fit.loglik, fit.loglik0, p, fit.n_events, fit.beta, fit.var, fit.score_test, partial=True)
    efron = fit.ties == "efron"
    gtime = zph.transform_times(transform, rows.start, rows.stop, rows.event)
    ph = zph.verdict(zph.ph_test(fit.prepared, fit.beta, fit.names, efron, gtime), transform)
    if fit.ties in ("exact", "kalbfleisch-prentice"):
        ph["note"] = "residuals at the fitted coefficients with Breslow's risk-set averages (as cox.zph does)"
    baseline = []
    levels = fit.strata or [None]
    for level, b in zip(levels, fit.baseline):
        time, cumhaz, thinned = thin_baseline(b["time"], b["cumhaz"])
        entry = {"stratum": level, "time": time, "cumhaz": cumhaz}
        if thinned:
            entry["thinned_from"] = thinned
        baseline.append(entry)
    beta = fit.beta
    means = fit.means

    def surv_at(keep: np.ndarray, t: np.ndarray) -> np.ndarray:
        h0 = np.zeros((keep.size, t.size))
        for k, b in enumerate(fit.baseline):
            mine = fit.strata_index[keep] == k
            h0[mine] = step_cumhaz(b["time"], b["cumhaz"], t)[None, :]
        return np.exp(-h0 * np.exp(fit.linear_predictor[keep])[:, None])

    robust: dict[str, Any]
    if fit.robust_var is not None:
        by = options.get("cluster_column") or ("item column" if rows.item is not None else "row")
        robust = {"available": True, "clustered_by": by, "n_clusters": fit.n_clusters,
                  "method": "sandwich V·(Σ_clusters D_cᵀD_c)·V from score residuals, as R's coxph robust variance"}
        if fit.n_clusters is not None and fit.n_clusters > p:
            rwald = float(beta @ np.linalg.solve(fit.robust_var, beta))
            robust["wald_test"] = {"statistic": rwald, "df": p, "p": float(stats.chi2.sf(rwald, p))}
        else:
            robust["wald_test"] = None
            robust["note"] = (f"{fit.n_clusters} clusters for {p} coefficients: the robust covariance has rank at "
                              "most the cluster count, so no joint robust test; few clusters make robust SEs rough")
    else:
        robust = {"available": False, "reason": "robust standard errors are computed for efron and breslow ties"}
    tied_times = sum(int(np.sum(s.deaths > 1)) for s in fit.prepared)
    tied_events = sum(int(np.sum(s.deaths[s.deaths > 1])) for s in fit.prepared)
    diagnostics = {"ph_test": ph, "robust": robust,
                   "ties": {"method": fit.ties, "tied_event_times": tied_times, "events_in_ties": tied_events,
                            "reading": "no tied event times: every tie method gives the same fit" if not tied_times
                            else f"{tied_events} events share {tied_times} times; {fit.ties} handles them"}}
    if fit.strata:
        per_level = [{"level": lv, "n": int(np.sum(fit.strata_index == k)),
                    "events": int(np.sum(rows.event[fit.strata_index == k]))} for k, lv in enumerate(fit.strata)]
        empty = [lv["level"] for lv in per_level if lv["events"] == 0]
        diagnostics["strata"] = {"column": options.get("strata_column"), "levels": per_level, "without_events": empty}
        if empty:  # fitted as R's coxph does; said, since such a stratum's curve is flat by construction
            diagnostics["strata"]["reading"] = (
                f"{len(empty)} of {len(per_level)} strata had no failures ({', '.join(map(repr, empty))}): they add "
                "nothing to the partial likelihood and their baseline survival is 1 at every age (the data "
                "show no failure there, not that none will occur)")
    return {"kind": "regression", "distribution": "cox", "n": fit.n, "n_events": fit.n_events,
            "params": [], "coefficients": coefficients, "metrics": None, "gof": gof,
            "validation": validation_block(fit.linear_predictor, rows, fit.strata_index, surv_at),
            "diagnostics": diagnostics, "design": d.spec, "means": means.tolist(),
            "baseline": baseline, "baseline_estimator": "breslow", "cox_options": options,
            # what an outer Monte Carlo loop draws: the coefficients' covariance and the Breslow terms
            "covariance": {"names": list(fit.names), "matrix": np.asarray(fit.var, dtype=float).tolist()},
            "breslow_terms": cox_sampling.breslow_terms(fit),
            "strata_column": options.get("strata_column"), "iterations": fit.iterations,
            "counting_process": rows.start is not None}


def cox_fit(req: Request) -> dict[str, Any]:
    """A Cox model of a request: ties, strata and clusters from its cox_options."""
    columns, d, rows, cox_options = req.columns, req.d, req.rows, req.cox_options
    ties = cox_options.get("tie_method", "efron")
    strata = cluster = None
    if cox_options.get("strata_column") is not None:
        strata = [design.level_label(v) for v in design.column_values(columns, cox_options["strata_column"],
                                                                      "cox_options.strata_column")]
        used = d.spec.get("covariates") or [*d.spec.get("numeric", []), *d.spec.get("categorical", {})]
        if cox_options["strata_column"] in used:
            raise InputError("cox_options.strata_column", "is also a covariate; a stratum gets its own "
                                                          "baseline and no coefficient")
    if cox_options.get("cluster_column") is not None:
        cluster = design.column_values(columns, cox_options["cluster_column"], "cox_options.cluster_column")
        if ties not in ("efron", "breslow"):
            raise InputError("cox_options.cluster_column", "robust standard errors are computed for efron and "
                                                           "breslow ties (R's coxph refuses them for exact ties)")
    fit = cox.fit_cox(d.x, d.names, rows.stop, rows.event, start=rows.start, strata=strata,
                      cluster=cluster if cluster is not None else (rows.item if ties in ("efron", "breslow")
                                                                   else None),
                      ties=ties, field_names={"design": req.field, "time": rows.fields["time"], "event": "mapping.c"})
    return cox_record(fit, d, rows, req.confidence, req.transform,
                      {"tie_method": ties, "strata_column": cox_options.get("strata_column"),
                       "cluster_column": cox_options.get("cluster_column")})


def parametric_record(distribution: str, d: design.Design, rows: Rows, confidence: float, transform: str,
                      formula: bool, clock: str) -> dict[str, Any]:
    """The record of a weibull_ph (`clock` "hazard": coefficients are log hazard ratios, tested for PH) or
    AFT model (`clock` "time": log time ratios)."""
    field = "formula" if formula else "covariates"
    ph_model = clock == "hazard"
    fit = parametric.fit_parametric(distribution, d.x, rows.stop, rows.event, rows.start, field)
    p = fit.gamma.size
    zq = inference.z(confidence)
    cov = fit.cov
    if ph_model:
        coef, var = parametric.ph_coefficients(fit)
        kind = "hazard ratio"
        risk = d.x @ coef
    else:
        coef, var = fit.gamma, cov[2:, 2:]
        kind = "time ratio"
        risk = -(d.x @ coef)
    coefficients = coefficient_rows(d.names, coef, var, None, confidence, kind)
    se_mu, se_ls = math.sqrt(cov[0, 0]), math.sqrt(cov[1, 1])
    if parametric.FAMILIES[distribution] == "normal":  # the lognormal's own parameters are log-time mu, sigma
        params = [inference.row("mu", fit.mu, se_mu, zq=zq),
                  inference.row("sigma", fit.sigma, se_ls, scale="log", zq=zq)]
    else:
        # alpha = e^mu and beta = 1/sigma: ln alpha = mu and ln beta = -ln sigma share their se
        params = [inference.row("alpha", math.exp(fit.mu), se_mu, scale="log", zq=zq),
                  inference.row("beta", 1.0 / fit.sigma, se_ls, scale="log", zq=zq)]
    for prm in params:
        prm["at"] = "every covariate 0"
    gof = fit_tests(fit.loglik, fit.loglik0, p + 2, fit.n, coef, var, None, partial=False)
    eta = d.x @ fit.gamma
    strata = np.zeros(fit.n, dtype=np.int64)
    record = {"kind": "regression", "distribution": distribution, "n": fit.n, "n_events": fit.n_events,
              "params": params, "coefficients": coefficients, "metrics": None, "gof": gof,
              "validation": validation_block(risk, rows, strata,
                                             lambda keep, t: parametric.survival(distribution, fit.mu, fit.sigma,
                                                                                 eta[keep], t)),
              "design": d.spec, "mu": fit.mu, "sigma": fit.sigma, "gamma": fit.gamma.tolist(),
              "counting_process": rows.start is not None,
              # the joint covariance on the fit's own scale (mu, log sigma, gamma): what a two-level run draws
              "covariance": {"names": ["mu", "log_sigma", *d.names], "matrix": np.asarray(cov, dtype=float).tolist()}}
    if ph_model:
        ph = cox_ph_test(d, rows, transform, field, "Weibull PH")
    else:
        ph = {"available": False, "reason": "an accelerated-failure-time model does not assume proportional hazards"}
    record["diagnostics"] = {"ph_test": ph}
    return record


def cox_ph_test(d: design.Design, rows: Rows, transform: str, field: str, model: str) -> dict[str, Any]:
    """The proportional-hazards test of a parametric PH model: the scaled-Schoenfeld test on the Cox fit of
    the same design, which shares the assumption."""
    cfit = cox.fit_cox(d.x, d.names, rows.stop, rows.event, start=rows.start, field_names={"design": field})
    gtime = zph.transform_times(transform, rows.start, rows.stop, rows.event)
    ph = zph.verdict(zph.ph_test(cfit.prepared, cfit.beta, d.names, True, gtime), transform)
    ph["note"] = f"tested on the Cox model of the same covariates (Efron ties): the assumption {model} shares"
    return ph


def additive_record(d: design.Design, rows: Rows, confidence: float, formula: bool) -> dict[str, Any]:
    field = "formula" if formula else "covariates"
    fit = additive.fit_additive(d.x, rows.stop, rows.event, rows.start, field)
    coefficients = coefficient_rows(d.names, fit.beta, fit.cov, None, confidence, "excess hazard rate")
    for c in coefficients:  # an additive effect is a rate per unit time, not a ratio
        c["exp_coef"] = None
        c["exp_ci"] = None
        c["reading"] = (f"each unit of {c['name']} changes the hazard rate by {c['value']:+.4g} failures per "
                        "unit time, whatever the age")
    p = fit.beta.size
    wald = float(fit.beta @ np.linalg.solve(fit.cov, fit.beta))
    grid, drift = fit.grid, fit.drift
    thinned = None
    if grid.size > 4 * BASELINE_MAX:
        keep = np.unique(np.concatenate([np.linspace(0, grid.size - 1, 4 * BASELINE_MAX).astype(int),
                                         [grid.size - 1]]))
        grid, drift, thinned = grid[keep], drift[keep], int(fit.grid.size)
    lp = d.x @ fit.beta

    def surv_at(keep: np.ndarray, t: np.ndarray) -> np.ndarray:
        base = additive.baseline_at(fit.grid, fit.drift, fit.times, fit.jumps, t)
        return np.clip(np.exp(-(base[None, :] + lp[keep][:, None] * t[None, :])), 0.0, 1.0)

    record = {"kind": "regression", "distribution": "additive_hazards", "n": fit.n, "n_events": fit.n_events,
              "params": [], "coefficients": coefficients, "metrics": None,
              "gof": [chi2_test("wald_test", "Wald test (all coefficients 0), Lin–Ying sandwich variance", wald, p)],
              "validation": validation_block(lp, rows, np.zeros(fit.n, dtype=np.int64), surv_at),
              "diagnostics": {"ph_test": {"available": False, "reason": "an additive hazards model adds effects to "
                                                                      "the hazard; it does not assume proportional "
                                                                      "hazards"}},
              "design": d.spec, "beta": fit.beta.tolist(),
              "baseline": {"time": fit.times.tolist(), "jumps": fit.jumps.tolist(), "grid": grid.tolist(),
                           "drift": drift.tolist(), **({"thinned_from": thinned} if thinned else {})},
              "baseline_estimator": "Lin–Ying: Σ dN/Y − ∫ z̄β dt", "counting_process": rows.start is not None}
    return record


# ---- use ----------------------------------------------------------------------------------------------

def _cox_curve(record: Mapping[str, Any], covariates: Mapping[str, Any] | None) -> tuple[np.ndarray, np.ndarray]:
    xrow, k = unit_design_row(record, covariates)
    coef = np.array([c["value"] for c in record["coefficients"]])
    risk = math.exp(float((xrow - np.asarray(record["means"])) @ coef))
    b = record["baseline"][k]
    return np.asarray(b["time"], dtype=float), np.asarray(b["cumhaz"], dtype=float) * risk


def _additive_cum(record: Mapping[str, Any], covariates: Mapping[str, Any] | None, t: np.ndarray) -> np.ndarray:
    xrow, _ = unit_design_row(record, covariates)
    b = record["baseline"]
    base = additive.baseline_at(np.asarray(b["grid"]), np.asarray(b["drift"]), np.asarray(b["time"]),
                                np.asarray(b["jumps"]), t)
    return base + float(xrow @ np.asarray(record["beta"])) * t


def _no_hazard(t: float, h: float) -> dict[str, Any]:
    s = math.exp(-h)
    return {"t": t, "reliability": s, "failure": 1.0 - s, "hazard": None, "cumulative_hazard": h,
            "density": None, "null_reason": {"hazard": NO_HAZARD, "density": NO_HAZARD}}


def additive_at(record: Mapping[str, Any], t: Any, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """{t, reliability, failure, hazard, cumulative_hazard, density} of an additive-hazards unit."""
    t = check_time(t)
    h = float(_additive_cum(record, covariates, np.array([t]))[0])
    s = min(1.0, math.exp(-h))
    out = {"t": t, "reliability": s, "failure": 1.0 - s, "hazard": None, "cumulative_hazard": h,
           "density": None, "null_reason": {"hazard": NO_HAZARD, "density": NO_HAZARD}}
    if h < 0:
        out["warning"] = ("the fitted cumulative hazard is negative here for these covariates (an additive "
                          "model can go below zero outside the data): reliability shown as 1")
    return out


def cox_at(record: Mapping[str, Any], t: Any, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """The same for a Cox unit: its stratum's Breslow step survival."""
    t = check_time(t)
    times, cum = _cox_curve(record, covariates)
    idx = int(np.searchsorted(times, t, side="right")) - 1
    return _no_hazard(t, float(cum[idx]) if idx >= 0 else 0.0)


def parametric_at(record: Mapping[str, Any], t: Any, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """The same for a weibull_ph or AFT unit (log-time location μ + xγ, scale σ)."""
    t = check_time(t)
    xrow, _ = unit_design_row(record, covariates)
    dist, mu, sigma = record["distribution"], record["mu"], record["sigma"]
    eta = float(xrow @ np.asarray(record["gamma"]))
    s = float(parametric.survival(dist, mu, sigma, np.array([eta]), np.array([t]))[0, 0])
    hz, dens = parametric.hazard_density(dist, mu, sigma, eta, np.array([t if t > 0 else 1e-300]))
    return {"t": t, "reliability": s, "failure": 1.0 - s, "hazard": float(hz[0]),
            "cumulative_hazard": -math.log(s) + 0.0 if s > 0 else math.inf, "density": float(dens[0])}


def _quantile(record: Mapping[str, Any], eta: float, q: float) -> float:
    dist = parametric.FAMILIES[record["distribution"]]
    z = {"extreme": math.log(-math.log(1 - q)), "normal": float(special.ndtri(q)),
         "logistic": math.log(q / (1 - q))}[dist]
    return math.exp(record["mu"] + eta + record["sigma"] * z)


def additive_curves(record: Mapping[str, Any], points: int, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """Whole curves {x, sf, ff, hf, Hf, df} of an additive-hazards unit."""
    points = check_integer(points, "points", 2, 10_000)
    b = record["baseline"]
    x = np.unique(np.concatenate([[0.0], b["time"], np.linspace(0.0, b["grid"][-1], points)]))
    cum = _additive_cum(record, covariates, x)
    s = np.clip(np.exp(-cum), 0.0, 1.0)
    nulls = [None] * x.size
    return {"x": x.tolist(), "sf": s.tolist(), "ff": (1 - s).tolist(), "hf": nulls, "Hf": cum.tolist(),
            "df": nulls, "null_reason": {"hf": NO_HAZARD, "df": NO_HAZARD}}


def cox_curves(record: Mapping[str, Any], points: int, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """The same for a Cox unit (a step curve: `points` is checked, the steps are the baseline's)."""
    check_integer(points, "points", 2, 10_000)
    times, cum = _cox_curve(record, covariates)
    x = [0.0, *times.tolist()] if times.size == 0 or times[0] > 0 else times.tolist()
    hx = np.concatenate([[0.0], cum]) if len(x) > times.size else cum
    s = np.exp(-hx)
    nulls = [None] * len(x)
    return {"step": "post", "x": x, "sf": s.tolist(), "ff": (1 - s).tolist(), "hf": nulls, "Hf": hx.tolist(),
            "df": nulls, "null_reason": {"hf": NO_HAZARD, "df": NO_HAZARD}}


def parametric_curves(record: Mapping[str, Any], points: int, covariates: Mapping[str, Any] | None
                      ) -> dict[str, Any]:
    """The same for a weibull_ph or AFT unit, from 0 to its 99.9% life."""
    points = check_integer(points, "points", 2, 10_000)
    xrow, _ = unit_design_row(record, covariates)
    dist, mu, sigma = record["distribution"], record["mu"], record["sigma"]
    eta = float(xrow @ np.asarray(record["gamma"]))
    x = np.linspace(0.0, _quantile(record, eta, 0.999), points)
    s = parametric.survival(dist, mu, sigma, np.array([eta]), x)[0]
    with np.errstate(all="ignore"):
        hz, dens = parametric.hazard_density(dist, mu, sigma, eta, np.where(x > 0, x, 1e-300))
        cum = -np.log(s) + 0.0

    def clean(a: np.ndarray) -> list[float | None]:
        return [float(v) if math.isfinite(v) else None for v in a]

    return {"x": x.tolist(), "sf": s.tolist(), "ff": (1 - s).tolist(), "hf": clean(hz), "Hf": clean(cum),
            "df": clean(dens)}


# ---- many units at once (fleets) ----------------------------------------------------------------------

def unit_rows(record: Mapping[str, Any], covariates: list[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """(design rows (n, p), stratum numbers (n,)) of units from their {column: value}; units with the
    same values share one computation. An InputError names the unit's index in `row` (RowError)."""
    cache: dict[tuple[Any, ...], tuple[np.ndarray, int]] = {}
    rows, strata = [], []
    for i, values in enumerate(covariates):
        key = tuple(sorted((k, repr(v)) for k, v in values.items()))
        if key not in cache:
            try:
                cache[key] = unit_design_row(record, values)
            except InputError as e:
                raise RowError(e.field, i, e.rule) from None
        x, k = cache[key]
        rows.append(x)
        strata.append(k)
    p = len(rows[0]) if rows else 0
    return (np.array(rows, dtype=float).reshape(len(rows), p), np.array(strata, dtype=np.int64))


def cox_log_survival(record: Mapping[str, Any], x: np.ndarray, strata: np.ndarray, use: np.ndarray) -> np.ndarray:
    """log S(use | unit i) for the units' design rows `x` (n, p) at ages `use` (n, k), row by row:
    −Λ0_s(t)·exp((x − x̄)β), Λ0 the stratum's Breslow step function (flat after its last failure)."""
    use = np.asarray(use, dtype=float)
    coef = np.array([c["value"] for c in record["coefficients"]])
    lp = (x - np.asarray(record["means"])) @ coef if coef.size else np.zeros(x.shape[0])
    out = np.empty(use.shape)
    for s, base in enumerate(record["baseline"]):
        sel = strata == s
        if not np.any(sel):
            continue
        out[sel] = -step_cumhaz(base["time"], base["cumhaz"], use[sel]) * np.exp(lp[sel])[:, None]
    return out


def parametric_log_survival(record: Mapping[str, Any], x: np.ndarray, strata: np.ndarray,
                            use: np.ndarray) -> np.ndarray:
    """The same for weibull_ph and the AFT models: log S0((ln t − μ − xγ)/σ) of the family's standard law."""
    use = np.asarray(use, dtype=float)
    eta = x @ np.asarray(record["gamma"], dtype=float) if x.shape[1] else np.zeros(x.shape[0])
    with np.errstate(divide="ignore"):
        z = (np.log(np.maximum(use, 0.0)) - record["mu"] - eta[:, None]) / record["sigma"]
    return standard_terms(parametric.FAMILIES[record["distribution"]], z)[1]


def cox_support_end(record: Mapping[str, Any]) -> float:
    """Where a Cox baseline ends (its last failure time: no failures are predicted beyond it)."""
    ends = [b["time"][-1] for b in record["baseline"] if b["time"]]
    return float(min(ends)) if ends else 0.0


# ---- one unit's life, for a diagram block (rbd.covariate_life reads these through regression.kinds) ----

def cox_predictor(record: Mapping[str, Any], x: np.ndarray) -> float:
    """x·β of a design row relative to the covariate means, where a Cox baseline is stored."""
    coef = np.array([c["value"] for c in record["coefficients"]])
    return float((x - np.asarray(record["means"])) @ coef)


def ph_predictor(record: Mapping[str, Any], x: np.ndarray) -> float:
    """x·b of a weibull_ph design row (log hazard ratio)."""
    return float(x @ np.array([c["value"] for c in record["coefficients"]]))


def aft_predictor(record: Mapping[str, Any], x: np.ndarray) -> float:
    """x·γ of an AFT design row (log-time location shift)."""
    return float(x @ np.asarray(record["gamma"]))


def cox_life(record: Mapping[str, Any], lp: float, stratum: int) -> dict[str, Any]:
    """The Breslow step life of a unit at linear predictor `lp`, as an engine step table."""
    b = record["baseline"][stratum]
    if not b["time"]:  # a stratum without failures: baseline 0, so F = 0 at every age (one knot [0, 0])
        return {"distribution_id": "steps", "table": [[0.0, 0.0]]}
    cum = np.asarray(b["cumhaz"], dtype=float) * math.exp(lp)
    f = -np.expm1(-cum)
    return {"distribution_id": "steps", "table": [[float(t), float(v)] for t, v in zip(b["time"], f)]}


def weibull_ph_life(record: Mapping[str, Any], lp: float, stratum: int) -> dict[str, Any]:
    """A Weibull of shape 1/σ and scale e^{μ − lp·σ}: the PH predictor x·b is −x·γ/σ on log time."""
    mu, sigma = float(record["mu"]), float(record["sigma"])
    return {"distribution_id": "weibull", "params": [{"name": "alpha", "value": math.exp(mu - lp * sigma)},
                                                     {"name": "beta", "value": 1.0 / sigma}]}


def lognormal_life(record: Mapping[str, Any], lp: float, stratum: int) -> dict[str, Any]:
    mu, sigma = float(record["mu"]), float(record["sigma"])
    return {"distribution_id": "lognormal", "params": [{"name": "mu", "value": mu + lp},
                                                       {"name": "sigma", "value": sigma}]}


def loglogistic_life(record: Mapping[str, Any], lp: float, stratum: int) -> dict[str, Any]:
    mu, sigma = float(record["mu"]), float(record["sigma"])
    return {"distribution_id": "loglogistic", "params": [{"name": "alpha", "value": math.exp(mu + lp)},
                                                         {"name": "beta", "value": 1.0 / sigma}]}
