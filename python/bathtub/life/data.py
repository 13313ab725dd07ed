"""Life data: the canonical input of every life-data fit.

Four kinds of observation, each stored as unique times with a count (duplicates collapsed
into weights, so a 10^6-row dataset with repeated times costs what its distinct times cost):

- exact failures at x,
- right-censored (suspended) units, still running at x,
- left-censored units, found failed at an inspection at x (failed somewhere in (0, x]),
- interval-censored units, failed somewhere in (xl, xr].

Censoring codes for the `c` column (surpyval's convention, 0 = observed, 1 = right,
-1 = left; lifelines' event flag has the opposite sense, so we do not read booleans):

| code | meaning        | also accepted (case-insensitive)                        |
|------|----------------|---------------------------------------------------------|
| 0    | failure        | F, failure, failed, fail, observed, event, exact        |
| 1    | right-censored | C, S, R, suspension, suspended, censored, right, survived |
| -1   | left-censored  | L, left                                                 |

Interval columns `xl`/`xr`: xl == xr is an exact failure, xl = 0 (or missing) is left-censored
at xr, a missing or infinite xr is right-censored at xl.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bathtub.censoring import FAILURE, LEFT, RIGHT, censoring_codes
from bathtub.engine import binding
from bathtub.errors import InputError, RowError

ROLES = ("x", "c", "n", "xl", "xr")


def _collapse(x: np.ndarray, w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Unique sorted times with summed counts (w None: one each; zero counts dropped); one sort."""
    if x.size == 0:
        return np.empty(0), np.empty(0)
    unit = w is None or bool(np.all(w == 1.0))
    if unit:
        xs = np.sort(x)
    else:
        keep = w > 0
        x, w = x[keep], w[keep]
        if x.size == 0:
            return np.empty(0), np.empty(0)
        order = np.argsort(x, kind="stable")
        xs, ws = x[order], w[order]
    starts = np.flatnonzero(np.concatenate([[True], xs[1:] != xs[:-1]]))
    if unit:
        counts = np.diff(np.append(starts, xs.size)).astype(float)
    else:
        counts = np.add.reduceat(ws, starts)
    return xs[starts], counts


