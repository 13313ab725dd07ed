"""Replacement at planned shutdowns: which shuts to use so the expected cost over a horizon is least.

A part with a known life model, now `current_age` old, ages by `usage_rate` life units a day. It
can be replaced at any occurrence of the calendar shuts (each with its own cost); a failure in
between costs `failure_cost` and renews the part. A planned replacement renews the part too, so
the process starts afresh there and the best plan follows by dynamic programming over the shut
sequence: best[j] = min_i best[i] + failure_cost·E[N_i(L_ij)] + cost_j, where L_ij is the usage
between shut i and shut j and E[N_i] the expected failures from i's starting age (a delayed
renewal function from the present age, the ordinary one after a replacement).
"""

from __future__ import annotations

import calendar
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import numpy as np

from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.strategy.guard import answered
from bathtub.strategy.inputs import cost, life_model, mean_life, number, time_scale
from bathtub.strategy.renewal import delayed_renewal_function, renewal_function

EVERY_UNITS = ("days", "weeks", "months", "years")
MAX_OCCURRENCES = 5000
# the overflows a finite request can still reach (stated in the tool's schema)
USAGE_OVERFLOW_RULE = "usage over the horizon is beyond floating point for this life model"
COST_OVERFLOW_RULE = "the plan's costs add up past floating point (about 1.8e308); give costs in a larger currency unit"
TOO_MANY_SHUTS = f"at most {MAX_OCCURRENCES} shut dates within the horizon"
MAX_HORIZON_DAYS = 36_525.0  # a century: plans beyond it mean nothing, and dates end in 9999


@dataclass(frozen=True)
class Occurrence:
    """One shut on one date: `day` is days after today."""

    day: int
    date: date
    name: str
    cost: float


def parse_date(value: Any, field: str) -> date:
    """A YYYY-MM-DD string (or a `date`) as a date."""
    if isinstance(value, date):
        return value
    if not isinstance(value, str):
        raise InputError(field, "must be a date YYYY-MM-DD")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise InputError(field, "must be a date YYYY-MM-DD") from None


def _add_months(d: date, months: int) -> date:
    """The same day `months` later, clamped to the month's end (Jan 31 + 1 month = Feb 28/29)."""
    y, m0 = divmod(d.month - 1 + months, 12)
    year, month = d.year + y, m0 + 1
    return date(year, month, min(d.day, calendar.monthrange(year, month)[1]))


def shut_calendar(shuts: Any, today: date, horizon_end: date) -> list[Occurrence]:
    """Every occurrence of the `CalendarShut` list from today to `horizon_end` inclusive, by date."""
    if isinstance(shuts, (str, bytes, Mapping)) or not isinstance(shuts, Sequence) or not shuts:
        raise InputError("shuts", "must be a non-empty array of shuts")
    out: list[Occurrence] = []
    for i, s in enumerate(shuts):
        field = f"shuts[{i}]"
        if not isinstance(s, Mapping):
            raise InputError(field, "must be an object")
        name = s.get("name")
        if not isinstance(name, str) or not name:
            raise InputError(f"{field}.name", "required")
        if s.get("cost") is None:
            raise InputError(f"{field}.cost", "required")
        c = cost(s["cost"], f"{field}.cost")
        for d in _shut_dates(s, field, today, horizon_end):
            out.append(Occurrence((d - today).days, d, name, c))
            if len(out) > MAX_OCCURRENCES:
                raise InputError("shuts", f"{TOO_MANY_SHUTS} (these shuts give more)")
    out.sort(key=lambda o: (o.day, o.cost, o.name))
    return out


