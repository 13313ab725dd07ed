"""A unit's fitted path evaluated at times (what the degradation page draws) crosses the threshold
exactly at the crossing time the model reports, for each path shape."""

from __future__ import annotations

import numpy as np
import pytest

from bathtub.degradation.model import build_model
from bathtub.degradation.paths import Path


@pytest.mark.parametrize("path", ["linear", "exponential", "power", "logarithmic"])
def test_path_value_meets_the_threshold_at_the_crossing(path: str) -> None:
    rng = np.random.default_rng(3)
    cols: dict[str, list] = {"unit": [], "t": [], "y": []}
    for k, b in enumerate([0.010, 0.013, 0.016]):
        for t in (10.0, 50.0, 100.0, 150.0, 200.0):
            cols["unit"].append(f"U{k}")
            cols["t"].append(t)
            cols["y"].append(float(np.exp(0.2 + b * t + rng.normal(0, 0.02))) if path == "exponential"
                             else float((1 + b * t) * (1 + rng.normal(0, 0.01))) if path != "power"
                             else float(0.1 * t ** (0.8 + 10 * b) * (1 + rng.normal(0, 0.01))))
    # Low enough that every unit's path crosses it within the data (a log-time path grows slowly).
    threshold = float(np.quantile(cols["y"], 0.9))
    rec = build_model(cols, {"i": "unit", "x": "t", "y": "y"}, path=path, threshold=threshold, direction="up",
                      model="pseudo_failure", life_distribution="lognormal")
    shape = Path.parse(rec["path"])
    crossed = [u for u in rec["units"] if u.get("crossing_time")]
    assert crossed
    for u in crossed:
        assert shape.value(u["intercept"], u["slope"], [u["crossing_time"]])[0] == pytest.approx(threshold, rel=1e-9)
