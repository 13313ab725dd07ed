"""Recurrent-event data: the event histories of one or more repairable systems, or failure
counts per interval (grouped data), read from a dataset's columns.

Event data (one row per event): roles `t` (event time, system age from 0), `system`
(optional: one system when absent), `end` (optional: the system's end of observation,
time-terminated; a row with an empty `t` and an `end` records a system without events),
`cause` (optional failure cause), `group` (optional population label, for comparing MCFs).
Without `end` each system is failure-terminated at its last event. Covariates (options) are
columns constant within a system.

Grouped data: roles `interval_end` and `count` — the counts of failures in (previous end,
this end], intervals starting at 0, of `systems` identical systems observed together.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bathtub.errors import InputError
from bathtub.life.data import number_column
from bathtub.validate import check_integer

EVENT_ROLES = ("t", "system", "end", "cause", "group")
GROUPED_ROLES = ("interval_end", "count")
ROLES = (*EVENT_ROLES, *GROUPED_ROLES)
TERMINATIONS = ("time", "failure")


@dataclass(frozen=True)
class System:
    """One system's history: sorted event times in (0, end], its end of observation, whether
    that end is its last failure (failure-terminated), causes per event, covariates."""

    id: str
    times: np.ndarray
    end: float
    failure_terminated: bool
    causes: tuple[str, ...] = ()
    covariates: tuple[float, ...] = ()
    group: str = ""

    @property
    def n(self) -> int:
        return int(self.times.size)

    @property
    def informative(self) -> np.ndarray:
        """Event times whose position carries information given the end: all of them when
        time-terminated, all but the terminating failure when failure-terminated."""
        return self.times[:-1] if self.failure_terminated else self.times


@dataclass(frozen=True)
class EventData:
    systems: tuple[System, ...]
    covariate_names: tuple[str, ...] = ()

    @property
    def n_events(self) -> int:
        return sum(s.n for s in self.systems)

    @property
    def failure_terminated(self) -> bool:
        return all(s.failure_terminated for s in self.systems)

    @property
    def termination(self) -> str:
        return "failure" if self.failure_terminated else "time"

    def scaled(self, k: float) -> EventData:
        return EventData(tuple(System(s.id, s.times * k, s.end * k, s.failure_terminated, s.causes, s.covariates,
                                      s.group) for s in self.systems), self.covariate_names)

    def only_cause(self, cause: str) -> EventData:
        """Each system's events of one cause; the others are not counted (independent cause-
        specific processes), so every system becomes time-terminated at its own end."""
        out = []
        for s in self.systems:
            keep = np.array([c == cause for c in s.causes], dtype=bool)
            out.append(System(s.id, s.times[keep], s.end, False, tuple(c for c in s.causes if c == cause),
                              s.covariates, s.group))
        return EventData(tuple(out), self.covariate_names)


@dataclass(frozen=True)
class GroupedData:
    """Counts per interval (0, e1], (e1, e2], ... of `systems` systems observed together."""

    ends: np.ndarray
    counts: np.ndarray
    systems: int = 1
    starts: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "starts", np.concatenate([[0.0], self.ends[:-1]]))

    @property
    def n_events(self) -> int:
        return int(self.counts.sum())

    def scaled(self, k: float) -> GroupedData:
        return GroupedData(self.ends * k, self.counts, self.systems)


def events(
    times: Sequence[Sequence[float]] | Sequence[float],
    ends: Sequence[float] | float | None = None,
    ids: Sequence[str] | None = None,
) -> EventData:
    """Event data from plain arrays: `times` one array per system (or one array for one
    system), `ends` the systems' ends of observation (None: failure-terminated)."""
    seqs = [times] if len(times) == 0 or np.ndim(times[0]) == 0 else list(times)
    if ends is not None and np.ndim(ends) == 0:
        ends = [float(ends)] * len(seqs)  # type: ignore[arg-type]
    rows_t: list[float | None] = []
    rows_s: list[str] = []
    rows_e: list[float] = []
    for k, seq in enumerate(seqs):
        name = ids[k] if ids is not None else str(k + 1)
        if len(seq) == 0:
            rows_t.append(None)
            rows_s.append(name)
            rows_e.append(float(ends[k]) if ends is not None else math.nan)  # type: ignore[index]
        for v in seq:
            rows_t.append(float(v))
            rows_s.append(name)
            rows_e.append(float(ends[k]) if ends is not None else math.nan)  # type: ignore[index]
    cols: dict[str, Any] = {"t": rows_t, "system": rows_s}
    mapping = {"t": "t", "system": "system"}
    if ends is not None:
        cols["end"] = rows_e
        mapping["end"] = "end"
    data = from_columns(cols, mapping)
    assert isinstance(data, EventData)
    return data


