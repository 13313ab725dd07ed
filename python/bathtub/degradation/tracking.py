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
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bathtub.degradation.crossing import LineCrossing, crossing_sf
from bathtub.degradation.joint import posterior, unit_life
from bathtub.degradation.paths import Path, check_direction
from bathtub.distributions import Lifetime
from bathtub.errors import InputError, RowError

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
    life = Lifetime.of(life_rec["distribution"], {p["name"]: p["value"] for p in life_rec["params"]},
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
    return remaining_lives(record, [(times, values)], probability)[0]


def remaining_lives(record: Mapping[str, Any], series: Sequence[tuple[Any, Any]], probability: float = 0.9
                    ) -> list[dict[str, Any]]:
    """`remaining_life` of many items ((times, values) each) at once: their lines' quantiles are solved
    together, so a fleet's items cost little more than one. Bad measurements raise a RowError whose
    row is the item's index in `series`."""
    if not 0.0 < probability < 1.0:
        raise InputError("probability", "must lie in (0, 1)")
    path = Path.parse(record["path"])
    sign = check_direction(record["direction"])
    u = float(path.h(np.array([record["threshold"]]))[0])
    sigma = pooled_sigma(record) if record.get("model") != "random_effects" else None
    out: list[dict[str, Any]] = [{} for _ in series]
    lines: list[tuple[int, LineCrossing, float, str, bool]] = []
    for k, (times, values) in enumerate(series):
        t = np.asarray(times, dtype=float)
        y = np.asarray(values, dtype=float)
        if t.size == 0:
            out[k] = {"status": "no_measurements", "median": None, "interval": None, "probability": probability,
                      "method": None, "basis": None, "as_of": None,
                      "null_reason": {"median": "no measurements yet", "interval": "no measurements yet"}}
            continue
        if t.size != y.size or np.any(~np.isfinite(t)) or np.any(~np.isfinite(y)) or np.any(np.diff(t) <= 0):
            raise RowError("series", k, "times and values must be finite, with times increasing")
        if (path.y == "log" and np.any(y <= 0)) or (path.y == "sqrt" and np.any(y < 0)):
            raise RowError("series", k, f"a value is outside the model's path ({path.y} of the value)")
        age = float(t[-1])
        crossed = bool(sign * (float(y[-1]) - float(record["threshold"])) >= 0)
        if record.get("model") == "random_effects":
            mu, cov = posterior(record, t, y)
            lines.append((k, unit_life(record, mu, cov), age, "random_effects", crossed))
            continue
        check_model(record, "model")
        noise = sigma
        if noise is None and t.size > 2:
            z = path.h(y)
            coef = np.polyfit(t, z, 1)
            noise = float(np.sqrt(np.sum((z - np.polyval(coef, t)) ** 2) / (t.size - 2))) or None
        if t.size < 2 or noise is None:
            out[k] = {**_population(record, age, probability), "probability": probability,
                      "method": METHODS["population"], "basis": "population", "as_of": age,
                      "last_value_past_threshold": crossed}
            continue
        coef, cov = own_line(path, t, y, noise)
        sa, sb = math.sqrt(max(cov[0, 0], 0.0)), math.sqrt(max(cov[1, 1], 0.0))
        rho = float(np.clip(cov[0, 1] / (sa * sb), -1.0, 1.0))
        lines.append((k, LineCrossing(float(coef[0]), float(coef[1]), sa, sb, rho, u, sign), age, "own_line",
                      crossed))
    if lines:
        rows = _residual_summaries([ln[1] for ln in lines], np.array([ln[2] for ln in lines]), probability)
        for (k, _, age, basis, crossed), row in zip(lines, rows):
            extra = {"method": METHODS[basis], "basis": basis, "as_of": age, "last_value_past_threshold": crossed}
            if row is None:
                out[k] = {**_past(age, "the path fitted to its measurements is past the threshold"),
                          "probability": probability, **extra}
            else:
                out[k] = {"status": "predicted", **row, **extra}
    return out


MEAN_TAIL = 1e-15
MEAN_PANELS = 16
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(16)


def _residual_summaries(lines: list[LineCrossing], ages: np.ndarray, probability: float
                        ) -> list[dict[str, Any] | None]:
    """Median, central interval, mean and P(never) of each line's life conditioned on survival to its
    age (None where that survival has no chance): the quantiles of all lines solved together by a
    bracketed Illinois (modified regula falsi) iteration on S(age + s)/S(age)."""
    up = np.array([ln._up for ln in lines])  # (n, 3): A, B and u in the upward form
    ma, mb, u = up[:, 0], up[:, 1], up[:, 2]
    sa = np.array([ln.sd_a for ln in lines])
    sb = np.array([ln.sd_b for ln in lines])
    rho = np.array([ln.rho for ln in lines])
    s_age = crossing_sf(ma, mb, sa, sb, rho, u, ages)
    alive = s_age > 1e-300
    p_never = np.array([ln.p_never for ln in lines]) / np.where(alive, s_age, 1.0)
    tail = (1.0 - probability) / 2.0
    qs = np.array([tail, 0.5, 1.0 - tail, 1.0 - MEAN_TAIL])  # the last one ends the mean's integral
    n = len(lines)
    # one row per (line, quantile): solve S(age + s) = (1 − q)·S(age) for s >= 0
    rep = np.repeat(np.arange(n), qs.size)
    # on the log scale, where a tail's S is near-quadratic rather than flat against zero
    log_target = np.log(np.tile(1.0 - qs, n)) + np.log(np.where(alive, s_age, 1.0))[rep]
    never = (np.tile(qs, n) >= 1.0 - p_never[rep]) | ~alive[rep]
    tol = np.tile([1e-14, 1e-14, 1e-14, 1e-6], n)  # the mean's integration bound needs no more

    def f(s: np.ndarray) -> np.ndarray:
        sf = crossing_sf(ma[rep], mb[rep], sa[rep], sb[rep], rho[rep], u[rep], ages[rep] + s)
        return np.log(np.maximum(sf, 1e-300)) - log_target

    scale = np.array([max(ln.scale() - a, ln.scale() * 1e-3) for ln, a in zip(lines, ages)])[rep]
    lo, hi = np.zeros(rep.size), np.maximum(scale, 1e-300)
    f_lo, f_hi = -np.log(np.tile(1.0 - qs, n)), f(hi)  # f(0) = −log(1 − q) > 0
    for _ in range(2100):  # grow the bracket until S falls to the target (never: left as is)
        grow = (f_hi > 0) & ~never & np.isfinite(hi)
        if not grow.any():
            break
        lo = np.where(grow, hi, lo)
        f_lo = np.where(grow, f_hi, f_lo)
        hi = np.where(grow, hi * 2.0, hi)
        f_hi = np.where(grow, f(hi), f_hi)
    never |= (f_hi > 0) | ~np.isfinite(hi)
    side = np.zeros(rep.size)
    est = (lo + hi) / 2.0
    done = never.copy()
    for _ in range(200):
        x = (lo * f_hi - hi * f_lo) / np.where(f_hi != f_lo, f_hi - f_lo, 1.0)
        x = np.where(np.isfinite(x) & (x > lo) & (x < hi), x, (lo + hi) / 2.0)
        fx = f(x)
        hit = ~done & (np.abs(fx) <= 1e-13)  # S within 1e-13 of the target, relatively: x is the quantile
        est = np.where(hit, x, est)
        done |= hit
        live = ~done
        right = live & (fx > 0)  # the root lies above x
        left = live & ~(fx > 0)
        f_hi = np.where(right & (side > 0), f_hi / 2.0, f_hi)  # Illinois: halve the end kept twice in a row
        f_lo = np.where(left & (side < 0), f_lo / 2.0, f_lo)
        lo, f_lo = np.where(right, x, lo), np.where(right, fx, f_lo)
        hi, f_hi = np.where(left, x, hi), np.where(left, fx, f_hi)
        side = np.where(right, 1.0, np.where(left, -1.0, side))
        closed = live & (hi - lo <= tol * hi)
        est = np.where(closed, (lo + hi) / 2.0, est)
        done |= closed
        if done.all():
            break
    est = np.where(done, est, (lo + hi) / 2.0)
    root = np.where(never, math.inf, est).reshape(n, qs.size)
    means = np.full(n, math.inf)
    finite = alive & (p_never <= 0) & np.isfinite(root[:, 3])
    if finite.any():
        # E[s] = ∫0^∞ S(age + s)/S(age) ds, Gauss–Legendre on equal panels up to the 1 − 1e-15 quantile
        # (a line whose slope never takes the wrong sign has a Gaussian-light tail beyond it)
        idx = np.nonzero(finite)[0]
        end = root[idx, 3]
        x = (np.arange(MEAN_PANELS)[:, None] + (_NODES[None, :] + 1.0) / 2.0).ravel() / MEAN_PANELS  # (P·m,) in [0, 1]
        w = np.tile(_WEIGHTS / 2.0, MEAN_PANELS) / MEAN_PANELS
        pts = end[:, None] * x[None, :]
        col = np.repeat(idx, x.size)
        sf = crossing_sf(ma[col], mb[col], sa[col], sb[col], rho[col], u[col], ages[col] + pts.ravel())
        means[idx] = end * ((sf.reshape(idx.size, x.size) / s_age[idx, None]) @ w)
    rows: list[dict[str, Any] | None] = []
    for k in range(n):
        if not alive[k]:
            rows.append(None)
            continue
        lo_k, med, hi_k = (float(v) for v in root[k, :3])
        mean = float(means[k])
        never_txt = (f"the path never reaches the threshold with probability p_never = {p_never[k]:.3g} (a Gaussian "
                     "slope takes the wrong sign), so quantiles at or above 1 - p_never and the mean are infinite")
        reasons = {name: never_txt for name, v in (("median", med), ("interval", hi_k), ("mean", mean))
                   if not math.isfinite(v)}
        rows.append({"median": _finite(med), "interval": [_finite(lo_k), _finite(hi_k)], "probability": probability,
                     "mean": _finite(mean), "p_never": float(p_never[k]), "null_reason": reasons or None})
    return rows


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def predict(record: dict[str, Any], series: dict[str, tuple[list[float], list[float]]], names: list[str],
            probability: float) -> dict[str, dict[str, Any]]:
    """{item: its row} for the named items from their measurements (in a worker process)."""
    data = [series.get(name, ([], [])) for name in names]
    try:
        lives = remaining_lives(record, data, probability)
    except RowError as e:  # stored measurements the model cannot read (a log path and a value <= 0)
        raise InputError("model_id", f"item {names[e.row]!r}: {e.row_rule}") from None
    return {name: {"name": name, "measurements": len(ts), "last_time": ts[-1] if ts else None,
                   "last_value": vs[-1] if vs else None, "remaining_life": life}
            for name, (ts, vs), life in zip(names, data, lives)}
