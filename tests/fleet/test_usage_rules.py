"""Usage ingest rules 1–4 of the spec, table-driven: first reading, under a day apart, meter reset,
old reading, every period label and an unknown one; and the rate_source fall-backs."""

from __future__ import annotations

import pytest

from bathtub.fleet import PERIOD_DAYS, ItemUsage, apply_reading, rate_used

DAY = 86_400.0


def walk(readings: list[tuple[float, float]], label: str = "days") -> list[tuple[str, ItemUsage]]:
    state = ItemUsage(current_use=0.0)
    out = []
    for use, at in readings:
        state, what = apply_reading(state, use, at, label)
        out.append((what, state))
    return out


def test_first_then_estimate_then_ewma() -> None:
    steps = walk([(100.0, 0.0), (110.0, 2 * DAY), (130.0, 4 * DAY)])
    assert steps[0][0] == "first" and steps[0][1].estimated_rate is None
    assert steps[1][0] == "estimated" and steps[1][1].estimated_rate == pytest.approx(5.0)  # 10 over 2 days
    # 20 over 2 days = 10 per day; EWMA 0.3: 0.3·10 + 0.7·5
    assert steps[2][1].estimated_rate == pytest.approx(0.3 * 10 + 0.7 * 5)


def test_under_a_day_updates_use_only_and_keeps_the_baseline() -> None:
    steps = walk([(100.0, 0.0), (104.0, 0.5 * DAY), (112.0, 1.0 * DAY)])
    assert steps[1][0] == "too_soon" and steps[1][1].current_use == 104.0 and steps[1][1].estimated_rate is None
    assert steps[1][1].baseline_use == 100.0
    assert steps[2][0] == "estimated" and steps[2][1].estimated_rate == pytest.approx(12.0)  # 12 over 1 day


def test_reset_and_old_reading() -> None:
    steps = walk([(100.0, 0.0), (150.0, 5 * DAY), (20.0, 6 * DAY), (40.0, 8 * DAY), (999.0, 7 * DAY)])
    assert steps[2][0] == "reset" and steps[2][1].current_use == 20.0
    assert steps[2][1].estimated_rate == pytest.approx(10.0)  # kept: a reset gives no new estimate
    assert steps[3][0] == "estimated" and steps[3][1].estimated_rate == pytest.approx(0.3 * 10.0 + 0.7 * 10.0)
    assert steps[4][0] == "ignored" and steps[4][1] == steps[3][1]


@pytest.mark.parametrize(("label", "days"), [("days", 1.0), ("weeks", 7.0), ("months", 30.44),
                                             ("quarters", 91.32), ("years", 365.25)])
def test_every_period_label(label: str, days: float) -> None:
    assert PERIOD_DAYS[label] == pytest.approx(days)
    steps = walk([(0.0, 0.0), (60.0, 3 * DAY)], label)
    assert steps[1][1].estimated_rate == pytest.approx(60.0 / (3 / days))


def test_unknown_label_gives_no_estimate() -> None:
    steps = walk([(0.0, 0.0), (60.0, 3 * DAY)], "shifts")
    assert steps[1][0] == "no_period" and steps[1][1].estimated_rate is None and steps[1][1].current_use == 60.0


@pytest.mark.parametrize(("source", "estimated", "manual", "default", "expected"), [
    ("estimated", 5.0, 3.0, 1.0, (5.0, "estimated")),
    ("estimated", None, 3.0, 1.0, (3.0, "manual")),
    ("estimated", None, None, 1.0, (1.0, "fleet_default")),
    ("estimated", None, None, None, (None, "none")),
    ("manual", 5.0, 3.0, 1.0, (3.0, "manual")),
    ("manual", 5.0, None, 1.0, (1.0, "fleet_default")),
    ("manual", 5.0, None, None, (None, "none")),
])
def test_rate_source_fall_backs(source, estimated, manual, default, expected) -> None:
    assert rate_used(source, estimated, manual, default) == expected
