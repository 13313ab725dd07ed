"""A fitted recurrent-event record's expected cumulative events per system, Λ(t), for plotting
against the data's mean cumulative function: power law λ·t^β (Crow-AMSAA), log-linear
e^γ0 (e^(γ1 t) - 1)/γ1 (Cox-Lewis), homogeneous λ·t, the power-law MCF (t/α)^β. Other records (generalised renewal, the
non-parametric MCF itself) have no closed-form Λ: None."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

POWER_IDS = ("crow_amsaa", "power_law")


def cumulative_intensity(record: Mapping[str, Any], t: Any) -> np.ndarray | None:
    """Λ(t) of `record` at times `t` (the record's unit), or None when the model has no closed form."""
    t = np.asarray(t, dtype=float)
    p = {q["name"]: float(q["value"]) for q in record.get("params", [])}
    dist = record.get("distribution")
    if dist in POWER_IDS and {"lambda", "beta"} <= set(p):
        return p["lambda"] * t ** p["beta"]
    if dist == "loglinear" and {"g0", "g1"} <= set(p):
        g0, g1 = p["g0"], p["g1"]
        # expm1(g1 t)/g1 -> t as g1 -> 0: no cancellation for a nearly constant rate
        return np.exp(g0) * (t if g1 == 0 else np.expm1(g1 * t) / g1)
    if dist == "mcf_power_law" and {"alpha", "beta"} <= set(p):
        return (t / p["alpha"]) ** p["beta"]
    if dist == "hpp" and "lambda" in p:
        return p["lambda"] * t
    return None
