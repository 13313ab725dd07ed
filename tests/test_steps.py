"""Stored step curves: thinned to every k-th step and the last, other fields untouched."""

from __future__ import annotations

from bathtub import steps


def test_a_short_curve_is_kept_as_it_is() -> None:
    curve = {"time": [1.0, 2.0, 3.0], "sf": [0.9, 0.5, 0.1], "confidence": 0.95}
    assert steps.thin(curve, 3) is curve
    assert steps.kept(3, 3) is None


def test_a_long_curve_keeps_the_first_the_last_and_evenly_spaced_steps() -> None:
    curve = {"time": [float(i) for i in range(12)], "sf": [1.0 - i / 12 for i in range(12)],
             "confidence": 0.9, "groups": ["a", "b"]}
    out = steps.thin(curve, 5)
    # linspace(0, 11, 5) -> 0, 2.75, 5.5, 8.25, 11 -> 0, 2, 5, 8, 11
    assert out["time"] == [0.0, 2.0, 5.0, 8.0, 11.0]
    assert out["sf"] == [curve["sf"][i] for i in (0, 2, 5, 8, 11)]
    assert out["confidence"] == 0.9 and out["groups"] == ["a", "b"]  # not per-step lists: untouched
    assert out["thinned_from"] == 12 and "thinned_from" not in curve
    assert list(steps.kept(12, 5)) == [0, 2, 5, 8, 11]
