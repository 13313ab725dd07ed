"""How a page reads a record's parts: the one place an interval is read (old rows carry
`lower`/`upper`, new ones `ci: [lo, hi]`; templates never see which), human labels for the ids a
record stores, and a repair model's mean time to repair."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bathtub.distributions import Lifetime

# Ids records store, as a reader says them; an id not listed reads with its underscores as spaces.
LABELS = {
    "exact_exponential": "exact (constant failure rate)", "bisection": "solved numerically",
    "rtf": "run to failure", "non_operational": "non-operational", "operational": "operational",
    "hidden": "hidden failure", "safety": "safety or environmental", "fixed_interval": "fixed-interval task",
    "on_condition": "on-condition task", "failure_finding": "failure-finding task", "redesign": "redesign",
    "optimal_replacement": "optimal replacement", "no_measurements": "no measurements yet",
    "weibull_arrhenius": "Weibull–Arrhenius", "block": "block replacement", "age": "age replacement",
    "condition": "condition-based replacement", "crow_amsaa": "Crow-AMSAA", "mle": "MLE",
    "fine_gray": "Fine–Gray", "mcf_power_law": "power-law MCF",
    "own_line": "own path", "population": "population", "random_effects": "random effects",
}


def interval(row: Mapping[str, Any] | None) -> tuple[float, float] | None:
    """A row's two-sided interval (lo, hi), or None when it has none: `ci` (the one record shape),
    else `interval`, else the older `lower`/`upper` pair."""
    if not isinstance(row, Mapping):
        return None
    for key in ("ci", "interval"):
        pair = row.get(key)
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and None not in pair:
            return float(pair[0]), float(pair[1])
    lo, hi = row.get("lower"), row.get("upper")
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
        return float(lo), float(hi)
    return None


def lower_bound(row: Mapping[str, Any] | None) -> float | None:
    """A row's one-sided lower bound: its `lower`, else the low end of its interval."""
    if not isinstance(row, Mapping):
        return None
    if isinstance(row.get("lower"), (int, float)):
        return float(row["lower"])
    pair = interval(row)
    return None if pair is None else pair[0]


def label(raw: Any) -> str:
    """An id as words: `exact_exponential` -> "exact (constant failure rate)"."""
    if raw is None:
        return ""
    text = str(raw)
    return LABELS.get(text, text.replace("_", " "))


def mean_of(model: Mapping[str, Any] | None) -> float | None:
    """The mean of a block's inline model {distribution_id, params} (a repair model's MTTR), or None
    when it is not inline or not a plain family."""
    if not isinstance(model, Mapping) or not model.get("distribution_id") or not model.get("params"):
        return None
    try:
        life = Lifetime.from_input(model["distribution_id"], model["params"], model.get("base_distribution_id"))
        value = float(life.mean())
    except (ValueError, TypeError, KeyError, ArithmeticError):
        return None
    return value if math.isfinite(value) else None


def per_time(unit: str | None) -> str:
    """The unit of a rate: "per hour" from "hours"."""
    return f"per {unit[:-1] if unit and unit.endswith('s') else unit}" if unit else "per unit time"
