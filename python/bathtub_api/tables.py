"""Tables as users send them (CSV text, column arrays, row objects) turned into typed columns
and row lists, with every refusal naming the row and column."""

from __future__ import annotations

import ast
import csv
import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from bathtub.errors import InputError
from bathtub.imports.tables import text_column  # the one CSV cell rule, shared with imports
from bathtub_api import bulk

MAX_COLUMNS = 200
# CSV rows (the reader's lists) moved into columns this many at a time: a handful of them alive
# at once, and each gone before the garbage collector's young collections promote it. Kept
# longer, a third of them reached the oldest generation, and the collections of it that this
# set off each walked every cell parsed so far (40-100 ms CPU at 20 MB, with the GIL held).
RAW_BLOCK = 100
TYPES = ("integer", "number", "string", "boolean")
Cell = int | float | str | bool | None



def _json_cell(value: Any, field: str) -> Cell:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(field, "must be a finite number")
        return value
    raise InputError(field, "must be a number, string, boolean or null")


def _type_of(values: Sequence[Cell]) -> str:
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return "number"
    if kinds == {bool}:
        return "boolean"
    if kinds == {int}:
        return "integer"
    if kinds <= {int, float}:
        return "number"
    return "string"


def _check_names(names: Sequence[Any], field: str) -> list[str]:
    if not names:
        raise InputError(field, "at least one column is required")
    if len(names) > MAX_COLUMNS:
        raise InputError(field, f"at most {MAX_COLUMNS} columns")
    seen: set[str] = set()
    out = []
    for i, n in enumerate(names):
        if not isinstance(n, str) or not n.strip():
            raise InputError(f"{field}[{i}]", "column names must be non-empty strings")
        n = n.strip()
        if len(n) > 200:
            raise InputError(f"{field}[{i}]", "column names are at most 200 characters")
        if n in seen:
            raise InputError(f"{field}.{n}", "column name appears twice")
        seen.add(n)
        out.append(n)
    return out


def _csv_rule(err: csv.Error) -> str:
    """The csv module's complaint in the caller's terms."""
    text = str(err)
    if "new-line character" in text:
        return "a bare carriage return (CR) inside a line: end lines with LF or CRLF, or quote the cell"
    if "field larger than field limit" in text:
        return f"a cell is longer than {csv.field_size_limit()} characters"
    return text


def _lines(text: str) -> Iterator[str]:
    """The lines of `text`, each with its LF, as `io.StringIO(text)` iterates them, without first
    copying the whole text into a buffer (one call of tens of milliseconds at 20 MB)."""
    start, end = 0, len(text)
    while start < end:
        stop = text.find("\n", start)
        if stop < 0:
            yield text[start:]
            return
        yield text[start : stop + 1]
        start = stop + 1


def parse_csv(text: str, field: str = "csv") -> tuple[list[str], list[bulk.Row]]:
    """Header row plus data rows; every row must have the header's width. Lines end in LF or
    CRLF; a cell holds at most csv.field_size_limit() characters (128 KiB). Rows come back as
    tuples, built a block at a time (bathtub_api.bulk)."""
    text = text.lstrip("\ufeff")
    nul = text.find("\x00")
    if nul >= 0:  # the csv module reads NUL as data; no stored string may hold it
        raise InputError(f"{field}.line {text.count(chr(10), 0, nul) + 1}", "contains the NUL character (U+0000)")
    reader = csv.reader(_lines(text))
    block: list[list[str]] = []
    try:
        try:
            header = next(reader)
        except StopIteration:
            raise InputError(field, "empty: a header row is required") from None
        names = _check_names(header, f"{field}.header")
        raw_columns: list[list[str]] = [[] for _ in names]
        for raw in reader:
            if not raw or not "".join(raw).strip():
                continue  # an empty line, or a row of blank cells
            if len(raw) != len(names):
                raise InputError(f"{field}.line {reader.line_num}",
                                 f"has {len(raw)} cells, the header has {len(names)}")
            block.append(raw)
            if len(block) == RAW_BLOCK:
                bulk.extend_columns(raw_columns, block)
                block.clear()
    except csv.Error as e:
        raise InputError(f"{field}.line {reader.line_num}", _csv_rule(e)) from None
    bulk.extend_columns(raw_columns, block)
    return names, bulk.rows_of([text_column(col) for col in raw_columns])


