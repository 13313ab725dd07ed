"""Field types every request model uses, so the published schema states the limits the
service enforces: integers inside the range every JSON reader and SQL integer keeps exactly,
and strings without the NUL character (U+0000), which PostgreSQL text cannot store.

The NUL rule holds for every string and key of every request, so it is stated once (the
OpenAPI `info`, the 422 answer, the MCP server's instructions and the guide tool's description:
NUL_STATEMENT), not as a pattern on each string. `refuse_nul` applies it at the door to
everything a request carries, including the free-form parts (diagram nodes, rows, options) no
model describes.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, GetCoreSchemaHandler, WithJsonSchema
from pydantic_core import PydanticCustomError, core_schema

from bathtub.errors import InputError

# 2**53 - 1: the largest integer a JSON number keeps exactly in every reader (JavaScript's
# MAX_SAFE_INTEGER), and far inside SQL's signed 64 bits even after adding a page size.
MAX_INT = 2**53 - 1
NUL = "\x00"
NUL_RULE = "must not contain the NUL character (U+0000)"
NO_NUL_PATTERN = "^[^\\u0000]*$"
# The rule said once for every request, as `field: rule` with `*` for any field (the form of
# `x-cross-field`), so readers and the fuzz test can match a refusal to it.
NUL_STATEMENT = f"*: {NUL_RULE}"

# A calendar date YYYY-MM-DD exactly as `date.fromisoformat` takes it (years 0001..9999, each
# month's own length, 29 February in leap years only), unanchored so an instant can build on it:
# a schema-valid date always parses.
_YEAR = r"([0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
_LEAP_YEAR = r"([0-9]{2}(0[48]|[2468][048]|[13579][26])|([2468][048]|[13579][26]|0[48])00)"
DATE_RE = (rf"({_YEAR}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)"
           rf"|02-(0[1-9]|1[0-9]|2[0-8]))|{_LEAP_YEAR}-02-29)")
DATE_PATTERN = f"^{DATE_RE}$"


def _integral(value: Any) -> Any:
    """JSON Schema counts 3.0 as an integer; so do we (strict mode would refuse it)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def integer(*, ge: int = -MAX_INT, le: int = MAX_INT, **field: Any) -> Any:
    """The one integer type for request fields, with the field's own bounds: `integer(ge=0)`.
    Without bounds it stays within +-MAX_INT; a field that never reaches SQL as a number
    (a 64-bit seed) may state a wider range."""
    bounds = Field(ge=ge, le=le, **field)
    return Annotated[int, bounds, BeforeValidator(_integral)]


def text(**field: Any) -> Any:
    """The one string type, with the field's own lengths or description."""
    return Annotated[str, Field(**field), _NoNul()] if field else Annotated[str, _NoNul()]


class _NoNul:
    """Refuses NUL with a rule the caller can read (the schema does not repeat it: NUL_STATEMENT)."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(_check_text, handler(source))


def _check_text(value: str) -> str:
    if NUL in value:
        raise PydanticCustomError("nul_character", NUL_RULE)
    return value


Text = text()
Id = text(min_length=1, max_length=200)
Name = text(min_length=1, max_length=200)
Unit = text(max_length=40)


CSV_TEXT = ("CSV text (not blank), UTF-8, comma-separated, a header row of column names first; lines end in LF "
            "or CRLF; cells at most 131072 characters; every row as wide as the header")
# "Not blank" in these patterns is ECMA's \s plus what Python's str.strip() also removes (U+001C-U+001F,
# U+0085), so a schema-valid name or header is never blank to the checks.
# Published only (bathtub_api.tables.parse_csv checks it, naming the line): a first line (the header) that is
# not blank, no NUL, no bare CR.
NOT_BLANK = "[^\\s\\u0000\\u001c-\\u001f\\u0085]"
CSV_PATTERN = f"^[^\\u0000\\r\\n]*{NOT_BLANK}[^\\u0000\\r\\n]*(?:\\r?\\n(?:[^\\u0000\\r]|\\r\\n)*)?$"
# A table cell as the table parsers take it (bathtub_api.tables): published, checked there.
CELL_SCHEMA = {"type": ["number", "string", "boolean", "null"]}
# Column names: trimmed on arrival, so at least one character that is not blank (nor NUL).
COLUMN_NAME_SCHEMA = {"type": "string", "minLength": 1, "maxLength": 200,
                      "pattern": f"^[^\\u0000]*{NOT_BLANK}[^\\u0000]*$"}
_COLUMNS_SCHEMA = {
    "type": "object", "minProperties": 1, "maxProperties": 200, "propertyNames": COLUMN_NAME_SCHEMA,
    "additionalProperties": {"type": "array", "items": CELL_SCHEMA},
    "description": "Column name -> array of values (numbers, strings, booleans or null). Names are trimmed and "
                   "must stay distinct; all arrays have the same length.",
}
_ROWS_SCHEMA = {
    "type": "array",
    "items": {"type": "object", "propertyNames": COLUMN_NAME_SCHEMA, "additionalProperties": CELL_SCHEMA},
    "description": "Row objects, column name -> value; every key is a column of the dataset, a missing one is null.",
}
# A text/csv body, as the routes that take one read it.
CSV_BODY_SCHEMA = {"type": "string", "pattern": CSV_PATTERN, "description": CSV_TEXT}
Columns = Annotated[dict[str, list[Any]], WithJsonSchema(_COLUMNS_SCHEMA)]
# A free-form object (a read-only part sent back on edit): no NUL in its keys or strings (NUL_STATEMENT).
FreeObject = Annotated[dict[str, Any], WithJsonSchema({"type": "object"})]
Rows = Annotated[list[dict[str, Any]], WithJsonSchema(_ROWS_SCHEMA)]


def nul_path(value: Any, path: str = "") -> str | None:
    """The path (`nodes[0].id`) of the first string or key holding NUL, or None."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, str):
            if NUL in v:
                return where
        elif isinstance(v, dict):
            for k, item in reversed(v.items()):
                sub = f"{where}.{k}" if where else str(k)
                if NUL in k:
                    return sub
                stack.append((sub, item))
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", item) for i, item in reversed(list(enumerate(v))))
    return None


def refuse_nul(value: Any, path: str = "", raw: bytes | None = None) -> None:
    """Raise InputError naming where a NUL is. With the raw JSON text, a body without the
    escape `\\u0000` is passed at once (JSON cannot carry a bare NUL byte)."""
    if raw is not None and b"\\u0000" not in raw:
        return
    where = nul_path(value, path)
    if where is not None:
        raise InputError(where or "body", NUL_RULE)

