"""The core's Newton steps against closed forms: a Poisson log-linear model with one two-level
factor has the MLE log(mean count) per level and the information Σ counts per level, so the
estimate, covariance and the halving, stopping and gain rules can be checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bathtub.inference import ITERATION_LIMIT, NO_ASCENT, NOT_FINITE, Direction, NewtonRule, Stop, newton

RNG = np.random.default_rng(2027)
LEVEL = np.repeat([0.0, 1.0], 40)
COUNTS = RNG.poisson(np.where(LEVEL == 1, 7.0, 2.5))
X = np.column_stack([np.ones(LEVEL.size), LEVEL])


def _poisson(b: np.ndarray) -> tuple[float, tuple[np.ndarray, np.ndarray]]:
    """Poisson log-likelihood (without the log k! constant), its gradient and Hessian in one pass."""
    eta = X @ b
    mu = np.exp(eta)
    ll = float(COUNTS @ eta - mu.sum())
    return ll, (X.T @ (COUNTS - mu), -(X * mu[:, None]).T @ X)


def _closed_form() -> tuple[np.ndarray, np.ndarray]:
    m0, m1 = COUNTS[LEVEL == 0].mean(), COUNTS[LEVEL == 1].mean()
    s0, s1 = COUNTS[LEVEL == 0].sum(), COUNTS[LEVEL == 1].sum()
    # b0 = ln m0, b1 = ln m1 - ln m0; var(ln m) = 1/Σ counts of that level (delta method on the mean)
    cov = np.array([[1 / s0, -1 / s0], [-1 / s0, 1 / s0 + 1 / s1]])
    return np.array([math.log(m0), math.log(m1 / m0)]), cov


def test_newton_finds_the_closed_form_mle_and_information():
    est, cov = _closed_form()
    m = newton(_poisson, np.zeros(2), covariance=True)
    assert m.converged and m.method == "newton" and m.message == "converged"
    np.testing.assert_allclose(m.estimate, est, rtol=1e-10)
    np.testing.assert_allclose(m.covariance, cov, rtol=1e-8)
    assert m.iterations <= 10  # quadratic convergence from 0
    assert m.state[0] @ m.state[0] < 1e-16  # the model's own state is at the estimate: gradient 0


def test_step_halving_from_far_away():
    # from b = (-4, 3) the full Newton step overshoots (μ = e^-4 ≪ counts), so steps are halved and the
    # fit still reaches the closed form; with one try per direction and "stop" it stops at the start
    est, _ = _closed_form()
    far = np.array([-4.0, 3.0])
    m = newton(_poisson, far)
    assert m.converged
    np.testing.assert_allclose(m.estimate, est, rtol=1e-10)
    stopped = newton(_poisson, far, rule=NewtonRule(tries=1, exhausted="stop", accept=0.0))
    ll_far = _poisson(far)[0]
    full = far + np.linalg.solve(-_poisson(far)[1][1], _poisson(far)[1][0])
    if _poisson(full)[0] < ll_far:  # the full step loses: no step is taken
        assert not stopped.converged and stopped.message == NO_ASCENT
        np.testing.assert_array_equal(stopped.estimate, far)
    else:
        pytest.fail("the test needs a start whose full Newton step loses")


def test_iteration_limit_and_not_finite_start():
    m = newton(_poisson, np.zeros(2), rule=NewtonRule(max_iter=1))
    assert not m.converged and m.message == ITERATION_LIMIT and m.iterations == 1
    bad = newton(lambda b: (-math.inf, (None, None)), np.zeros(2))
    assert not bad.converged and bad.message == NOT_FINITE and bad.iterations == 0


def test_direction_stop_and_scale():
    est, cov = _closed_form()
    sd = np.sqrt(np.diag(cov))

    def refuse(x: np.ndarray, g: np.ndarray, h: np.ndarray) -> Direction:
        raise Stop("not near a regular maximum")

    m = newton(_poisson, np.zeros(2), direction=refuse)
    assert not m.converged and m.message == "not near a regular maximum" and m.iterations == 1

    def scaled(x: np.ndarray, g: np.ndarray, h: np.ndarray) -> Direction:
        return Direction(np.linalg.solve(-h, g), scale=sd)

    # the step measured in standard errors: converged once a step is below 1e-9 sd
    m = newton(_poisson, np.zeros(2), direction=scaled,
               rule=NewtonRule(value_tol=None, step_tol=1e-9, relative_step=False))
    assert m.converged
    np.testing.assert_allclose(m.estimate, est, rtol=1e-12)


def test_gain_rule_and_singular_information():
    est, _ = _closed_form()
    m = newton(_poisson, np.zeros(2), rule=NewtonRule(value_tol=None, step_tol=None, gain_tol=1e-15,
                                                      exhausted="stop", stall_gain=1e-9))
    assert m.converged and m.message in ("gain below tolerance", "at the maximum to rounding")
    np.testing.assert_allclose(m.estimate, est, rtol=1e-12)
    flat = newton(lambda b: (0.0, (np.zeros(2), np.zeros((2, 2)))), np.zeros(2))
    assert not flat.converged and flat.message == "the information is singular"
