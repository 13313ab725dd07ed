"""Pieces every regression model record is built from: the rows a fit reads, the coefficient
table, the likelihood tests and information criteria, the in-sample validation block, the
stored baseline's thinning, and reading a unit's covariates back. Kept apart from the record
builders (models, flexible_models, frailty_aft_records) and the entry point (records) so each of
those imports them from here and none imports another's private helper."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from bathtub import inference, steps
from bathtub.errors import InputError
from bathtub.regression import design, validation
from bathtub.validate import check_number


class Rows:
    """The rows of a regression fit: (start, stop], event, item."""

    def __init__(self, start: np.ndarray | None, stop: np.ndarray, event: np.ndarray, item: np.ndarray | None,
                 fields: dict[str, str]) -> None:
        self.start, self.stop, self.event, self.item, self.fields = start, stop, event, item, fields


@dataclass(frozen=True, eq=False)
class Request:
    """What every regression kind's fit reads: the dataset's columns and mapping, the design and rows
    built from them, and the request's checked options. `formula`: the design came from a formula."""

    columns: Mapping[str, Sequence[Any]]
    mapping: Mapping[str, str]
    d: design.Design
    rows: Rows
    confidence: float
    transform: str
    formula: bool
    cox_options: Mapping[str, Any]
    options: Mapping[str, Any]

    @property
    def field(self) -> str:
        """The request field the design came from, named in refusals."""
        return "formula" if self.formula else "covariates"


BASELINE_MAX = 5000  # steps kept per stratum in a stored baseline
NO_HAZARD = ("the baseline is a step function (Breslow for Cox, Lin–Ying for additive hazards): it has no "
             "hazard rate or density; fit weibull_ph for those")


def units_of(rows: Rows) -> np.ndarray:
    return rows.item if rows.item is not None else np.arange(rows.stop.size)


def coefficient_rows(names: list[str], coef: np.ndarray, var: np.ndarray, robust: np.ndarray | None,
                  confidence: float, kind: str) -> list[dict[str, Any]]:
    """One row per coefficient in the record's one row shape {name, value, se, ci} (value: the
    coefficient on the linear predictor), with the kind's own extras beside it: `exp_coef` and
    `exp_ci` (the hazard, time or odds ratio named by `exp_coef_kind`), `robust_se`, z, p."""
    zq = inference.z(confidence)
    out = []
    se = np.sqrt(np.diag(var))
    rse = np.sqrt(np.diag(robust)) if robust is not None else None
    for j, name in enumerate(names):
        z = float(coef[j] / se[j])
        lo, hi = float(coef[j] - zq * se[j]), float(coef[j] + zq * se[j])
        out.append({"name": name, "value": float(coef[j]), "exp_coef": math.exp(coef[j]), "exp_coef_kind": kind,
                    "se": float(se[j]), "robust_se": None if rse is None else float(rse[j]), "z": z,
                    "p": float(2 * stats.norm.sf(abs(z))), "ci": [lo, hi], "exp_ci": [math.exp(lo), math.exp(hi)],
                    "confidence": confidence})
    return out


def chi2_test(id_: str, label: str, stat: float, df: int) -> dict[str, Any]:
    return {"id": id_, "label": label, "value": float(stat), "df": df, "p": float(stats.chi2.sf(stat, df))}


def fit_tests(ll: float, ll0: float, k: int, n_bic: int, coef: np.ndarray, var: np.ndarray,
         score: float | None, partial: bool) -> list[dict[str, Any]]:
    p = coef.size
    wald = float(coef @ np.linalg.solve(var, coef))
    what = "partial " if partial else ""
    out = [{"id": "log_likelihood", "label": f"Log {what}likelihood", "value": ll},
           {"id": "aic", "label": f"AIC ({what}likelihood)", "value": -2 * ll + 2 * k},
           {"id": "bic", "label": f"BIC ({'events' if partial else 'rows'} as n)",
            "value": -2 * ll + k * math.log(n_bic)},
           chi2_test("lr_test", "Likelihood-ratio test (all coefficients 0)", 2 * (ll - ll0), p),
           chi2_test("wald_test", "Wald test (all coefficients 0)", wald, p)]
    if score is not None:
        out.append(chi2_test("score_test", "Score (log-rank) test (all coefficients 0)", score, p))
    return out


