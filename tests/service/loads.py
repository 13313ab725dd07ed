"""Life data with a load covariate, as the saved-regression tests fit it: Weibull shape 1.5, scale 100 h
at no load, a proportional-hazards effect of 0.7 per unit of load (the AFT factor e^(-0.7 load / 1.5) on
time), loads uniform on [0, 2]."""

from __future__ import annotations

from typing import Any

import numpy as np


def pump_loads(seed: int, n: int, censor_at: float | None = 150.0) -> dict[str, list[Any]]:
    """`n` units from `seed`: columns t, load and, when `censor_at` is given, c (1 = censored there)."""
    rng = np.random.default_rng(seed)
    load = rng.uniform(0, 2, n)
    t = 100 * rng.weibull(1.5, n) * np.exp(-0.7 * load / 1.5)
    if censor_at is None:
        return {"t": t.tolist(), "load": load.tolist()}
    return {"t": np.minimum(t, censor_at).tolist(), "c": (t > censor_at).astype(int).tolist(), "load": load.tolist()}
