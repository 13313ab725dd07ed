"""Design matrices for regression life models: from named covariate columns or a formula.

Two ways in, one record out (`Design`):

- `covariates`: column names. A column whose values are all numbers is used as it is; any
  other column is categorical and becomes treatment-coded dummies `col[T.level]` against a
  reference level (the first level in sorted order unless `reference` names one), as R and
  patsy/formulaic name them.
- `formula`: a Wilkinson right-hand side (`age + C(prio) + age:fin`, `np.log(x)`), expanded by
  `formulaic` (a well-kept library; we do not parse formulas ourselves). The intercept is
  dropped: a proportional-hazards baseline absorbs it.

`Design.spec` is plain JSON and rebuilds the one-row design for a prediction (`row`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bathtub.errors import InputError

MAX_LEVELS = 200  # a categorical column with more levels is almost certainly an id, not a factor


@dataclass(frozen=True, eq=False)
class Design:
    """Covariate matrix `x` (rows × terms) with term names and the JSON spec that rebuilds a row."""

    x: np.ndarray
    names: list[str]
    spec: dict[str, Any]


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip())


def check_roles(columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, Any], roles: Sequence[str],
                model: str) -> None:
    """Every mapped role is one of `roles` and names a column of the dataset."""
    for role, col in mapping.items():
        if role not in roles:
            raise InputError(f"mapping.{role}", f"not a role of {model}; roles are {', '.join(roles)}")
        if col not in columns:
            raise InputError(f"mapping.{role}", f"column {col!r} not in the dataset (columns: {', '.join(columns)})")


def column_values(columns: Mapping[str, Sequence[Any]], name: Any, field: str) -> list[Any]:
    """A dataset column by name, refused (naming `field`) if absent or if any row is missing."""
    if not isinstance(name, str) or name not in columns:
        known = ", ".join(map(str, columns))
        raise InputError(field, f"column {name!r} not in the dataset (columns: {known})")
    col = list(columns[name])
    for i, v in enumerate(col):
        if _missing(v):
            raise InputError(field, f"column {name!r} row {i + 1} is missing; regression needs every value")
    return col


def _numeric(col: list[Any]) -> np.ndarray | None:
    """The column as floats if every value is a number (or a numeric string), else None."""
    out = np.empty(len(col))
    for i, v in enumerate(col):
        if _is_number(v):
            out[i] = float(v)
            continue
        if isinstance(v, str):
            try:
                out[i] = float(v)
                continue
            except ValueError:
                return None
        return None
    return out


def level_label(v: Any) -> str:
    """A categorical value as the level name the design and strata use (1.0 and "1" are one level)."""
    if _is_number(v) and float(v).is_integer():
        return str(int(v))
    return str(v).strip()


def from_covariates(
    columns: Mapping[str, Sequence[Any]],
    covariates: Sequence[str],
    reference: Mapping[str, Any] | None = None,
    field: str = "covariates",
) -> Design:
    """Numeric columns as they are; other columns as treatment-coded dummies against a reference level."""
    if isinstance(covariates, str) or not isinstance(covariates, Sequence) or not covariates:
        raise InputError(field, "must be a non-empty array of column names")
    if len(set(covariates)) != len(covariates):
        raise InputError(field, "names a column twice")
    reference = dict(reference or {})
    for k in reference:
        if k not in covariates:
            raise InputError(f"options.reference.{k}", "is not one of the covariates")
    blocks: list[np.ndarray] = []
    names: list[str] = []
    terms: list[dict[str, Any]] = []
    for j, name in enumerate(covariates):
        col = column_values(columns, name, f"{field}[{j}]")
        values = _numeric(col)
        if values is not None and name not in reference:
            if not np.all(np.isfinite(values)):
                raise InputError(f"{field}[{j}]", f"column {name!r} has a non-finite value")
            blocks.append(values[:, None])
            names.append(name)
            terms.append({"column": name, "kind": "numeric", "min": float(values.min()), "max": float(values.max())})
            continue
        labels = [level_label(v) for v in col]
        levels = sorted(set(labels), key=_sort_key)
        if len(levels) > MAX_LEVELS:
            raise InputError(f"{field}[{j}]", f"column {name!r} has {len(levels)} levels (at most {MAX_LEVELS})")
        ref = level_label(reference[name]) if name in reference else levels[0]
        if ref not in levels:
            raise InputError(f"options.reference.{name}", f"level {ref!r} not in the column (levels: {levels})")
        others = [lv for lv in levels if lv != ref]
        codes = np.array(labels, dtype=object)
        for lv in others:
            blocks.append((codes == lv).astype(float)[:, None])
            names.append(f"{name}[T.{lv}]")
        terms.append({"column": name, "kind": "categorical", "levels": levels, "reference": ref})
    x = np.hstack(blocks) if blocks else np.empty((0, 0))
    return Design(x, names, {"covariates": list(covariates), "terms": terms})


def _sort_key(level: str) -> tuple[int, float, str]:
    """Numeric-looking levels in numeric order (2 before 10), then text."""
    try:
        return (0, float(level), level)
    except ValueError:
        return (1, 0.0, level)


def from_formula(columns: Mapping[str, Sequence[Any]], formula: str, field: str = "formula") -> Design:
    """The right-hand side of a Wilkinson formula over the dataset's columns, without intercept."""
    import pandas as pd
    from formulaic import Formula

    if not isinstance(formula, str) or not formula.strip() or len(formula) > 1000:
        raise InputError(field, "must be a formula string of at most 1000 characters, e.g. 'age + C(group)'")
    rhs = formula.split("~", 1)[1] if "~" in formula else formula
    try:
        parsed = Formula(rhs)
    except Exception as exc:  # formulaic raises several parser error types
        raise InputError(field, f"cannot parse: {exc}") from None
    used = sorted(str(v) for v in parsed.required_variables)
    frame: dict[str, Any] = {}
    for name in used:
        if name in columns:
            col = column_values(columns, name, field)
            values = _numeric(col)
            if values is not None and np.all(values == np.round(values)) and np.all(np.abs(values) < 2**53):
                values = values.astype(np.int64)  # C(k) of an integer column names its levels 1, not 1.0
            frame[name] = values if values is not None else [level_label(v) for v in col]
        elif name not in ("np", "pi", "e"):
            known = ", ".join(map(str, columns))
            raise InputError(field, f"term {name!r} is not a dataset column (columns: {known})")
    n = len(next(iter(columns.values()))) if columns else 0
    df = pd.DataFrame(frame, index=range(n))
    categorical = {k: sorted(set(v), key=_sort_key) for k, v in frame.items() if not isinstance(v, np.ndarray)}
    for k, levels in categorical.items():
        if len(levels) > MAX_LEVELS:
            raise InputError(field, f"column {k!r} has {len(levels)} levels (at most {MAX_LEVELS})")
        df[k] = pd.Categorical(df[k], categories=levels)
    # Few-valued numeric columns keep their values: C(x) of a numeric x needs every level to rebuild a row.
    anchors = {k: np.unique(v).tolist() for k, v in frame.items()
               if isinstance(v, np.ndarray) and np.unique(v).size <= MAX_LEVELS}
    try:
        mm = parsed.get_model_matrix(df, ensure_full_rank=True, na_action="raise")
    except Exception as exc:
        raise InputError(field, f"cannot build the design: {exc}") from None
    cols = [c for c in mm.columns if c != "Intercept"]
    if not cols:
        raise InputError(field, "has no covariate term")
    x = np.asarray(mm[cols], dtype=float)
    if not np.all(np.isfinite(x)):
        raise InputError(field, "a term is not finite on some row (log of 0? division by 0?)")
    numeric = sorted(k for k in frame if k not in categorical)
    # the fitted range of each numeric variable: a block's covariate schedule is clipped to it
    ranges = {k: [float(np.min(frame[k])), float(np.max(frame[k]))] for k in numeric}
    return Design(x, [str(c) for c in cols],
                  {"formula": rhs.strip(), "categorical": categorical, "anchors": anchors,
                   "numeric": numeric, "names": [str(c) for c in cols], "ranges": ranges})


