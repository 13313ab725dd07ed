"""ALT fits from a dataset's columns: the `alt` model kind of `POST /api/v1/fit`.

`mapping` roles: `x` time, `c` censoring code (0 failure, 1 right-censored; optional),
`stress` and, for two-stress relationships, `stress2`. Bad input names `mapping.<role>`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bathtub.alt.fit import fit_alt
from bathtub.alt.relationships import parse_model
from bathtub.censoring import FAILURE, RIGHT, censoring_codes
from bathtub.errors import InputError

ROLES = ("x", "c", "stress", "stress2")


def number_column(col: Sequence[Any], field: str) -> np.ndarray:
    out = np.empty(len(col))
    for i, v in enumerate(col):
        if v is None or isinstance(v, (bool, np.bool_)) or (isinstance(v, str) and not v.strip()):
            raise InputError(field, f"row {i}: a number is needed")
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            raise InputError(field, f"row {i}: {v!r} is not a number") from None
        if not math.isfinite(out[i]):
            raise InputError(field, f"row {i}: must be a finite number")
    return out


def alt_arrays(columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str], distribution: str
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """(times, failed, stress, stress2) from the mapped columns, row rules checked."""
    parse_model(distribution)
    if not isinstance(mapping, Mapping) or not mapping:
        raise InputError("mapping", "must map roles (x, c, stress, stress2) to column names")
    for role, column in mapping.items():
        if role not in ROLES:
            raise InputError(f"mapping.{role}", f"not a role of an ALT fit; roles are {', '.join(ROLES)}")
        if column not in columns:
            raise InputError(f"mapping.{role}", f"column {column!r} not in the dataset "
                                                f"(columns: {', '.join(map(str, columns))})")
    for role in ("x", "stress"):
        if role not in mapping:
            raise InputError(f"mapping.{role}", f"an ALT fit needs a {role} column")
    t = number_column(columns[mapping["x"]], "mapping.x")
    failed = np.ones(t.size, bool)
    if "c" in mapping:
        codes = censoring_codes(columns[mapping["c"]], "mapping.c")
        bad = (codes != FAILURE) & (codes != RIGHT)
        if bad.any():
            raise InputError("mapping.c", f"row {int(np.argmax(bad))}: ALT fits take failures (0) and "
                                          "right-censored units (1)")
        failed = codes == FAILURE
    s1 = number_column(columns[mapping["stress"]], "mapping.stress")
    s2 = number_column(columns[mapping["stress2"]], "mapping.stress2") if "stress2" in mapping else None
    return t, failed, s1, s2


def fit_columns(columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str], distribution: str,
                options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The saved-model record of ALT model `distribution` fitted to a dataset's columns."""
    t, failed, s1, s2 = alt_arrays(columns, mapping, distribution)
    return fit_alt(distribution, t, failed, s1, s2, options,
                   fields=("mapping.x", "mapping.c", "mapping.stress", "mapping.stress2"))