def parse_columns(data: Mapping[str, Any], field: str = "data") -> tuple[list[str], list[bulk.Row]]:
    """{column: [values...]} with equal lengths; rows as tuples."""
    keys = list(data.keys())
    names = _check_names(keys, field)  # trimmed: look values up by the key as sent
    lengths = set()
    cols = []
    for key, n in zip(keys, names):
        values = data[key]
        if not isinstance(values, list):
            raise InputError(f"{field}.{n}", "must be an array of values")
        lengths.add(len(values))
        cols.append([_json_cell(v, f"{field}.{n}[{i}]") for i, v in enumerate(values)])
    if len(lengths) > 1:
        raise InputError(field, f"columns must have equal lengths (got {sorted(lengths)})")
    return names, bulk.rows_of(cols)


def parse_row_objects(rows: Sequence[Any], names: Sequence[str], field: str = "rows") -> list[list[Cell]]:
    """[{column: value}] for an existing table: every key a known column; missing cells are null."""
    known = set(names)
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InputError(f"{field}[{i}]", "must be an object of column: value")
        trimmed = {str(k).strip(): v for k, v in row.items()}  # names are trimmed wherever they arrive
        if len(trimmed) != len(row):
            raise InputError(f"{field}[{i}]", "a column name appears twice")
        for key in trimmed:
            if key not in known:
                raise InputError(f"{field}[{i}].{key}", f"unknown column; the dataset has {', '.join(names)}")
        out.append([_json_cell(trimmed.get(n), f"{field}[{i}].{n}") for n in names])
    return out


@functools.lru_cache(maxsize=1024)
def row_objects(names: tuple[str, ...]) -> Callable[[Sequence[Cell]], dict[str, Cell]]:
    """A stored row (a list in column order) as the row object answers carry, {name: cell}.

    Built once per column list as `lambda r: {"time": r[0], "state": r[1], ...}`: a dict
    display is several times cheaper than `dict(zip(names, r))`, the cost of every row of
    every page read. The function is assembled as a syntax tree whose keys are constants, so a
    column name is data and never source text (no quoting or injection to get wrong)."""
    r = ast.Name("r", ast.Load())
    body = ast.Dict(keys=[ast.Constant(n) for n in names],
                    values=[ast.Subscript(r, ast.Constant(i), ast.Load()) for i in range(len(names))])
    args = ast.arguments(posonlyargs=[], args=[ast.arg("r")], kwonlyargs=[], kw_defaults=[], defaults=[])
    tree = ast.fix_missing_locations(ast.Expression(ast.Lambda(args, body)))
    fn: Callable[[Sequence[Cell]], dict[str, Cell]] = eval(compile(tree, "<row_objects>", "eval"), {"__builtins__": {}})
    return fn


def infer_columns(names: Sequence[str], rows: Sequence[Sequence[Cell]]) -> list[dict[str, str]]:
    return [{"name": n, "type": _type_of([r[j] for r in rows])} for j, n in enumerate(names)]


def conform(
    columns: Sequence[Mapping[str, str]], names: Sequence[str], rows: Sequence[Sequence[Cell]], field: str = "rows"
) -> tuple[list[bulk.Row], list[dict[str, str]]]:
    """Rows appended to an existing table: reorder to its columns, check each cell's type.

    An integer column widens to number when a fractional value arrives; numbers sent to a
    string column become strings (CSV cannot tell a label "123" from a number). Anything
    else that does not fit is refused.
    """
    order = [c["name"] for c in columns]
    if sorted(names) != sorted(order):
        missing = [n for n in order if n not in names]
        extra = [n for n in names if n not in order]
        what = "; ".join(p for p in (
            f"missing {', '.join(missing)}" if missing else "",
            f"unknown {', '.join(extra)}" if extra else "",
        ) if p)
        raise InputError(field, f"columns must match the dataset's ({', '.join(order)}): {what}")
    index = [list(names).index(n) for n in order]
    # Column by column (a column is one list; the rows are rebuilt as tuples at the end), so no
    # list per row is made and kept alive (see bathtub_api.bulk).
    cells = [[r[j] for r in rows] for j in index]
    new_cols = [dict(c) for c in columns]
    for j, col in enumerate(new_cols):
        values = cells[j]
        incoming = _type_of(values)
        if all(v is None for v in values):
            continue
        have = col["type"]
        if have == "string":
            cells[j] = [str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in values]
            continue
        if have == incoming or (have == "number" and incoming == "integer"):
            continue
        if have == "integer" and incoming == "number":
            col["type"] = "number"
            continue
        for i, v in enumerate(values):
            if v is not None and _type_of([v]) not in (have, "integer" if have == "number" else have):
                raise InputError(f"{field}[{i}].{col['name']}", f"expected a {have}, got {v!r}")
    return bulk.rows_of(cells), new_cols


def by_column(names: list[str], *row_lists: Sequence[Sequence[Any]]) -> dict[str, list[Any]]:
    """Rows (one or more lists of them, in order) as {column: values}."""
    return {n: [r[j] for rows in row_lists for r in rows] for j, n in enumerate(names)}