def design(
    columns: Mapping[str, Sequence[Any]],
    covariates: Sequence[str] | None,
    formula: str | None,
    reference: Mapping[str, Any] | None = None,
) -> Design:
    """The design of `covariates` or `formula` (exactly one), checked for constant and collinear terms."""
    if (covariates is None) == (formula is None):
        raise InputError("covariates", "give covariates or formula, not both or neither")
    if covariates is not None:
        d = from_covariates(columns, covariates, reference)
        field = "covariates"
    else:
        if reference:
            raise InputError("options.reference", "goes with covariates; in a formula write C(x, contr.treatment('b'))")
        d = from_formula(columns, formula or "")
        field = "formula"
    check(d, field)
    return d


def check(d: Design, field: str) -> None:
    """Refuse a constant term and a term that is a linear combination of others (no unique fit)."""
    x = d.x
    if x.shape[0] < 2:
        raise InputError(field, "needs at least 2 rows")
    for j, name in enumerate(d.names):
        col = x[:, j]
        if np.all(col == col[0]):
            raise InputError(field, f"covariate {name!r} is constant ({col[0]:g} on every row); it has no effect "
                                    "to estimate")
    centred = x - x.mean(axis=0)
    scale = np.sqrt((centred**2).mean(axis=0))
    z = centred / scale
    rank = np.linalg.matrix_rank(z, tol=1e-8 * math.sqrt(x.shape[0]))
    if rank < x.shape[1]:
        # Name the first term that adds nothing to the ones before it.
        for j in range(1, x.shape[1] + 1):
            if np.linalg.matrix_rank(z[:, :j], tol=1e-8 * math.sqrt(x.shape[0])) < j:
                raise InputError(field, f"covariate {d.names[j - 1]!r} is a linear combination of earlier terms "
                                        "(collinear); drop it")


