"""The saved record of a recurrent-event model (kind `recurrent`), from a dataset's columns.

`fit_columns(columns, mapping, model, options)` is what `POST /api/v1/fit` computes for a
recurrent model id (MODELS). The record carries the parameters with intervals, the growth
verdict, ROCOF and MTBF with bounds, the demonstrated MTBF, trend and goodness-of-fit tests,
`systems_vs_model`, and where they apply `covariate_effects`, `repair_effectiveness`,
`repair_test`, `next_failure_by_system` and `by_cause`; `mcf` records carry the curve with
both variances and, with a `group` column, the comparison of two populations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

from bathtub import steps
from bathtub.errors import InputError
from bathtub.recurrent import bounds, covariates, gof, grp, mcf, mcf_parametric, nhpp, trend
from bathtub.recurrent.data import EventData, GroupedData, from_columns
from bathtub.validate import check_number

MODELS: dict[str, str] = {
    "crow_amsaa": "Crow-AMSAA (power-law NHPP)",
    "power_law": "Power-law NHPP (Crow-AMSAA)",
    "loglinear": "Log-linear NHPP (Cox-Lewis)",
    "hpp": "Homogeneous Poisson process",
    "duane": "Duane (least-squares plot fit)",
    "kijima1": "Generalised renewal, Kijima I (Weibull baseline)",
    "kijima2": "Generalised renewal, Kijima II (Weibull baseline)",
    "mcf": "Mean cumulative function (Nelson, non-parametric)",
    "mcf_power_law": "Power-law MCF (least squares on Nelson's MCF)",
}
POWER = ("crow_amsaa", "power_law")
OPTIONS = ("termination", "covariates", "confidence", "systems", "variance")
MCF_MODELS = ("mcf", "mcf_power_law")  # the models whose record carries the non-parametric MCF
NEXT_FAILURE_MAX = 1000  # systems listed in next_failure_by_system / systems_vs_model
PREDICTION = (0.05, 0.5, 0.95)  # next failure: median and the 90% prediction interval


def _options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    opts = dict(options or {})
    for k in opts:
        if k not in OPTIONS:
            raise InputError(f"options.{k}", f"unknown option for a recurrent model; known: {', '.join(OPTIONS)}")
    conf = opts.get("confidence", 0.95)
    opts["confidence"] = check_number(conf, "options.confidence", 0.5, 1.0, hi_open=True)
    if opts.get("variance", "nelson") not in mcf.VARIANCES:
        raise InputError("options.variance", f"must be one of {', '.join(mcf.VARIANCES)}")
    return opts


def fit_columns(columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str], model: str,
                options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    if model not in MODELS:
        raise InputError("distribution", f"unknown recurrent model; ids: {', '.join(MODELS)}")
    opts = _options(options)
    data = from_columns(columns, mapping, termination=opts.get("termination"),
                        covariates=opts.get("covariates") or (), systems=opts.get("systems", 1))
    if "variance" in opts and model not in MCF_MODELS:
        raise InputError("options.variance", f"applies to the MCF's bounds: models {', '.join(MCF_MODELS)}")
    return fit_data(data, model, opts["confidence"], opts.get("variance", "nelson"))


def fit_data(data: EventData | GroupedData, model: str, confidence: float = 0.95,
             variance: str = "nelson") -> dict[str, Any]:
    """The record of `model` fitted to event or grouped data (library entry point). `variance`
    (mcf, mcf_power_law): the MCF's naive variance at tied times, nelson (one term per time) or
    per_row (one per event row, as ReliaWiki and reliability)."""
    if model not in MODELS:
        raise InputError("distribution", f"unknown recurrent model; ids: {', '.join(MODELS)}")
    base: dict[str, Any] = {"kind": "recurrent", "distribution": model, "model": MODELS[model],
                            "n": data.n_events, "confidence": confidence, "coefficients": [], "metrics": None}
    if isinstance(data, GroupedData):
        if model not in (*POWER, "hpp"):
            raise InputError("distribution", "grouped data fit crow_amsaa (power_law) or hpp")
        return {**base, **_grouped(data, model, confidence)}
    base["systems"] = len(data.systems)
    base["termination"] = data.termination
    if data.covariate_names and model not in POWER:
        raise InputError("options.covariates", "covariates are fitted with the power law (crow_amsaa, power_law)")
    if any(s.group for s in data.systems) and model != "mcf":
        raise InputError("mapping.group", "only the mcf model compares populations")
    if model == "mcf":
        return {**base, **_mcf(data, confidence, variance)}
    if model == "mcf_power_law":
        body = mcf_parametric.record_body(data, confidence, variance)
        expected = body.pop("expected_by_system")
        return {**base, **body, "curve": _thin(body["curve"]), "variance": variance,
                "trend_tests": trend.all_tests(data), "systems_vs_model": _vs_model(data, expected)}
    if model in ("kijima1", "kijima2"):
        body = _grp(data, model, confidence)
    elif model in POWER:
        body = _power(data, confidence)
    elif model == "loglinear":
        body = _loglinear(data, confidence)
    elif model == "hpp":
        body = _hpp(data, confidence)
    else:
        body = _duane(data)
    body["trend_tests"] = trend.all_tests(data)
    causes = sorted({c for s in data.systems for c in s.causes})
    if causes and model not in ("kijima1", "kijima2", "duane"):
        body["by_cause"] = _by_cause(data, model, causes, confidence)
    elif causes:
        body["by_cause"] = {"available": False, "reason": (
            "a repair resets the virtual age whatever the cause, so per-cause GRP models are not separable"
            if model != "duane" else "the Duane plot fit has no per-cause form; fit crow_amsaa")}
    return {**base, **body}


def _param(name: str, value: float, se: float | None, ci: tuple[float, float] | None,
           method: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "value": value, "se": se}
    if ci is not None:
        out["ci"] = [ci[0], ci[1]]
        if method:
            out["ci_method"] = method
    return out


def _se(cov: np.ndarray, i: int) -> float | None:
    v = float(cov[i, i])
    return math.sqrt(v) if math.isfinite(v) and v >= 0 else None


def _growth(lo: float, hi: float, what: str, one: float = 1.0) -> dict[str, Any]:
    if hi < one:
        verdict = "improving"
    elif lo > one:
        verdict = "deteriorating"
    else:
        verdict = "no evidence"
    return {"verdict": verdict, "on": what, "interval": [lo, hi],
            "reading": {"improving": "failures thin out with age (reliability growth)",
                        "deteriorating": "failures crowd in with age",
                        "no evidence": "the interval holds a constant rate"}[verdict]}


def _informative(data: EventData) -> tuple[float, int]:
    s = sum(float(np.sum(np.log(x.end / x.informative))) for x in data.systems)
    return s, sum(x.informative.size for x in data.systems)


def _aic(ll: float, k: int) -> list[dict[str, Any]]:
    return [{"id": "log_likelihood", "label": "Log-likelihood", "value": ll},
            {"id": "aic", "label": "AIC", "value": 2 * k - 2 * ll}]


def _power(data: EventData, confidence: float) -> dict[str, Any]:
    pl = nhpp.power_law(data)
    s_inf, m = _informative(data)
    if m < 2:
        raise InputError("data", "at least 2 informative events are needed (a failure-terminated system's last "
                                 "event only closes its test)")
    b_lo, b_hi = bounds.beta_chi2(s_inf, m, confidence)
    beta_bar = (m - 1) / s_inf
    ends = np.array([x.end for x in data.systems])
    t_end = float(ends.max())
    n = data.n_events
    k = len(data.systems)
    cov = pl.cov
    rho = float(pl.intensity(t_end))
    m_inst = 1.0 / rho
    g_inst = np.array([-1.0 / pl.beta - math.log(t_end), -1.0 / pl.lam])
    single_ft = k == 1 and data.failure_terminated
    common_tt = not any(x.failure_terminated for x in data.systems) and bool(np.all(ends == t_end))
    if single_ft:
        lo, hi = bounds.crow_failure_terminated(m_inst, n, confidence)
        low1 = bounds.crow_failure_terminated_lower(m_inst, n, confidence)
        inst_method = "crow_exact"
    elif common_tt:
        lo, hi = bounds.crow_time_terminated(s_inf, n, t_end, k, confidence)
        low1 = bounds.crow_time_terminated(s_inf, n, t_end, k, confidence, one_sided=True)[0]
        inst_method = "crow_exact"
    else:
        lo, hi = bounds.fisher_log(m_inst, g_inst, cov, confidence)
        low1 = bounds.fisher_log(m_inst, g_inst, cov, 2 * confidence - 1)[0]
        inst_method = "fisher"
    m_cum = t_end / float(pl.cumulative(t_end))
    if np.all(ends == t_end):
        p_lo, p_hi = bounds.poisson_mean(n, data.failure_terminated, confidence)
        c_lo, c_hi, c_method = k * t_end / p_hi, k * t_end / p_lo, "crow_exact"
    else:
        c_lo, c_hi = bounds.fisher_log(m_cum, np.array([-math.log(t_end), -1.0 / pl.lam]), cov, confidence)
        c_method = "fisher"
    alpha = pl.lam ** (-1.0 / pl.beta)
    out: dict[str, Any] = {
        "params": [_param("beta", pl.beta, _se(cov, 0), (b_lo, b_hi), "chi2_exact"),
                   _param("lambda", pl.lam, _se(cov, 1),
                          bounds.fisher_log(pl.lam, np.array([0.0, 1.0 / pl.lam]), cov, confidence), "fisher")],
        "beta_unbiased": {"value": beta_bar, "informative_events": m,
                          "formula": "(M-1)/sum ln(T/t): (N-1)/N beta time-terminated, (N-2)/N beta failure-"
                                     "terminated for one system"},
        "growth": {**_growth(b_lo, b_hi, "beta"), "beta": pl.beta, "growth_rate": 1.0 - pl.beta},
        "at": t_end,
        "rocof": {"t": t_end, "value": rho, "ci": [1.0 / hi, 1.0 / lo], "method": inst_method},
        "mtbf": {"instantaneous": {"t": t_end, "value": m_inst, "ci": [lo, hi], "method": inst_method},
                 "cumulative": {"t": t_end, "value": m_cum, "ci": [c_lo, c_hi], "method": c_method}},
        "demonstrated_mtbf": {"value": m_inst, "lower": low1, "confidence": confidence, "one_sided": True,
                              "method": inst_method},
        "gof": [*_aic(pl.log_likelihood, 2)],
        "goodness_of_fit": [gof.cramer_von_mises(data, beta_bar)],
        "systems_vs_model": _vs_model(data, [float(pl.cumulative(x.end)) for x in data.systems]),
        "next_failure_by_system": _next_nhpp(data, alpha, pl.beta),
        "weibull_equivalent": {"alpha": alpha, "beta": pl.beta,
                               "reading": "minimal repair of a Weibull(alpha, beta) life is this process"},
        "duane": _duane_section(data),
    }
    if data.covariate_names:
        out["covariate_effects"] = covariates.fit(data, confidence)
    out["covariance"] = _covariance(cov)
    if single_ft or common_tt:
        # what an outer Monte Carlo loop draws exactly: 2·S·beta ~ chi2(2m) (Crow's pivot, S = sum of
        # ln(T/t) over the m informative events) and, given beta, k·lambda·T^beta ~ Gamma(n, 1)
        out["sampling"] = {"law": "crow_exact", "informative_events": m, "sum_log": s_inf, "events": n,
                           "end": t_end, "systems": k}
    return out


def _covariance(cov: np.ndarray, names: Sequence[str] = ("beta", "lambda")) -> dict[str, Any]:
    """The covariance of a record's parameters `names` on their natural scale (matrix null when
    singular): what an outer Monte Carlo loop draws them from (`bathtub.models.draws`)."""
    ok = bool(np.all(np.isfinite(cov)))
    return {"names": list(names), "matrix": np.asarray(cov, dtype=float).tolist() if ok else None}


def _vs_model(data: EventData, expected: Sequence[float]) -> list[dict[str, Any]]:
    rows = []
    shown = data.systems[:NEXT_FAILURE_MAX]
    pvals = gof.poisson_two_sided(np.array([s.n for s in shown]), np.asarray(expected[: len(shown)], dtype=float))
    for s, e, p in zip(shown, expected, pvals.tolist(), strict=False):
        rows.append({"system": s.id, "events": s.n, "expected": e, "end": s.end, "p_value": p,
                     "flag": "more than expected" if p < 0.05 and s.n > e else
                     "fewer than expected" if p < 0.05 else None})
    return rows


def _next_nhpp(data: EventData, alpha: float, beta: float) -> list[dict[str, Any]]:
    """Time from each system's end to its next failure under the fitted process (minimal
    repair: the residual life at age T_q), median and 90% prediction interval; parameter
    uncertainty is not included."""
    rows = []
    for s in data.systems[:NEXT_FAILURE_MAX]:
        q = grp.residual_quantile(alpha, beta, s.end, np.array(PREDICTION))
        rows.append(_next_row(s.id, s.end, q))
    return rows


def _next_row(sid: str, end: float, q: np.ndarray) -> dict[str, Any]:
    q = np.asarray(q, dtype=float)
    return {"system": sid, "from": end, "median": float(q[1]), "interval": [float(q[0]), float(q[2])],
            "interval_level": 0.9, "at_age": [end + float(v) for v in q]}


def _duane_section(data: EventData) -> dict[str, Any]:
    curve = mcf.mcf(data)
    d = nhpp.duane(np.asarray(curve["time"]), np.asarray(curve["mcf"]))
    t_end = max(s.end for s in data.systems)
    return {"alpha": d.alpha, "b": d.b, "r_squared": d.r_squared,
            "cumulative_mtbf": d.cumulative_mtbf(t_end), "instantaneous_mtbf": d.instantaneous_mtbf(t_end),
            "t": t_end, "points": [list(p) for p in d.points[:2000]],
            "reading": "ln(cumulative MTBF) = ln b + alpha ln t, least squares (a plot fit: no bounds)"}


def _duane(data: EventData) -> dict[str, Any]:
    sec = _duane_section(data)
    return {"params": [_param("alpha", sec["alpha"], None, None), _param("b", sec["b"], None, None)],
            "gof": [{"id": "r_squared", "label": "R² of the Duane line", "value": sec["r_squared"]}],
            "growth": {"verdict": "not available", "on": "alpha",
                       "reading": "a least-squares plot fit has no interval; fit crow_amsaa for the verdict"},
            "at": sec["t"],
            "mtbf": {"instantaneous": {"t": sec["t"], "value": sec["instantaneous_mtbf"], "method": "duane"},
                     "cumulative": {"t": sec["t"], "value": sec["cumulative_mtbf"], "method": "duane"}},
            "duane": sec}


def _loglinear(data: EventData, confidence: float) -> dict[str, Any]:
    ll = nhpp.loglinear(data)
    t_end = max(s.end for s in data.systems)
    se0, se1 = _se(ll.cov, 0), _se(ll.cov, 1)
    ci1 = bounds.wald(ll.g1, se1 or math.nan, confidence)
    rho = float(ll.intensity(t_end))
    r_lo, r_hi = bounds.fisher_log(rho, np.array([1.0, t_end]), ll.cov, confidence)
    rows = []
    for s in data.systems[:NEXT_FAILURE_MAX]:
        rows.append(_next_row(s.id, s.end, _loglinear_residual(ll, s.end, np.array(PREDICTION))))
    return {
        "params": [_param("g0", ll.g0, se0, bounds.wald(ll.g0, se0 or math.nan, confidence), "wald"),
                   _param("g1", ll.g1, se1, ci1, "wald")],
        "growth": {**_growth(ci1[0], ci1[1], "g1", one=0.0), "g1": ll.g1},
        "at": t_end,
        "rocof": {"t": t_end, "value": rho, "ci": [r_lo, r_hi], "method": "fisher"},
        "mtbf": {"instantaneous": {"t": t_end, "value": 1 / rho, "ci": [1 / r_hi, 1 / r_lo],
                                   "method": "fisher"}},
        "gof": _aic(ll.log_likelihood, 2),
        "covariance": _covariance(ll.cov, ("g0", "g1")),
        "systems_vs_model": _vs_model(data, [float(ll.cumulative(s.end)) for s in data.systems]),
        "next_failure_by_system": rows,
    }


def _loglinear_residual(ll: nhpp.LogLinear, t: float, p: np.ndarray) -> np.ndarray:
    """Solve Lambda(t + x) - Lambda(t) = -ln(1 - p); inf where an improving process may never fail again."""
    c = -np.log1p(-p)
    if ll.g1 == 0:
        return c / math.exp(ll.g0)
    arg = np.exp(ll.g1 * t) + c * ll.g1 * math.exp(-ll.g0)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(arg > 0, np.log(np.where(arg > 0, arg, 1.0)) / ll.g1 - t, np.inf)
    return x


def _hpp(data: EventData, confidence: float) -> dict[str, Any]:
    h = nhpp.hpp(data)
    lo, hi = nhpp.hpp_rate_interval(h, data.failure_terminated, confidence)
    low1 = nhpp.hpp_rate_interval(h, data.failure_terminated, 2 * confidence - 1)[1]
    t_end = max(s.end for s in data.systems)
    rows = [_next_row(s.id, s.end, -np.log1p(-np.array(PREDICTION)) / h.lam) for s in data.systems[:NEXT_FAILURE_MAX]]
    return {
        "params": [_param("lambda", h.lam, h.lam / math.sqrt(h.n), (lo, hi), "chi2_exact")],
        "growth": {"verdict": "not available", "on": "trend_tests",
                   "reading": "an HPP has no trend by construction; read the trend tests"},
        "at": t_end,
        "rocof": {"t": t_end, "value": h.lam, "ci": [lo, hi], "method": "chi2_exact"},
        "mtbf": {"instantaneous": {"t": t_end, "value": 1 / h.lam, "ci": [1 / hi, 1 / lo],
                                   "method": "chi2_exact"},
                 "cumulative": {"t": t_end, "value": 1 / h.lam, "ci": [1 / hi, 1 / lo],
                                "method": "chi2_exact"}},
        "demonstrated_mtbf": {"value": 1 / h.lam, "lower": 1 / low1, "confidence": confidence, "one_sided": True,
                              "method": "chi2_exact"},
        "gof": _aic(h.log_likelihood, 1),
        "systems_vs_model": _vs_model(data, [h.lam * s.end for s in data.systems]),
        "next_failure_by_system": rows,
    }


def _grouped(data: GroupedData, model: str, confidence: float) -> dict[str, Any]:
    t_end = float(data.ends[-1])
    base = {"systems": data.systems, "termination": "grouped", "at": t_end,
            "trend_tests": [], "trend_tests_note": "trend tests need event times; grouped counts are tested by "
                                                   "the chi-squared goodness of fit"}
    if model == "hpp":
        h = nhpp.hpp(data)
        lo, hi = nhpp.hpp_rate_interval(h, False, confidence)
        expected = h.lam * (data.ends - data.starts) * data.systems
        return {**base, "params": [_param("lambda", h.lam, h.lam / math.sqrt(h.n), (lo, hi), "chi2_exact")],
                "rocof": {"t": t_end, "value": h.lam, "ci": [lo, hi], "method": "chi2_exact"},
                "mtbf": {"instantaneous": {"t": t_end, "value": 1 / h.lam, "ci": [1 / hi, 1 / lo],
                                           "method": "chi2_exact"}},
                "gof": _aic(h.log_likelihood, 1),
                "goodness_of_fit": [gof.chi_square_grouped(data, expected, 1)]}
    pl = nhpp.power_law_grouped(data)
    cov = pl.cov
    b_ci = bounds.fisher_log(pl.beta, np.array([1.0 / pl.beta, 0.0]), cov, confidence)
    rho = float(pl.intensity(t_end))
    m_inst = 1 / rho
    g_inst = np.array([-1.0 / pl.beta - math.log(t_end), -1.0 / pl.lam])
    lo, hi = bounds.fisher_log(m_inst, g_inst, cov, confidence)
    expected = data.systems * pl.lam * (np.power(data.ends, pl.beta) - np.power(data.starts, pl.beta))
    m_cum = t_end / float(pl.cumulative(t_end))
    p_lo, p_hi = bounds.poisson_mean(data.n_events, False, confidence)
    return {**base,
            "covariance": _covariance(cov),
            "params": [_param("beta", pl.beta, _se(cov, 0), b_ci, "fisher"),
                       _param("lambda", pl.lam, _se(cov, 1),
                              bounds.fisher_log(pl.lam, np.array([0.0, 1.0 / pl.lam]), cov, confidence), "fisher")],
            "growth": {**_growth(b_ci[0], b_ci[1], "beta"), "beta": pl.beta, "growth_rate": 1 - pl.beta},
            "rocof": {"t": t_end, "value": rho, "ci": [1 / hi, 1 / lo], "method": "fisher"},
            "mtbf": {"instantaneous": {"t": t_end, "value": m_inst, "ci": [lo, hi], "method": "fisher"},
                     "cumulative": {"t": t_end, "value": m_cum,
                                    "ci": [data.systems * t_end / p_hi, data.systems * t_end / p_lo],
                                    "method": "crow_exact"}},
            "demonstrated_mtbf": {"value": m_inst,
                                  "lower": bounds.fisher_log(m_inst, g_inst, cov, 2 * confidence - 1)[0],
                                  "confidence": confidence, "one_sided": True, "method": "fisher"},
            "gof": _aic(pl.log_likelihood, 2),
            "goodness_of_fit": [gof.chi_square_grouped(data, expected, 2)],
            "intervals": [{"start": float(a), "end": float(b), "observed": int(o), "expected": float(e)}
                          for a, b, o, e in zip(data.starts, data.ends, data.counts, expected, strict=True)]}


def _grp(data: EventData, kind: str, confidence: float) -> dict[str, Any]:
    g = grp.fit(data, kind)
    q_lo, q_hi = grp.q_interval(g, confidence)
    renewal = grp.fit(data, kind, q=0.0, start=(g.alpha, g.beta))
    minimal = grp.fit(data, kind, q=1.0, start=(g.alpha, g.beta))
    tests = {}
    for name, sub in (("renewal", renewal), ("minimal_repair", minimal)):
        lr = max(0.0, 2 * (g.log_likelihood - sub.log_likelihood))
        # q = 0 or 1 is on the boundary of [0, 1]: the LR law is the 50:50 mixture of chi2(0) and chi2(1).
        p = 0.5 * float(stats.chi2.sf(lr, 1)) if lr > 0 else 1.0
        tests[name] = {"q": sub.q, "statistic": lr, "p_value": p,
                       "verdict": f"rejected ({name.replace('_', ' ')})" if p < 0.05 else "not rejected"}
    comp = grp.compensator(g, data)
    rows = []
    for s in data.systems[:NEXT_FAILURE_MAX]:
        age = grp.current_age(g, s.times, s.end)
        row = _next_row(s.id, s.end, grp.residual_quantile(g.alpha, g.beta, age, np.array(PREDICTION)))
        row["virtual_age"] = age
        row["intensity"] = g.beta / g.alpha * (age / g.alpha) ** (g.beta - 1) if age > 0 else None
        rows.append(row)
    cov = g.cov
    if q_hi < 0.5:
        reading = "repairs restore most of the age (closer to as good as new)"
    elif q_lo > 0.5:
        reading = "repairs restore little of the age (closer to as bad as old)"
    else:
        reading = "repairs restore part of the age"
    return {
        "params": [_param("alpha", g.alpha, _se(cov, 0),
                          bounds.fisher_log(g.alpha, np.array([1 / g.alpha, 0, 0]), cov, confidence), "fisher"),
                   _param("beta", g.beta, _se(cov, 1),
                          bounds.fisher_log(g.beta, np.array([0, 1 / g.beta, 0]), cov, confidence), "fisher"),
                   _param("q", g.q, _se(cov, 2), (q_lo, q_hi), "wald")],
        "repair_effectiveness": {"model": kind, "q": g.q, "interval": [q_lo, q_hi], "reading": reading,
                                 "scale": "q = 0 as good as new (renewal), q = 1 as bad as old (minimal repair)"},
        "repair_test": {**tests, "reading": "likelihood ratio of the fitted q against q fixed at 0 and at 1"},
        "growth": {"verdict": "not available", "on": "beta",
                   "reading": "with imperfect repair the trend mixes ageing (beta) and repair (q); read both"},
        "gof": _aic(g.log_likelihood, 3),
        "covariance": _covariance(cov, ("alpha", "beta", "q")),
        "systems_vs_model": _vs_model(data, comp.tolist()),
        "next_failure_by_system": rows,
        "rocof": {"available": False,
                  "reason": "a GRP's intensity depends on each system's history: see next_failure_by_system"},
        "mtbf": {"available": False,
                 "reason": "a GRP's intensity depends on each system's history: see next_failure_by_system"},
    }


def _by_cause(data: EventData, model: str, causes: list[str], confidence: float) -> list[dict[str, Any]]:
    """One model per cause: events of other causes are not counted (independent cause-
    specific processes), each system observed to its own end."""
    out = []
    for c in causes:
        sub = data.only_cause(c)
        row: dict[str, Any] = {"cause": c, "events": sub.n_events}
        try:
            if model in POWER:
                pl = nhpp.power_law(sub)
                s_inf, m = _informative(sub)
                lo, hi = bounds.beta_chi2(s_inf, m, confidence)
                row.update({"beta": pl.beta, "lambda": pl.lam, "beta_ci": [lo, hi], "growth": _growth(lo, hi, "beta")})
            elif model == "loglinear":
                ll = nhpp.loglinear(sub)
                ci = bounds.wald(ll.g1, _se(ll.cov, 1) or math.nan, confidence)
                row.update({"g0": ll.g0, "g1": ll.g1, "g1_ci": list(ci), "growth": _growth(ci[0], ci[1], "g1", 0.0)})
            else:
                h = nhpp.hpp(sub)
                row.update({"lambda": h.lam, "lambda_ci": list(nhpp.hpp_rate_interval(h, False, confidence))})
        except InputError as err:
            row.update({"available": False, "reason": err.rule})
        if sub.n_events < 2:
            row = {"cause": c, "events": sub.n_events, "available": False, "reason": "fewer than 2 events"}
        out.append(row)
    return out


CURVE_POINTS_MAX = 5000  # a stored curve keeps at most this many steps (every k-th and the last)


def _thin(curve: dict[str, Any]) -> dict[str, Any]:
    """Thin a step curve's per-time arrays for storage; figures were computed on the full curve."""
    return steps.thin(curve, CURVE_POINTS_MAX)


