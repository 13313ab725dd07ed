"""Usage readings into estimated usage rates (spec, usage ingest rules 1–4).

1. A reading at least a day after the baseline updates the item's estimated use per period:
   use delta divided by elapsed periods, smoothed by an exponentially weighted average with
   factor 0.3 (new = 0.3·observed + 0.7·old; the first estimate is the observation itself).
2. Elapsed time is converted with the fleet's period label: days, weeks, months (30.44 days),
   quarters (3 months) or years (365.25 days). Any other label gives no estimate.
3. A reading lower than the last one (meter reset or replaced unit) restarts the baseline
   without an estimate.
4. A reading older than the item's latest is ignored.

A reading less than a day after the baseline updates the current use but neither the estimate
nor the baseline, so the next estimate spans at least a day. `rate_used` is rule 4 of the fleet
setting `rate_source`: estimated rate, else manual rate, else the fleet default.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

PERIOD_DAYS = {"days": 1.0, "weeks": 7.0, "months": 30.44, "quarters": 3 * 30.44, "years": 365.25}
EWMA = 0.3
MIN_GAP_S = 86_400.0


@dataclass(frozen=True)
class ItemUsage:
    """What the fleet keeps of an item's meter: the current use and when it was read, the baseline
    of the next estimate, and the estimated rate (use per period) if any."""

    current_use: float
    read_at: float | None = None  # seconds since the epoch
    baseline_use: float | None = None
    baseline_at: float | None = None
    estimated_rate: float | None = None


def apply_reading(state: ItemUsage, use: float, at: float, period_label: str) -> tuple[ItemUsage, str]:
    """The item after one reading, and what the reading did: "ignored" (older than the latest),
    "reset" (lower than the last: new baseline, no estimate), "first" (first reading: baseline),
    "too_soon" (under a day after the baseline: use updated only), "no_period" (the label is
    not a calendar period: use and baseline updated, no estimate) or "estimated"."""
    if state.read_at is not None and at < state.read_at:
        return state, "ignored"
    if use < state.current_use:
        return replace(state, current_use=use, read_at=at, baseline_use=use, baseline_at=at), "reset"
    if state.baseline_at is None or state.baseline_use is None:
        return replace(state, current_use=use, read_at=at, baseline_use=use, baseline_at=at), "first"
    elapsed_s = at - state.baseline_at
    if elapsed_s < MIN_GAP_S:
        return replace(state, current_use=use, read_at=at), "too_soon"
    days = PERIOD_DAYS.get(period_label)
    moved = replace(state, current_use=use, read_at=at, baseline_use=use, baseline_at=at)
    if days is None:
        return moved, "no_period"
    observed = (use - state.baseline_use) / (elapsed_s / 86_400.0 / days)
    old = state.estimated_rate
    rate = observed if old is None else EWMA * observed + (1.0 - EWMA) * old
    return replace(moved, estimated_rate=rate), "estimated"


def rate_used(rate_source: str, estimated: float | None, manual: float | None,
              default: float | None) -> tuple[float | None, str]:
    """(rate, basis): with rate_source `estimated`, the estimate, else the manual rate, else the
    fleet default; with `manual`, the manual rate, else the default."""
    if rate_source == "estimated" and estimated is not None:
        return estimated, "estimated"
    if manual is not None:
        return manual, "manual"
    if default is not None:
        return default, "fleet_default"
    return None, "none"
