"""Probability paper: the scales a family's CDF plots straight on, the data's plotting positions,
and the fitted CDF with its pointwise confidence band — what a probability plot draws.

The band is the delta method on the paper's own y scale, g(F) (Meeker & Escobar, *Statistical
Methods for Reliability Data*, §8.4.3; the `reliability` package's Weibull CDF bounds): with the
fit's covariance Σ and the gradient ∇g of g(F(t; θ)) in θ, g ± z·sqrt(∇gᵀ Σ ∇g), mapped back.
On Weibull paper g = ln(-ln(1 - F)) = β(ln t - ln α), linear in the parameters' logs, so the
band is the classic one; it stays inside (0, 1) for every family.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import special

from bathtub import inference
from bathtub.errors import InputError
from bathtub.life.data import LifeData
from bathtub.life.evaluate import model_dist
from bathtub.life.ranks import adjusted_ranks, median_rank

YScale = Literal["cloglog", "probit", "logit"]


@dataclass(frozen=True)
class Paper:
    """Axes on which a family's CDF is a straight line: x on a log or linear time scale, y as
    ln(-ln(1-F)) (smallest extreme value: Weibull, exponential, Gumbel), Φ⁻¹(F) (normal,
    lognormal) or ln(F/(1-F)) (logistic, log-logistic)."""

    x: Literal["log", "linear"]
    y: YScale
    name: str


PAPERS: dict[str, Paper] = {
    "weibull": Paper("log", "cloglog", "Weibull"),
    "exponential": Paper("log", "cloglog", "Weibull"),
    "lognormal": Paper("log", "probit", "lognormal"),
    "normal": Paper("linear", "probit", "normal"),
    "loglogistic": Paper("log", "logit", "log-logistic"),
    "logistic": Paper("linear", "logit", "logistic"),
    "gumbel": Paper("linear", "cloglog", "Gumbel (smallest extreme value)"),
}
# Families without a linearising paper are drawn on Weibull paper (their line is then curved).
DEFAULT_PAPER = Paper("log", "cloglog", "Weibull")


def paper_of(distribution: str) -> Paper:
    return PAPERS.get(distribution, DEFAULT_PAPER)


def to_y(p: np.ndarray, scale: YScale) -> np.ndarray:
    """A probability on the paper's y scale (p in (0, 1))."""
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if scale == "cloglog":
            return np.log(-np.log1p(-p))
        if scale == "probit":
            return special.ndtri(p)
        return special.logit(p)


def from_y(y: np.ndarray, scale: YScale) -> np.ndarray:
    """The inverse of `to_y`."""
    y = np.asarray(y, dtype=float)
    with np.errstate(over="ignore"):
        if scale == "cloglog":
            return -np.expm1(-np.exp(y))
        if scale == "probit":
            return special.ndtr(y)
        return special.expit(y)


def plotting_positions(data: LifeData, exact: bool = False) -> dict[str, list[float]]:
    """Failure times and their median ranks ({t, F}): Johnson's adjusted ranks with Bernard's
    approximation (or the exact beta median), one point per distinct failure time. Exact and
    right-censored data only; other data answers empty lists (no ranks are defined)."""
    if not data.only_exact_and_right or data.f.size == 0:
        return {"t": [], "F": []}
    t, _, ranks, n = adjusted_ranks(data)
    return {"t": t.tolist(), "F": median_rank(ranks, n, exact).tolist()}


def cdf_band(record: Mapping[str, Any], t: np.ndarray, confidence: float = 0.95,
             scale: YScale | None = None) -> dict[str, list[float | None]]:
    """The fitted CDF at times `t` with its two-sided pointwise `confidence` band
    ({t, F, lower, upper}; lower/upper null where the record has no covariance, e.g. params-only).
    `scale` defaults to the family's paper."""
    if not 0 < confidence < 1:
        raise InputError("confidence", "must be in (0, 1)")
    t = np.asarray(t, dtype=float)
    scale = scale or paper_of(str(record.get("distribution"))).y
    values = {p["name"]: float(p["value"]) for p in record.get("params", [])}
    dist = model_dist(record)
    with np.errstate(all="ignore"):
        F = dist.cdf(t)
    out: dict[str, list[float | None]] = {"t": t.tolist(), "F": _finite(F)}
    cov = record.get("covariance")
    if not cov or not cov.get("names"):
        return {**out, "lower": [None] * t.size, "upper": [None] * t.size}
    names = list(cov["names"])
    sigma = np.asarray(cov["matrix"], dtype=float)
    base = to_y(np.clip(F, 1e-300, 1 - 1e-16), scale)
    grad = np.empty((len(names), t.size))
    for k, name in enumerate(names):
        # Central differences with a step relative to the parameter and to its standard error, so
        # the gradient is scale-true whatever the unit of time.
        v = values[name]
        h = 1e-5 * max(abs(v), math.sqrt(max(sigma[k, k], 0.0)), 1e-300)
        grad[k] = (_y_at(record, name, v + h, t, scale) - _y_at(record, name, v - h, t, scale)) / (2 * h)
    var = np.einsum("in,ij,jn->n", grad, sigma, grad)
    z = inference.z(confidence)
    half = z * np.sqrt(np.maximum(var, 0.0))
    lower, upper = from_y(base - half, scale), from_y(base + half, scale)
    ok = (F > 0) & (F < 1) & np.isfinite(var)
    return {**out, "lower": _finite(np.where(ok, lower, np.nan)), "upper": _finite(np.where(ok, upper, np.nan))}


def hazard_band(record: Mapping[str, Any], t: np.ndarray, confidence: float = 0.95) -> dict[str, list[float | None]]:
    """The fitted hazard rate h(t) at times `t` with its two-sided pointwise `confidence` band
    ({t, h, lower, upper}): the delta method on ln h(t) from the record's covariance
    (`inference.log_delta_band`); lower/upper null without a covariance or where h is 0 or not finite."""
    if not 0 < confidence < 1:
        raise InputError("confidence", "must be in (0, 1)")
    t = np.asarray(t, dtype=float)
    with np.errstate(all="ignore"):
        h = model_dist(record).hazard(t)
    cov = record.get("covariance")
    if not cov or not cov.get("names"):
        return {"t": t.tolist(), "h": _finite(h), "lower": [None] * t.size, "upper": [None] * t.size}
    names = list(cov["names"])
    values = {p["name"]: float(p["value"]) for p in record.get("params", [])}

    def curve(theta: np.ndarray) -> np.ndarray:
        moved = dict(zip(names, map(float, theta), strict=True))
        params = [{**p, "value": moved.get(p["name"], p["value"])} for p in record["params"]]
        return np.asarray(model_dist({**record, "params": params}).hazard(t), dtype=float)

    _, lower, upper = inference.log_delta_band(curve, np.array([values[n] for n in names]),
                                               np.asarray(cov["matrix"], dtype=float), confidence)
    return {"t": t.tolist(), "h": _finite(h), "lower": _finite(lower), "upper": _finite(upper)}


def _y_at(record: Mapping[str, Any], name: str, value: float, t: np.ndarray, scale: YScale) -> np.ndarray:
    params = [{**p, "value": value} if p["name"] == name else p for p in record["params"]]
    with np.errstate(all="ignore"):
        F = model_dist({**record, "params": params}).cdf(t)
    return to_y(np.clip(F, 1e-300, 1 - 1e-16), scale)


def _finite(a: np.ndarray) -> list[float | None]:
    return [float(v) if math.isfinite(v) else None for v in np.asarray(a, dtype=float)]
