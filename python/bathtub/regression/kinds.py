"""The one table of regression kinds: for each `distribution` id, its fit (a record from a checked
request), one unit's evaluation and curves, and what a fleet reads from it. Every dispatch on a
regression record's `distribution` goes through `KINDS`, so a kind is added in one place.

`fine_gray` reads its own roles (a failure mode) and options, so its fit takes the raw request
(`raw_fit`); `best` fits every `ranked` kind and keeps the lowest AIC.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from bathtub.errors import InputError
from bathtub.regression import fine_gray_records, flexible, frailty_aft_records, models, parametric
from bathtub.regression.flexible_models import evaluate_at as spline_at
from bathtub.regression.flexible_models import evaluate_curves as spline_curves
from bathtub.regression.flexible_models import spline_record
from bathtub.regression.record_parts import Request
from bathtub.validate import check_integer

Record = Mapping[str, Any]
Covariates = Mapping[str, Any] | None


@dataclass(frozen=True)
class RegressionKind:
    """One regression model kind. `log_survival` (vectorised per unit, for fleets) is None where a
    unit's curve is no proper life (additive hazards) or needs more than its covariates (frailty);
    `support_end` gives where a step baseline stops predicting; `ranked`: a full likelihood of the
    times, so `best` compares it by AIC."""

    id: str
    fit: Callable[[Request], dict[str, Any]] | None
    at: Callable[[Record, Any, Covariates], dict[str, Any]]
    curves: Callable[[Record, int, Covariates], dict[str, Any]]
    log_survival: Callable[[Record, np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None
    support_end: Callable[[Record], float] | None = None
    ranked: bool = False
    raw_fit: Callable[..., dict[str, Any]] | None = None
    # a diagram block's life (rbd.covariate_life): the unit's linear predictor from its design row, its
    # life as an engine block model at a predictor (and stratum), and where a predictor acts: on the
    # hazard (a factor e^{lp}) or on the clock (age runs e^{−lp} times as fast). None: no block life.
    # what a request may name: the frailty `group` role (required when True, refused otherwise),
    # start/stop rows (False: one row per unit), the cox_options keys taken, bootstrap, knots
    group: bool = False
    start_stop: bool = True
    cox_options: tuple[str, ...] = ()
    bootstrap: bool = False
    knots: bool = False
    predictor: Callable[[Record, np.ndarray], float] | None = None
    life: Callable[[Record, float, int], dict[str, Any]] | None = None
    clock: str | None = None


# weibull_ph reads its coefficients as log hazard ratios; the AFT families shift log time
_PARAMETRIC_LIFE = {"weibull_ph": (models.ph_predictor, models.weibull_ph_life, "hazard"),
                    "lognormal_aft": (models.aft_predictor, models.lognormal_life, "time"),
                    "loglogistic_aft": (models.aft_predictor, models.loglogistic_life, "time")}


def _parametric(name: str) -> RegressionKind:
    predictor, life, clock = _PARAMETRIC_LIFE[name]
    return RegressionKind(
        name, lambda r: models.parametric_record(name, r.d, r.rows, r.confidence, r.transform, r.formula, clock),
        models.parametric_at, models.parametric_curves, models.parametric_log_survival, ranked=True,
        predictor=predictor, life=life, clock=clock)


def _spline(name: str) -> RegressionKind:
    return RegressionKind(
        name, lambda r: spline_record(name, r.d, r.rows, r.confidence, r.transform, r.formula, r.options.get("knots")),
        spline_at, spline_curves, ranked=True, knots=True)


def _gof(record: Record, key: str) -> float:
    return float(next(g["value"] for g in record["gof"] if g["id"] == key))


def _n_params(record: Record) -> int:
    """The parameters AIC counted: coefficients plus the baseline's (μ, σ; or the spline's γ)."""
    spline = record.get("spline")
    return len(record["coefficients"]) + (len(spline["gamma"]) if spline else 2)


def _best(req: Request) -> dict[str, Any]:
    """Every ranked kind fitted on the same rows; the lowest AIC, with the ranking and refusals."""
    candidates = []
    refusals = {}
    for kind in RANKED:
        try:
            fit = KINDS[kind].fit
            assert fit is not None
            candidates.append(fit(req))  # options.knots are refused with best: each spline at its default
        except InputError as exc:
            refusals[kind] = exc.rule
    if not candidates:
        raise InputError("distribution", "no parametric regression model could be fitted: "
                                         + "; ".join(f"{k}: {v}" for k, v in refusals.items()))
    candidates.sort(key=lambda r: _gof(r, "aic"))
    best = candidates[0]
    best["ranking"] = [{"distribution": r["distribution"], "aic": _gof(r, "aic"),
                        "log_likelihood": _gof(r, "log_likelihood"), "parameters": _n_params(r)}
                       for r in candidates]
    best["ranking_note"] = ("parametric regression models ranked by AIC on the same rows (the same "
                            "likelihood of the times, so comparable); cox and additive_hazards are not "
                            "ranked: Cox's partial likelihood and the additive model's estimating equations "
                            "are not likelihoods of the times, so no AIC compares them; fit them by name")
    if refusals:
        best["ranking_refused"] = refusals
    return best


def _no_best(record: Record, *args: Any) -> dict[str, Any]:
    raise InputError("distribution", "best is a choice made when fitting; a saved record names the kind chosen")


_TABLE = (
    RegressionKind("cox", models.cox_fit, models.cox_at, models.cox_curves, models.cox_log_survival,
                   models.cox_support_end, cox_options=("tie_method", "strata_column", "cluster_column"),
                   predictor=models.cox_predictor, life=models.cox_life, clock="hazard"),
    *(_parametric(name) for name in parametric.FAMILIES),
    *(_spline(name) for name in flexible.MODELS),
    RegressionKind("additive_hazards", lambda r: models.additive_record(r.d, r.rows, r.confidence, r.formula),
                   models.additive_at, models.additive_curves),
    RegressionKind("weibull_frailty", frailty_aft_records.weibull_frailty_fit, frailty_aft_records.weibull_frailty_at,
                   frailty_aft_records.weibull_frailty_curves, group=True, start_stop=False),
    RegressionKind("cox_frailty", frailty_aft_records.cox_frailty_fit, frailty_aft_records.cox_frailty_at,
                   frailty_aft_records.cox_frailty_curves, group=True, cox_options=("tie_method",)),
    RegressionKind("buckley_james", frailty_aft_records.bj_fit, frailty_aft_records.bj_at,
                   frailty_aft_records.bj_curves, start_stop=False, bootstrap=True),
    RegressionKind(fine_gray_records.MODEL, None, fine_gray_records.evaluate_at, fine_gray_records.evaluate_curves,
                   raw_fit=fine_gray_records.fit_record),
)
KINDS: dict[str, RegressionKind] = {k.id: k for k in _TABLE}
MODELS = tuple(KINDS)
# Models with a full likelihood on the same rows, so AIC ranks them for `best` (Cox's partial likelihood
# and the additive model's estimating equations are not comparable).
RANKED = tuple(k.id for k in _TABLE if k.ranked)
BEST = RegressionKind("best", _best, _no_best, _no_best)
PER_UNIT = tuple(k.id for k in _TABLE if k.log_survival is not None)
LIFE_MODELS = tuple(k.id for k in _TABLE if k.life is not None)


def kind(distribution: Any) -> RegressionKind:
    """The kind of a fit's `distribution` (or `best`), refused unless the table has it."""
    if distribution == BEST.id:
        return BEST
    if not isinstance(distribution, str) or distribution not in KINDS:
        raise InputError("distribution", f"with covariates or a formula, use one of {', '.join(MODELS)} or best")
    return KINDS[distribution]


