"""Pseudo-failure times: each unit's fitted path extrapolated to the threshold, then a life
distribution fitted to those times (the life fitter's MLE with Fisher bounds).

A unit whose fitted path heads away from the threshold, or reaches it only beyond
`extrapolation` × its last reading time, has no credible pseudo-failure time: it is
right-censored at its last reading (and listed as such), which is what is known of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from bathtub.censoring import FAILURE, RIGHT
from bathtub.degradation.paths import Path, Readings, check_direction, unit_lines
from bathtub.errors import InputError
from bathtub.life.data import LifeData
from bathtub.life.fit import fit, fit_best

DEFAULT_EXTRAPOLATION = 3.0


def crossing_times(path: Path, lines: np.ndarray, threshold: float, direction: str) -> np.ndarray:
    """Where each fitted line h(y) = A + B·g(t) meets h(threshold), in time (inf where its
    slope heads away from the threshold or is flat)."""
    sign = check_direction(direction)
    hd = float(path.h(np.array([threshold]), "threshold")[0])
    a, b = lines[:, 0], lines[:, 1]
    toward = sign * b > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(toward, (hd - a) / np.where(toward, b, 1.0), np.inf)
    out = np.full(len(a), np.inf)
    out[toward] = path.g_inv(u[toward])
    return out


def pseudo_failures(
    path: Path,
    readings: Readings,
    threshold: float,
    direction: str,
    *,
    extrapolation: float = DEFAULT_EXTRAPOLATION,
    fields: tuple[str, str] = ("x", "y"),
) -> dict[str, Any]:
    """Per unit: fitted line, crossing time, and whether it is a pseudo-failure or censored.

    A unit already past the threshold at its first reading by its own fitted line crosses
    before that reading; its crossing time is kept (it is a failure early in life), but a
    time <= 0 (the line starts past the threshold) is refused, naming the unit."""
    if not np.isfinite(threshold):
        raise InputError("threshold", "must be a finite number")
    if not (np.isfinite(extrapolation) and extrapolation >= 1.0):
        raise InputError("extrapolation", "must be a finite number >= 1 (a multiple of each unit's last reading time)")
    lines = unit_lines(path, readings, fields=fields)
    times = crossing_times(path, lines, threshold, direction)
    last = readings.t[readings.start[1:] - 1]
    for k, tk in enumerate(times):
        if tk <= 0:
            raise InputError("threshold", f"unit {readings.units[k]!r}: its fitted path starts past the threshold "
                                          f"(crossing at {tk:.6g}); check the threshold and direction")
    failed = np.isfinite(times) & (times <= extrapolation * last)
    if not failed.any():
        raise InputError("threshold", f"no unit's fitted path reaches {threshold:g} ({direction}) within "
                                      f"{extrapolation:g} × its last reading time")
    units = []
    for k, u in enumerate(readings.units):
        a, b, rss, n = lines[k]
        units.append({
            "id": u, "intercept": float(a), "slope": float(b), "readings": int(n),
            "residual_sd": float(np.sqrt(rss / (n - 2))) if n > 2 else None,
            "last_reading": float(last[k]),
            "crossing_time": float(times[k]) if np.isfinite(times[k]) else None,
            "status": "failure" if failed[k] else "censored",
            "censored_because": None if failed[k] else (
                "its fitted path heads away from the threshold" if not np.isfinite(times[k])
                else f"it reaches the threshold only beyond {extrapolation:g} × its last reading"),
        })
    x = np.where(failed, times, last)
    return {"units": units, "x": x, "c": np.where(failed, FAILURE, RIGHT)}


def fit_pseudo_failures(
    path: Path,
    readings: Readings,
    threshold: float,
    direction: str,
    life_distribution: str = "weibull",
    *,
    extrapolation: float = DEFAULT_EXTRAPOLATION,
    fields: tuple[str, str] = ("x", "y"),
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The pseudo-failure analysis: per-unit table plus the fitted life model's record."""
    pf = pseudo_failures(path, readings, threshold, direction, extrapolation=extrapolation, fields=fields)
    data = LifeData.from_arrays(x=pf["x"], c=pf["c"])
    opts = dict(options or {})
    if life_distribution == "best":
        lf = fit_best(data, options=opts)
    else:
        try:
            lf = fit(data, life_distribution, options=opts)
        except InputError as e:
            field = "life_distribution" if e.field == "distribution" else e.field
            raise InputError(field, e.rule) from None
    life = lf.to_record()
    n_fail = int(np.sum(pf["c"] == FAILURE))
    return {"units": pf["units"], "life": life, "pseudo_failures": n_fail,
            "censored": len(readings.units) - n_fail, "extrapolation": extrapolation}
