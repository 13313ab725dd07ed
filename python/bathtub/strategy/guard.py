"""What every strategy calculator's answer is held to: finite numbers, and a bounded cost.

Two rules, applied at the door of each public calculator by `answered`:

- An answer never carries inf or NaN where it publishes a number: JSON has neither (the
  service's encoder writes them as null, which breaks the published schema), and a result
  beyond floating point means the inputs' magnitudes left it. Such an answer is refused
  with `InputError` naming the input of most extreme magnitude (the likeliest culprit) and
  the others given, with NON_FINITE_RULE.
  An arithmetic error on the way (ZeroDivisionError, OverflowError) is refused the same way.
- A CPU budget: a caller (the service, per request) may set one with `cpu_budget`; the
  calculators' loops and integrands call `checkpoint()`, which raises once the budget is
  spent, and the door turns that into `InputError` naming the inputs, with OVER_BUDGET_RULE.
  Without a budget `checkpoint` does nothing, so the library stays a set of pure functions
  for its own users. The budget is a deadline checked cooperatively rather than a timeout
  around the call, because the work runs where it cannot be killed alone: a thread cannot
  be stopped, and killing a process-pool worker breaks the pool for every request sharing it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import math
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from bathtub.errors import InputError

F = TypeVar("F", bound=Callable[..., dict[str, Any]])

# The refusals' own words (stated in the request schemas as cross-field rules on any field).
NON_FINITE_RULE = "the answer leaves floating point"
OVER_BUDGET_RULE = "needs more computing time than allowed"

# (CPU-clock deadline in seconds, the budget as given) while a budget is set, else None.
_DEADLINE: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar("strategy_deadline",
                                                                                       default=None)


class OverBudget(Exception):
    """Raised inside a calculation when its budget is spent; its door names the inputs."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"over a CPU budget of {seconds:g} s")
        self.seconds = seconds


@contextlib.contextmanager
def cpu_budget(seconds: float) -> Iterator[None]:
    """Calculations inside spend at most about `seconds` of this process's CPU time.

    CPU time, not wall time: on a busy machine a request's wall time grows with the load,
    while what it costs the service is its CPU (`seconds` 0 refuses at the first checkpoint)."""
    token = _DEADLINE.set((time.process_time() + seconds, seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def checkpoint() -> None:
    """Raise OverBudget once the budget set by `cpu_budget` is spent (nothing without one)."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.process_time() >= deadline[0]:
        raise OverBudget(deadline[1])


def answered(fn: F) -> F:
    """A public calculator's door: its answer finite, its budget honoured (see the module)."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def door(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return fn(*args, **kwargs)  # let the call itself say what is wrong with it
        try:
            out = fn(*args, **kwargs)
        except OverBudget as e:
            field, others = _culprits(bound.arguments)
            raise InputError(field, f"{OVER_BUDGET_RULE} ({e.seconds:g} CPU-seconds per calculation) for these "
                                    f"inputs{others}; bring the extreme values closer to ordinary ones") from None
        except ArithmeticError as e:
            # a division by a product that underflowed to 0, an exponent past the floats: the inputs'
            # magnitudes left floating point on the way, as with a non-finite answer (never a 500)
            field, others = _culprits(bound.arguments)
            raise InputError(field, f"{NON_FINITE_RULE}: {type(e).__name__} on the way{others}; bring the extreme "
                                    "values closer to ordinary ones") from e
        bad = _non_finite(out, "")
        if bad is not None:
            field, others = _culprits(bound.arguments)
            raise InputError(field, f"{NON_FINITE_RULE}: {bad[0]} would be {bad[1]!r}{others}; bring the extreme "
                                    "values closer to ordinary ones")
        return out

    return door  # type: ignore[return-value]


def _non_finite(value: Any, path: str) -> tuple[str, float] | None:
    """The first (path, value) in a JSON-ready answer that is a non-finite number."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (path or "answer", value)
    if isinstance(value, dict):
        for k, v in value.items():
            hit = _non_finite(v, f"{path}.{k}" if path else str(k))
            if hit is not None:
                return hit
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            hit = _non_finite(v, f"{path}[{i}]")
            if hit is not None:
                return hit
    return None


def _numbers(name: str, value: Any) -> Iterator[tuple[str, float]]:
    """The numeric inputs under an argument, by their request path (params.beta, params[1])."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield name, float(value)
    elif isinstance(value, dict):
        if set(value) == {"name", "value"}:  # a parameter given as {name, value}: named params.<name>
            yield from _numbers(f"{name.rsplit('[', 1)[0]}.{value['name']}", value["value"])
            return
        for k, v in value.items():
            yield from _numbers(f"{name}.{k}", v)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _numbers(f"{name}[{i}]", v)


def _extremity(x: float) -> float:
    """How far a number is from ordinary magnitudes, in decades (for a probability, from 0 and 1)."""
    if not math.isfinite(x):
        return math.inf
    if x == 0.0:
        return 0.0
    decades = abs(math.log10(abs(x)))
    if 0.0 < x < 1.0:
        decades = max(decades, abs(math.log10(1.0 - x)) if x != 1.0 else math.inf)
    return decades


def _culprits(arguments: dict[str, Any]) -> tuple[str, str]:
    """(the field to name: the given number of most extreme magnitude, the others given as text)."""
    found = [(path, x) for name, v in arguments.items() if v is not None for path, x in _numbers(name, v)]
    if not found:
        return "*", ""
    found.sort(key=lambda item: -_extremity(item[1]))
    others = ", ".join(f"{p} {x!r}" for p, x in found[1:4])
    return found[0][0], (f" (with {others})" if others else "")