def _shut_dates(s: Mapping[str, Any], field: str, today: date, end: date) -> list[date]:
    every, dates = s.get("every"), s.get("dates")
    if every is not None and dates is not None:
        raise InputError(field, "give every or dates, not both")
    if dates is not None:
        if isinstance(dates, (str, bytes)) or not isinstance(dates, Sequence) or not dates:
            raise InputError(f"{field}.dates", "must be a non-empty array of YYYY-MM-DD dates")
        parsed = [parse_date(d, f"{field}.dates[{k}]") for k, d in enumerate(dates)]
        return [d for d in parsed if today <= d <= end]
    if every is None:
        raise InputError(field, "has no dates: give every (with every_unit) or dates")
    step = number(every, f"{field}.every", low=0.0, low_inclusive=False)
    unit = s.get("every_unit") or "days"
    if unit not in EVERY_UNITS:
        raise InputError(f"{field}.every_unit", f"must be one of {', '.join(EVERY_UNITS)}")
    start = parse_date(s["start"], f"{field}.start") if s.get("start") is not None else today
    if unit in ("days", "weeks"):
        days = step * (7.0 if unit == "weeks" else 1.0)
        if days < 1.0:
            raise InputError(f"{field}.every", "must be at least one day")
        k0 = max(0, math.ceil((today - start).days / days - 1e-9))  # first occurrence not before today
        return _occurrences(lambda k: start + timedelta(days=math.floor(k * days + 1e-9)), k0, today, end)
    if step != int(step):
        raise InputError(f"{field}.every", f"must be a whole number with every_unit {unit}")
    months = int(step) * (12 if unit == "years" else 1)
    k0 = max(0, ((today.year - start.year) * 12 + today.month - start.month) // months - 1)
    return _occurrences(lambda k: _add_months(start, k * months), k0, today, end)


def _occurrences(nth: Callable[[int], date], k: int, today: date, end: date) -> list[date]:
    """The k-th, (k+1)-th, ... dates of a rule that fall in [today, end] (capped in number)."""
    out: list[date] = []
    while (d := _nth(nth, k)) is not None and d <= end and len(out) <= MAX_OCCURRENCES:
        if d >= today:
            out.append(d)
        k += 1
    return out


def _nth(nth: Callable[[int], date], k: int) -> date | None:
    """The k-th date, or None past the calendar's last day (year 9999), which no horizon reaches."""
    try:
        return nth(k)
    except (OverflowError, ValueError):
        return None


@answered
def shut_plan(
    distribution_id: str | None = None,
    params: Any = None,
    *,
    current_age: Any,
    usage_rate: Any,
    horizon_days: Any,
    failure_cost: Any,
    shuts: Any,
    today: date | str,
    lifetime: Lifetime | None = None,
    base_distribution_id: str | None = None,
    unit: str | None = None,
) -> dict[str, Any]:
    """Least expected-cost choice of shuts at which to replace a part, over `horizon_days`.

    `current_age` and `usage_rate` (life units per calendar day) are in the life model's unit;
    `today` (a date or YYYY-MM-DD) is explicit so the result is reproducible. Returns:
    - `plan`: [{date, shut, cost, age_at_replacement}] — the age is the part's age at the shut
      if it has not failed since the previous renewal;
    - `expected_cost` (planned + failure costs), `planned_cost`, `expected_failures`,
      `expected_failure_cost`;
    - `segments`: between consecutive planned renewals (today and the horizon end included),
      {from, to, start_age, usage, failure_probability (of at least one failure),
      expected_failures};
    - `run_to_failure`: {expected_cost, expected_failures} with no planned replacement;
    - `distribution`, `unit`, `today`, `horizon_end`, `shut_dates_considered`.
    """
    life = life_model(distribution_id, params, lifetime, base_distribution_id)
    a0 = number(current_age, "current_age", low=0.0)
    rate = number(usage_rate, "usage_rate", low=0.0, low_inclusive=False)
    horizon = number(horizon_days, "horizon_days", low=1.0, high=MAX_HORIZON_DAYS)
    cf = cost(failure_cost, "failure_cost")
    day0 = parse_date(today, "today")
    try:
        end = day0 + timedelta(days=math.floor(horizon))
    except OverflowError:
        raise InputError("horizon_days", "ends after the year 9999") from None
    occ = shut_calendar(shuts, day0, end)
    if not occ:
        raise InputError("shuts", f"no shut falls between {day0.isoformat()} and {end.isoformat()}")
    n_days = (end - day0).days

    # Renewal functions on a grid fine against the mean life. Beyond ~40 lives M(t) is on its
    # asymptote t/MTTF + const (Smith's renewal theorem), so the grid stops there and extends linearly.
    usage_max = rate * n_days
    scale = time_scale(life)
    grid_max = min(usage_max, 40.0 * scale)
    t, m = renewal_function(life, grid_max, 4000)
    from_now = delayed_renewal_function(life, a0, t, m)
    mttf = mean_life(life)
    r_age = float(life.sf(a0))

    def exp_failures(first: bool, usage: np.ndarray | float) -> np.ndarray:
        curve = from_now if first else m
        u = np.asarray(usage, dtype=float)
        inside = np.interp(np.minimum(u, grid_max), t, curve)
        if usage_max <= grid_max:
            return inside
        tail = int(0.9 * len(t))
        slope = 1.0 / mttf if mttf is not None else (curve[-1] - curve[tail]) / (t[-1] - t[tail])
        return inside + slope * np.maximum(u - grid_max, 0.0)

    def p_fail(first: bool, usage: float) -> float:
        if first:
            return 1.0 if r_age <= 0.0 else 1.0 - float(life.sf(a0 + usage)) / r_age
        return float(life.cdf(usage))

    # Nodes: 0 = today (age a0), 1..K = shuts, K+1 = horizon end (no cost, no renewal).
    days = np.array([0] + [o.day for o in occ] + [n_days], dtype=float)
    k_end = len(days) - 1
    node_cost = np.array([0.0] + [o.cost for o in occ] + [0.0])
    best = np.full(len(days), np.inf)
    prev = np.full(len(days), -1)
    best[0] = 0.0
    # Overflow to inf is allowed here and refused below by name (not as a warning).
    with np.errstate(over="ignore", invalid="ignore"):
        for j in range(1, len(days)):
            usage = rate * (days[j] - days[:j])
            cand = best[:j] + cf * np.concatenate([exp_failures(True, usage[:1]), exp_failures(False, usage[1:])])
            i = int(np.argmin(cand))  # ties go to the earliest predecessor: fewer replacements
            best[j], prev[j] = cand[i] + node_cost[j], i
        chain = []
        j = k_end
        while j > 0:
            chain.append(j)
            j = int(prev[j])
        chain = [0, *reversed(chain)]

        plan, segments = [], []
        failures = 0.0
        for a, b in itertools.pairwise(chain):
            usage = float(rate * (days[b] - days[a]))
            start_age = a0 if a == 0 else 0.0
            en = float(exp_failures(a == 0, usage))
            failures += en
            segments.append({
                "from": (day0 if a == 0 else occ[a - 1].date).isoformat(),
                "to": (end if b == k_end else occ[b - 1].date).isoformat(),
                "start_age": start_age,
                "usage": usage,
                "failure_probability": p_fail(a == 0, usage),
                "expected_failures": en,
            })
            if b != k_end:
                o = occ[b - 1]
                plan.append({"date": o.date.isoformat(), "shut": o.name, "cost": o.cost,
                             "age_at_replacement": start_age + usage})
        planned = sum(p["cost"] for p in plan)
        rtf_failures = float(exp_failures(True, usage_max))
    # Each input is finite, but a usage or a sum of costs can still leave floating point; a
    # figure of inf or NaN is no answer, so the request is refused naming what overflowed.
    if not (math.isfinite(failures) and math.isfinite(rtf_failures)):
        raise InputError("usage_rate", f"{USAGE_OVERFLOW_RULE} ({usage_max:g} life units)")
    if not all(math.isfinite(v) for v in (best[k_end], planned, cf * failures, cf * rtf_failures)):
        raise InputError("shuts.cost", COST_OVERFLOW_RULE)
    return {
        "distribution": life.distribution_id,
        "unit": unit,
        "today": day0.isoformat(),
        "horizon_end": end.isoformat(),
        "plan": plan,
        "expected_cost": float(best[k_end]),
        "planned_cost": planned,
        "expected_failures": failures,
        "expected_failure_cost": cf * failures,
        "segments": segments,
        "run_to_failure": {"expected_cost": cf * rtf_failures, "expected_failures": rtf_failures},
        "shut_dates_considered": len(occ),
    }
