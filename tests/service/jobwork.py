"""Pure-Python CPU work for the job tests; importable by the worker processes."""

from __future__ import annotations

import time


def sum_squares(n: int) -> int:
    return sum(i * i for i in range(n))


def spin(seconds: float) -> float:
    """Hold a core busy in pure Python (holding the GIL if it ran in-process)."""
    end = time.perf_counter() + seconds
    x = 0.0
    while time.perf_counter() < end:
        x += 1.0
    return x
