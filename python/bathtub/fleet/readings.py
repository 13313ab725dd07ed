"""Meter readings from a request's rows: each checked and named by its row (`readings[i]`, or
`body[i]` for CSV), its time read as ISO 8601 (no offset means UTC; none means now)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from bathtub.errors import InputError
from bathtub.validate import check_number, check_row


def _parse_time(value: Any, field: str, now: Callable[[], float]) -> float:
    if value is None or value == "":
        return now()
    if not isinstance(value, str):
        raise InputError(field, "must be an ISO 8601 date-time")
    try:
        t = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(field, f"must be an ISO 8601 date-time (got {value!r})") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)  # spec: no offset means UTC
    return t.timestamp()


def check_readings(names: list[str] | None, rows: list[Any], field: str,
                   now: Callable[[], float] = time.time) -> list[dict[str, Any]]:
    """Rows (CSV cells by column when `names` are given, else objects) into checked readings
    {key, current_use, rate, read_at (seconds since the epoch), row}."""
    out = []
    for i, raw in enumerate(rows):
        where = f"{field}[{i}]"
        row = check_row(names, raw, where, ("name", "id", "current_use", "rate", "read_at"),
                        "with name or id, current_use, rate?, read_at?", "name or id, current_use, rate, read_at")
        key = row.get("name") if row.get("name") not in (None, "") else row.get("id")
        if key in (None, ""):
            raise InputError(f"{where}.name", "required (name or id)")
        if row.get("current_use") is None:
            raise InputError(f"{where}.current_use", "required: a finite number")
        use = check_number(row["current_use"], f"{where}.current_use", 0.0)
        rate = row.get("rate")
        rate = None if rate in (None, "") else check_number(rate, f"{where}.rate", 0.0)
        out.append({"key": str(key), "current_use": use, "rate": rate,
                    "read_at": _parse_time(row.get("read_at"), f"{where}.read_at", now), "row": where})
    if not out:
        raise InputError(field, "must hold at least one reading (no readings)")
    return out
