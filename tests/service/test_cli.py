"""The first five minutes with the `bathtub` command, run as a new user would (subprocesses):
"serving on" only once it listens, one plain line for a port in use or a database path it cannot
write, one per-user database wherever it runs from, --version, options after the subcommand, and
every option's help naming its default and its environment variable."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from bathtub_api.cli import _parser
from tests.service.serving import ROOT, free_port


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BATHTUB_") and k != "XDG_DATA_HOME"}
    return {**env, "HOME": str(home), "PYTHONPATH": str(ROOT / "python"), **extra}


def bathtub(*args: str, env: dict[str, str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bathtub_api.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def serve(env: dict[str, str], cwd: Path, port: int, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "bathtub_api.cli", "serve", "--port", str(port), *extra],
                            env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _get(url: str, token: str | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.status, resp.read()


@pytest.mark.slow  # ~10 s: real `bathtub serve` processes
def test_token_made_anywhere_works_for_serve_anywhere_and_serving_means_listening(tmp_path: Path) -> None:
    home, here, there = tmp_path / "home", tmp_path / "a", tmp_path / "b"
    for d in (home, here, there):
        d.mkdir()
    env = _env(home)
    made = bathtub("token", "create", "--user", "alice", "--scopes", "read,write", env=env, cwd=here)
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    db = home / ".local" / "share" / "bathtub" / "bathtub.sqlite3"
    assert token.startswith("bt_") and str(db) in made.stderr and db.exists()

    port = free_port()
    proc = serve(env, there, port)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith(f"bathtub: serving on http://127.0.0.1:{port}"), line + proc.stderr.read()
        assert str(db) in line and "bathtub token create" in line
        # Said only once bound: the very first request after the line is answered, no retry.
        assert _get(f"http://127.0.0.1:{port}/healthz")[0] == 200
        # The token made from another directory is accepted: one database.
        status, body = _get(f"http://127.0.0.1:{port}/api/v1/datasets", token)
        assert status == 200 and b'"items":[]' in body
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


@pytest.mark.slow  # ~8 s: real `bathtub serve` processes
def test_a_port_in_use_is_one_plain_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        proc = serve(_env(tmp_path), tmp_path, port)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    assert "serving on" not in out and "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines == [f"bathtub: cannot listen on 127.0.0.1:{port}: the port is in use "
                     "(choose another with --host/--port or BATHTUB_HOST/BATHTUB_PORT)"], err


def test_an_unwritable_database_path_is_one_plain_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    bad = blocker / "sub" / "bathtub.sqlite3"
    for args in (("serve", "--port", str(free_port())), ("token", "create", "--user", "a")):
        done = bathtub(*args, "--db", str(bad), env=_env(tmp_path), cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr and "serving on" not in done.stdout
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and str(blocker / "sub") in lines[0] and lines[0].startswith("bathtub: cannot"), lines


@pytest.mark.slow  # ~4 s: five real `bathtub` processes
def test_version_and_options_after_the_subcommand(tmp_path: Path) -> None:
    env = _env(tmp_path)
    v = bathtub("--version", env=env, cwd=tmp_path)
    assert v.returncode == 0 and v.stdout.startswith("bathtub ") and "engine" in v.stdout
    db = tmp_path / "x.sqlite3"
    made = bathtub("token", "create", "--db", str(db), "--user", "bob", env=env, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    before = bathtub("--db", str(db), "token", "list", env=env, cwd=tmp_path)
    after = bathtub("token", "list", "--db", str(db), env=env, cwd=tmp_path)
    assert before.stdout == after.stdout and "\tbob\t" in after.stdout
    via_env = bathtub("token", "list", env={**env, "BATHTUB_DB_PATH": str(db)}, cwd=tmp_path)
    assert via_env.stdout == after.stdout and str(db) in via_env.stderr


def _options(parser: argparse.ArgumentParser, path: str) -> list[tuple[str, argparse.Action]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                out += _options(child, f"{path} {name}")
        elif action.option_strings and not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            out.append((f"{path} {action.option_strings[0]}", action))
    return out


def test_every_option_help_names_its_default_and_environment_variable() -> None:
    options: list[tuple[str, Any]] = _options(_parser(), "bathtub")
    assert len(options) >= 10
    for name, action in options:
        text = action.help or ""
        assert "default: " in text and ("env BATHTUB_" in text or "no env" in text), name