def _collapse_exact_right(
    times: np.ndarray, right: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Unit rows of failures and suspensions (`right` true) in one sort: (f, fn, r, rn, before),
    `before` the units (of either kind) strictly before each distinct failure time.

    For t >= 0 the bits of a float64 read as an unsigned integer order like t; shifted left one
    place with the censoring flag in the freed bit, one integer sort orders every row by (time,
    failure first), ties become equal keys, and a failure's position in that order counts the
    units before it (what ranks need): one sort instead of one per kind and a merge of the two.
    """
    key = (times + 0.0).view(np.uint64)  # + 0.0: -0.0 (sign bit set) becomes 0.0; a new array
    key <<= np.uint64(1)
    key |= right.view(np.uint8)
    failures = key.size - int(np.count_nonzero(right))
    # the sort and the collapse in one call, in place: Rust's sort is ~3x NumPy's on this
    # machine (see rust/engine/src/sort.rs) and its one pass replaces a dozen NumPy passes
    suspensions = key.size - failures
    out = np.empty(3 * failures + 2 * suspensions)
    nf, nr = binding.collapse_keys(key, failures, out)
    # columns f | fn | before | r | rn, each used up to its count: views, no copies
    col = [out[k * failures:][:nf] for k in range(3)]
    r0 = 3 * failures
    return col[0], col[1], out[r0:][:nr], out[r0 + suspensions:][:nr], col[2]


def _collapse2(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keep = w > 0
    a, b, w = a[keep], b[keep], w[keep]
    if a.size == 0:
        return np.empty(0), np.empty(0), np.empty(0)
    pairs, inv = np.unique(np.stack([a, b], axis=1), axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    return pairs[:, 0].copy(), pairs[:, 1].copy(), np.bincount(inv, weights=w, minlength=len(pairs)).astype(float)


@dataclass(frozen=True, eq=False)
class LifeData:
    """Life data as unique times and counts per observation kind (times in the data's unit)."""

    f: np.ndarray  # exact failure times
    fn: np.ndarray
    r: np.ndarray  # right-censored times
    rn: np.ndarray
    lt: np.ndarray  # left-censored times (failed before)
    ln: np.ndarray
    il: np.ndarray  # interval-censored: failed in (il, ir]
    ir: np.ndarray
    inn: np.ndarray
    # units strictly before each exact failure time, when construction sorted both kinds
    # together (see `units_before`)
    f_before: np.ndarray | None = field(default=None, repr=False)

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def from_arrays(
        cls,
        x: Sequence[float] | np.ndarray | None = None,
        c: Sequence[Any] | np.ndarray | None = None,
        n: Sequence[float] | np.ndarray | None = None,
        xl: Sequence[Any] | np.ndarray | None = None,
        xr: Sequence[Any] | np.ndarray | None = None,
        *,
        fields: Mapping[str, str] | None = None,
    ) -> LifeData:
        """Build from columns: `x` (+ optional codes `c`) or `xl`/`xr`, with optional counts `n`.

        `fields` names each role's column for error messages (defaults to the role name).
        """
        names = {r: r for r in ROLES} | dict(fields or {})
        if x is None and xl is None and xr is None:
            raise InputError("mapping.x", "map x (times) or xl/xr (interval bounds)")
        if x is not None and (xl is not None or xr is not None):
            raise InputError(names["xl"], "give either x (with c) or xl/xr, not both")
        rows = _rows(x, c, n, xl, xr, names)
        counts = rows.counts
        empty = np.empty(0)
        before = None
        if rows.times is not None and rows.codes is not None and n is None and bool(np.all(rows.codes >= FAILURE)):
            f, fn, r, rn, before = _collapse_exact_right(rows.times, rows.codes == RIGHT)
            lt, ln, il, ir, inn = empty, empty, empty, empty, empty
        elif rows.times is not None and rows.codes is not None:
            times, codes, weights = rows.times, rows.codes, None if n is None else counts

            def part(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
                return _collapse(times[mask], None if weights is None else weights[mask])

            f, fn = part(codes == FAILURE)
            r, rn = part(codes == RIGHT)
            lt, ln = part(codes == LEFT)
            il, ir, inn = empty, empty, empty
        else:
            assert rows.lo is not None and rows.hi is not None and counts is not None
            lo, hi = rows.lo, rows.hi
            exact = lo == hi
            right = np.isinf(hi)
            left = (lo == 0) & ~exact & ~right
            inter = ~(exact | right | left)
            if np.all(right & (lo == 0)):
                raise InputError(names["xl"], "every row is censored at 0: no information")
            f, fn = _collapse(lo[exact], counts[exact])
            r, rn = _collapse(lo[right], counts[right])
            lt, ln = _collapse(hi[left], counts[left])
            il, ir, inn = _collapse2(lo[inter], hi[inter], counts[inter])
        data = cls(f, fn, r, rn, lt, ln, il, ir, inn, before)
        if data.n == 0:
            raise InputError(names["n"], "counts add to 0: no data")
        return data

    @classmethod
    def from_columns(cls, columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str]) -> LifeData:
        """Build from a dataset's columns and a `mapping` of role (x, c, n, xl, xr) to column name."""
        if not isinstance(mapping, Mapping):
            raise InputError("mapping", "must be an object of role to column name")
        args: dict[str, Any] = {}
        for role, column in mapping.items():
            if role not in ROLES:
                continue  # other roles (covariates, item, group) belong to other models
            if not isinstance(column, str):
                raise InputError(f"mapping.{role}", "must be a column name")
            if column not in columns:
                known = ", ".join(map(str, columns))
                raise InputError(f"mapping.{role}", f"column {column!r} not in the dataset (columns: {known})")
            args[role] = columns[column]
        fields = {role: f"data.{col}" for role, col in mapping.items() if role in ROLES}
        return cls.from_arrays(**args, fields=fields)

    @classmethod
    def from_failures(
        cls, failures: Sequence[float] | np.ndarray, right_censored: Sequence[float] | np.ndarray | None = None
    ) -> LifeData:
        """Failures and suspensions as two arrays (reliability's calling convention)."""
        f = np.asarray(failures, dtype=float)
        r = np.asarray([] if right_censored is None else right_censored, dtype=float)
        x = np.concatenate([f, r])
        c = np.concatenate([np.zeros(f.size, int), np.ones(r.size, int)])
        return cls.from_arrays(x, c)

    # ---- summaries ----------------------------------------------------------------------
    def units_before(self) -> np.ndarray:
        """Units (failed or suspended) strictly before each exact failure time: the failures
        before it and the suspensions before it (one at a failure's time counts after it, the
        ranks' convention). Exact and right-censored data; kept once computed."""
        if self.f_before is None:
            # f and r are sorted: locate the (fewer) suspensions among the failures, sum counts
            pos = np.searchsorted(self.f, self.r, side="right")  # failures at or before each suspension
            before = np.cumsum(np.bincount(pos, weights=self.rn, minlength=self.f.size + 1))[: self.f.size]
            object.__setattr__(self, "f_before", np.cumsum(self.fn) - self.fn + before)  # a cache of derived data
        assert self.f_before is not None
        return self.f_before

    @property
    def n(self) -> int:
        """Number of units (sum of counts)."""
        return round(self.fn.sum() + self.rn.sum() + self.ln.sum() + self.inn.sum())

    @property
    def n_failures(self) -> int:
        """Units known to have failed (exact, left- or interval-censored)."""
        return round(self.fn.sum() + self.ln.sum() + self.inn.sum())

    @property
    def only_exact_and_right(self) -> bool:
        return self.lt.size == 0 and self.il.size == 0

    def all_times(self) -> np.ndarray:
        """Every finite time mentioned (for scales and starting values)."""
        return np.concatenate([self.f, self.r, self.lt, self.il, self.ir[np.isfinite(self.ir)]])

    def min_time(self) -> float:
        """Smallest time at which a failure may have happened (bounds a location parameter)."""
        cand = [a.min() for a in (self.f, self.r, self.lt) if a.size]
        if self.il.size:
            cand.append(self.il.min())
        return float(min(cand))

    def failure_points(self) -> tuple[np.ndarray, np.ndarray]:
        """Representative failure times with counts: exact, left at half the time, interval midpoints."""
        x = np.concatenate([self.f, self.lt / 2.0, (self.il + self.ir) / 2.0])
        w = np.concatenate([self.fn, self.ln, self.inn])
        return x, w

    def require_failures(self, k: int, what: str = "this model") -> None:
        """Refuse data with fewer than `k` failures (k = number of parameters)."""
        if self.n_failures == 0:
            raise InputError("data", f"no failures: {what} needs failures to fit")
        if self.n_failures < k:
            raise InputError("data", f"{self.n_failures} failures but {what} has {k} parameters")
        if self.f.size >= 2:
            return  # f holds unique times
        distinct = np.unique(np.concatenate([self.f, self.lt, self.il, self.ir]))
        if distinct.size < min(k, 2):
            raise InputError("data", f"all failures at one time: {what} needs at least 2 distinct times")

    def to_dict(self) -> dict[str, list[float]]:
        """Plain lists (JSON-ready), enough to rebuild with `from_dict`."""
        return {k: [float(v) for v in getattr(self, k)] for k in ("f", "fn", "r", "rn", "lt", "ln", "il", "ir", "inn")}

    @classmethod
    def from_dict(cls, d: Mapping[str, Sequence[float]]) -> LifeData:
        keys = ("f", "fn", "r", "rn", "lt", "ln", "il", "ir", "inn")
        return cls(*(np.asarray(d.get(k, []), dtype=float) for k in keys))

    def subset_failures(self, keep: np.ndarray) -> LifeData:
        """Same units, but exact failures not in `keep` (a mask over `f`) become right-censored."""
        r = np.concatenate([self.r, self.f[~keep]])
        rn = np.concatenate([self.rn, self.fn[~keep]])
        r, rn = _collapse(r, rn)
        return LifeData(self.f[keep], self.fn[keep], r, rn, self.lt, self.ln, self.il, self.ir, self.inn)


@dataclass(frozen=True)
class _Rows:
    """The columns of life data as checked numbers, row by row (before collapsing)."""

    counts: np.ndarray | None  # None (times with codes and no counts): one unit a row
    times: np.ndarray | None  # x, with codes
    codes: np.ndarray | None
    lo: np.ndarray | None  # xl/xr, missing ends filled (0 and inf)
    hi: np.ndarray | None


def _rows(x: Any, c: Any, n: Any, xl: Any, xr: Any, names: Mapping[str, str]) -> _Rows:
    """Every row-by-row rule of life data; a broken one raises RowError naming column and row."""
    length = None
    for role, col in {"x": x, "c": c, "n": n, "xl": xl, "xr": xr}.items():
        if col is None:
            continue
        if isinstance(col, (str, bytes)) or not hasattr(col, "__len__"):
            raise InputError(names[role], "must be an array")
        if length is None:
            length = len(col)
        elif len(col) != length:
            raise InputError(names[role], f"has {len(col)} rows, expected {length} like the other columns")
    if not length:
        raise InputError(names["x" if x is not None else "xl"], "no rows")
    counts: np.ndarray | None = None  # None: one unit a row (times with codes need no array of ones)
    if n is not None:
        counts = number_column(n, names["n"], allow_missing=False)
        bad = (counts < 0) | (counts != np.floor(counts))
        if bad.any():
            raise RowError(names["n"], int(np.argmax(bad)), "counts must be whole numbers >= 0")
    if x is not None:
        times = number_column(x, names["x"], allow_missing=False)
        _check_times(times, names["x"])
        codes = np.zeros(length, dtype=int) if c is None else censoring_codes(c, names["c"])
        return _Rows(counts, times, codes, None, None)
    counts = np.ones(length) if counts is None else counts
    lo = np.zeros(length) if xl is None else number_column(xl, names["xl"], allow_missing=True)
    hi = np.full(length, math.inf) if xr is None else number_column(xr, names["xr"], allow_missing=True)
    lo = np.where(np.isnan(lo), 0.0, lo)
    hi = np.where(np.isnan(hi), math.inf, hi)
    bad = ~np.isfinite(lo) | (lo < 0)
    if bad.any():
        raise RowError(names["xl"], int(np.argmax(bad)), "times must be finite and >= 0")
    bad = (hi < 0) | np.isneginf(hi)
    if bad.any():
        raise RowError(names["xr"], int(np.argmax(bad)), "times must be >= 0")
    bad = hi < lo
    if bad.any():
        raise RowError(names["xr"], int(np.argmax(bad)), "xr must be >= xl")
    return _Rows(counts, None, None, lo, hi)


def check_rows(columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str]) -> None:
    """Check rows against the row-by-row rules of the columns `mapping` gives a role (x, c, n,
    xl, xr): times present, finite and >= 0, known censoring codes, whole counts >= 0, xl <= xr.

    Raises RowError naming the column and the row. What the data must hold as a whole (some
    failures, ...) is the fit's to check: new rows can pass here and still complete a dataset.
    """
    names = {role: col for role, col in mapping.items() if role in ROLES and col in columns}
    if not names or ("x" not in names and "xl" not in names and "xr" not in names):
        return
    if not len(columns[next(iter(names.values()))]):
        return
    args = {role: columns[col] for role, col in names.items() if not ("x" in names and role in ("xl", "xr"))}
    _rows(args.get("x"), args.get("c"), args.get("n"), args.get("xl"), args.get("xr"),
          {r: r for r in ROLES} | names)


def number_column(col: Any, field: str, *, allow_missing: bool) -> np.ndarray:
    """A column as float64; a missing cell is NaN where allowed, else refused (RowError naming
    `field` and the row); booleans and text that is not a number are refused."""
    fast = _numbers_fast(col)
    if fast is not None and (allow_missing or not np.isnan(fast).any()):
        return fast
    out = np.empty(len(col))
    for i, v in enumerate(col):
        if v is None or (isinstance(v, str) and v.strip() == ""):
            if not allow_missing:
                raise RowError(field, i, "missing value")
            out[i] = math.nan
            continue
        if isinstance(v, bool):
            raise RowError(field, i, "must be a number, not a boolean")
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            raise RowError(field, i, f"{v!r} is not a number") from None
        if math.isnan(out[i]) and not allow_missing:
            raise RowError(field, i, "must be a finite number")
    return out


def _numbers_fast(col: Any) -> np.ndarray | None:
    """The column as float64 without a Python loop when it is plainly numeric."""
    if isinstance(col, np.ndarray) and col.dtype.kind in "fiu":
        return col.astype(float, copy=False)
    if isinstance(col, np.ndarray) and col.dtype.kind == "b":
        return None
    try:
        arr = np.asarray(col)
    except (TypeError, ValueError):
        return None
    if arr.ndim == 1 and arr.dtype.kind in "fiu":
        return arr.astype(float, copy=False)
    return None


def _check_times(times: np.ndarray, field: str) -> None:
    bad = ~np.isfinite(times)
    if bad.any():
        raise RowError(field, int(np.argmax(bad)), "times must be finite")
    neg = times < 0
    if neg.any():
        raise RowError(field, int(np.argmax(neg)), "times must be >= 0")
