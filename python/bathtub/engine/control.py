"""Stopping a simulation and watching it run: the one door into a long engine call.

A `RunControl` is shared with the engine's worker threads: `cancel()` raises a flag the
run loop reads between replications, and `done` / `planned` count replications as they
finish (a precision run revises `planned` as it learns how many it needs). A cancelled
run raises `Cancelled` (its partial sums are dropped: a run either finishes whole or
gives nothing); an uncancelled run gives exactly the numbers it gives without a control.

`call_engine` runs every long engine call. On the main thread the engine runs on a
helper thread while the main thread waits in short slices, so Ctrl-C (KeyboardInterrupt,
which Python delivers only to the main thread) cancels the run, waits for the engine to
stop, and is raised as usual. On any other thread the call runs in place: its owner
cancels it through the control.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from bathtub.engine.binding import Cancelled, RunControl

__all__ = ["Cancelled", "RunControl", "call_engine", "progress"]

T = TypeVar("T")
WAIT_SLICE_S = 0.1  # how often the waiting main thread lets Python run its signal handlers


def progress(control: RunControl) -> float:
    """Fraction of the planned replications done, in [0, 1] (0 before the plan is known)."""
    planned = control.planned
    return 0.0 if planned == 0 else min(1.0, control.done / planned)


def call_engine(call: Callable[[RunControl], T], control: RunControl | None = None) -> T:
    """`call(control)` with Ctrl-C honoured on the main thread (see the module docstring)."""
    ctl = control if control is not None else RunControl()
    if threading.current_thread() is not threading.main_thread():
        return call(ctl)
    outcome: list[tuple[bool, object]] = []
    finished = threading.Event()

    def run() -> None:
        try:
            outcome.append((True, call(ctl)))
        except BaseException as e:  # handed back to the waiting thread as is
            outcome.append((False, e))
        finally:
            finished.set()

    worker = threading.Thread(target=run, name="bathtub-engine", daemon=True)
    worker.start()
    try:
        while not finished.wait(WAIT_SLICE_S):
            pass
    except BaseException:
        # KeyboardInterrupt (or any signal handler's exception): stop the engine first, so
        # no thread keeps computing behind the caller's back. (An Event, not Thread.join:
        # a join interrupted by a signal may later return before the thread ended.)
        ctl.cancel()
        finished.wait()
        worker.join()
        raise
    worker.join()
    ok, value = outcome[0]
    if not ok:
        assert isinstance(value, BaseException)
        raise value
    return value  # type: ignore[return-value]
