"""Every file the service writes is owner-only (0600) and every folder it makes 0700, on both
stores: the photos, the upload parts and stored uploads, the files folders, the SQLite file and
its WAL files. Two layers are checked: the process umask the app sets at start, and the explicit
modes of the writers, which hold even when an embedding program loosens the umask afterwards."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bathtub_api.app import create_app
from bathtub_api.cli import main, token_create
from bathtub_api.config import Config
from bathtub_api.registry import Registry
from tests.conftest import Api
from tests.service.test_photos import dataset, photo, post_photo
from tests.service.test_uploads import upload


@pytest.fixture(autouse=True)
def ordinary_umask() -> Iterator[None]:
    """Start each test from a typical login umask (0o022), whatever an earlier test's app set."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def loose(root: Path) -> list[str]:
    """Everything under `root` that is not owner-only: files not 0600, folders not 0700."""
    found = []
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            mode = stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode)
            if mode != 0o700:
                found.append(f"{os.path.join(folder, name)}/ {mode:o}")
        for name in files:
            mode = stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode)
            if mode != 0o600:
                found.append(f"{os.path.join(folder, name)} {mode:o}")
    return found


async def write_everything(api: Api) -> None:
    """A dataset and a diagram (the database), a photo, and an upload stored awaiting import."""
    target = await dataset(api)
    status, out = await api.post("rbd/create", {"name": "d", "unit": "hours", "repairable": False,
                                                "nodes": [{"id": "in", "type": "input"},
                                                          {"id": "out", "type": "output"},
                                                          {"id": "pump", "type": "component", "model": {
                                                              "distribution_id": "exponential", "mean": 1e3}}],
                                                "edges": [{"source": "in", "target": "pump"},
                                                          {"source": "pump", "target": "out"}]})
    assert status == 200, out
    status, out = await post_photo(api, target, photo("JPEG"))
    assert status == 200, out
    await upload(api, b"t,state\n1,F\n2,S\n")


async def test_service_files_are_owner_only(api: Api, config: Config, tmp_path: Path) -> None:
    await write_everything(api)
    os.umask(0o022)  # an embedding program loosens the umask: the writers' own modes still hold
    await write_everything(api)
    files = Path(config.files_dir())
    assert list((files / "photos").iterdir()) and list((files / "uploads").iterdir())
    if config.database_url.startswith("sqlite:///"):
        assert Path(config.database_url.removeprefix("sqlite:///")).parent == tmp_path
    assert loose(tmp_path) == []


async def test_default_files_folder_is_made_and_kept_owner_only(aiohttp_client: Any, tmp_path: Path,
                                                                registry: Registry) -> None:
    """SQLite's default files folder, `<db>.files`, as an older version left it (0755), is tightened."""
    db = tmp_path / "bathtub.sqlite3"
    config = Config(database_url=f"sqlite:///{db}", rate_limit_per_minute=10_000, cpu_workers=1,
                    token_cache_seconds=0.0)
    (tmp_path / "bathtub.sqlite3.files" / "photos").mkdir(parents=True, mode=0o755)
    client = await aiohttp_client(create_app(config, registry))
    await write_everything(Api(client, await token_create(config, "alice", ["read", "write"])))
    assert Path(config.files_dir()) == tmp_path / "bathtub.sqlite3.files"
    assert loose(tmp_path) == []


def test_cli_makes_the_database_folder_owner_only(tmp_path: Path) -> None:
    db = tmp_path / "new" / "nested" / "bathtub.sqlite3"
    assert main(["token", "create", "--db", str(db), "--user", "alice", "--scopes", "read"]) == 0
    assert db.exists() and loose(tmp_path) == []

