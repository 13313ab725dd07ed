"""The data of a stress–life plot: each level's failure and censoring times, and the fitted
life L(S) (with Fisher bounds) and B10 life along a stress grid that reaches the use stress."""

from __future__ import annotations

from typing import Any

import numpy as np

from bathtub.alt.data import AltData
from bathtub.alt.model import AltModel

GRID_POINTS = 50


def _grid(lo: float, hi: float, positive: bool) -> list[float]:
    if positive:  # even on the log scale the plot is drawn on
        return np.geomspace(lo, hi, GRID_POINTS).tolist()
    return np.linspace(lo, hi, GRID_POINTS).tolist()


def stress_life(model: AltModel, data: AltData, confidence: float, use: float | None,
                use2: float | None) -> dict[str, Any]:
    """{points: [{stress, stress2, failures: [t], censored: [t]}], lines: [{stress2, stress: [..],
    life, lower, upper, b10}]}; with two stresses one line per distinct second stress."""
    uniq, inv = data.levels()
    two = model.spec.relationship.stresses == 2
    points = []
    for j, row in enumerate(uniq):
        mask = inv == j
        points.append({"stress": float(row[0]), "stress2": float(row[1]) if two else None,
                       "failures": np.sort(data.t[mask & data.failed]).tolist(),
                       "censored": np.sort(data.t[mask & ~data.failed]).tolist()})
    s1 = [float(v) for v in uniq[:, 0]] + ([float(use)] if isinstance(use, (int, float)) else [])
    grid = _grid(min(s1), max(s1), model.spec.relationship.positive[0])
    seconds: list[float | None] = [None]
    if two:
        seconds = sorted({float(v) for v in uniq[:, 1]} | ({float(use2)} if isinstance(use2, (int, float)) else set()))
    lines = []
    for s2 in seconds:
        lives = [model.life(s, s2, confidence) for s in grid]
        lines.append({"stress2": s2, "stress": grid, "life": [e.value for e in lives],
                      "lower": [e.lower for e in lives], "upper": [e.upper for e in lives],
                      "b10": [model.percentile(0.1, s, s2, confidence).value for s in grid]})
    return {"life_is": {"weibull": "alpha (63.2% life)", "lognormal": "median",
                        "exponential": "mean"}[model.spec.life], "points": points, "lines": lines}
