"""Writes refused for lack of room or because the storage is read-only, recognised in one place.

Both stores and the files of uploads and photos can refuse a write: SQLite with SQLITE_FULL,
SQLITE_READONLY or SQLITE_IOERR (aiosqlite raises sqlite3's own errors), PostgreSQL with
disk_full (53100) or read_only_sql_transaction (25006), the file system with ENOSPC, EDQUOT or
EROFS. None of these is a bug of ours or of the request, and retrying the same request later
may succeed, so they are answered 507 naming the cause instead of a 500 (errors.py). A process
remembers the last such refusal (WriteHealth) so /healthz can say the service is degraded
until a write of the same kind succeeds again.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import asyncpg

from bathtub_api.ids import iso, now

Source = Literal["store", "files"]

# SQLite's primary result codes (the low byte of an extended code, e.g. SQLITE_IOERR_WRITE).
_SQLITE = {sqlite3.SQLITE_FULL: "full", sqlite3.SQLITE_READONLY: "read-only", sqlite3.SQLITE_IOERR: "unable to write"}
_POSTGRES = {"53100": "full", "25006": "read-only"}  # disk_full, read_only_sql_transaction
_OS = {errno.ENOSPC: "full", errno.EDQUOT: "full", errno.EROFS: "read-only"}
_SAID = {"full": "is full", "read-only": "is read-only", "unable to write": "cannot write"}


class WriteRefused(Exception):
    """A write the storage refused (full, read-only, failing device): the request's changes
    were rolled back, so nothing of it was saved. `reason` names the storage and the cause."""

    status = 507

    def __init__(self, source: Source, reason: str) -> None:
        super().__init__(reason)
        self.source = source
        self.reason = reason

    @property
    def detail(self) -> str:
        return f"{self.reason}; nothing was saved"


def write_fault(exc: BaseException) -> WriteRefused | None:
    """The refusal `exc` is (or was caused by, following raise-from and during-handling links),
    or None for any other error."""
    seen = 0
    cur: BaseException | None = exc
    while cur is not None and seen < 8:
        found = _recognise(cur)
        if found is not None:
            return found
        cur = cur.__cause__ or cur.__context__
        seen += 1
    return None


def _recognise(exc: BaseException) -> WriteRefused | None:
    if isinstance(exc, WriteRefused):
        return exc
    if isinstance(exc, sqlite3.Error):
        kind = _SQLITE.get(getattr(exc, "sqlite_errorcode", 0) & 0xFF)
        return None if kind is None else WriteRefused("store", f"the store {_SAID[kind]}: {exc}")
    if isinstance(exc, asyncpg.PostgresError):
        kind = _POSTGRES.get(getattr(exc, "sqlstate", "") or "")
        # the server's own words (its message names a relation or file, never a row's values)
        return None if kind is None else WriteRefused("store", f"the store {_SAID[kind]}: {str(exc)[:300]}")
    if isinstance(exc, OSError) and exc.errno in _OS:
        return WriteRefused("files", f"the file store {_SAID[_OS[exc.errno]]}: {exc.strerror}")
    return None


@dataclass
class _Failure:
    reason: str
    at: float


class WriteHealth:
    """This process's last refused write of each source, kept until a write of that source
    succeeds: what /healthz reports. Per process: each service worker keeps its own."""

    def __init__(self) -> None:
        self._failures: dict[Source, _Failure] = {}

    def failed(self, fault: WriteRefused) -> None:
        before = self._failures.get(fault.source)
        self._failures[fault.source] = _Failure(fault.reason, now() if before is None else before.at)

    def succeeded(self, source: Source) -> None:
        self._failures.pop(source, None)

    def failing(self, source: Source) -> bool:
        return source in self._failures

    def report(self) -> dict[str, str] | None:
        """None while every write succeeds; else the reason (each failing source's) and since when."""
        if not self._failures:
            return None
        first = min(f.at for f in self._failures.values())
        reason = "; ".join(f.reason for f in self._failures.values())
        return {"reason": reason, "since": iso(first) or ""}


async def probe_files(health: WriteHealth, directory: str) -> None:
    """Write (and remove) one byte in the files' directory: a full or read-only file system
    refuses even that, and once it is accepted the files are writable again."""

    def probe() -> None:
        path = Path(directory) / ".write-probe"
        try:
            with path.open("wb") as fh:
                fh.write(b"\0")
        finally:
            with contextlib.suppress(OSError):
                path.unlink()

    try:
        await asyncio.to_thread(probe)
    except OSError as e:
        fault = write_fault(e)
        if fault is not None:
            health.failed(fault)
        return
    health.succeeded("files")
