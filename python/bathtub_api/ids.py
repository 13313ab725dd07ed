"""Identifiers: strings with a kind prefix (mdl_, ds_, rbd_, run_, job_, upl_, tok_, usr_, rcm_, deg_, ...)."""

from __future__ import annotations

import functools
import secrets
import time
from datetime import UTC, datetime

PREFIX = {
    "dataset": "ds",
    "model": "mdl",
    "rbd": "rbd",
    "rbd_run": "run",
    "job": "job",
    "upload": "upl",
    "token": "tok",
    "user": "usr",
    "strategy_analysis": "sa",
    "photo": "pho",
    "fleet": "flt",
    "rcm_study": "rcm",
    "degradation_model": "deg",
    "tracked_fleet": "trk",
    "session": "ses",
    "report": "rpt",
}


def new_id(kind: str) -> str:
    return f"{PREFIX[kind]}_{secrets.token_hex(10)}"


def now() -> float:
    """Seconds since the epoch; stored as a float in both stores."""
    return time.time()


@functools.lru_cache(maxsize=4096)  # an item's times are formatted on every read of it: the same few floats
def iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")
