"""Censoring codes, shared by every kind of life data (life, regression, ALT, competing risks,
degradation pseudo-lives): 0 failure, 1 right-censored, -1 left-censored, read from numbers or
the spellings people write (F, S, C, L, failed, suspended, ...)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bathtub.errors import RowError

FAILURE, RIGHT, LEFT = 0, 1, -1

_CODES: dict[str, int] = {}
for _code, _words in (
    (FAILURE, ("0", "f", "failure", "failed", "fail", "observed", "event", "exact")),
    (RIGHT, ("1", "c", "s", "r", "suspension", "suspended", "censored", "right", "survived")),
    (LEFT, ("-1", "l", "left")),
):
    for _w in _words:
        _CODES[_w] = _code


def censoring_codes(col: Any, field: str) -> np.ndarray:
    """A censoring column as codes 0 failure, 1 right-censored, -1 left-censored, from numbers or
    the spelled codes (F, S, C, L, ...); an unknown code is refused naming its row."""
    arr = np.asarray(col)
    if arr.dtype.kind in "iu" or (arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
        out = arr.astype(int, copy=False)  # read only: no copy of an int64 column
        bad = (out < LEFT) | (out > RIGHT)
        if bad.any():
            i = int(np.argmax(bad))
            raise RowError(field, i, f"unknown censoring code {col[i]!r}; use 0 failure, 1 right, -1 left")
        return out
    # spelled codes: map each distinct spelling once (fast on 10^6 rows)
    if arr.dtype.kind == "U":
        words = arr
    else:  # mixed objects: booleans are refused (lifelines' event flag has the opposite sense)
        words = np.array(["\x00bool" if isinstance(v, (bool, np.bool_)) else "" if v is None else str(v)
                          for v in col], dtype=str)
    uniq, inv = np.unique(words, return_inverse=True)
    mapped = np.empty(uniq.size, dtype=int)
    for j, w in enumerate(uniq):
        code = _code_of(w)
        if code is None:
            i = int(np.argmax(inv == j))
            if not w.strip():
                raise RowError(field, i, "missing value")
            raise RowError(
                field, i, f"unknown censoring code {col[i]!r}; use 0/F (failure), 1/S/C (right), -1/L (left)"
            )
        mapped[j] = code
    return mapped[np.asarray(inv).ravel()]


def _code_of(word: str) -> int | None:
    key = word.strip().lower()
    if key in _CODES:
        return _CODES[key]
    try:
        v = float(key)
    except ValueError:
        return None
    return int(v) if v in (FAILURE, RIGHT, LEFT) else None