def _column(columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str], role: str) -> tuple[Sequence[Any], str]:
    column = mapping[role]
    if not isinstance(column, str):
        raise InputError(f"mapping.{role}", "must be a column name")
    if column not in columns:
        known = ", ".join(map(str, columns))
        raise InputError(f"mapping.{role}", f"column {column!r} not in the dataset (columns: {known})")
    return columns[column], f"data.{column}"


def _labels(col: Sequence[Any], field: str) -> list[str]:
    out = []
    for i, v in enumerate(col):
        if v is None or (isinstance(v, str) and not v.strip()):
            raise InputError(field, f"row {i}: missing value")
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        out.append(str(v))
    return out


def from_columns(
    columns: Mapping[str, Sequence[Any]],
    mapping: Mapping[str, str],
    *,
    termination: str | None = None,
    covariates: Sequence[str] = (),
    systems: int = 1,
) -> EventData | GroupedData:
    """Event or grouped data from a dataset's columns (roles above); refusals name the field."""
    if not isinstance(mapping, Mapping) or not mapping:
        raise InputError("mapping", "must map roles (t, system, end, cause; or interval_end, count) to columns")
    for role in mapping:
        if role not in ROLES:
            raise InputError(f"mapping.{role}", f"unknown role; roles are {', '.join(ROLES)}")
    if termination is not None and termination not in TERMINATIONS:
        raise InputError("options.termination", "must be time or failure")
    grouped = [r for r in GROUPED_ROLES if r in mapping]
    if grouped:
        if len(grouped) != 2:
            raise InputError(f"mapping.{GROUPED_ROLES[1 - GROUPED_ROLES.index(grouped[0])]}",
                             "grouped data needs both interval_end and count")
        extra = [r for r in EVENT_ROLES if r in mapping]
        if extra:
            raise InputError(f"mapping.{extra[0]}", "grouped data (interval_end, count) takes no event roles")
        if covariates:
            raise InputError("options.covariates", "covariates need event data (t, system)")
        return _grouped(columns, mapping, termination, systems)
    if "t" not in mapping:
        raise InputError("mapping.t", "required: the event-time column (or interval_end and count for grouped data)")
    return _events(columns, mapping, termination, covariates)


def _grouped(columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str], termination: str | None,
             systems: int) -> GroupedData:
    if termination == "failure":
        raise InputError("options.termination", "grouped data end at the last interval's end (time-terminated)")
    systems = check_integer(systems, "options.systems", 1, 10**7)
    ecol, efield = _column(columns, mapping, "interval_end")
    ccol, cfield = _column(columns, mapping, "count")
    if len(ecol) != len(ccol):
        raise InputError(cfield, f"has {len(ccol)} rows, expected {len(ecol)} like interval_end")
    ends = number_column(ecol, efield, allow_missing=False)
    counts = number_column(ccol, cfield, allow_missing=False)
    if ends.size < 2:
        raise InputError(efield, "grouped data need at least 2 intervals")
    if not np.all(np.isfinite(ends)) or np.any(ends <= 0):
        raise InputError(efield, "interval ends must be finite and > 0")
    if np.any(np.diff(ends) <= 0):
        i = int(np.argmax(np.diff(ends) <= 0)) + 1
        raise InputError(efield, f"row {i}: interval ends must increase")
    if not np.all(np.isfinite(counts)) or np.any(counts < 0) or np.any(counts != np.round(counts)):
        raise InputError(cfield, "counts must be whole numbers >= 0")
    if counts.sum() < 2:
        raise InputError(cfield, "at least 2 failures are needed")
    return GroupedData(ends, counts, systems)


