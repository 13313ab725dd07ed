"""Big tables in bounded steps, so that a 500,000-row import never holds the GIL for long.

The event loop shares the GIL with every thread of the process. A thread running a Python
loop hands the GIL over every switch interval (5 ms), but a single C call does not: building,
pickling, unpickling or freeing half a million row lists is one call that holds it for
hundreds of milliseconds, and so is a full garbage collection while millions of lists are
alive (each is a container the collector must traverse). So big tables here are

- rows as tuples of plain cells: the collector stops tracking such a tuple at its first young
  collection, so a full collection no longer walks every row;
- built, carried across a process boundary, and freed `BLOCK` rows at a time, with the GIL
  free to switch between blocks.
"""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import Sequence
from typing import Any

BLOCK = 2_000  # rows per step: well under a millisecond to build, pickle, unpickle or free

Row = tuple[Any, ...]


def rows_of(columns: Sequence[Sequence[Any]]) -> list[Row]:
    """Equal-length columns as rows (tuples), a block at a time."""
    rows: list[Row] = []
    n = len(columns[0]) if columns else 0
    for i in range(0, n, BLOCK):
        rows.extend(zip(*(c[i : i + BLOCK] for c in columns), strict=True))
    return rows


def extend_columns(columns: list[list[Any]], rows: Sequence[Sequence[Any]]) -> None:
    """Append a block of rows (each as wide as `columns`) to the columns."""
    if not rows:  # zip(*[]) has no columns at all
        return
    for column, cells in zip(columns, zip(*rows, strict=True), strict=True):
        column.extend(cells)


def pack(rows: Sequence[Sequence[Any]]) -> list[bytes]:
    """Rows as pickled blocks, for a result that crosses a process boundary: unpickling a list
    of a few hundred bytes objects is a copy, while unpickling the rows whole is one call as
    long as the table is big."""
    return [pickle.dumps([tuple(r) for r in rows[i : i + BLOCK]], protocol=pickle.HIGHEST_PROTOCOL)
            for i in range(0, len(rows), BLOCK)]


def unpack(blocks: Sequence[bytes]) -> list[Row]:
    """The rows `pack` made, a block at a time (run it on a thread)."""
    rows: list[Row] = []
    for block in blocks:
        rows.extend(pickle.loads(block))
    return rows


def _empty(values: Sequence[list[Any]]) -> None:
    for value in values:
        while value:
            del value[-BLOCK:]


async def release(*values: list[Any]) -> None:
    """Empty big lists on a thread, a block at a time. Freeing a list frees everything only it
    holds in one call (half a million rows: a tenth of a second or more with the GIL held), and
    where it happens is wherever the last reference goes: at a handler's return, on the loop."""
    big = [v for v in values if len(v) > BLOCK]
    if big:
        await asyncio.to_thread(_empty, big)
