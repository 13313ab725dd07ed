"""`bathtub` never hangs on a database it cannot open: every command that opens the store ends
(exit code 2) with one line naming the database and the cause, whatever the cause (a damaged
file, a lock another process keeps, a file where a directory must be, permissions, a read-only
file system, a PostgreSQL server refusing or not answering); a missing directory is made
owner-only; and Ctrl-C ends it, starting or serving. Each case runs the real command in a
subprocess, as a person would; conditions root cannot be refused by (permissions, read-only
mounts, immutable files) are made for real and skipped where this machine cannot make them."""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from bathtub_api.store import open_store
from tests.service.serving import ROOT, free_port

# Proves only that it did not hang: the goal is well under a second past Python's own start-up,
# but a loaded CI machine must not make the test flaky.
TIMEOUT_S = 15.0

COMMANDS = {
    "serve": ["serve", "--port", "{port}"],
    "serve --workers 2": ["serve", "--workers", "2", "--port", "{port}"],
    "token create": ["token", "create", "--user", "alice"],
    "token list": ["token", "list"],
    "token revoke": ["token", "revoke", "tok_x"],
    "user plan": ["user", "plan", "alice"],
    "migrate": ["migrate"],
}


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BATHTUB_") and k != "XDG_DATA_HOME"}
    return {**env, "HOME": str(home), "PYTHONPATH": str(ROOT / "python")}


def command(name: str, *store: str) -> list[str]:
    args = [a.replace("{port}", str(free_port())) for a in COMMANDS[name]]
    return [sys.executable, "-m", "bathtub_api.cli", *args, *store]


def run(argv: list[str], cwd: Path, preexec: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, env=environment(cwd), cwd=cwd, capture_output=True, text=True,
                              timeout=TIMEOUT_S, preexec_fn=preexec)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{' '.join(argv[2:])} hung (still running after {TIMEOUT_S} s): {e.stderr!r}")


def assert_refused(done: subprocess.CompletedProcess[str], database: str, cause: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "serving on" not in done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"bathtub: cannot open the database at {database}: "), lines[0]
    assert cause in lines[0].removeprefix(f"bathtub: cannot open the database at {database}: "), lines[0]


def refused(name: str, db: Path | str, cwd: Path, cause: str, preexec: Callable[[], None] | None = None) -> None:
    assert_refused(run(command(name, "--db", str(db)), cwd, preexec), str(db), cause)


@pytest.fixture
def locked_wal(tmp_path: Path) -> Iterator[Path]:
    """A WAL database (as bathtub makes them) whose write lock another connection keeps."""
    db = tmp_path / "locked.sqlite3"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("PRAGMA journal_mode=WAL")
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    yield db
    holder.close()


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_refuses_a_damaged_database_file(name: str, tmp_path: Path) -> None:
    db = tmp_path / "corrupt.sqlite3"
    db.write_bytes(b"this is no database, " * 400)
    refused(name, db, tmp_path, "not a SQLite database")


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_refuses_a_database_another_process_keeps_locked(name: str, tmp_path: Path,
                                                                       locked_wal: Path) -> None:
    refused(name, locked_wal, tmp_path, "another process keeps it locked")


def test_a_locked_database_in_rollback_journal_mode(tmp_path: Path) -> None:
    db = tmp_path / "plain.sqlite3"  # locked before bathtub could switch it to WAL: reads wait too
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for name in ("serve", "token create"):
            refused(name, db, tmp_path, "another process keeps it locked")
    finally:
        holder.close()


async def test_a_failed_open_leaves_no_connection_thread(tmp_path: Path, locked_wal: Path) -> None:
    """The mechanism under the hangs: a failed open stops every aiosqlite thread it started
    (non-daemon threads, which keep a process alive after its error)."""
    corrupt = tmp_path / "corrupt.sqlite3"
    corrupt.write_bytes(b"this is no database, " * 400)
    await asyncio.to_thread(int)  # the loop's executor thread (the open uses it) is not the open's
    before = set(threading.enumerate())
    for db, kwargs in ((corrupt, {}), (locked_wal, {"lock_wait_s": 0.2}), (locked_wal, {"migrate": False,
                                                                                      "lock_wait_s": 0.2})):
        with pytest.raises(sqlite3.DatabaseError):
            await open_store(f"sqlite:///{db}", **kwargs)
        for thread in set(threading.enumerate()) - before:
            thread.join(timeout=TIMEOUT_S)  # told to stop, it may still be on its way out
            assert not thread.is_alive(), db


