"""The README's examples run as written, in order, against a fresh service (every block fenced sh or
python), and the library snippet's diagram is one `rbd/create` accepts."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from bathtub_api.config import Config
from tests.conftest import Api
from tests.service.test_client import Served

# The README's commands answer as shown: mapping, no store-specific behaviour (see tests/conftest.py).
pytestmark = pytest.mark.one_store

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def _run(code: str, namespace: dict[str, Any]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), namespace)
    return out.getvalue()


async def test_the_library_diagram_is_one_the_service_accepts(api: Api) -> None:
    library = next(b for b in _blocks("python") if "simulate_availability" in b)
    ns: dict[str, Any] = {}
    await asyncio.to_thread(_run, library, ns)
    lo, hi = ns["run"].mean_availability_interval
    # Two independent alternating renewal pumps (MTBF 1000, MTTR 10), one of two needed: the
    # stationary 1 - (10/1010)^2, nudged up by the start as new; within the run's own interval.
    assert lo - 2e-5 <= 1 - (10 / 1010) ** 2 <= hi
    status, created = await api.post("rbd/create", ns["plant"])
    assert status == 200, created


# Run before the README's blocks: any answer of 400 or more stops the run (curl's --fail-with-body keeps
# the refusal's detail in the output), and so does any failing command.
PRELUDE = """set -euo pipefail
curl() { command curl --fail-with-body --show-error "$@"; }
"""


def _script(url: str) -> str:
    """Every block fenced sh or python, in the README's order, as one bash script: python blocks run
    through `python3 -`, each marked so its output can be read back. The README's host is the only
    thing replaced (the test's service listens on a free port)."""
    parts = [PRELUDE]
    for n, (lang, code) in enumerate(re.findall(r"```(sh|python)\n(.*?)```", README, flags=re.S)):
        if n == 0:  # the two set-up commands: installing and serving are what this test itself does
            assert "bathtub serve" in code and "pytest" in code
            continue
        # a block that starts a service would wait forever: such lines are fenced console
        assert not re.search(r"^[^#]*\bbathtub serve\b", code, flags=re.M), f"fence block {n} as console"
        code = code.replace("http://localhost:8080", url).replace("http://127.0.0.1:8080", url)
        parts.append(f"echo; echo '@@block {n}'")  # curl's answers end without a newline
        parts.append(code if lang == "sh" else f"python3 - <<'README_PY'\n{code}README_PY")
    return "\n".join(parts) + "\n"


@pytest.mark.slow  # ~30 s: a real service, a python3 per block, and the README's dask LocalCluster
async def test_every_readme_block_runs_as_written_in_order(config: Config, tmp_path: Any) -> None:
    """Issue 29: the curl walk-through, the client, the library and the cluster examples, as a newcomer
    would paste them, against a fresh service; the blocks share one shell, as they would in a terminal."""
    served = Served(config)
    try:
        env = {**os.environ, "BATHTUB_DATABASE_URL": config.database_url,
               # the `bathtub` command installed beside this Python (a venv's bin, or pyenv's)
               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        env.pop("BATHTUB_DB_PATH", None)
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", _script(served.url), cwd=tmp_path, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=600)
    finally:
        await asyncio.to_thread(served.close)
    text = out.decode()
    assert proc.returncode == 0, text[-4000:]
    blocks = {int(m.group(1)): m.group(2) for m in re.finditer(r"@@block (\d+)\n(.*?)(?=@@block |\Z)", text, re.S)}
    client = next(body for n, body in blocks.items() if "'alpha'" in body)
    lines = client.strip().splitlines()
    assert "alpha" in lines[0] and "beta" in lines[0]
    assert lines[1] == "404 no dataset with id 'ds_nope'"
    assert list(blocks.values())[-1].strip().splitlines()[-1] == "True"  # the cluster run equals the local one
    assert len(blocks) >= 9
