"""A job's engine run is background work (issue 11, must-hold: reads stay fast while two
simulation jobs run): it runs on a thread of lower scheduling priority, which the engine's own
threads inherit, so the event loop gets a core first on a busy machine. Requests' own engine
calls (checks, closed forms) keep the service's priority."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from bathtub_api.jobs import BACKGROUND_NICE, JobRunner

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")


def _thread_nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def _spawned_thread_nice() -> int:
    """What a thread started by this one gets (the engine starts its threads so)."""
    out: list[int] = []
    t = threading.Thread(target=lambda: out.append(_thread_nice()))
    t.start()
    t.join()
    return out[0]


async def test_job_runs_are_niced_and_request_runs_are_not() -> None:
    runner = JobRunner(None, None, concurrency=2, cpu_workers=1, retention_days=1.0)  # type: ignore[arg-type]
    base = _thread_nice()
    try:
        assert await runner.run_background(_thread_nice) == min(19, base + BACKGROUND_NICE)
        assert await runner.run_background(_spawned_thread_nice) == min(19, base + BACKGROUND_NICE)
        assert await runner.run_native(_thread_nice) == base
        assert _thread_nice() == base  # the event loop's thread is untouched
    finally:
        assert runner._background is not None
        runner._background.shutdown(wait=True)
