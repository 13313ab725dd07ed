"""A tracked item's remaining life from a saved degradation model and the item's own measurements.

Times are in the model's unit; the item's age is its last measurement time (it worked then), so
the remaining life is counted from that measurement, conditioned on the item not having crossed
the threshold by then: S(age + s) / S(age).

- random_effects model (the joint, condition-based model): the item's path coefficients updated
  by its measurements in closed form (`joint.posterior`), then the first-crossing law.
- pseudo_failure model: the item's own least-squares line h(y) = A + B·t with the model's pooled
  measurement noise σ taken as known, read as (A, B) ~ N((Â, B̂), σ²(XᵀX)⁻¹) (a flat prior on the
  line). Its crossing time's median is the line's own crossing (D − Â)/B̂ and its central interval
  is Fieller's inverse-prediction interval (exactly so when survival to the age is nearly
  certain). An item with fewer than two measurement times has no line: its remaining life is the
  model's fitted life distribution conditioned on survival to the age (the population's).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from bathtub.degradation.crossing import LineCrossing, Residual
from bathtub.degradation.joint import posterior, summarise, unit_life
from bathtub.degradation.paths import Path, check_direction
from bathtub.distributions import Lifetime
from bathtub.errors import InputError

METHODS = {
    "random_effects": "random-effects posterior: the item's path coefficients updated by its measurements "
                      "(closed-form Gaussian update), first crossing of the threshold conditioned on survival "
                      "to the last measurement",
    "own_line": "the item's own least-squares path with the model's pooled measurement noise taken as known; "
                "median = the line's crossing, interval = Fieller inverse prediction, conditioned on survival to "
                "the last measurement",
    "population": "fewer than two measurement times: the model's fitted life distribution conditioned on "
                  "survival to the last measurement",
}


def check_model(record: Mapping[str, Any], field: str = "model_id") -> None:
    """Refuse a degradation model a tracked item's remaining life cannot come from."""
    model = record.get("model")
    if model not in ("random_effects", "pseudo_failure"):
        raise InputError(field, f"a degradation model (random_effects or pseudo_failure) is needed, not {model!r}")
    if model == "pseudo_failure" and not Path.parse(record["path"]).time_linear:
        raise InputError(field, "an item's own path is projected to the threshold on untransformed time: a "
                                "pseudo_failure model on a power or logarithmic path cannot be tracked; fit one "
                                "on a linear or exponential path, or a random_effects model")


def pooled_sigma(record: Mapping[str, Any]) -> float | None:
    """The pseudo-failure model's measurement noise on the path's value axis, pooled over its units'
    own line fits: sqrt(Σ RSS_i / Σ (n_i − 2)); None when no unit had a third reading."""
    rss, df = 0.0, 0
    for u in record.get("units") or []:
        sd, n = u.get("residual_sd"), int(u.get("readings") or 0)
        if sd is not None and n > 2:
            rss += float(sd) ** 2 * (n - 2)
            df += n - 2
    return math.sqrt(rss / df) if df > 0 and rss > 0 else None


def own_line(path: Path, t: np.ndarray, y: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """(Â, B̂) of h(y) = A + B·t by least squares and their covariance σ²(XᵀX)⁻¹."""
    X = np.column_stack([np.ones(t.size), t])
    z = path.h(y)
    xtx = X.T @ X
    coef = np.linalg.solve(xtx, X.T @ z)
    cov = sigma * sigma * np.linalg.inv(xtx)
    return coef, (cov + cov.T) / 2.0


def _population(record: Mapping[str, Any], age: float, probability: float) -> dict[str, Any]:
    life_rec = record["life"]
    life = Lifetime(life_rec["distribution"], {p["name"]: p["value"] for p in life_rec["params"]},
                    life_rec.get("base_distribution"))
    s_age = float(life.sf(age))
    if s_age <= 0.0:
        return _past(age, "the model's life distribution gives no chance of surviving to the last measurement")
    tail = (1.0 - probability) / 2.0
    qs = [float(life.isf(s_age * (1.0 - q))) - age for q in (tail, 0.5, 1.0 - tail)]
    return {"status": "predicted", "median": max(qs[1], 0.0), "interval": [max(qs[0], 0.0), max(qs[2], 0.0)],
            "probability": probability, "mean": None, "p_never": 0.0,
            "null_reason": {"mean": "not computed for the population fallback"}}


def _past(age: float, why: str) -> dict[str, Any]:
    return {"status": "past_threshold", "median": 0.0, "interval": [0.0, 0.0], "mean": 0.0, "p_never": 0.0,
            "null_reason": None, "note": f"{why}: the item has reached the threshold by age {age:g}"}


def remaining_life(record: Mapping[str, Any], times: Any, values: Any, probability: float = 0.9) -> dict[str, Any]:
    """{status, median, interval, probability, mean, p_never, method, basis, as_of, ...} of one item's
    remaining life from its measurements (times increasing, in the model's unit)."""
    if not 0.0 < probability < 1.0:
        raise InputError("probability", "must lie in (0, 1)")
    t = np.asarray(times, dtype=float)
    y = np.asarray(values, dtype=float)
    if t.size == 0:
        return {"status": "no_measurements", "median": None, "interval": None, "probability": probability,
                "method": None, "basis": None, "as_of": None,
                "null_reason": {"median": "no measurements yet", "interval": "no measurements yet"}}
    if t.size != y.size or np.any(~np.isfinite(t)) or np.any(~np.isfinite(y)) or np.any(np.diff(t) <= 0):
        raise InputError("measurements", "times and values must be finite, with times increasing")
    path = Path.parse(record["path"])
    path.h(y, "value")  # a value outside the path's domain (log of a value <= 0) is refused
    age = float(t[-1])
    sign = check_direction(record["direction"])
    crossed = sign * (float(y[-1]) - float(record["threshold"])) >= 0
    if record.get("model") == "random_effects":
        basis = "random_effects"
        mu, cov = posterior(record, t, y)
        line = unit_life(record, mu, cov)
    else:
        check_model(record, "model")
        sigma = pooled_sigma(record)
        if sigma is None and t.size > 2:
            z = path.h(y)
            coef = np.polyfit(t, z, 1)
            sigma = float(np.sqrt(np.sum((z - np.polyval(coef, t)) ** 2) / (t.size - 2))) or None
        if t.size < 2 or sigma is None:
            out = _population(record, age, probability)
            return {**out, "probability": probability, "method": METHODS["population"], "basis": "population",
                    "as_of": age, "last_value_past_threshold": bool(crossed)}
        basis = "own_line"
        coef, cov = own_line(path, t, y, sigma)
        sa, sb = math.sqrt(max(cov[0, 0], 0.0)), math.sqrt(max(cov[1, 1], 0.0))
        rho = float(np.clip(cov[0, 1] / (sa * sb), -1.0, 1.0))
        u = float(path.h(np.array([record["threshold"]]))[0])
        line = LineCrossing(float(coef[0]), float(coef[1]), sa, sb, rho, u, sign)
    extra = {"method": METHODS[basis], "basis": basis, "as_of": age, "last_value_past_threshold": bool(crossed)}
    if float(line.sf(age)) <= 1e-300:
        return {**_past(age, "the path fitted to its measurements is past the threshold"), "probability": probability,
                **extra}
    out = summarise(Residual(line, age), probability)
    out.pop("unit_effects")
    return {"status": "predicted", **out, **extra}
