"""Degradation paths as straight lines on transformed axes, and the readings they are fitted to.

Every path this package fits is linear after transforming time and value:
h(y) = A + B·g(t). The four named paths are

    linear       y = a + b·t       g = t,    h = y
    exponential  y = a·e^{b·t}     g = t,    h = ln y   (A = ln a)
    power        y = a·t^b         g = ln t, h = ln y   (A = ln a)
    logarithmic  y = a + b·ln t    g = ln t, h = y

and any other pair of named monotone increasing transforms (identity, log, sqrt) can be given
as `{"t": ..., "y": ...}`. Because h is increasing, a path crosses a threshold D upward (or
downward) exactly when h(y) crosses h(D) the same way, so crossing times are solved on the
transformed axes and mapped back through g⁻¹.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bathtub.errors import InputError, RowError

TRANSFORMS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], Callable[[np.ndarray], np.ndarray]]] = {
    "identity": (lambda v: v, lambda v: v),
    "log": (np.log, np.exp),
    "sqrt": (np.sqrt, np.square),
}
PATHS = {
    "linear": ("identity", "identity"),
    "exponential": ("identity", "log"),
    "power": ("log", "log"),
    "logarithmic": ("log", "identity"),
}
DIRECTIONS = ("up", "down")


@dataclass(frozen=True)
class Path:
    """A path shape: the time transform g and the value transform h (both increasing)."""

    name: str
    t: str
    y: str

    @classmethod
    def parse(cls, path: str | Mapping[str, str], field: str = "path") -> Path:
        if isinstance(path, str):
            if path not in PATHS:
                raise InputError(field, f"unknown path {path!r}; known: {', '.join(PATHS)}, or "
                                        "{t, y} transforms (identity, log, sqrt)")
            return cls(path, *PATHS[path])
        if not isinstance(path, Mapping) or set(path) - {"t", "y"}:
            raise InputError(field, "a path name or {t, y} naming transforms (identity, log, sqrt)")
        t, y = path.get("t", "identity"), path.get("y", "identity")
        for key, v in (("t", t), ("y", y)):
            if v not in TRANSFORMS:
                raise InputError(f"{field}.{key}", f"unknown transform {v!r}; known: {', '.join(TRANSFORMS)}")
        named = {v: k for k, v in PATHS.items()}.get((t, y))
        return cls(named or f"t:{t},y:{y}", t, y)

    def to_record(self) -> str | dict[str, str]:
        return self.name if self.name in PATHS else {"t": self.t, "y": self.y}

    @property
    def time_linear(self) -> bool:
        """Time enters untransformed (so a path's value at t = 0 is its intercept)."""
        return self.t == "identity"

    def g(self, t: Any, field: str = "t") -> np.ndarray:
        t = np.asarray(t, dtype=float)
        _domain(self.t, t, field)
        return TRANSFORMS[self.t][0](t)

    def g_inv(self, u: Any) -> np.ndarray:
        return TRANSFORMS[self.t][1](np.asarray(u, dtype=float))

    def value(self, intercept: float, slope: float, t: Any) -> np.ndarray:
        """A unit's fitted path at times `t`: h⁻¹(intercept + slope·g(t)) (times in g's domain)."""
        with np.errstate(all="ignore"):
            return TRANSFORMS[self.y][1](intercept + slope * self.g(t))

    def h(self, y: Any, field: str = "y") -> np.ndarray:
        y = np.asarray(y, dtype=float)
        _domain(self.y, y, field)
        return TRANSFORMS[self.y][0](y)


def _domain(name: str, v: np.ndarray, field: str) -> None:
    if name == "log" and np.any(v <= 0):
        i = int(np.argmax(np.ravel(v) <= 0))
        raise _at(field, i, "must be > 0 (this path takes its logarithm)")
    if name == "sqrt" and np.any(v < 0):
        i = int(np.argmax(np.ravel(v) < 0))
        raise _at(field, i, "must be >= 0 (this path takes its square root)")


def _at(field: str, i: int, rule: str) -> InputError:
    return RowError(field, i, rule) if np.ndim(i) == 0 else InputError(field, rule)


def check_direction(direction: str) -> int:
    """+1 for a failure on crossing upward, -1 downward."""
    if direction not in DIRECTIONS:
        raise InputError("direction", f"must be one of {', '.join(DIRECTIONS)}")
    return 1 if direction == "up" else -1


@dataclass(frozen=True)
class Readings:
    """Readings grouped by unit: `units[k]` owns rows `start[k]:start[k+1]` of `t`, `y`
    (in the dataset's order within a unit, times strictly increasing); `rows` are their rows
    in the dataset (errors name those)."""

    units: tuple[str, ...]
    t: np.ndarray
    y: np.ndarray
    start: np.ndarray
    rows: np.ndarray | None = None

    def transformed(self, path: Path, fields: tuple[str, str] = ("x", "y")) -> tuple[np.ndarray, np.ndarray]:
        """(g(t), h(y)); a value outside a transform's domain is refused naming its dataset row."""
        try:
            return path.g(self.t, fields[0]), path.h(self.y, fields[1])
        except RowError as e:
            row = int(self.rows[e.row]) if self.rows is not None else e.row
            raise RowError(e.field, row, e.row_rule) from None

    def of(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        s, e = self.start[k], self.start[k + 1]
        return self.t[s:e], self.y[s:e]

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.start)

    def unit_index(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.units)), self.sizes)


