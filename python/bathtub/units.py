"""Time and usage units as users write them: one canonical name per unit, so "h", "hr",
"hrs", "hour" and "Hours" are one unit wherever units are compared (a saved model used as a
block's life, a subsystem in its parent diagram, a strategy calculation on a saved model,
discounting's calendar unit).

A unit not in the table is its own unit, compared without regard to case or surrounding
and repeated spaces. Units are labels here: nothing converts between hours and days.
"""

from __future__ import annotations

ALIASES: dict[str, tuple[str, ...]] = {
    "second": ("s", "sec", "secs", "second", "seconds"),
    "minute": ("min", "mins", "minute", "minutes"),
    "hour": ("h", "hr", "hrs", "hour", "hours", "operating hour", "operating hours"),
    "day": ("d", "day", "days"),
    "week": ("w", "wk", "wks", "week", "weeks"),
    "month": ("mo", "mon", "mos", "month", "months"),
    "year": ("y", "yr", "yrs", "year", "years"),
    "cycle": ("cycle", "cycles", "cyc"),
    "start": ("start", "starts"),
    "demand": ("demand", "demands"),
    "mission": ("mission", "missions"),
    "km": ("km", "kms", "kilometre", "kilometres", "kilometer", "kilometers"),
    "mile": ("mi", "mile", "miles"),
}
_CANONICAL = {alias: name for name, aliases in ALIASES.items() for alias in aliases}

# Calendar units as a fraction of a year of 365.25 days (discount rates are per year).
YEARS_PER_UNIT: dict[str, float] = {
    "second": 1 / (8766.0 * 3600.0),
    "minute": 1 / (8766.0 * 60.0),
    "hour": 1 / 8766.0,
    "day": 1 / 365.25,
    "week": 7 / 365.25,
    "month": 1 / 12.0,
    "year": 1.0,
}


def canonical_unit(unit: str | None) -> str | None:
    """The one name of a unit ("hrs" -> "hour"); an unknown unit in lower case with single
    spaces; None or a blank unit -> None (no unit given)."""
    if unit is None:
        return None
    key = " ".join(str(unit).split()).casefold()
    if not key:
        return None
    return _CANONICAL.get(key, key)


def same_unit(a: str | None, b: str | None) -> bool:
    """Whether two given units are one unit (aliases and case aside)."""
    return canonical_unit(a) == canonical_unit(b)


def units_clash(a: str | None, b: str | None) -> bool:
    """Both units given and not the same unit: the one comparison every check makes (a
    missing unit is "whatever the other says")."""
    ca, cb = canonical_unit(a), canonical_unit(b)
    return ca is not None and cb is not None and ca != cb


def years_per_unit(unit: str | None) -> float | None:
    """A calendar unit's length in years, or None for a unit that is not calendar time."""
    return YEARS_PER_UNIT.get(canonical_unit(unit) or "")
