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
from bathtub.regression import additive, cox, design, parametric, zph
from bathtub.regression.record_parts import (
    BASELINE_MAX,
    NO_HAZARD,
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
            "strata_column": options.get("strata_column"), "iterations": fit.iterations,
            "counting_process": rows.start is not None}


def parametric_record(distribution: str, d: design.Design, rows: Rows, confidence: float, transform: str,
                      formula: bool) -> dict[str, Any]:
    field = "formula" if formula else "covariates"
    fit = parametric.fit_parametric(distribution, d.x, rows.stop, rows.event, rows.start, field)
    p = fit.gamma.size
    zq = inference.z(confidence)
    cov = fit.cov
    if distribution == "weibull_ph":
        coef, var = parametric.ph_coefficients(fit)
        kind = "hazard ratio"
        risk = d.x @ coef
    else:
        coef, var = fit.gamma, cov[2:, 2:]
        kind = "time ratio"
        risk = -(d.x @ coef)
    coefficients = coefficient_rows(d.names, coef, var, None, confidence, kind)
    se_mu, se_ls = math.sqrt(cov[0, 0]), math.sqrt(cov[1, 1])
    if distribution == "lognormal_aft":
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
                                             lambda keep, t: parametric.survival(fit, eta[keep], t)),
              "design": d.spec, "mu": fit.mu, "sigma": fit.sigma, "gamma": fit.gamma.tolist(),
              "counting_process": rows.start is not None}
    if distribution == "weibull_ph":
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
        c["reading"] = (f"each unit of {c['name']} changes the hazard rate by {c['coef']:+.4g} failures per "
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
    coef = np.array([c["coef"] for c in record["coefficients"]])
    risk = math.exp(float((xrow - np.asarray(record["means"])) @ coef))
    b = record["baseline"][k]
    return np.asarray(b["time"], dtype=float), np.asarray(b["cumhaz"], dtype=float) * risk


def _additive_cum(record: Mapping[str, Any], covariates: Mapping[str, Any] | None, t: np.ndarray) -> np.ndarray:
    xrow, _ = unit_design_row(record, covariates)
    b = record["baseline"]
    base = additive.baseline_at(np.asarray(b["grid"]), np.asarray(b["drift"]), np.asarray(b["time"]),
                                np.asarray(b["jumps"]), t)
    return base + float(xrow @ np.asarray(record["beta"])) * t


def _param_fit(record: Mapping[str, Any]) -> parametric.ParametricFit:
    return parametric.ParametricFit(record["distribution"], record["mu"], record["sigma"],
                                    np.asarray(record["gamma"]), np.zeros((0, 0)), 0.0, 0.0, 0, 0, 0)


def evaluate_at(record: Mapping[str, Any], t: Any, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """{t, reliability, failure, hazard, cumulative_hazard, density} of a regression record for one unit."""
    t = check_time(t)
    if record["distribution"] == "additive_hazards":
        h = float(_additive_cum(record, covariates, np.array([t]))[0])
        s = min(1.0, math.exp(-h))
        out = {"t": t, "reliability": s, "failure": 1.0 - s, "hazard": None, "cumulative_hazard": h,
               "density": None, "null_reason": {"hazard": NO_HAZARD, "density": NO_HAZARD}}
        if h < 0:
            out["warning"] = ("the fitted cumulative hazard is negative here for these covariates (an additive "
                              "model can go below zero outside the data): reliability shown as 1")
        return out
    if record["distribution"] == "cox":
        times, cum = _cox_curve(record, covariates)
        idx = int(np.searchsorted(times, t, side="right")) - 1
        h = float(cum[idx]) if idx >= 0 else 0.0
        s = math.exp(-h)
        return {"t": t, "reliability": s, "failure": 1.0 - s, "hazard": None, "cumulative_hazard": h,
                "density": None, "null_reason": {"hazard": NO_HAZARD, "density": NO_HAZARD}}
    xrow, _ = unit_design_row(record, covariates)
    fit = _param_fit(record)
    eta = float(xrow @ fit.gamma)
    s = float(parametric.survival(fit, np.array([eta]), np.array([t]))[0, 0])
    if t > 0:
        hz, dens = parametric.hazard_density(fit, eta, np.array([t]))
        hazard, density = float(hz[0]), float(dens[0])
    else:
        hz, dens = parametric.hazard_density(fit, eta, np.array([1e-300]))
        hazard, density = float(hz[0]), float(dens[0])
    return {"t": t, "reliability": s, "failure": 1.0 - s, "hazard": hazard,
            "cumulative_hazard": -math.log(s) + 0.0 if s > 0 else math.inf, "density": density}


def _quantile(record: Mapping[str, Any], eta: float, q: float) -> float:
    dist = parametric.FAMILIES[record["distribution"]]
    z = {"extreme": math.log(-math.log(1 - q)), "normal": float(special.ndtri(q)),
         "logistic": math.log(q / (1 - q))}[dist]
    return math.exp(record["mu"] + eta + record["sigma"] * z)


def evaluate_curves(record: Mapping[str, Any], points: int, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """Whole curves {x, sf, ff, hf, Hf, df} of a regression record for one unit."""
    points = check_integer(points, "points", 2, 10_000)
    if record["distribution"] == "additive_hazards":
        b = record["baseline"]
        x = np.unique(np.concatenate([[0.0], b["time"], np.linspace(0.0, b["grid"][-1], points)]))
        cum = _additive_cum(record, covariates, x)
        s = np.clip(np.exp(-cum), 0.0, 1.0)
        nulls = [None] * x.size
        return {"x": x.tolist(), "sf": s.tolist(), "ff": (1 - s).tolist(), "hf": nulls, "Hf": cum.tolist(),
                "df": nulls, "null_reason": {"hf": NO_HAZARD, "df": NO_HAZARD}}
    if record["distribution"] == "cox":
        times, cum = _cox_curve(record, covariates)
        x = [0.0, *times.tolist()] if times.size == 0 or times[0] > 0 else times.tolist()
        hx = np.concatenate([[0.0], cum]) if len(x) > times.size else cum
        s = np.exp(-hx)
        nulls = [None] * len(x)
        return {"step": "post", "x": x, "sf": s.tolist(), "ff": (1 - s).tolist(), "hf": nulls, "Hf": hx.tolist(),
                "df": nulls, "null_reason": {"hf": NO_HAZARD, "df": NO_HAZARD}}
    xrow, _ = unit_design_row(record, covariates)
    fit = _param_fit(record)
    eta = float(xrow @ fit.gamma)
    x = np.linspace(0.0, _quantile(record, eta, 0.999), points)
    s = parametric.survival(fit, np.array([eta]), x)[0]
    with np.errstate(all="ignore"):
        hz, dens = parametric.hazard_density(fit, eta, np.where(x > 0, x, 1e-300))
        cum = -np.log(s) + 0.0

    def clean(a: np.ndarray) -> list[float | None]:
        return [float(v) if math.isfinite(v) else None for v in a]

    return {"x": x.tolist(), "sf": s.tolist(), "ff": (1 - s).tolist(), "hf": clean(hz), "Hf": clean(cum),
            "df": clean(dens)}


# ---- many units at once (fleets) ----------------------------------------------------------------------

PER_UNIT = ("cox", *parametric.FAMILIES)  # models whose survival for given covariates is a proper curve


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


def log_survival(record: Mapping[str, Any], x: np.ndarray, strata: np.ndarray, use: np.ndarray) -> np.ndarray:
    """log S(use | unit i) for the units' design rows `x` (n, p) at ages `use` (n, k), row by row.

    Cox: −Λ0_s(t)·exp((x − x̄)β), Λ0 the stratum's Breslow step function (flat after its last
    failure); parametric: log S0((ln t − μ − xγ)/σ) of the family's standard law."""
    dist = record["distribution"]
    if dist not in PER_UNIT:
        raise InputError("model_id", f"per-unit forecasts are offered for cox and {', '.join(parametric.FAMILIES)} "
                                     f"models (one vectorised survival per unit); not for {dist}")
    use = np.asarray(use, dtype=float)
    if dist == "cox":
        coef = np.array([c["coef"] for c in record["coefficients"]])
        lp = (x - np.asarray(record["means"])) @ coef if coef.size else np.zeros(x.shape[0])
        out = np.empty(use.shape)
        for s, base in enumerate(record["baseline"]):
            sel = strata == s
            if not np.any(sel):
                continue
            out[sel] = -step_cumhaz(base["time"], base["cumhaz"], use[sel]) * np.exp(lp[sel])[:, None]
        return out
    eta = x @ np.asarray(record["gamma"], dtype=float) if x.shape[1] else np.zeros(x.shape[0])
    with np.errstate(divide="ignore"):
        z = (np.log(np.maximum(use, 0.0)) - record["mu"] - eta[:, None]) / record["sigma"]
    return standard_terms(parametric.FAMILIES[dist], z)[1]


def support_end(record: Mapping[str, Any]) -> float | None:
    """Where a Cox baseline ends (its last failure time: no failures are predicted beyond it)."""
    if record["distribution"] != "cox":
        return None
    ends = [b["time"][-1] for b in record["baseline"] if b["time"]]
    return float(min(ends)) if ends else 0.0
