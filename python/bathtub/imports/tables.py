"""Tables inside a file: workbook sheets (python-calamine reads xlsx, xls and ods) or a CSV, each
with its header row found, its cells typed, and a guess of what it holds (`looks_like`).

The guess is a proposal the user confirms or overrides with a mapping; it reads column names
and values the way a reliability engineer names them (time, state, start, end, asset, ...).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bathtub.errors import InputError

Cell = int | float | str | bool | None
MAX_CELLS = 5_000_000  # per sheet: past this a workbook is refused rather than read into memory
HEADER_SCAN = 20  # rows searched for the header (titles and blank rows above a table are common)
SAMPLE_ROWS = 5


@dataclass(frozen=True)
class Sheet:
    name: str
    header: list[str]
    rows: list[list[Cell]]
    header_row: int  # 0-based row of the header in the sheet (or CSV)
    extra: dict[str, Any] = field(default_factory=dict)

    def column(self, name: str) -> list[Cell]:
        j = self.header.index(name)
        return [r[j] for r in self.rows]

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "header_row": self.header_row, "columns": self.header,
                "row_count": len(self.rows),
                "sample_rows": [dict(zip(self.header, r, strict=True)) for r in self.rows[:SAMPLE_ROWS]],
                "looks_like": looks_like(self)}


def _cell(value: Any) -> Cell:
    """A workbook value as a JSON cell: whole floats become integers (spreadsheets store every
    number as a float), dates ISO 8601 text, durations hours."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds() / 3600.0
    return str(value)


def text_cell(text: str) -> Cell:
    """A CSV cell as a JSON cell: blank → null, whole → int, finite number → float, else the text."""
    s = text.strip()
    if s == "":
        return None
    if s[0].isalpha() and s[:3].lower() not in ("inf", "nan"):
        return s  # no int or float starts with a letter, save inf and nan: skip two failed parses
    try:
        return int(s)
    except ValueError:
        pass
    try:
        v = float(s)
    except ValueError:
        return s
    return v if math.isfinite(v) else s  # "nan"/"inf" are labels, not measurements


def _zero_padded(s: str) -> bool:
    """'007', '-0012': a code, not a number (as a number it would lose its zeros)."""
    d = s[1:] if s[:1] in "+-" else s
    return len(d) > 1 and d[0] == "0" and d[1].isdigit()


def text_column(cells: Sequence[str]) -> list[Cell]:
    """`text_cell` of every cell of a column, but a column holding a zero-padded number
    ('007') is a column of codes and stays text whole: item 007 must not become 7, nor
    '010' in one row and 10 in the next. An all-integer or all-finite-number column
    converts a whole column at a time, without a failed parse per cell."""
    stripped = [c.strip() for c in cells]
    if any(_zero_padded(s) for s in stripped):
        return [s or None for s in stripped]
    try:
        return [int(s) if s else None for s in stripped]
    except ValueError:
        pass
    try:
        floats = [float(s) if s else None for s in stripped]
    except ValueError:
        return [text_cell(s) for s in stripped]
    if not all(f is None or math.isfinite(f) for f in floats):
        return [text_cell(s) for s in stripped]
    # A float-parsable text is an int exactly when it has no point, exponent, inf or nan.
    return [int(s) if f is not None and not any(ch in s for ch in ".eEiInN") else f
            for s, f in zip(stripped, floats)]


def _table(name: str, grid: Sequence[Sequence[Cell]]) -> Sheet | None:
    """Find the header (the first row, within the first few, whose cells are all non-empty text
    and that has the most filled cells), then keep the rows below it, trimmed to its width."""
    best, best_width = None, 0
    for i, row in enumerate(grid[:HEADER_SCAN]):
        filled = [c for c in row if c is not None]
        if filled and all(isinstance(c, str) for c in filled) and len(filled) > best_width:
            best, best_width = i, len(filled)
            if len(filled) == len(row):
                break
    if best is None:
        return None
    raw = list(grid[best])
    while raw and raw[-1] is None:
        raw.pop()
    header = []
    for j, c in enumerate(raw):
        header.append(str(c).strip() if c is not None else f"column_{j + 1}")
    width = len(header)
    rows = []
    for row in grid[best + 1:]:
        cells = list(row[:width]) + [None] * max(0, width - len(row))
        if all(c is None for c in cells):
            continue
        rows.append(cells)
    return Sheet(name, header, rows, best)