def _events(columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str], termination: str | None,
            covariates: Sequence[str]) -> EventData:
    tcol, tfield = _column(columns, mapping, "t")
    n = len(tcol)
    cols: dict[str, tuple[Sequence[Any], str]] = {}
    for role in ("system", "end", "cause", "group"):
        if role in mapping:
            cols[role] = _column(columns, mapping, role)
            if len(cols[role][0]) != n:
                raise InputError(cols[role][1], f"has {len(cols[role][0])} rows, expected {n} like the other columns")
    if n == 0:
        raise InputError(tfield, "no rows")
    t = number_column(tcol, tfield, allow_missing="end" in cols)
    if np.any(t[np.isfinite(t)] < 0) or np.any(np.isinf(t)):
        i = int(np.argmax(~(np.isnan(t) | ((t >= 0) & np.isfinite(t)))))
        raise InputError(tfield, f"row {i}: event times must be finite and >= 0")
    ids = _labels(cols["system"][0], cols["system"][1]) if "system" in cols else ["1"] * n
    end = number_column(cols["end"][0], cols["end"][1], allow_missing=True) if "end" in cols else None
    causes = None
    if "cause" in cols:
        causes = ["" if v is None else str(v) for v in cols["cause"][0]]
    if termination is None:
        termination = "time" if end is not None else "failure"
    if termination == "time" and end is None:
        raise InputError("mapping.end", "time-terminated data need each system's end of observation")
    zcols = []
    if not isinstance(covariates, (list, tuple)) or not all(isinstance(c, str) for c in covariates):
        raise InputError("options.covariates", "must be a list of column names")
    for name in covariates:
        if name not in columns:
            raise InputError("options.covariates", f"column {name!r} not in the dataset")
        if len(columns[name]) != n:
            raise InputError(f"data.{name}", f"has {len(columns[name])} rows, expected {n}")
        zcols.append(number_column(columns[name], f"data.{name}", allow_missing=False))
    order: dict[str, list[int]] = {}
    for i, sid in enumerate(ids):
        order.setdefault(sid, []).append(i)
    systems = []
    for sid, rows in order.items():
        r = np.asarray(rows)
        times = t[r]
        has = np.isfinite(times)
        idx = r[has][np.argsort(times[has], kind="stable")]
        times = t[idx]
        if end is not None:
            given = end[r][np.isfinite(end[r])]
            if given.size == 0:
                if termination == "time":
                    raise InputError(cols["end"][1], f"system {sid}: no end of observation given")
                e = float(times[-1]) if times.size else math.nan
            else:
                if np.any(given != given[0]):
                    raise InputError(cols["end"][1], f"system {sid}: its rows give different ends of observation")
                e = float(given[0])
                if not math.isfinite(e) or e <= 0:
                    raise InputError(cols["end"][1], f"system {sid}: end of observation must be finite and > 0")
        else:
            e = float(times[-1]) if times.size else math.nan
        if times.size and times[-1] > e:
            raise InputError(tfield, f"system {sid}: event at {times[-1]:g} after its end of observation {e:g}")
        if termination == "failure":
            if times.size == 0:
                raise InputError(tfield, f"system {sid}: no events, but a failure-terminated system ends at a failure")
            if times[-1] != e:
                raise InputError(cols["end"][1] if end is not None else tfield,
                                 f"system {sid}: failure-terminated, so its end must be its last failure "
                                 f"({times[-1]:g}), not {e:g}")
        if times.size and times[0] <= 0:
            raise InputError(tfield, f"system {sid}: event at time 0; event times are ages > 0")
        cov: tuple[float, ...] = ()
        if zcols:
            vals = []
            for name, z in zip(covariates, zcols, strict=True):
                v = z[r]
                if np.any(v != v[0]):
                    raise InputError(f"data.{name}", f"system {sid}: covariates must be constant within a system")
                vals.append(float(v[0]))
            cov = tuple(vals)
        cs = tuple(causes[i] for i in idx) if causes is not None else ()
        if causes is not None and any(c == "" for c in cs):
            raise InputError(cols["cause"][1], f"system {sid}: an event without a cause")
        grp = ""
        if "group" in cols:
            labels = {str(cols["group"][0][i]) for i in rows}
            if len(labels) != 1:
                raise InputError(cols["group"][1], f"system {sid}: its rows name different groups")
            grp = labels.pop()
        systems.append(System(sid, times.astype(float), e, termination == "failure", cs, cov, grp))
    data = EventData(tuple(systems), tuple(covariates))
    if data.n_events < 2:
        raise InputError(tfield, f"{data.n_events} event(s) in total: at least 2 are needed")
    return data