def validation_block(risk: np.ndarray, rows: Rows, strata: np.ndarray,
                surv_at: Callable[[np.ndarray, np.ndarray], np.ndarray] | None) -> dict[str, Any]:
    keep, n_units, sampled = validation.sample_units(units_of(rows))
    start = rows.start[keep] if rows.start is not None else None
    c, pairs = validation.concordance(risk[keep], start, rows.stop[keep], rows.event[keep], strata[keep])
    if pairs == 0:
        return {"available": False, "reason": "no comparable pairs (every unit failed at the same time?)"}
    rating, reading = validation.rating(c)
    out: dict[str, Any] = {"available": True, "concordance": {"value": c, "rating": rating, "reading": reading,
                                                              "pairs": pairs},
                           "n_units": n_units, "sampled": sampled}
    note = [f"computed on a fixed-seed sample of {validation.SAMPLE} of {n_units} units"] if sampled else []
    if surv_at is None or start is not None:
        out["brier"] = None
        out["auc"] = []
        note.append("Brier score and time-dependent AUC need each unit's survival from time 0 under fixed "
                    "covariates; with start/stop rows only the concordance is given")
    else:
        b = validation.brier_auc(lambda t: surv_at(keep, t), risk[keep], rows.stop[keep], rows.event[keep])
        imp = b["improvement"]
        reading = ("the covariates add nothing over the plain Kaplan–Meier curve" if imp is None or imp <= 0 else
                   f"the model's integrated Brier score is {100 * imp:.1f}% below the covariate-free "
                   "Kaplan–Meier's (lower is better; 0.25 is a coin toss)")
        out["brier"] = {"model": b["model"], "baseline": b["baseline"], "improvement": imp, "from": b["from"],
                        "to": b["to"], "reading": reading, "weights": "inverse probability of censoring (Graf 1999)"}
        out["auc"] = b["auc"]
    note.append("in-sample: measured on the rows the model was fitted to")
    out["note"] = "; ".join(note)
    return out


def thin_baseline(time: list[float], cumhaz: list[float]) -> tuple[list[float], list[float], int | None]:
    keep = steps.kept(len(time), BASELINE_MAX)
    if keep is None:
        return time, cumhaz, None
    return [time[i] for i in keep], [cumhaz[i] for i in keep], len(time)


def unit_design_row(record: Mapping[str, Any], covariates: Mapping[str, Any] | None) -> tuple[np.ndarray, int]:
    """The unit's design row and stratum number from {column: value}."""
    if not covariates:
        spec = record["design"]
        names = [t["column"] for t in spec["terms"]] if "terms" in spec else \
            [*spec.get("numeric", []), *spec.get("categorical", {})]
        strata = record.get("strata_column")
        extra = f" and {strata!r} (the stratum)" if strata else ""
        raise InputError("covariates", f"required for a regression model: values for {', '.join(names)}{extra}")
    values = dict(covariates)
    k = 0
    strata = record.get("strata_column")
    if strata:
        if strata not in values:
            raise InputError(f"covariates.{strata}", "required: the stratum of the unit (its own baseline)")
        level = values.pop(strata)
        levels = [b["stratum"] for b in record["baseline"]]
        key = design.level_label(level)
        if key not in levels:
            raise InputError(f"covariates.{strata}", f"stratum {level!r} not in the fit (strata: {levels})")
        k = levels.index(key)
    return design.row(record["design"], values), k


def check_time(t: Any) -> float:
    return check_number(t, "t", 0.0)