def read_sheets(path: str | Path, fmt: str, sheets: Sequence[str] | None = None) -> list[Sheet]:
    """Every table in the file (one per sheet; one for a CSV), optionally only the named sheets."""
    path = Path(path)
    if fmt == "csv":
        return [_csv_sheet(path)]
    if fmt not in ("xlsx", "xls", "ods"):
        raise InputError("upload_id", f"holds a {fmt} file, not a workbook or CSV")
    from python_calamine import CalamineError, CalamineWorkbook

    try:
        wb = CalamineWorkbook.from_path(str(path))
    except (CalamineError, OSError, ValueError) as e:
        raise InputError("upload_id", f"the workbook cannot be read ({type(e).__name__}: {e})") from None
    names = list(wb.sheet_names)
    if sheets is not None:
        for s in sheets:
            if s not in names:
                raise InputError("sheet", f"no sheet {s!r}; the workbook has {', '.join(names)}")
        names = [n for n in names if n in sheets]
    out = []
    for n in names:
        sheet = wb.get_sheet_by_name(n)
        if sheet.total_height * max(sheet.total_width, 1) > MAX_CELLS:
            raise InputError("upload_id", f"sheet {n!r} has more than {MAX_CELLS} cells")
        grid = [[_cell(v) for v in row] for row in sheet.to_python(skip_empty_area=False)]
        table = _table(n, grid)
        if table is not None:
            out.append(table)
    wb.close()
    return out


