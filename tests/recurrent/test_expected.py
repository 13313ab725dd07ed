"""Expected cumulative events of fitted recurrent records (what the share page draws against the
MCF): at the end of a failure-terminated single system, each maximum-likelihood fit's score
equation makes Λ(T) equal the number of events — a property of the MLE, not of our code."""

from __future__ import annotations

import numpy as np
import pytest

from bathtub.recurrent.expected import cumulative_intensity
from bathtub.recurrent.record import fit_columns

# reliability's system_growth(): MIL-HDBK-189C's example, failure-terminated at the 22nd event.
GROWTH = [2.7, 10.3, 12.5, 30.6, 57.0, 61.3, 80.0, 109.5, 125.0, 128.6, 143.8, 167.9, 229.2, 296.7, 320.6, 328.2,
          366.2, 396.7, 421.1, 438.2, 501.2, 620.0]


@pytest.mark.parametrize("model", ["crow_amsaa", "loglinear", "hpp"])
def test_expected_events_at_the_end_equal_the_count(model: str) -> None:
    rec = fit_columns({"t": GROWTH}, {"t": "t"}, model)
    lam = cumulative_intensity(rec, [0.0, GROWTH[-1]])
    assert lam is not None
    assert lam[0] == 0.0
    assert lam[1] == pytest.approx(len(GROWTH), rel=1e-6)


def test_power_law_shape_and_models_without_a_closed_form() -> None:
    rec = fit_columns({"t": GROWTH}, {"t": "t"}, "crow_amsaa")
    p = {q["name"]: q["value"] for q in rec["params"]}
    t = np.array([10.0, 100.0, 1000.0])
    assert cumulative_intensity(rec, t) == pytest.approx(p["lambda"] * t ** p["beta"])
    assert cumulative_intensity({"distribution": "kijima1", "params": []}, t) is None