def readings_from_columns(
    columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str], *, min_readings: int = 2
) -> Readings:
    """Readings from a dataset's columns: roles `i` (unit), `x` (time), `y` (value).

    Refuses, naming the column and row: a missing or non-numeric time or value, a negative
    time, a time not after the unit's previous one, and a unit with fewer than
    `min_readings` readings (a slope needs two)."""
    if not isinstance(mapping, Mapping):
        raise InputError("mapping", "must map roles i (unit), x (time), y (value) to column names")
    for role in mapping:
        if role not in ("i", "x", "y"):
            raise InputError(f"mapping.{role}", "unknown role; roles are i (unit), x (time), y (value)")
    for role in ("i", "x", "y"):
        if role not in mapping:
            raise InputError(f"mapping.{role}", "required (roles: i unit, x time, y value)")
        if mapping[role] not in columns:
            known = ", ".join(map(str, columns))
            raise InputError(f"mapping.{role}", f"column {mapping[role]!r} not in the dataset (columns: {known})")
    ci, cx, cy = (mapping[r] for r in ("i", "x", "y"))
    ids = [None if v is None else str(v) for v in columns[ci]]
    t = _numbers(columns[cx], cx)
    y = _numbers(columns[cy], cy)
    for row, v in enumerate(ids):
        if v is None or v == "":
            raise RowError(ci, row, "missing unit id")
    if np.any(t < 0):
        raise RowError(cx, int(np.argmax(t < 0)), "time must be >= 0")
    order: dict[str, list[int]] = {}
    for row, u in enumerate(ids):
        order.setdefault(u, []).append(row)
    if not order:
        raise InputError(ci, "no readings")
    units, rows = tuple(order), [order[u] for u in order]
    for u, r in zip(units, rows):
        if len(r) < min_readings:
            raise RowError(ci, r[0], f"unit {u!r} has {len(r)} reading(s); at least {min_readings} are needed "
                                     "to fit its path (a slope)")
        tu = t[r]
        bad = np.nonzero(np.diff(tu) <= 0)[0]
        if bad.size:
            raise RowError(cx, r[bad[0] + 1], f"times within unit {u!r} must increase (rows in time order)")
    flat = np.concatenate([np.asarray(r, dtype=int) for r in rows])
    start = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    return Readings(units, t[flat], y[flat], start, flat)


def _numbers(col: Sequence[Any], field: str) -> np.ndarray:
    out = np.empty(len(col))
    for row, v in enumerate(col):
        if isinstance(v, bool) or v is None:
            raise RowError(field, row, "missing or non-numeric value")
        try:
            out[row] = float(v)
        except (TypeError, ValueError):
            raise RowError(field, row, f"not a number ({v!r})") from None
        if not np.isfinite(out[row]):
            raise RowError(field, row, "must be finite")
    return out


def unit_lines(path: Path, r: Readings, *, fields: tuple[str, str] = ("x", "y")) -> np.ndarray:
    """Each unit's least-squares line h(y) = A + B·g(t): an array of (A, B, residual SS, n) rows."""
    gt, hy = r.transformed(path, fields)
    out = np.empty((len(r.units), 4))
    for k in range(len(r.units)):
        s, e = r.start[k], r.start[k + 1]
        x, z = gt[s:e], hy[s:e]
        xm, zm = x.mean(), z.mean()
        sxx = float(np.sum((x - xm) ** 2))
        b = float(np.sum((x - xm) * (z - zm)) / sxx)
        a = zm - b * xm
        out[k] = (a, b, float(np.sum((z - a - b * x) ** 2)), e - s)
    return out
