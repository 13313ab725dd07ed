"""R's survival package as a test reference: write the data to a temporary CSV, run a script in R,
read back the numbers it prints as `key value...` lines.

R runs as one persistent process per pytest session (per xdist worker): starting Rscript and
loading survival costs ~0.5 s a call (rms more), and the suite makes dozens of calls. The
protocol is one line per script on R's standard input, the path of a file holding the script;
R sources it into a fresh environment (so no call sees another's variables), prints what the
script prints, then a line `MARK ok` or `MARK error <message>`. End of input ends R, so a
crashed pytest never leaves it behind; `close()` (tests/conftest.py's session fixture) does it
at the session's end. A script that errs or overruns its time ends that process: the next call
starts a fresh one, so one failure never poisons the others.

Tests skip when Rscript is missing, except under CI (CI=true) where the package is installed by
.ci/run and a missing R is a failure.
"""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

MARK = "@@bathtub-r-done@@"

# The loop R runs. source(local=) evaluates each script like `Rscript -e` does, but does not print
# top-level values (the scripts print only through cat). Errors are caught so the answer always ends
# with MARK; the message is flattened to one line for the protocol.
LOOP = f"""
con <- file("stdin"); open(con)
repeat {{
  path <- readLines(con, n = 1)
  if (length(path) == 0) break
  status <- tryCatch({{ source(path, local = new.env(parent = globalenv())); "ok" }},
                     error = function(e) paste("error", gsub("[\\r\\n]+", " ", conditionMessage(e))))
  cat("\\n{MARK}", status, "\\n")
  flush(stdout())
}}
"""


def need_r() -> None:
    if shutil.which("Rscript") is None:
        if os.environ.get("CI"):
            pytest.fail("Rscript is required under CI (apt-get install r-cran-survival)")
        pytest.skip("Rscript not installed (apt-get install -y r-cran-survival)")


class RSession:
    """One Rscript running LOOP; `run(script)` returns what the script printed."""

    def __init__(self) -> None:
        need_r()
        self.dir = tempfile.TemporaryDirectory(prefix="bathtub-r-")
        self.stderr = open(Path(self.dir.name) / "stderr.txt", "w+b")
        # stderr to a file, not a pipe: R's warnings would fill an unread pipe and block R
        self.proc = subprocess.Popen(["Rscript", "-e", LOOP], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr)
        self.calls = 0

    def run(self, script: str, timeout: float = 120.0) -> str:
        """Source `script` in a fresh environment; its standard output, or AssertionError."""
        self.calls += 1
        path = Path(self.dir.name) / f"script{self.calls}.R"
        path.write_text(script)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{path}\n".encode())
        self.proc.stdin.flush()
        out = bytearray()
        end = MARK.encode()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while end not in out or not out.rstrip(b" ").endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"R did not answer within {timeout} s: {self.tail()}")
                if not sel.select(left):
                    continue
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise AssertionError(f"R exited ({self.proc.wait()}): {self.tail()}")
                out += chunk
        path.unlink()
        text, _, status = out.decode().rpartition(MARK)
        if status.strip() != "ok":
            raise AssertionError(f"R failed: {status.strip()} {self.tail()}")
        return text[:-1] if text.endswith("\n") else text  # the newline LOOP wrote before MARK

    def tail(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-2000:]

    def close(self) -> None:
        """End of input: LOOP's readLines returns nothing and R quits; kill it only if it hangs."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.stderr.close()
        self.dir.cleanup()


_session: RSession | None = None


def r_session() -> RSession:
    """The session's R process, started at the first call (a run that needs no R starts none)."""
    global _session
    if _session is None or _session.proc.poll() is not None:
        _session = RSession()
    return _session


def run_script(script: str) -> str:
    """Run one script in the session's R; a failed or overdue script costs that process, not the next call."""
    global _session
    session = r_session()
    try:
        return session.run(script)
    except AssertionError:
        session.proc.kill()
        session.close()
        _session = None
        raise


def close() -> None:
    global _session
    if _session is not None:
        _session.close()
        _session = None


def run_r(frame: pd.DataFrame, body: str) -> dict[str, np.ndarray]:
    """Run `body` with the data as `d` and library(survival); it prints lines `name v1 v2 ...`."""
    need_r()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "d.csv"
        frame.to_csv(path, index=False)
        script = f'suppressMessages(library(survival))\nd <- read.csv("{path}")\nout <- function(name, v) ' \
                 f'cat(name, formatC(as.numeric(v), digits=17, format="g"), "\\n")\n{body}\n'
        stdout = run_script(script)
    out = {}
    for line in stdout.splitlines():
        parts = line.split()
        if parts:
            out[parts[0]] = np.array([float(v) for v in parts[1:]])
    return out