def _csv_sheet(path: Path) -> Sheet:
    text = path.read_text("utf-8-sig", errors="replace")
    try:
        dialect = csv.Sniffer().sniff(text[:8192], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    raw = list(csv.reader(io.StringIO(text), dialect))
    grid: list[list[Cell]] = [[None] * len(row) for row in raw]
    for j in range(max((len(r) for r in raw), default=0)):  # rows may be ragged: a column is who has cell j
        rows = [i for i, r in enumerate(raw) if len(r) > j]
        for i, cell in zip(rows, text_column([raw[i][j] for i in rows])):
            grid[i][j] = cell
    table = _table("csv", grid)
    if table is None:
        raise InputError("upload_id", "the CSV has no header row")
    return table


# --- what a table looks like ------------------------------------------------------------------

_NAMES = {
    "time": r"^(t|x|time|times|age|ttf|tbf|life|lifetime|hours?|hrs|cycles?|km|miles|duration_to_failure|"
            r"time_to_failure|operating_hours|runtime)$",
    "state": r"^(c|state|status|censor(ed|ing)?|event|failed|failure|type|f_?s|outcome)$",
    "count": r"^(n|count|qty|quantity|number|units)$",
    "lower": r"^(xl|lower|left|from|start_time|t_?start|t1|last_ok|last_good|inspection_before)$",
    "upper": r"^(xr|upper|right|to|end_time|t_?end|t2|found_failed|inspection_after)$",
    "asset": r"^(asset|equipment|tag|block|node|component|unit|item|machine|position)$",
    "start": r"^(start|begin|down|down_at|outage_start|from|start_time|stopped)$",
    "end": r"^(end|finish|up|up_at|restored|outage_end|to|end_time|back)$",
    "outage_duration": r"^(duration|hours_down|downtime|ttr|repair_time|outage_hours)$",
    "reason": r"^(reason|cause|description|remark|comment|mode|failure_mode)$",
    "planned": r"^(planned|scheduled|pm|is_planned|type_planned)$",
    "item": r"^(id|name|item|asset|serial|tail|unit|vehicle)$",
    "use": r"^(current_use|use|usage|hours|meter|odometer|cycles|km|age)$",
    "rate": r"^(rate|usage_rate|use_per_period|per_month|per_week|per_day)$",
    "node_id": r"^(id|block|node|block_id|node_id|name)$",
    "node_type": r"^(type|kind|block_type|node_type|gate)$",
    "link": r"^(parent|parents|feeds|source|target|inputs|successor|successors|edges|after|before)$",
    "life": r"^(mtbf|mttf|life|distribution|distribution_id|failure_rate|lambda|alpha|beta)$",
    "system": r"^(system|system_id|unit|serial|machine|asset)$",
}
_STATES = {"f", "s", "0", "1", "failed", "failure", "suspended", "suspension", "censored", "r", "l", "true", "false",
           "yes", "no", "-1"}


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")


def _find(header: Sequence[str], role: str, exclude: Sequence[str] = ()) -> str | None:
    pattern = re.compile(_NAMES[role])
    for h in header:
        if h not in exclude and pattern.match(_norm(h)):
            return h
    return None


def _numeric(values: Sequence[Cell], nonnegative: bool = False) -> bool:
    vals = [v for v in values if v is not None]
    return bool(vals) and all(isinstance(v, (int, float)) and not isinstance(v, bool) and
                              (not nonnegative or v >= 0) for v in vals)


def _statelike(values: Sequence[Cell]) -> bool:
    vals = [str(v).strip().lower() for v in values if v is not None]
    return bool(vals) and all(v in _STATES for v in vals)


def looks_like(sheet: Sheet) -> list[dict[str, Any]]:
    """Guesses of what the table holds, best first: {kind, mapping, reason}. Kinds: life_data,
    interval_data, outage_log, fleet_items, diagram_block_list, recurrent_events."""
    h = sheet.header
    out: list[dict[str, Any]] = []

    def numeric(col: str | None, nonnegative: bool = True) -> bool:
        return col is not None and _numeric(sheet.column(col), nonnegative)

    node_id, node_type = _find(h, "node_id"), _find(h, "node_type")
    link, life = _find(h, "link"), _find(h, "life")
    if node_id and node_type and (link or life):
        mapping = {"id": node_id, "type": node_type, **({"links": link} if link else {}),
                   **({"life": life} if life else {})}
        out.append({"kind": "diagram_block_list", "mapping": mapping,
                    "reason": f"block ids ({node_id}) with types ({node_type})"})
    asset, start = _find(h, "asset"), _find(h, "start")
    end, duration = _find(h, "end", [start or ""]), _find(h, "outage_duration")
    if asset and start and (end or duration):
        mapping = {"asset": asset, "start": start}
        for role, col in (("end", end), ("duration", duration), ("reason", _find(h, "reason")),
                          ("planned", _find(h, "planned"))):
            if col:
                mapping[role] = col
        out.append({"kind": "outage_log", "mapping": mapping,
                    "reason": f"outages per asset ({asset}) with a start ({start}) and "
                              f"{'an end' if end else 'a duration'}"})
    lower, upper = _find(h, "lower"), _find(h, "upper")
    if lower and upper and lower != upper and numeric(lower) and numeric(upper):
        out.append({"kind": "interval_data", "mapping": {"xl": lower, "xr": upper},
                    "reason": f"failures known to lie between {lower} and {upper}"})
    time = _find(h, "time")
    state = _find(h, "state", [time or ""])
    if state is None:
        state = next((c for c in h if c != time and _statelike(sheet.column(c))), None)
    if time and numeric(time):
        system = _find(h, "system", [time, state or ""])
        count = _find(h, "count", [time, state or ""])
        if system and len(set(sheet.column(system))) < len(sheet.rows):
            out.append({"kind": "recurrent_events", "mapping": {"system": system, "x": time},
                        "reason": f"repeated {system} values with event times ({time})"})
        mapping = {"x": time, **({"c": state} if state else {}), **({"n": count} if count and numeric(count) else {})}
        out.append({"kind": "life_data", "mapping": mapping,
                    "reason": f"times ({time})" + (f" with failure/suspension codes ({state})" if state else
                                                   " (all failures: no censoring column found)")})
    item, use = _find(h, "item"), _find(h, "use")
    if item and use and item != use and numeric(use):
        rate = _find(h, "rate", [use])
        out.append({"kind": "fleet_items", "mapping": {"name": item, "current_use": use,
                                                       **({"rate": rate} if rate else {})},
                    "reason": f"items ({item}) with a meter reading ({use})"})
    return out