def row(spec: Mapping[str, Any], values: Mapping[str, Any], field: str = "covariates") -> np.ndarray:
    """One design row from {column: value} by a saved `Design.spec` (for predictions)."""
    if "terms" in spec:
        known = [t["column"] for t in spec["terms"]]
        for k in values:
            if k not in known:
                raise InputError(f"{field}.{k}", f"not a covariate of this model (covariates: {', '.join(known)})")
        out: list[float] = []
        for t in spec["terms"]:
            col = t["column"]
            if col not in values:
                raise InputError(f"{field}.{col}", "required: a value for every covariate of the model")
            v = values[col]
            if t["kind"] == "numeric":
                if not _is_number(v) or not math.isfinite(float(v)):
                    raise InputError(f"{field}.{col}", "must be a finite number")
                out.append(float(v))
            else:
                lv = level_label(v)
                if lv not in t["levels"]:
                    raise InputError(f"{field}.{col}", f"level {lv!r} not seen in the fit (levels: {t['levels']})")
                out.extend(1.0 if lv == other else 0.0 for other in t["levels"] if other != t["reference"])
        return np.array(out)
    import pandas as pd
    from formulaic import Formula

    categorical = spec.get("categorical", {})
    needed = [*spec.get("numeric", []), *categorical]
    for k in values:
        if k not in needed:
            raise InputError(f"{field}.{k}", f"not a variable of this model's formula (variables: {', '.join(needed)})")
    anchors = spec.get("anchors", {})
    # The unit's row followed by anchor rows that carry every level of every categorical and few-valued
    # numeric variable, so C(x) and treatment coding see the levels of the fit; row 0 is the answer.
    count = 1 + max([len(v) for v in (*categorical.values(), *anchors.values())] or [0])
    frame: dict[str, Any] = {}
    for k in needed:
        if k not in values:
            raise InputError(f"{field}.{k}", "required: a value for every variable of the formula")
        v = values[k]
        if k in categorical:
            lv = level_label(v)
            if lv not in categorical[k]:
                raise InputError(f"{field}.{k}", f"level {lv!r} not seen in the fit (levels: {categorical[k]})")
            levels = categorical[k]
            frame[k] = pd.Categorical([lv, *(levels[i % len(levels)] for i in range(count - 1))], categories=levels)
        else:
            if not _is_number(v) or not math.isfinite(float(v)):
                raise InputError(f"{field}.{k}", "must be a finite number")
            if k in anchors:
                if float(v) not in anchors[k] and len(anchors[k]) <= 2:
                    # a two-valued numeric is a flag: another value is outside what the fit saw
                    raise InputError(f"{field}.{k}", f"must be one of {anchors[k]} (the values seen in the fit)")
                vals = anchors[k]
                own = int(v) if float(v).is_integer() and all(isinstance(a, int) for a in vals) else float(v)
                frame[k] = [own, *(vals[i % len(vals)] for i in range(count - 1))]
            else:
                frame[k] = [float(v)] * count
    mm = Formula(spec["formula"]).get_model_matrix(pd.DataFrame(frame), ensure_full_rank=True)
    names = spec.get("names") or [c for c in mm.columns if c != "Intercept"]
    if list(names) != [c for c in mm.columns if c != "Intercept"]:
        raise InputError(field, "these values give a design with other terms than the fit's")
    return np.asarray(mm[list(names)], dtype=float)[0]


def check_rebuild(d: Design, columns: Mapping[str, Sequence[Any]]) -> None:
    """A formula whose terms depend on the whole column (center, scale, splines) cannot be rebuilt for
    one row at prediction time: refuse it now rather than predict wrongly later."""
    n = d.x.shape[0]
    for k in sorted({0, n // 2, n - 1}):
        values = {c: columns[c][k] for c in (*d.spec["numeric"], *d.spec["categorical"])}
        again = row(d.spec, values, "formula")
        if again.shape != d.x[k].shape or not np.allclose(again, d.x[k], rtol=1e-12, atol=1e-12):
            raise InputError("formula", "uses a transform that depends on the whole column (center, scale, "
                                        "splines): predictions for one unit could not rebuild it; transform the "
                                        "column in the dataset instead")
