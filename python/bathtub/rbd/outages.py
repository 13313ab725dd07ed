"""Block life and repair models from an outage log (spec OutageColumns).

Each row is one outage of an asset, named by a block's node id or label: a start, an end (blank:
still down) or a duration, an optional reason and a planned flag. Per block, walking its outages
in time order from the start of observation:

- time to repair: each unplanned outage's length is a failure time; an outage still going on at
  the end of the log is right-censored at its length so far;
- time between failures: each up period that ends in an unplanned outage is a failure time; one
  that ends in a planned outage, or at the end of the log, is censored there (the block was taken
  down or is still running: its life was not seen to end). The first up period runs from the start
  of observation (`observed_from`, default the earliest time in the log): exact for exponential
  lives; for others it assumes the block was as good as new then, which the answer states.

Planned outages never enter the repair model. Each model is fitted by maximum likelihood with the
life-data fitter (`best` ranks families by AICc, or a family is named).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bathtub.errors import InputError
from bathtub.life.data import LifeData
from bathtub.life.fit import fit
from bathtub.validate import check_number

YES = {"yes", "y", "true", "1", "planned", "scheduled", "pm", "x"}
NO = {"no", "n", "false", "0", "unplanned", "", "cm", "breakdown"}
# Hours per unit of the calendar units a diagram may be in (months 30.44 days, years 365.25).
HOURS_PER_UNIT = {
    "seconds": 1 / 3600, "s": 1 / 3600, "sec": 1 / 3600, "minutes": 1 / 60, "min": 1 / 60, "hours": 1.0, "h": 1.0,
    "hr": 1.0, "hrs": 1.0, "hour": 1.0, "days": 24.0, "d": 24.0, "day": 24.0, "weeks": 168.0, "week": 168.0,
    "wk": 168.0, "months": 730.56, "month": 730.56, "mo": 730.56, "years": 8766.0, "year": 8766.0, "yr": 8766.0,
    "y": 8766.0,
}
MIN_FAILURES = 2  # fewer failures than this give no model (a one-point fit says nothing about spread)
# `best` ranks the families a diagram block can simulate, by AICc.
CANDIDATES = ("exponential", "weibull", "lognormal", "gamma", "loglogistic")


@dataclass(frozen=True)
class Outage:
    row: int
    node: str
    start: float
    end: float | None  # None: still down at the end of the log
    planned: bool
    reason: str | None


def _flag(value: Any, field: str) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    s = str(value).strip().lower()
    if s in YES:
        return True
    if s in NO:
        return False
    raise InputError(field, f"must be yes/no or 1/0 (got {value!r})")


def _instant(value: Any, field: str, hours_per_unit: float | None) -> float:
    """A time in the diagram's unit: a number as is, an ISO 8601 date-time (no offset = UTC)
    converted from hours since the epoch."""
    if isinstance(value, bool) or value is None:
        raise InputError(field, "required: a number or an ISO 8601 date-time")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise InputError(field, "must be finite")
        return float(value)
    try:
        t = dt.datetime.fromisoformat(str(value).strip())
    except ValueError:
        raise InputError(field, f"must be a number or an ISO 8601 date-time (got {value!r})") from None
    if hours_per_unit is None:
        raise InputError(field, "date-times need the diagram (or `unit`) in a calendar unit such as hours or days")
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    return t.timestamp() / 3600.0 / hours_per_unit


def read_outages(rows: Sequence[Mapping[str, Any]], columns: Mapping[str, str], blocks: Mapping[str, str],
                 unit: str | None) -> list[Outage]:
    """Rows of a sheet (dicts by column) into outages of known blocks. `blocks` maps what an asset
    cell may say (node id or label) to the node id; `columns` is the spec's OutageColumns."""
    for role in ("asset", "start"):
        if not columns.get(role):
            raise InputError(f"columns.{role}", "required")
    if not columns.get("end") and not columns.get("duration"):
        raise InputError("columns.end", "give end or duration")
    hours = HOURS_PER_UNIT.get((unit or "").strip().lower())
    out = []
    for i, row in enumerate(rows):
        where = f"rows[{i}]"
        asset = row.get(columns["asset"])
        key = str(asset).strip() if asset is not None else ""
        if key not in blocks:
            raise InputError(f"{where}.{columns['asset']}", f"{asset!r} names no block of the diagram (by node id or "
                                                            "label)")
        start = _instant(row.get(columns["start"]), f"{where}.{columns['start']}", hours)
        end: float | None = None
        if columns.get("end") and row.get(columns["end"]) not in (None, ""):
            end = _instant(row.get(columns["end"]), f"{where}.{columns['end']}", hours)
        elif columns.get("duration") and row.get(columns["duration"]) not in (None, ""):
            d = row.get(columns["duration"])
            end = start + check_number(d, f"{where}.{columns['duration']}", 0.0)
        if end is not None and end < start:
            raise InputError(f"{where}.{columns.get('end') or columns['duration']}", "ends before it starts")
        planned = _flag(row.get(columns["planned"]), f"{where}.{columns['planned']}") if columns.get("planned") \
            else False
        reason = row.get(columns["reason"]) if columns.get("reason") else None
        out.append(Outage(i, blocks[key], start, end, planned, None if reason is None else str(reason)))
    if not out:
        raise InputError("rows", "the log has no outages")
    return out


