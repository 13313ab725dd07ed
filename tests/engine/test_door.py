"""The binding's one door: a run called straight on `bathtub._engine` from the main thread
stops on Ctrl-C (its control cancelled, its threads ended) and a refusal keeps its type."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = str(Path(__file__).resolve().parents[2])

# Forty blocks in series over a long horizon, in the engine's own form: hours of work if
# nobody stops it. No `bathtub.control.call_engine` in between: the door itself must listen.
CTRL_C = """
import json, sys, threading, time
from bathtub import _engine
exp = lambda r: {"distribution_id": "exponential", "params": {"failure_rate": r}}
ids = ["in", *(f"b{i}" for i in range(40)), "out"]
nodes = [{"id": i, "type": "component", "model": exp(1e-2), "repair": exp(1.0)} for i in ids[1:-1]]
diagram = {"nodes": [{"id": "in", "type": "input"}, *nodes, {"id": "out", "type": "output"}],
           "edges": [{"source": a, "target": b} for a, b in zip(ids, ids[1:])]}
ctl = _engine.RunControl()
def tell():
    while ctl.done == 0:
        time.sleep(0.01)
    print("running", flush=True)
threading.Thread(target=tell, daemon=True).start()
try:
    _engine.simulate_availability(json.dumps(diagram), 1e6, 10, 0,
                                  {"seed": 1, "replication_start": 0, "replications": 10_000_000, "threads": 1},
                                  control=ctl)
except KeyboardInterrupt:
    print("interrupted", ctl.cancelled, ctl.done < ctl.planned, [t.name for t in threading.enumerate()], flush=True)
    sys.exit(3)
print("finished", flush=True)
"""


@pytest.mark.slow  # ~4.5 s: a Python process started, run and interrupted by SIGINT
def test_ctrl_c_stops_a_run_called_on_the_main_thread() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "python"), ROOT])}
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "running"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)  # uncancelled, the run would take hours
    finally:
        proc.kill()
    assert proc.returncode == 3 and out.split() == ["interrupted", "True", "True", "['MainThread']"]
