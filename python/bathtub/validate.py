"""The library's one validator toolkit: primitive checks, and declarations built from them.

Primitives are `check_*(value, field, ...) -> cleaned value`; each raises
`InputError(field, rule)` naming the dotted path, with one wording per rule, so a number out
of its range reads the same whether a strategy calculator, a diagram declaration or the
engine's run options refused it. JSON has one number type, so a bool (a Python int) is never
a number, and a whole float (3.0) is an integer.

Declarations (`number()`, `obj(...)`, ...) are `Check`s: a checker that carries the JSON
Schema of what it accepts, built by the same declaration, so a published schema and the check
it describes cannot drift. Objects refuse unknown keys, as the spec's schemas do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from bathtub.errors import InputError

Schema = dict[str, Any]

NUMBER_RULE = "must be a finite number"
INTEGER_RULE = "must be an integer"
BOOLEAN_RULE = "must be true or false"


# ---------------------------------------------------------------------------------------
# Primitives


def is_number(v: Any) -> bool:
    """A JSON number: an int or float (numpy's too, as a column gives them), not a bool (which
    Python counts as an int)."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def is_integer(v: Any, *, whole_floats: bool = True) -> bool:
    """A JSON integer: an int (not a bool) or, unless refused, a whole float such as 3.0. An int
    is whole as it is (never compared through a float, which cannot hold every int past 2**53)."""
    if not is_number(v):
        return False
    if isinstance(v, (int, np.integer)):
        return True
    return whole_floats and math.isfinite(v) and float(v).is_integer()


def _range_rule(lo: float, hi: float, lo_open: bool, hi_open: bool) -> str:
    if math.isinf(hi):
        return f"must be {'>' if lo_open else '>='} {lo:g}"
    if math.isinf(lo):
        return f"must be {'<' if hi_open else '<='} {hi:g}"
    return f"must be in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"


def check_number(v: Any, field: str, lo: float = -math.inf, hi: float = math.inf, *,
                 lo_open: bool = False, hi_open: bool = False) -> float:
    """A finite number in [lo, hi] (open ends where asked)."""
    if not is_number(v) or not math.isfinite(v):
        raise InputError(field, NUMBER_RULE)
    if v < lo or (lo_open and v == lo) or v > hi or (hi_open and v == hi):
        raise InputError(field, _range_rule(lo, hi, lo_open, hi_open))
    return float(v)


def check_integer(v: Any, field: str, lo: int | None = None, hi: int | None = None, *,
                  whole_floats: bool = True) -> int:
    """A whole number in [lo, hi] (either bound optional); a whole float (3.0) is taken unless
    `whole_floats` is False (where the caller hands the value on as it came)."""
    if not is_integer(v, whole_floats=whole_floats):
        raise InputError(field, INTEGER_RULE)
    n = int(v)
    if (lo is not None and n < lo) or (hi is not None and n > hi):
        if hi is None:
            raise InputError(field, f"must be an integer >= {lo}")
        if lo is None:
            raise InputError(field, f"must be an integer <= {hi}")
        raise InputError(field, f"must be an integer from {lo} to {hi}")
    return n


def check_boolean(v: Any, field: str) -> bool:
    if not isinstance(v, bool):
        raise InputError(field, BOOLEAN_RULE)
    return v


def check_text(v: Any, field: str, min_len: int = 0, max_len: int | None = None) -> str:
    if not isinstance(v, str):
        raise InputError(field, "must be a string")
    if len(v) < min_len or (max_len is not None and len(v) > max_len):
        if max_len is None:
            raise InputError(field, "required (a non-empty string)" if min_len == 1 else
                             f"must be at least {min_len} characters")
        raise InputError(field, f"must be {min_len} to {max_len} characters")
    return v


def check_enum(v: Any, field: str, values: Sequence[str]) -> str:
    if not isinstance(v, str) or v not in values:
        raise InputError(field, f"must be one of {', '.join(values)}")
    return v


def is_array(v: Any) -> bool:
    """A JSON array (a list or tuple; a string is a sequence but not an array)."""
    return isinstance(v, Sequence) and not isinstance(v, (str, bytes))


def check_array(v: Any, field: str, min_len: int = 0, max_len: int = 100_000) -> list[Any]:
    if not is_array(v):
        raise InputError(field, "must be an array")
    if not min_len <= len(v) <= max_len:
        raise InputError(field, f"must have {min_len} to {max_len} items")
    return list(v)


def check_keys(v: Any, known: Sequence[str], field: str) -> Mapping[str, Any]:
    """An object with no key outside `known`."""
    if not isinstance(v, Mapping):
        raise InputError(field, "must be an object")
    for k in v:
        if k not in known:
            raise InputError(f"{field}.{k}", f"unknown field; known: {', '.join(known)}")
    return v


