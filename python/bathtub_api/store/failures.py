"""Why a store could not be opened, in plain words: the cause `bathtub` prints after the
database's path or URL when it refuses to start (one line, exit 2).

One function for every driver's way of failing: the OSError of the file or a directory on
its way (SQLite), SQLite's own result code, and the PostgreSQL server's answer or a network
error (asyncpg)."""

from __future__ import annotations

import errno
import os
import socket
import sqlite3
import sys

OS_CAUSES = {
    errno.ENOTDIR: "not a directory",
    errno.ENOENT: "no such file or directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted (an immutable file or directory?)",
    errno.EROFS: "the file system is read-only",
    errno.EISDIR: "it is a directory, not a file",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "over the disk quota",
    errno.ELOOP: "too many symbolic links",
    errno.ENAMETOOLONG: "the name is too long",
}

SQLITE_CAUSES = {
    sqlite3.SQLITE_NOTADB: "not a SQLite database (a damaged file, or a file of another kind)",
    sqlite3.SQLITE_CORRUPT: "the database file is damaged (corrupt)",
    sqlite3.SQLITE_BUSY: "another process keeps it locked",
    sqlite3.SQLITE_LOCKED: "another process keeps it locked",
    sqlite3.SQLITE_FULL: "no space left on the device",
}
# What SQLite says when it cannot write the file, or create its -wal/-shm files beside it,
# without saying why: the why is read from the file system (read-only, or permissions).
SQLITE_UNWRITABLE = {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM,
                     sqlite3.SQLITE_IOERR}


def open_failure(e: BaseException, path: str | None = None) -> str:
    """The cause of `e`, raised while opening a store (`path`: the SQLite file, if one)."""
    pg = _postgres_failure(e)
    if pg is not None:
        return pg
    if e.__cause__ is not None and not isinstance(e, OSError | sqlite3.Error):
        return open_failure(e.__cause__, path)  # a wrapper (the store's WriteRefused): its cause is the why
    if isinstance(e, socket.gaierror):
        return f"cannot find the host ({e.strerror})"
    if isinstance(e, ConnectionRefusedError):
        return "connection refused (is the server running, and on that port?)"
    if isinstance(e, TimeoutError):
        return "the server did not answer in time"
    if isinstance(e, OSError):
        return _os_failure(e, path)
    if isinstance(e, sqlite3.Error):
        code = getattr(e, "sqlite_errorcode", 0) & 0xFF  # the primary code of an extended one
        if code in SQLITE_CAUSES:
            return SQLITE_CAUSES[code]
        if code in SQLITE_UNWRITABLE and path is not None:
            why = _unwritable(path)
            if why is not None:
                return why
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def _os_failure(e: OSError, path: str | None) -> str:
    if e.errno == errno.ENOTDIR and e.filename and e.filename != path:
        return f"{e.filename} is a file, not a directory"
    cause = OS_CAUSES.get(e.errno or 0) or (e.strerror or str(e)).lower()
    if path is not None and e.filename == path and e.errno in (errno.EACCES, errno.EPERM):
        blocked = _unwritable_part(path)  # creating the file: its directory is the one refusing
        return f"{blocked}: {cause}" if blocked not in (None, path) else cause
    # A directory on the way (made, or written into) is named; the database path is named already.
    return f"{e.filename}: {cause}" if e.filename and e.filename != path else cause


def _unwritable(path: str) -> str | None:
    """Why SQLite could not write `path` or create its -wal/-shm files beside it (read-only
    file system, or permissions, naming the directory when it is the one); None if unknown."""
    try:
        if os.statvfs(os.path.dirname(os.path.abspath(path))).f_flag & os.ST_RDONLY:
            return OS_CAUSES[errno.EROFS]
    except OSError:
        return None
    blocked = _unwritable_part(path)
    if blocked is None:
        return None
    return OS_CAUSES[errno.EACCES] if blocked == path else f"{blocked}: {OS_CAUSES[errno.EACCES]}"


def _unwritable_part(path: str) -> str | None:
    """`path` if it exists and cannot be written, else its directory if that cannot be, else None."""
    for target in (path, os.path.dirname(os.path.abspath(path))):
        if os.path.exists(target) and not os.access(target, os.W_OK):
            return target
    return None


def _postgres_failure(e: BaseException) -> str | None:
    # asyncpg is imported only where PostgreSQL is used: if it is not loaded, e is not its error.
    asyncpg = sys.modules.get("asyncpg")
    if asyncpg is None or not isinstance(e, asyncpg.PostgresError | asyncpg.InterfaceError):
        return None
    return str(e).splitlines()[0] if str(e) else type(e).__name__  # the server's own words