GROUP_MODELS = tuple(k.id for k in _TABLE if k.group)


def check_request(model: RegressionKind, mapping: Mapping[str, str], cox_options: Mapping[str, Any],
                  options: Mapping[str, Any]) -> None:
    """Refuse what the chosen model does not use, before any fitting."""
    dist = model.id
    if "group" in mapping and not model.group:
        raise InputError("mapping.group", f"is the shared-frailty group, used by {' and '.join(GROUP_MODELS)}; "
                                          f"{dist} has no frailty (for standard errors clustered by a "
                                          "column use cox with cox_options.cluster_column)")
    if model.group and "group" not in mapping:
        raise InputError("mapping.group", f"required for {dist}: the column naming each unit's group "
                                          "(units of one group share a frailty)")
    if not model.start_stop and ("xl" in mapping or "xr" in mapping or "i" in mapping):
        role = "i" if "i" in mapping else ("xl" if "xl" in mapping else "xr")
        raise InputError(f"mapping.{role}", f"{dist} takes one row per unit (x, c); start/stop rows "
                                            "(left truncation, time-varying covariates) are fitted by cox and "
                                            "cox_frailty")
    if cox_options:
        if not model.cox_options:
            raise InputError("cox_options", "apply to distribution cox (and tie_method to cox_frailty)")
        for k in ("strata_column", "cluster_column"):
            if k not in model.cox_options and cox_options.get(k) is not None:
                raise InputError(f"cox_options.{k}", f"not with {dist}: the frailty already models what "
                                                     "the units of a group share; use cox for strata or "
                                                     "clustered standard errors")
    if options.get("bootstrap") is not None:
        if not model.bootstrap:
            raise InputError("options.bootstrap", "is for buckley_james (resampled standard errors)")
        # resamples; checked, not cleaned (the fit reads options as they came)
        check_integer(options["bootstrap"], "options.bootstrap", 20, 2000, whole_floats=False)
    if options.get("knots") is not None and not model.knots:
        knotted = [k.id for k in _TABLE if k.knots]
        raise InputError("options.knots", f"apply to {' and '.join(knotted)} only")


def evaluate_at(record: Record, t: Any, covariates: Covariates) -> dict[str, Any]:
    """{t, reliability, failure, hazard, cumulative_hazard, density} of a regression record for one unit."""
    return KINDS[record["distribution"]].at(record, t, covariates)


def evaluate_curves(record: Record, points: int, covariates: Covariates) -> dict[str, Any]:
    """Whole curves {x, sf, ff, hf, Hf, df} of a regression record for one unit."""
    return KINDS[record["distribution"]].curves(record, points, covariates)


def log_survival(record: Record, x: np.ndarray, strata: np.ndarray, use: np.ndarray) -> np.ndarray:
    """log S(use | unit i) for the units' design rows `x` (n, p) at ages `use` (n, k), row by row."""
    dist = record["distribution"]
    fn = KINDS[dist].log_survival if dist in KINDS else None
    if fn is None:
        raise InputError("model_id", f"per-unit forecasts are offered for {PER_UNIT[0]} and "
                                     f"{', '.join(PER_UNIT[1:])} models (one vectorised survival per unit); "
                                     f"not for {dist}")
    return fn(record, x, strata, use)


def support_end(record: Record) -> float | None:
    """Where a step baseline ends (no failures are predicted beyond it); None for a smooth model."""
    fn = KINDS[record["distribution"]].support_end
    return None if fn is None else fn(record)
