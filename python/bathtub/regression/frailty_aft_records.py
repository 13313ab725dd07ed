"""Model records of the shared-frailty models (weibull_frailty, cox_frailty) and the Buckley–James
AFT model, and their reliability for a unit's covariates.

The records have weibull_ph's and cox's shape (coefficients, params, gof, validation, diagnostics,
the design spec) plus a `frailty` block. A frailty model's coefficients are conditional on the
group's frailty; its reliability for given covariates is the population-averaged (marginal)
survival over the gamma frailty, (1 + θ·H(t|x))^{−1/θ}, said in each answer, with the conditional
curve of a unit of frailty 1 beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from bathtub import inference
from bathtub.regression import buckley_james, cox_frailty, design, frailty
from bathtub.regression.record_parts import (
    NO_HAZARD,
    Request,
    Rows,
    check_time,
    chi2_test,
    coefficient_rows,
    thin_baseline,
    unit_design_row,
    validation_block,
)
from bathtub.validate import check_integer

MARGINAL = ("marginal: population-averaged over the gamma frailty, S(t|x) = (1 + θ·H(t|x))^(−1/θ) with H the "
            "cumulative hazard of a unit of frailty 1; `conditional` is that unit's own curve")
NO_PH = {"available": False, "reason": "a frailty model's marginal hazards are not proportional even when its "
                                       "conditional ones are, so the scaled Schoenfeld test of an ordinary Cox "
                                       "fit does not test it"}
MAX_FRAILTIES = 1000  # group frailty estimates listed in a record


def bj_fit(req: Request) -> dict[str, Any]:
    return _bj_record(req.d, req.rows, req.confidence, req.field, int(req.options.get("bootstrap") or 0))


def _group(req: Request) -> list[Any]:
    return design.column_values(req.columns, req.mapping["group"], "mapping.group")


def weibull_frailty_fit(req: Request) -> dict[str, Any]:
    return _weibull_record(req.d, req.rows, _group(req), req.mapping["group"], req.confidence, req.field)


def cox_frailty_fit(req: Request) -> dict[str, Any]:
    return _cox_record(req.d, req.rows, _group(req), req.mapping["group"], req.confidence, req.field,
                       req.cox_options.get("tie_method", "efron"))


def _theta_param(theta: float, se_log: float | None, confidence: float) -> dict[str, Any]:
    zq = inference.z(confidence)
    if se_log is None:
        return {"name": "theta", "value": theta, "se": None, "ci": [0.0, None], "confidence": confidence}
    return {**inference.row("theta", theta, se_log, scale="log", zq=zq), "confidence": confidence}


def _frailty_block(theta: float, lr: float, group_column: str, n_groups: int, method: str) -> dict[str, Any]:
    p = cox_frailty.lr_p(lr)
    if theta <= 0:
        reading = ("the fitted frailty variance is 0: the groups share nothing beyond the covariates, and the fit "
                   "is the model without frailty")
    else:
        reading = (f"frailty variance θ = {theta:.4g}: a unit's hazard is multiplied by its group's frailty (mean "
                   f"1, sd {math.sqrt(theta):.3g}); " + ("the groups differ significantly" if p < 0.05 else
                                                         "the groups do not differ significantly") +
                   f" (likelihood ratio {lr:.4g}, p = {p:.3g})")
    return {"distribution": "gamma", "mean": 1.0, "theta": theta, "group_column": group_column,
            "n_groups": n_groups, "method": method,
            "lr_test": {"statistic": lr, "df": 1, "p": p,
                        "reference": "½χ²₀ + ½χ²₁ (θ = 0 is on the boundary)"},
            "coefficients": "conditional on the group's frailty (a unit-level ratio); population-averaged ratios "
                            "are closer to 1 and change with time",
            "reading": reading}


def _weibull_record(d: design.Design, rows: Rows, group: list[Any], group_column: str, confidence: float,
                    field: str) -> dict[str, Any]:
    fit = frailty.fit_weibull_frailty(d.x, rows.stop, rows.event, group, field)
    p = fit.b.size
    zq = inference.z(confidence)
    cov = fit.cov
    coefficients = coefficient_rows(d.names, fit.b, cov[2:2 + p, 2:2 + p], None, confidence, "hazard ratio")
    # α = e^{−c/ρ}: ∂logα/∂c = −1/ρ, ∂logα/∂logρ = c/ρ
    g = np.zeros(cov.shape[0])
    g[0], g[1] = -1 / fit.rho, fit.c / fit.rho
    se_la = math.sqrt(float(g @ cov @ g))
    se_lr = math.sqrt(cov[1, 1])
    alpha = math.exp(-fit.c / fit.rho)
    params = [inference.row("alpha", alpha, se_la, scale="log", zq=zq, at="every covariate 0, frailty 1"),
              inference.row("beta", fit.rho, se_lr, scale="log", zq=zq, at="every covariate 0, frailty 1"),
              _theta_param(fit.theta, None if fit.boundary else math.sqrt(cov[-1, -1]), confidence)]
    lr_theta = max(0.0, 2 * (fit.loglik - fit.loglik_ph))
    var_b = cov[2:2 + p, 2:2 + p]
    wald = float(fit.b @ np.linalg.solve(var_b, fit.b))
    gof = [{"id": "log_likelihood", "label": "Log marginal likelihood (gamma frailty integrated out)",
            "value": fit.loglik},
           {"id": "aic", "label": "AIC (marginal likelihood)", "value": -2 * fit.loglik + 2 * (p + 3)},
           {"id": "bic", "label": "BIC (rows as n)", "value": -2 * fit.loglik + (p + 3) * math.log(fit.n)},
           chi2_test("lr_test", "Likelihood-ratio test (all coefficients 0)",
                      max(0.0, 2 * (fit.loglik - fit.loglik0)), p),
           chi2_test("wald_test", "Wald test (all coefficients 0)", wald, p),
           {"id": "frailty_lr_test", "label": "Likelihood-ratio test of θ = 0 (against weibull_ph)",
            "value": lr_theta, "df": 1, "p": cox_frailty.lr_p(lr_theta)}]
    eta = d.x @ fit.b
    c, rho, theta = fit.c, fit.rho, fit.theta

    def surv_at(keep: np.ndarray, t: np.ndarray) -> np.ndarray:
        return np.array([frailty.marginal_survival(c, rho, theta, float(e), t) for e in eta[keep]])

    block = _frailty_block(theta, lr_theta, group_column, fit.n_groups,
                           "maximum marginal likelihood, the gamma frailty integrated out in closed form")
    if not fit.boundary:
        block["theta_se"] = theta * math.sqrt(cov[-1, -1])
    return {"kind": "regression", "distribution": "weibull_frailty", "n": fit.n, "n_events": fit.n_events,
            "params": params, "coefficients": coefficients, "metrics": None, "gof": gof,
            "validation": validation_block(eta, rows, np.zeros(fit.n, dtype=np.int64), surv_at),
            "diagnostics": {"ph_test": NO_PH, "convergence": {"iterations": fit.iterations,
                                                              "boundary": fit.boundary}},
            "frailty": block, "design": d.spec, "c": fit.c, "rho": fit.rho, "b": fit.b.tolist(), "theta": theta,
            # the fit's own scale (c, log rho, b, log theta; no log theta at the boundary theta = 0): what an
            # outer Monte Carlo loop draws (bathtub.models.draws)
            "covariance": {"names": ["c", "log_rho", *d.names, *([] if fit.boundary else ["log_theta"])],
                           "matrix": cov.tolist() if bool(np.all(np.isfinite(cov))) else None},
            "counting_process": False}


def _cox_record(d: design.Design, rows: Rows, group: list[Any], group_column: str, confidence: float, field: str,
                ties: str) -> dict[str, Any]:
    fit = cox_frailty.fit_cox_frailty(d.x, d.names, rows.stop, rows.event, group, start=rows.start, ties=ties,
                                      field=field)
    p = fit.beta.size
    coefficients = coefficient_rows(d.names, fit.beta, fit.var, None, confidence, "hazard ratio")
    se2 = np.sqrt(np.diag(fit.var2))
    for c, s2 in zip(coefficients, se2):
        c["se2"] = float(s2)  # R's se2: the sandwich H⁻¹(H − P)H⁻¹
    theta = fit.theta
    zq = inference.z(confidence)
    tparam: dict[str, Any] = {"name": "theta", "value": theta, "se": fit.theta_se, "confidence": 0.95,
                              "ci": list(fit.theta_ci), "ci_method": "profile integrated likelihood (χ²₁ drop)"}
    if fit.theta_se is not None and confidence != 0.95:
        tparam["wald_ci"] = [max(0.0, theta - zq * fit.theta_se), theta + zq * fit.theta_se]
    wald = float(fit.beta @ np.linalg.solve(fit.var, fit.beta))
    gof = [{"id": "log_likelihood", "label": "Integrated log-likelihood (R's I-likelihood)", "value": fit.ilik},
           {"id": "aic", "label": "AIC (integrated likelihood)", "value": -2 * fit.ilik + 2 * (p + 1)},
           {"id": "bic", "label": "BIC (events as n)", "value": -2 * fit.ilik + (p + 1) * math.log(fit.n_events)},
           {"id": "partial_log_likelihood", "label": "Log partial likelihood with the frailties as offsets",
            "value": fit.loglik},
           {"id": "penalised_log_likelihood", "label": "Penalised log partial likelihood", "value": fit.ppl},
           chi2_test("wald_test", "Wald test (all coefficients 0)", wald, p),
           {"id": "frailty_lr_test", "label": "Likelihood-ratio test of θ = 0 (against cox)", "value": fit.lr_theta,
            "df": 1, "p": cox_frailty.lr_p(fit.lr_theta)}]
    time, cumhaz, thinned = thin_baseline(fit.baseline_time.tolist(), fit.baseline_cumhaz.tolist())
    baseline: dict[str, Any] = {"time": time, "cumhaz": cumhaz, "at": "the covariate means, frailty 1"}
    if thinned:
        baseline["thinned_from"] = thinned
    fixed = (d.x - fit.means) @ fit.beta
    bt, bh = fit.baseline_time, fit.baseline_cumhaz

    def surv_at(keep: np.ndarray, t: np.ndarray) -> np.ndarray:
        idx = np.searchsorted(bt, t, side="right") - 1
        h0 = np.where(idx >= 0, bh[np.maximum(idx, 0)], 0.0)
        return cox_frailty.marginal_survival(h0[None, :] * np.exp(fixed[keep])[:, None], theta)

    block = _frailty_block(theta, fit.lr_theta, group_column, len(fit.groups),
                           "penalised partial likelihood (gamma penalty) with θ maximising R's integrated "
                           "likelihood, as coxph(... + frailty(group, distribution = 'gamma'))")
    block |= {"theta_se": fit.theta_se, "theta_ci": list(fit.theta_ci), "df": fit.frailty_df,
              "sparse": len(fit.groups) > cox_frailty.SPARSE_ABOVE,
              "estimates": [{"group": g, "frailty": math.exp(w), "log_frailty": float(w)}
                            for g, w in list(zip(fit.groups, fit.omega.tolist()))[:MAX_FRAILTIES]]}
    if len(fit.groups) > MAX_FRAILTIES:
        block["estimates_note"] = f"the first {MAX_FRAILTIES} of {len(fit.groups)} groups (sorted by name)"
    validation = validation_block(fixed, rows, np.zeros(fit.n, dtype=np.int64), surv_at)
    if validation.get("available"):
        validation["note"] += ("; scored by the covariates alone (xβ), as for a unit of a new group, not with the "
                               "fitted group frailties")
    return {"kind": "regression", "distribution": "cox_frailty", "n": fit.n, "n_events": fit.n_events,
            "params": [tparam], "coefficients": coefficients, "metrics": None, "gof": gof,
            "validation": validation,
            "diagnostics": {"ph_test": NO_PH, "ties": {"method": ties},
                            "se": "se: inverse penalised information (R's se(coef)); se2: its sandwich (R's se2)"
                                  + ("; the frailty–frailty block of the information kept diagonal above "
                                     f"{cox_frailty.SPARSE_ABOVE} groups, as R's sparse computation"
                                     if len(fit.groups) > cox_frailty.SPARSE_ABOVE else ""),
                            "theta_search": [{"theta": a, "integrated_log_likelihood": b}
                                             for a, b in fit.history[:60]]},
            "frailty": block, "design": d.spec, "means": fit.means.tolist(), "baseline": baseline,
            "baseline_estimator": "breslow", "theta": theta, "iterations": fit.iterations,
            "counting_process": rows.start is not None}


def _bj_record(d: design.Design, rows: Rows, confidence: float, field: str, boot: int) -> dict[str, Any]:
    fit = buckley_james.fit_buckley_james(d.x, rows.stop, rows.event, field, boot)
    p = fit.beta.size
    robust = fit.boot_var[1:, 1:] if fit.boot_var is not None else None
    coefficients = coefficient_rows(d.names, fit.beta, fit.var[1:, 1:], robust, confidence, "time ratio")
    zq = inference.z(confidence)
    se_a = math.sqrt(fit.var[0, 0])
    params = [inference.row("intercept", fit.intercept, se_a, zq=zq, at="every covariate 0",
                            reading="mean log time at every covariate 0 (least squares on the completed log times)"),
              {"name": "sigma", "value": fit.sigma, "se": None,
               "reading": "standard deviation of the failures' log-time residuals"}]
    wald = float(fit.beta @ np.linalg.solve(fit.var[1:, 1:], fit.beta))
    gof = [chi2_test("wald_test", "Wald test (all coefficients 0), Buckley–James variance", wald, p)]
    gof[0]["note"] = "Buckley–James is not a likelihood method: no log-likelihood, AIC or BIC"
    rt, rs = fit.residual_time, fit.residual_surv
    eta = d.x @ fit.beta

    def surv_at(keep: np.ndarray, t: np.ndarray) -> np.ndarray:
        return np.array([buckley_james.survival(rt, rs, fit.intercept, float(e), t) for e in eta[keep]])

    if boot:
        robust_block: dict[str, Any] = {"available": fit.boot_var is not None, "method":
                                        f"nonparametric bootstrap over units, {boot} resamples, seed "
                                        f"{buckley_james.SEED}", "resamples_used": fit.boot_used}
        if fit.boot_var is None:
            robust_block["reason"] = "fewer than half the resamples gave a fit"
    else:
        robust_block = {"available": False, "reason": "set options.bootstrap (resamples) for bootstrap standard "
                                                      "errors in robust_se"}
    time, surv, thinned = thin_baseline(rt.tolist(), rs.tolist())
    residuals: dict[str, Any] = {"residual": time, "surv": surv}
    if thinned:
        residuals["thinned_from"] = thinned
    reading = (f"settled at a fixed point after {fit.iterations} iterations" if not fit.cycle else
               f"the iterations cycle with period {fit.cycle}; the estimate is the mean over the cycle")
    return {"kind": "regression", "distribution": "buckley_james", "n": fit.n, "n_events": fit.n_events,
            "params": params, "coefficients": coefficients, "metrics": None, "gof": gof,
            "validation": validation_block(-eta, rows, np.zeros(fit.n, dtype=np.int64), surv_at),
            "diagnostics": {"ph_test": {"available": False, "reason": "an accelerated-failure-time model does not "
                                                                      "assume proportional hazards"},
                            "robust": robust_block,
                            "convergence": {"iterations": fit.iterations, "cycle": fit.cycle, "reading": reading,
                                            "rule": "stop when the estimate repeats to 1e-9 relative to the slopes (a "
                                                    "fixed point) or returns to an earlier iterate (a cycle: "
                                                    "averaged)"},
                            "se": "Buckley–James approximate variance σ²(X_uᵀX_u)⁻¹ over the failures "
                                  "(as rms::bj)"},
            "design": d.spec, "intercept": fit.intercept, "beta": fit.beta.tolist(), "residuals": residuals,
            "counting_process": False}


# ---- use ----------------------------------------------------------------------------------------------

def _eta(record: Mapping[str, Any], covariates: Mapping[str, Any] | None, key: str) -> float:
    xrow, _ = unit_design_row(record, covariates)
    if key == "means":
        coef = np.array([c["value"] for c in record["coefficients"]])
        return float((xrow - np.asarray(record["means"])) @ coef)
    return float(xrow @ np.asarray(record[key]))


def _cox_cum(record: Mapping[str, Any], eta: float, t: np.ndarray) -> np.ndarray:
    b = record["baseline"]
    times = np.asarray(b["time"], dtype=float)
    idx = np.searchsorted(times, t, side="right") - 1
    return np.where(idx >= 0, np.asarray(b["cumhaz"], dtype=float)[np.maximum(idx, 0)], 0.0) * math.exp(eta)


def _marginal_cum(h: float, theta: float) -> float:
    """−log of the marginal survival, log(1 + θH)/θ, finite where the survival underflows to 0."""
    return h if theta <= 0 else math.log1p(theta * h) / theta


def bj_at(record: Mapping[str, Any], t: Any, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """{t, reliability, failure, hazard, cumulative_hazard, density} of a Buckley–James unit."""
    t = check_time(t)
    eta = _eta(record, covariates, "beta")
    r = record["residuals"]
    s = float(buckley_james.survival(np.asarray(r["residual"]), np.asarray(r["surv"]), record["intercept"], eta,
                                      np.array([t]))[0])
    reason = ("Buckley–James leaves the residual distribution a Kaplan–Meier step function: no hazard rate or "
              "density")
    return {"t": t, "reliability": s, "failure": 1 - s, "hazard": None,
            "cumulative_hazard": -math.log(s) if s > 0 else None, "density": None,
            "null_reason": {"hazard": reason, "density": reason,
                            **({} if s > 0 else {"cumulative_hazard": "reliability 0: past the largest "
                                                                      "residual"})}}


def weibull_frailty_at(record: Mapping[str, Any], t: Any, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """The same for a Weibull shared-frailty unit: marginal, with the frailty-1 unit beside it."""
    t = check_time(t)
    theta = record["theta"]
    eta = _eta(record, covariates, "b")
    c, rho = record["c"], record["rho"]
    tt = np.array([t if t > 0 else 1e-300])
    s = float(frailty.marginal_survival(c, rho, theta, eta, np.array([t]))[0])
    hz, dens = frailty.marginal_hazard_density(c, rho, theta, eta, tt)
    hcond = float(np.exp(c + eta + rho * np.log(tt))[0]) if t > 0 else 0.0
    cond_hz = float(rho / tt[0] * hcond) if t > 0 else float(frailty.marginal_hazard_density(c, rho, 0.0, eta,
                                                                                             tt)[0][0])
    return {"t": t, "reliability": s, "failure": 1 - s, "hazard": float(hz[0]),
            "cumulative_hazard": _marginal_cum(float(np.exp(c + eta + rho * np.log(tt))[0]) if t > 0 else 0.0,
                                               theta), "density": float(dens[0]),
            "frailty": MARGINAL, "conditional": {"reliability": math.exp(-hcond), "hazard": cond_hz,
                                                 "cumulative_hazard": hcond}}


def cox_frailty_at(record: Mapping[str, Any], t: Any, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """The same for a Cox shared-frailty unit."""
    t = check_time(t)
    theta = record["theta"]
    eta = _eta(record, covariates, "means")
    h = float(_cox_cum(record, eta, np.array([t]))[0])
    s = float(cox_frailty.marginal_survival(np.array([h]), theta)[0])
    return {"t": t, "reliability": s, "failure": 1 - s, "hazard": None, "cumulative_hazard": _marginal_cum(h, theta),
            "density": None, "null_reason": {"hazard": NO_HAZARD, "density": NO_HAZARD}, "frailty": MARGINAL,
            "conditional": {"reliability": math.exp(-h), "cumulative_hazard": h}}


def weibull_frailty_curves(record: Mapping[str, Any], points: int, covariates: Mapping[str, Any] | None
                           ) -> dict[str, Any]:
    """Whole curves {x, sf, ff, hf, Hf, df} of a Weibull shared-frailty unit (marginal)."""
    points = check_integer(points, "points", 2, 10_000)
    theta = record.get("theta", 0.0)
    eta = _eta(record, covariates, "b")
    c, rho = record["c"], record["rho"]
    x = np.linspace(0.0, frailty.quantile(c, rho, theta, eta, 0.999), points)
    s = frailty.marginal_survival(c, rho, theta, eta, x)
    hz, dens = frailty.marginal_hazard_density(c, rho, theta, eta, np.where(x > 0, x, 1e-300))
    hcond = np.exp(c + eta + rho * np.log(np.where(x > 0, x, 1e-300)))
    cum = np.log1p(theta * hcond) / theta if theta > 0 else hcond

    def clean(a: np.ndarray) -> list[float | None]:
        return [float(v) if math.isfinite(v) else None for v in a]

    return {"x": x.tolist(), "sf": s.tolist(), "ff": (1 - s).tolist(), "hf": clean(hz), "Hf": clean(cum),
            "df": clean(dens), "frailty": MARGINAL, "conditional": {"sf": np.exp(-hcond).tolist()}}


def bj_curves(record: Mapping[str, Any], points: int, covariates: Mapping[str, Any] | None) -> dict[str, Any]:
    """The same for a Buckley–James unit: the residuals' Kaplan–Meier steps on its time scale."""
    check_integer(points, "points", 2, 10_000)
    eta = _eta(record, covariates, "beta")
    r = record["residuals"]
    res = np.asarray(r["residual"], dtype=float)
    x = np.concatenate([[0.0], np.exp(res + record["intercept"] + eta)])
    s = buckley_james.survival(res, np.asarray(r["surv"]), record["intercept"], eta, x)
    with np.errstate(divide="ignore"):
        cum = -np.log(s) + 0.0
    nulls = [None] * x.size
    return {"step": "post", "x": x.tolist(), "sf": s.tolist(), "ff": (1 - s).tolist(), "hf": nulls,
            "Hf": [float(v) if math.isfinite(v) else None for v in cum], "df": nulls,
            "null_reason": {"hf": "a Kaplan–Meier step function has no hazard rate",
                            "df": "a Kaplan–Meier step function has no density"}}


def cox_frailty_curves(record: Mapping[str, Any], points: int, covariates: Mapping[str, Any] | None
                       ) -> dict[str, Any]:
    """The same for a Cox shared-frailty unit (marginal steps)."""
    check_integer(points, "points", 2, 10_000)
    theta = record.get("theta", 0.0)
    eta = _eta(record, covariates, "means")
    times = np.asarray(record["baseline"]["time"], dtype=float)
    x = np.concatenate([[0.0], times]) if times.size == 0 or times[0] > 0 else times
    h = _cox_cum(record, eta, x)
    s = cox_frailty.marginal_survival(h, theta)
    nulls = [None] * x.size
    return {"step": "post", "x": x.tolist(), "sf": s.tolist(), "ff": (1 - s).tolist(), "hf": nulls,
            "Hf": (np.log1p(theta * h) / theta if theta > 0 else h).tolist(), "df": nulls,
            "null_reason": {"hf": NO_HAZARD, "df": NO_HAZARD},
            "frailty": MARGINAL, "conditional": {"sf": np.exp(-h).tolist()}}
