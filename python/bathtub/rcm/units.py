"""Interval units: calendar and operating time convert (a month is 30.44 days, a year 365.25
days); any other unit (cycles, km, landings, ...) compares only with itself."""

from __future__ import annotations

HOURS = {"hours": 1.0, "days": 24.0, "weeks": 168.0, "months": 30.44 * 24.0, "years": 365.25 * 24.0}
ALIASES = {
    "h": "hours", "hr": "hours", "hrs": "hours", "hour": "hours",
    "d": "days", "day": "days",
    "w": "weeks", "wk": "weeks", "wks": "weeks", "week": "weeks",
    "mo": "months", "month": "months",
    "y": "years", "yr": "years", "yrs": "years", "year": "years",
    "cycle": "cycles", "kilometres": "km", "kilometers": "km", "kilometre": "km", "kilometer": "km",
}


def canonical(unit: str) -> str:
    u = unit.strip().lower()
    return ALIASES.get(u, u)


def convert(value: float, from_unit: str | None, to_unit: str | None) -> float | None:
    """`value` in `from_unit` expressed in `to_unit`, or None when the units cannot be compared
    (either unknown, or different units outside the time family)."""
    if not from_unit or not to_unit:
        return None
    a, b = canonical(from_unit), canonical(to_unit)
    if a == b:
        return value
    if a in HOURS and b in HOURS:
        return value * HOURS[a] / HOURS[b]
    return None