@pytest.mark.parametrize("below", ["db.sqlite3", "sub/deeper/db.sqlite3"])
def test_a_file_where_a_directory_must_be(below: str, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    for name in ("serve", "token list"):
        refused(name, blocker / below, tmp_path, f"{blocker} is a file, not a directory")


def test_a_directory_where_the_file_must_be(tmp_path: Path) -> None:
    refused("token create", tmp_path, tmp_path, "it is a directory, not a file")


def test_a_missing_directory_is_made_owner_only(tmp_path: Path) -> None:
    db = tmp_path / "new" / "deeper" / "bathtub.sqlite3"
    done = run(command("token create", "--db", str(db)), tmp_path)
    assert done.returncode == 0, done.stderr
    for made in (db.parent, db.parent.parent):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700, made
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


def _without_root_override() -> None:
    """In the child: drop the capabilities that let root write what permissions refuse, so a
    root-run test meets the permissions a user would (the bounding set is what exec keeps)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.fixture
def as_a_user(tmp_path: Path) -> Callable[[], None] | None:
    """How to run a command that permissions apply to (None: they do already)."""
    if os.geteuid() != 0:
        return None
    probe = tmp_path / "probe"
    probe.mkdir(mode=0o500)
    try:
        seen = subprocess.run([sys.executable, "-c", f"import os; print(os.access({str(probe)!r}, os.W_OK))"],
                              capture_output=True, text=True, preexec_fn=_without_root_override, timeout=TIMEOUT_S)
    except subprocess.SubprocessError:
        pytest.skip("root's permission override cannot be dropped here")
    finally:
        probe.rmdir()
    if seen.stdout.strip() != "False":
        pytest.skip("root's permission override cannot be dropped here")
    return _without_root_override


def test_unwritable_files_and_directories(tmp_path: Path, as_a_user: Callable[[], None] | None) -> None:
    closed = tmp_path / "closed"
    closed.mkdir()
    assert run(command("token create", "--db", str(closed / "old.sqlite3")), tmp_path).returncode == 0
    closed.chmod(0o500)  # its database can be read and written, but SQLite cannot make its -wal file
    try:
        refused("token create", closed / "old.sqlite3", tmp_path, f"{closed}: permission denied", as_a_user)
        refused("serve", closed / "new.sqlite3", tmp_path, f"{closed}: permission denied", as_a_user)
    finally:
        closed.chmod(0o700)
    (closed / "old.sqlite3").chmod(0o400)
    refused("token list", closed / "old.sqlite3", tmp_path, "permission denied", as_a_user)


def test_an_immutable_directory(tmp_path: Path) -> None:
    frozen = tmp_path / "frozen"
    frozen.mkdir()
    try:
        if subprocess.run(["chattr", "+i", str(frozen)], capture_output=True).returncode != 0:
            pytest.skip("chattr +i is not possible here")
    except FileNotFoundError:
        pytest.skip("no chattr")
    try:
        refused("token create", frozen / "db.sqlite3", tmp_path, f"{frozen}: operation not permitted")
    finally:
        subprocess.run(["chattr", "-i", str(frozen)], check=True)


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Path]:
    """A real read-only file system (a tmpfs, remounted read-only) holding a database."""
    mnt = tmp_path / "ro"
    mnt.mkdir()
    try:
        made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True)
    except FileNotFoundError:
        pytest.skip("no mount command")
    if made.returncode != 0:
        pytest.skip("cannot mount a file system here")
    try:
        assert run(command("token create", "--db", str(mnt / "old.sqlite3")), tmp_path).returncode == 0
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_a_read_only_file_system(tmp_path: Path, read_only_mount: Path) -> None:
    for name in ("serve", "token list"):
        refused(name, read_only_mount / "old.sqlite3", tmp_path, "the file system is read-only")
    refused("token create", read_only_mount / "new.sqlite3", tmp_path, "the file system is read-only")
    refused("migrate", read_only_mount / "dir" / "new.sqlite3", tmp_path, "the file system is read-only")


def _pg_refused(url: str, cwd: Path, cause: str, name: str = "token list") -> None:
    parts = urlsplit(url)
    shown = urlunsplit((parts.scheme, parts.netloc.replace(f":{parts.password}@", "@"), parts.path, "", ""))
    done = run(command(name, "--database-url", url), cwd)
    assert_refused(done, shown, cause)
    if parts.password not in shown:  # (a password spelt like the user or database name would be)
        assert parts.password and parts.password not in done.stderr + done.stdout


def test_postgres_refusing_connections(tmp_path: Path) -> None:
    for name in ("serve", "token list"):
        _pg_refused(f"postgresql://bathtub:s3cret@127.0.0.1:{free_port()}/bathtub", tmp_path,
                    "connection refused", name)


def test_postgres_wrong_password_or_database() -> None:
    url = os.environ.get("BATHTUB_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("BATHTUB_TEST_POSTGRES_URL not set")
    parts = urlsplit(url)
    wrong = parts._replace(netloc=f"{parts.username}:not-the-password@{parts.hostname}:{parts.port or 5432}")
    cwd = Path.cwd()
    _pg_refused(urlunsplit(wrong), cwd, "password authentication failed")
    _pg_refused(urlunsplit(parts._replace(path="/no_such_database")), cwd, 'database "no_such_database" does not exist')


@pytest.fixture
def silent_server() -> Iterator[socket.socket]:
    """Accepts connections and never answers (a hung server, or a firewall that drops)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s


@pytest.mark.slow  # ~5 s: waits out a connection timeout
def test_postgres_server_that_does_not_answer(tmp_path: Path, silent_server: socket.socket) -> None:
    port = silent_server.getsockname()[1]
    _pg_refused(f"postgresql://bathtub:s3cret@127.0.0.1:{port}/bathtub", tmp_path, "did not answer in time")


def test_ctrl_c_while_starting_ends_it(tmp_path: Path, silent_server: socket.socket) -> None:
    port = silent_server.getsockname()[1]
    url = f"postgresql://bathtub:s3cret@127.0.0.1:{port}/bathtub"
    proc = subprocess.Popen(command("serve", "--database-url", url), env=environment(tmp_path), cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        silent_server.settimeout(TIMEOUT_S)
        conn, _ = silent_server.accept()  # it is waiting for the server's answer now
        with conn:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=TIMEOUT_S)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["bathtub: interrupted"], err


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.slow  # ~6-13 s a case: a real `bathtub serve` started and interrupted
def test_ctrl_c_while_serving_stops_it(workers: str, tmp_path: Path) -> None:
    db = tmp_path / "bathtub.sqlite3"
    proc = subprocess.Popen(command("serve", "--workers", workers, "--db", str(db)), env=environment(tmp_path),
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("bathtub: serving on"), line
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=TIMEOUT_S * 2)  # within the grace (5 s) and a margin
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0 and "bathtub: stopped" in out and "Traceback" not in err, err
