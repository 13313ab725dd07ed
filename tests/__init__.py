"""The test package. Importing it (pytest does, before the first conftest) keeps compiled bytecode
even where PYTHONDONTWRITEBYTECODE is set, in a cache directory of the suite's own rather than in
the source tree: without it every xdist worker, every `bathtub serve` and every job pool the tests
start compiles the project again and pytest rewrites every test module's asserts again (measured
here: collection alone 16 CPU-s a process without the cache, 6 with it). PYTHONPYCACHEPREFIX, if
set, is kept; with neither variable set Python writes `__pycache__` as usual and nothing changes.
The environment carries the choice to the processes the tests start."""

from __future__ import annotations

import os
import sys
import tempfile

if sys.dont_write_bytecode and not sys.pycache_prefix:
    sys.pycache_prefix = os.path.join(tempfile.gettempdir(), f"bathtub-tests-pycache-{os.getuid()}")
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
