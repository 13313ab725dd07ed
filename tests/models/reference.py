"""Small reference datasets every fitted kind is fitted on (tests/models, the page tests, and the
old-record fixture tests/service/data/old_model_records.json, written from these data by the
previous release's library)."""

from __future__ import annotations

import math
from typing import Any

# 30 lives, the last 6 right-censored; a covariate z, two failure modes and three stress levels.
LIVES = [412.0, 655.0, 1030.0, 1245.0, 1590.0, 320.0, 870.0, 1410.0, 760.0, 980.0, 1820.0, 540.0, 1120.0, 690.0,
         1350.0, 275.0, 1685.0, 905.0, 1190.0, 470.0, 1505.0, 820.0, 610.0, 1075.0, 2000.0, 2000.0, 2000.0, 2000.0,
         2000.0, 2000.0]
CENSORED = [0] * 24 + [1] * 6
Z = [round(math.sin(3.0 * k), 3) for k in range(30)]
TEMP = [40.0] * 10 + [60.0] * 10 + [80.0] * 10
# a censored row carries no failure mode (the competing-risks fit refuses one that does)
MODES = [("wear", "crack")[k % 2] if not c else "" for k, c in enumerate(CENSORED)]
LIFE = {"x": LIVES, "c": CENSORED, "z": Z, "mode": MODES, "temp": TEMP}
# ALT lives fall with temperature (an Arrhenius-like shrink of the same sample per level)
ALT = {"x": [x * f for x, f in zip(LIVES, [4.0] * 10 + [2.0] * 10 + [1.0] * 10)], "c": CENSORED, "temp": TEMP}
GROWTH = {"t": [15.0, 42.0, 80.0, 130.0, 190.0, 270.0, 350.0, 460.0, 580.0, 720.0, 880.0, 1050.0]}
CRACKS: dict[str, list[Any]] = {"i": [], "x": [], "y": []}
for _k, _b in enumerate([0.010, 0.012, 0.009, 0.011]):
    for _j, _t in enumerate([100.0, 200.0, 300.0, 400.0, 500.0]):
        CRACKS["i"].append(f"U{_k}")
        CRACKS["x"].append(_t)
        CRACKS["y"].append(1.0 + _b * _t + 0.01 * ((_j * 7 + _k * 3) % 5 - 2))
DEGRADATION = {"mapping": {"i": "i", "x": "x", "y": "y"}, "path": "linear", "threshold": 5.0, "direction": "up",
               "model": "pseudo_failure", "life_distribution": "lognormal", "kind": "degradation"}
