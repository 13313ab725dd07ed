"""A run under a RunControl: same numbers as before controls existed, progress counted,
cancel from another thread, and Ctrl-C on the main thread stops the engine."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from bathtub import engine
from bathtub.engine import Cancelled, RunControl, call_engine, progress, simulate_availability, simulate_mission

from .engine_diagrams import block, exp_model, series
from .test_reproducible import plant

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_controlled_runs_give_the_numbers_pinned_before_controls_existed() -> None:
    # Pinned from the engine at commit c5abf6f (before runs were controllable): reporting
    # progress and polling the flag must not change one bit of a result.
    ctl = RunControl()
    a = simulate_availability(plant(), horizon=4000.0, replications=500, seed=21, grid=5, crews=1, control=ctl)
    assert a.mean_availability == 0.9982548609424823
    assert a.mean_availability_std_error == 0.00013291871750187304
    d = a.to_dict()
    assert d["curve"]["availability"] == [1.0, 0.994, 1.0, 1.0, 0.998]
    assert (d["reliability"], d["expected_failures"]) == (0.518, 0.698)
    assert (ctl.done, ctl.planned, ctl.cancelled) == (500, 500, False)
    p = simulate_availability(plant(), horizon=2000.0, target_half_width=0.05, max_replications=20000, seed=5,
                              grid=3, control=(pc := RunControl()))
    assert (p.mean_availability, p.replications, p.relative_half_width) == (0.9991164752819096, 11150,
                                                                            0.04538210142942714)
    assert pc.done == pc.planned == 11150  # the last batch's plan is what ran
    m = simulate_mission(plant(), mission_time=900.0, replications=300, seed=4, grid=4, control=(mc := RunControl()))
    assert (m.mttf, m.probability_of_failure) == (520.6500249883221, 0.8566666666666667)
    assert m.to_dict()["curve"]["reliability"] == [1.0, 0.6533333333333333, 0.33666666666666667, 0.14333333333333334]
    assert (mc.done, mc.planned) == (300, 300)


def big() -> dict:
    """Forty blocks over a long horizon: minutes of work if nobody stops it."""
    return series(*(block(f"b{i}", exp_model(1e-2), exp_model(1.0)) for i in range(40)))


def test_cancel_from_another_thread_stops_the_run_and_keeps_nothing() -> None:
    ctl = RunControl()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            simulate_availability(big(), horizon=1e6, replications=10_000_000, seed=1, threads=1, control=ctl)
        except BaseException as e:
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    while ctl.done == 0:  # wait for replications to finish (the first chunk reports)
        time.sleep(0.01)
    ctl.cancel()
    t.join(60)
    assert not t.is_alive(), "the engine did not stop after cancel"
    assert len(errors) == 1 and isinstance(errors[0], Cancelled)
    assert not isinstance(errors[0], engine.EngineError)  # not an input problem
    assert 0 < ctl.done < ctl.planned == 10_000_000
    assert 0 < progress(ctl) < 1e-3


def test_a_cancelled_control_refuses_a_new_run_and_mission_runs_cancel_too() -> None:
    ctl = RunControl()
    ctl.cancel()
    with pytest.raises(Cancelled):
        simulate_mission(big(), mission_time=10.0, replications=1000, control=ctl)
    assert ctl.done == 0


def test_call_engine_off_the_main_thread_runs_in_place() -> None:
    seen: list[str] = []
    t = threading.Thread(target=lambda: seen.append(call_engine(lambda c: threading.current_thread().name)),
                         name="caller")
    t.start()
    t.join()
    assert seen == ["caller"]


CTRL_C = """
import sys, time
from bathtub.engine import RunControl, simulate_availability
from tests.engine.test_run_control import big
ctl = RunControl()
import threading
def tell():
    while ctl.done == 0:
        time.sleep(0.01)
    print("running", flush=True)
threading.Thread(target=tell, daemon=True).start()
try:
    simulate_availability(big(), horizon=1e6, replications=10_000_000, seed=1, threads=1, control=ctl)
except KeyboardInterrupt:
    print("interrupted", ctl.cancelled, ctl.done < ctl.planned, [t.name for t in threading.enumerate()], flush=True)
    sys.exit(3)
print("finished", flush=True)
"""


@pytest.mark.slow  # ~5 s: a Python process started, run and interrupted by SIGINT
def test_ctrl_c_on_the_main_thread_cancels_the_engine() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "python"), ROOT])}
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "running"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)  # uncancelled, the run would take hours
    finally:
        proc.kill()
    # The engine thread stopped before KeyboardInterrupt reached the caller: only the main
    # thread is left.
    assert proc.returncode == 3 and out.split() == ["interrupted", "True", "True", "['MainThread']"]
