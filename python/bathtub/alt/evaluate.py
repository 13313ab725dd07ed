"""A saved ALT record evaluated at a use stress: the life distribution there (at a time, or
whole curves) beside the use-level figures with Fisher bounds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bathtub.alt.model import AltModel, use_level
from bathtub.life.evaluate import reliability_at, reliability_curves


def at_stress(record: Mapping[str, Any], stress: float | None, stress2: float | None, t: float | None,
              points: int = 200) -> dict[str, Any]:
    """{"use": use-level figures, "at": {t, reliability, ...}} or {"use", "curves"}."""
    model = AltModel.from_record(record)
    confidence = float(record.get("confidence", 0.95))
    levels = [(lv["stress"], lv.get("stress2")) for lv in record.get("levels", [])]
    use = use_level(model, stress, stress2, confidence=confidence, levels=levels)
    dist = use["distribution"]
    if t is not None:
        return {"use": use, "at": reliability_at(dist, t)}
    return {"use": use, "curves": reliability_curves(dist, points)}