def _life(times: list[float], censored: list[int], distribution: str) -> dict[str, Any] | None:
    failures = sum(1 for c in censored if c == 0)
    if failures < MIN_FAILURES:
        return None
    data = LifeData.from_arrays(x=times, c=censored)
    if distribution != "best":
        return fit(data, distribution).to_record()
    ranked = []
    for family in CANDIDATES:
        try:
            record = fit(data, family).to_record()
        except (InputError, ValueError, ArithmeticError):
            continue  # a family that cannot describe these data drops out
        aicc = next((g["value"] for g in record["gof"] if g["id"] == "aicc"), None)
        if aicc is not None and math.isfinite(aicc):
            ranked.append((aicc, family, record))
    if not ranked:
        raise InputError("tbf_distribution", "no distribution could be fitted; name one")
    ranked.sort(key=lambda r: r[0])
    best = ranked[0][2]
    best["ranking"] = [{"distribution": f, "aicc": a} for a, f, _ in ranked]
    return best


def instant(value: Any, field: str, unit: str | None) -> float | None:
    """`as_of` or `observed_from` as given (a number in the unit, or an ISO 8601 date-time)."""
    return None if value is None else _instant(value, field, HOURS_PER_UNIT.get((unit or "").strip().lower()))


def block_models(outages: Sequence[Outage], *, as_of: float | None = None, observed_from: float | None = None,
                 tbf_distribution: str = "best", ttr_distribution: str = "best") -> list[dict[str, Any]]:
    """Per block with outages: counts, the TBF and TTR model records (or why none), and the
    BlockModel proposals {distribution_id, params} for `model` and `repair`. An up period of
    zero length (an outage right at the start of observation) is no observation and is skipped."""
    ends = [o.end for o in outages if o.end is not None]
    last = max([o.start for o in outages] + ends)
    as_of = last if as_of is None else as_of
    if as_of < last:
        raise InputError("as_of", "is before the last time in the log")
    first = min(o.start for o in outages)
    observed_from = first if observed_from is None else observed_from
    if observed_from > first:
        raise InputError("observed_from", "is after the first outage")
    by_node: dict[str, list[Outage]] = {}
    for o in outages:
        by_node.setdefault(o.node, []).append(o)
    results = []
    for node, items in by_node.items():
        items.sort(key=lambda o: o.start)
        up_from: float | None = observed_from
        tbf: list[float] = []
        tbf_c: list[int] = []
        ttr: list[float] = []
        ttr_c: list[int] = []
        for prev, o in zip([None, *items[:-1]], items, strict=True):
            if up_from is None or o.start < up_from:
                row = o.row if prev is None else prev.row
                raise InputError(f"rows[{o.row}]", f"overlaps the outage of row {row} of the same block")
            if o.start > up_from:
                tbf.append(o.start - up_from)
                tbf_c.append(1 if o.planned else 0)
            if not o.planned:
                ttr.append((o.end if o.end is not None else as_of) - o.start)
                ttr_c.append(0 if o.end is not None else 1)
            up_from = o.end
        if up_from is not None and as_of > up_from:
            tbf.append(as_of - up_from)
            tbf_c.append(1)
        record: dict[str, Any] = {
            "node_id": node, "unplanned": sum(not o.planned for o in items), "planned": sum(o.planned for o in items),
            "ongoing": sum(o.end is None for o in items),
        }
        for what, times, cens, dist in (("tbf", tbf, tbf_c, tbf_distribution), ("ttr", ttr, ttr_c, ttr_distribution)):
            positive = [(t, c) for t, c in zip(times, cens, strict=True) if t > 0]
            fitted = _life([t for t, _ in positive], [c for _, c in positive], dist) if positive else None
            record[what] = fitted if fitted is not None else {
                "available": False, "reason": f"fewer than {MIN_FAILURES} {'failures' if what == 'tbf' else 'repairs'}"
                                              " seen; keep the block's model or give one"}
            if fitted is not None:
                key = "model" if what == "tbf" else "repair"
                record.setdefault("proposal", {})[key] = {
                    "distribution_id": fitted["distribution"],
                    "params": [{"name": p["name"], "value": p["value"]} for p in fitted["params"]]}
        results.append(record)
    return results
