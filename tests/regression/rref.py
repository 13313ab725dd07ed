"""R's survival package as a test reference: write the data to a temporary CSV, run a script with
Rscript, read back the numbers it prints as JSON-like `key value...` lines.

Tests skip when Rscript is missing, except under CI (CI=true) where the package is installed by
.ci/run and a missing R is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest


def need_r() -> None:
    if shutil.which("Rscript") is None:
        if os.environ.get("CI"):
            pytest.fail("Rscript is required under CI (apt-get install r-cran-survival)")
        pytest.skip("Rscript not installed (apt-get install -y r-cran-survival)")


def run_r(frame: pd.DataFrame, body: str) -> dict[str, np.ndarray]:
    """Run `body` with the data as `d` and library(survival); it prints lines `name v1 v2 ...`."""
    need_r()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "d.csv"
        frame.to_csv(path, index=False)
        script = f'suppressMessages(library(survival))\nd <- read.csv("{path}")\nout <- function(name, v) ' \
                 f'cat(name, formatC(as.numeric(v), digits=17, format="g"), "\\n")\n{body}\n'
        res = subprocess.run(["Rscript", "-e", script], capture_output=True, text=True, timeout=120, check=False)
    if res.returncode != 0:
        raise AssertionError(f"R failed: {res.stderr}")
    out = {}
    for line in res.stdout.splitlines():
        parts = line.split()
        if parts:
            out[parts[0]] = np.array([float(v) for v in parts[1:]])
    return out