def _mcf(data: EventData, confidence: float, variance: str) -> dict[str, Any]:
    groups = sorted({s.group for s in data.systems})
    out: dict[str, Any] = {"params": [], "gof": []}
    if len(groups) > 1:
        if len(groups) != 2:
            raise InputError("mapping.group", f"{len(groups)} groups: the comparison takes exactly 2")
        parts = [EventData(tuple(s for s in data.systems if s.group == g)) for g in groups]
        for g, p in zip(groups, parts, strict=True):
            if p.n_events == 0:
                raise InputError("mapping.group", f"group {g!r} has no events")
        out["curves"] = {g: _thin(mcf.mcf(p, confidence, variance)) for g, p in zip(groups, parts, strict=True)}
        out["comparison"] = _thin(mcf.compare(parts[0], parts[1], (groups[0], groups[1]), confidence))
    curve = mcf.mcf(EventData(data.systems), confidence, variance)
    out["curve"] = _thin(curve)
    out["variance"] = variance
    t_end = max(s.end for s in data.systems)
    out["at"] = t_end
    out["metrics"] = {"mcf_at_end": float(mcf.mcf_at(curve, np.array([t_end]))[0])}
    out["trend_tests"] = trend.all_tests(data)
    ends = np.array([s.end for s in data.systems])
    out["systems_vs_model"] = _vs_model(data, mcf.mcf_at(curve, ends).tolist())
    return out