def check_row(names: Sequence[str] | None, raw: Any, field: str, known: Sequence[str], shape: str,
              known_words: str | None = None) -> dict[str, Any]:
    """One row of a request's rows: CSV cells by column when `names` are given, else an object,
    with no field outside `known` (`shape` and `known_words` say both in the refusal's words)."""
    row = dict(zip(names, raw, strict=True)) if names is not None else raw
    if not isinstance(row, dict):
        raise InputError(field, f"must be an object {shape}")
    for k in row:
        if k not in known:
            raise InputError(f"{field}.{k}", f"unknown field; known: {known_words or ', '.join(known)}")
    return row


# ---------------------------------------------------------------------------------------
# Declarations: a check and its JSON Schema from one statement.


class Check:
    """A checker with the JSON Schema of the values it accepts."""

    def __init__(self, fn: Callable[[Any, str], Any], schema: Schema) -> None:
        self.fn = fn
        self.schema = schema

    def __call__(self, v: Any, field: str) -> Any:
        return self.fn(v, field)


def _bounds(lo: float, hi: float, lo_open: bool, hi_open: bool) -> Schema:
    out: Schema = {}
    if math.isfinite(lo):
        out["exclusiveMinimum" if lo_open else "minimum"] = lo
    if math.isfinite(hi):
        out["exclusiveMaximum" if hi_open else "maximum"] = hi
    return out


def number(lo: float = -math.inf, hi: float = math.inf, *, lo_open: bool = False, hi_open: bool = False) -> Check:
    """A finite number in [lo, hi] (open ends where asked)."""

    def check(v: Any, field: str) -> float:
        return check_number(v, field, lo, hi, lo_open=lo_open, hi_open=hi_open)

    return Check(check, {"type": "number", **_bounds(lo, hi, lo_open, hi_open)})


def integer(lo: int, hi: int) -> Check:
    def check(v: Any, field: str) -> int:
        return check_integer(v, field, lo, hi)

    return Check(check, {"type": "integer", "minimum": lo, "maximum": hi})


boolean = Check(check_boolean, {"type": "boolean"})


def text(max_len: int, min_len: int = 0) -> Check:
    def check(v: Any, field: str) -> str:
        return check_text(v, field, min_len, max_len)

    return Check(check, {"type": "string", "minLength": min_len, "maxLength": max_len})


def enum(*values: str) -> Check:
    def check(v: Any, field: str) -> str:
        return check_enum(v, field, values)

    return Check(check, {"enum": list(values)})


def _schema_of(c: Any) -> Schema:
    """A checker's schema; a plain function (a pass-through) accepts anything."""
    return c.schema if isinstance(c, Check) else {}


def array(item: Check, min_len: int = 0, max_len: int = 100_000) -> Check:
    def check(v: Any, field: str) -> list[Any]:
        return [item(x, f"{field}[{i}]") for i, x in enumerate(check_array(v, field, min_len, max_len))]

    return Check(check, {"type": "array", "items": _schema_of(item), "minItems": min_len, "maxItems": max_len})


def mapping(value: Check, max_len: int = 1000) -> Check:
    def check(v: Any, field: str) -> dict[str, Any]:
        if not isinstance(v, Mapping):
            raise InputError(field, "must be an object")
        if len(v) > max_len:
            raise InputError(field, f"at most {max_len} entries")
        return {str(k): value(x, f"{field}.{k}") for k, x in v.items()}

    return Check(check, {"type": "object", "additionalProperties": value.schema, "maxProperties": max_len})


def obj(
    fields: Mapping[str, Check],
    required: Sequence[str] = (),
    then: Callable[[dict[str, Any], str], None] | None = None,
    rules: str = "",
) -> Check:
    """An object with only `fields` (nulls dropped), `required` present; `then` checks the
    relations between fields, which `rules` states for the schema."""

    def check(v: Any, field: str) -> dict[str, Any]:
        check_keys(v, tuple(fields), field)
        for k in required:
            if v.get(k) is None:
                raise InputError(f"{field}.{k}", "required")
        out = {k: fields[k](x, f"{field}.{k}") for k, x in v.items() if x is not None}
        if then is not None:
            then(out, field)
        return out

    schema: Schema = {"type": "object", "properties": {k: c.schema for k, c in fields.items()},
                      "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    if rules:
        schema["description"] = rules
    return Check(check, schema)


def one_of(*checks: Check, rule: str) -> Check:
    """The first checker that accepts the value; otherwise `rule`."""

    def check(v: Any, field: str) -> Any:
        for c in checks:
            try:
                return c(v, field)
            except InputError:
                continue
        raise InputError(field, rule)

    return Check(check, {"anyOf": [c.schema for c in checks]})
