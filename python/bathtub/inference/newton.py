"""Newton's method with step halving, for likelihoods whose gradient and Hessian the model computes
itself (analytically, or by its own differences): the Cox partial likelihood, the gamma-frailty
penalised partial likelihood, the Royston–Parmar spline likelihood, and the Newton polish of a
life fit's maximum. scipy's quasi-Newton stages (`maximise`) cannot use an exact Hessian, and
these fits converge in a handful of exact steps where BFGS needs dozens of gradients.

The model supplies three pieces: `value(x) -> (log-likelihood, state)` (state: whatever the model
computed on the way, handed back to it), `derivatives(x, state) -> (gradient, hessian)` at an
accepted point, and `direction(x, gradient, hessian) -> Direction` (default: solve -H step = g). The
hessian is whatever `direction` reads: a matrix, or a model's own blocks. The stopping policy is
data (`NewtonRule`), so each model keeps the rule its pinned numbers were computed with.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np

from bathtub.inference.maximise import Maximum, inverse_information


class Direction(NamedTuple):
    """A Newton direction. `exact` is False when the model modified the Hessian (a Levenberg shift):
    the gain-based stopping rules then do not apply. `scale` (k,) measures the step for `step_tol`
    in the model's own units (a standard error per coordinate) instead of the coordinates'. `last`:
    the model judges this step small enough that the error left after it is below what another
    evaluation would fix (quadratic convergence), so it is taken without evaluating there; the
    result's value, Hessian and state are then those before the step."""

    step: np.ndarray
    exact: bool = True
    scale: np.ndarray | None = None
    last: bool = False


class Stop(Exception):
    """Raised by `direction` when the point is not near a regular maximum: the maximiser stops there
    (not converged) and the caller reads why from `Maximum.message`."""


@dataclass(frozen=True)
class NewtonRule:
    """How far to look and when to stop.

    Along each direction the step is halved until a trial is finite and no worse than the current
    value by `accept` * max(`accept_floor`, |value|), at most `tries` evaluations; if none is,
    `exhausted` says whether the last (smallest) trial is taken anyway ("take") or the search stops
    unconverged ("stop"). After a taken step the fit has converged when the value changed by at most
    `value_tol` (|value| + 1) (None: not checked) and the largest step is below `step_tol`, relative
    to 1 + max|x| when `relative_step` (None: not checked).

    Gain rules, for exact directions (g . step is the predicted gain): below `gain_tol` (1 + |value|)
    the maximum is reached to rounding and one last full step is taken if it loses less than
    `last_accept` (1 + |value|); a search exhausted with a gain below `stall_gain` (1 + |value|) is at
    the maximum too."""

    max_iter: int = 60
    tries: int = 31
    accept: float = 1e-12
    accept_floor: float = 0.0
    exhausted: Literal["take", "stop"] = "take"
    value_tol: float | None = 1e-11
    step_tol: float | None = 1e-6
    relative_step: bool = True
    gain_tol: float | None = None
    last_accept: float = 1e-13
    stall_gain: float | None = None


ITERATION_LIMIT = "iteration limit"
NO_ASCENT = "no step along the Newton direction increases the log-likelihood"
NOT_FINITE = "the log-likelihood is not finite at the start"
LAST_STEP = "the last step was below the model's tolerance"


def _solve(x: np.ndarray, grad: np.ndarray, hess: np.ndarray) -> Direction:
    return Direction(np.linalg.solve(-hess, grad))


def _unpack(x: np.ndarray, state: Any) -> tuple[np.ndarray, Any]:
    return state[0], state[1]


def newton(value: Callable[[np.ndarray], tuple[float, Any]], x0: np.ndarray, *,
           derivatives: Callable[[np.ndarray, Any], tuple[np.ndarray, Any]] = _unpack,
           direction: Callable[[np.ndarray, np.ndarray, Any], Direction] = _solve, rule: NewtonRule = NewtonRule(),
           start: tuple[float, Any] | None = None, covariance: bool = False) -> Maximum:
    """Maximise by Newton steps with halving from `x0` (`start`: value(x0) when the caller has it).

    The default `derivatives` reads (gradient, hessian) from the first two items of the state, for
    models that compute all three in one pass. A singular Hessian in the default direction stops the
    search unconverged. Returns a `Maximum` whose `hessian` is the model's at the estimate, `state`
    the model's state there, `covariance` the inverse information when asked for (matrix Hessians)."""
    x = np.asarray(x0, dtype=float)
    v, state = value(x) if start is None else start
    if not math.isfinite(v):
        return Maximum(x, None, v, False, 0, "newton", NOT_FINITE, None, state)
    grad, hess = derivatives(x, state)
    converged, message, it = False, ITERATION_LIMIT, 0
    gains = rule.gain_tol is not None or rule.stall_gain is not None
    for it in range(1, rule.max_iter + 1):  # noqa: B007 (the count is reported)
        try:
            d = direction(x, grad, hess)
        except np.linalg.LinAlgError:
            message = "the information is singular"
            break
        except Stop as why:
            message = str(why)
            break
        step = d.step
        if d.last:
            x = x + step
            converged, message = True, LAST_STEP
            break
        gain = float(grad @ step) if gains else math.nan
        if rule.gain_tol is not None and d.exact and gain < rule.gain_tol * (1 + abs(v)):
            # converged to rounding in the value; one last full step squares the parameter error
            trial = x + step
            new, new_state = value(trial)
            if math.isfinite(new) and new >= v - rule.last_accept * (1 + abs(v)):
                x, v, state = trial, new, new_state
                grad, hess = derivatives(x, state)
            converged, message = True, "gain below tolerance"
            break
        floor = rule.accept * max(rule.accept_floor, abs(v))
        taken = False
        for tried in range(1, rule.tries + 1):
            trial = x + step
            new, new_state = value(trial)
            if math.isfinite(new) and new >= v - floor:
                taken = True
                break
            if tried < rule.tries:
                step = step / 2
        if not taken:
            if rule.stall_gain is not None and d.exact and gain < rule.stall_gain * (1 + abs(v)):
                converged, message = True, "at the maximum to rounding"
                break
            if rule.exhausted == "stop":
                message = NO_ASCENT
                break
        change = new - v
        x, v, state = trial, new, new_state
        grad, hess = derivatives(x, state)
        if rule.value_tol is not None and not abs(change) <= rule.value_tol * (abs(v) + 1):
            continue
        if rule.step_tol is not None:
            size = float(np.max(np.abs(step if d.scale is None else step / d.scale))) if step.size else 0.0
            bound = rule.step_tol * (1 + float(np.max(np.abs(x)))) if rule.relative_step and x.size else rule.step_tol
            if not size < bound:
                continue
        elif rule.value_tol is None:
            continue
        converged, message = True, "converged"
        break
    cov = inverse_information(hess) if covariance and isinstance(hess, np.ndarray) else None
    return Maximum(x, cov, v, converged, it, "newton", message, hess if isinstance(hess, np.ndarray) else None,
                   state)
