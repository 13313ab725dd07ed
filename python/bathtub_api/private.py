"""Owner-only files: everything the service writes is 0600 and every folder it makes 0700.

Two layers, because either alone can be undone: the process umask (0o077, set where the service
and the CLI start) covers every writer, including SQLite's -wal/-shm files, temporary folders
and the browser printing PDFs; and the writers of user data (photos, uploads, the database, the
files folder) also give the mode explicitly, so an embedding program that resets the umask does
not loosen them.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from bathtub_api.config import Config

UMASK = 0o077
FILE_MODE = 0o600
DIR_MODE = 0o700


def restrict_umask() -> None:
    """New files 0600 and folders 0700 for the rest of this process (and its children)."""
    os.umask(UMASK)


def private_dir(path: Path | str, *, tighten: bool = True) -> Path:
    """`path` as a folder, each missing level made 0700 (os.makedirs gives `mode` to the last
    level only). `tighten`: also set 0700 on `path` itself when it is looser, as an older
    version left it; not for a folder the operator chose, whose mode is theirs."""
    path = Path(path)
    missing = []
    for level in (path, *path.parents):
        if level.is_dir():
            break
        if level.exists() or level.is_symlink():
            # A file where a folder must be: named (mkdir would fail on the level below it, or
            # with "File exists" on itself, naming neither as the cause).
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(level))
        missing.append(level)
    for level in reversed(missing):
        try:
            level.mkdir(mode=DIR_MODE)
        except FileExistsError:  # made meanwhile by another request or process
            if not level.is_dir():
                raise
    if tighten and stat.S_IMODE(path.stat().st_mode) != DIR_MODE:
        os.chmod(path, DIR_MODE)
    return path


def open_private(path: Path | str) -> int:
    """A new file at `path` opened for writing, created 0600 (never an existing one: O_EXCL)."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)


def write_private(path: Path | str, data: bytes) -> None:
    """`data` as a new 0600 file at `path`."""
    with os.fdopen(open_private(path), "wb") as fh:
        fh.write(data)


def files_subdir(config: Config, name: str) -> Path:
    """`<files dir>/<name>` (photos, uploads), every level the service makes 0700. The files
    folder is tightened too when it is the service's own default (`<db>.files`), not one set
    with BATHTUB_DATA_DIR."""
    base = private_dir(config.files_dir(), tighten=not config.data_dir)
    return private_dir(base / name)
