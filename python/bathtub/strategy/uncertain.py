"""Optimal replacement and failure-finding intervals over a saved model's parameter uncertainty.

A saved model's parameters are drawn from its fit's sampling distribution
(`bathtub.models.parameter_draws`; draw i depends on (seed, i) only) and each draw's optimum is
found by the calculators themselves, so the answer says how far the data pin the optimum down:

- optimal replacement: the 5th–95th percentiles over draws of the optimal interval and of its
  cost rate, the share of draws in which preventive replacement pays, and the expected regret of
  acting on the point estimate: the mean over draws of C_d(T̂) − C_d(T*_d), C_d the cost rate
  under draw d, T̂ the point estimate's optimal interval, T*_d the draw's own (≥ 0; as a cost per
  unit time, and as a share of the mean of C_d(T*_d));
- failure finding: the percentiles of each draw's own interval meeting the target (testing every
  `interval.lower` meets it in 95% of draws, unavailability rising with the interval), and, for
  the point estimate's interval, the percentiles of its mean unavailability under the draws, the
  chance the target is missed, and the expected shortfall mean(max(0, U_d(T̂) − (1 − A))).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from bathtub import models
from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.strategy.failure_finding import failure_finding_interval, mean_unavailability
from bathtub.strategy.guard import OVER_BUDGET_RULE, OverBudget, answered
from bathtub.strategy.replacement import cost_rate_at, optimal_replacement
from bathtub.strategy.saved_life import saved_life

CONFIDENCE = 0.9  # the ranges are the 5th and 95th percentiles over draws
_NOISE = 1e-7  # a regret below this share of the draw's own optimum is the optimisers' tolerance
_NEWTON = 12  # Newton steps on ln T before falling back to the calculator's bracketed search

# the calculators without their doors: a draw's refusal or overrun is the uncertain run's, named here
_replacement = optimal_replacement.__wrapped__  # type: ignore[attr-defined]
_failure_finding = failure_finding_interval.__wrapped__  # type: ignore[attr-defined]


def draw_lives(record: Mapping[str, Any], draws: int, seed: int, model_id: str = "", *,
               covariates: Mapping[str, Any] | None = None, policy: str | None = None) -> list[Lifetime]:
    """The life law of each parameter draw of a saved model's `record` (refused on `uncertainty`
    when the model has no sampling distribution to draw from), read as `saved_life` reads the
    point estimate: a regression's at `covariates`, a process's new unit's."""
    return [saved_life(d, model_id, covariates=covariates, policy=policy, field="uncertainty")
            for d in models.parameter_draws(record, draws, seed, field="uncertainty")]


def _range(values: Sequence[float | None]) -> dict[str, float | None]:
    """{lower, median, upper}: the 5th, 50th and 95th percentiles (order statistics, so a draw
    with no finite answer, None, counts as beyond every finite one and an end may be null)."""
    x = np.array([math.inf if v is None else v for v in values], dtype=float)
    tail = (1.0 - CONFIDENCE) / 2.0
    out = np.quantile(x, [tail, 0.5, 1.0 - tail], method="inverted_cdf")
    return dict(zip(("lower", "median", "upper"), (float(v) if math.isfinite(v) else None for v in out),
                    strict=True))


def _each(lives: Sequence[Lifetime], fn: Callable[[Lifetime, int], Any]) -> list[Any]:
    """fn(life, i) on every draw's life; a draw the calculator refuses names itself under
    `uncertainty`, a spent budget names `draws`."""
    out = []
    for i, life in enumerate(lives):
        try:
            out.append(fn(life, i))
        except OverBudget as e:
            raise InputError("draws", f"{OVER_BUDGET_RULE} ({e.seconds:g} CPU-seconds for this request) at draw "
                                      f"{i} of {len(lives)}: ask for fewer draws") from None
        except InputError as e:
            raise InputError("uncertainty", f"parameter draw {i} ({_params(life)}): {e.field}: {e.rule}") from None
    return out


def _params(life: Lifetime) -> str:
    return ", ".join(f"{k} {v:.6g}" for k, v in life.params.items())


@answered
def replacement_over_draws(point: Mapping[str, Any], lives: Sequence[Lifetime], *, planned_cost: float,
                           unplanned_cost: float, policy: str = "age", seed: int = 0) -> dict[str, Any]:
    """`parameter_uncertainty` of an optimal replacement: `point` is `optimal_replacement`'s
    answer on the point estimate, `lives` the draws' laws, `seed` their seed (reported)."""
    cp, cu = planned_cost, unplanned_cost
    own = _each(lives, lambda life, _: _replacement(lifetime=life, planned_cost=cp, unplanned_cost=cu, policy=policy,
                                                 curve_points=10))
    t_hat = point["optimal_time"]
    out: dict[str, Any] = {
        "draws": len(lives), "seed": seed, "confidence": CONFIDENCE,
        "optimal_time": _range([o["optimal_time"] for o in own]),
        "optimal_cost_rate": _range([o["optimal_cost_rate"] for o in own]),
        "beneficial_share": sum(bool(o["beneficial"]) for o in own) / len(own),
    }
    if t_hat is None and policy == "minimal_repair":
        # never renewing under minimal repair is no plan whose cost rate a draw could price
        return {**out, "cost_rate_at_point_optimum": None, "expected_regret": None, "expected_regret_share": None,
                "regret_note": "the point estimate says never renew under minimal repair, which has no finite "
                               "cost rate to compare draws on"}
    at_point = _each(lives, lambda life, _: cost_rate_at(life, policy, cp, cu, t_hat))
    best = np.array([o["optimal_cost_rate"] for o in own], dtype=float)
    regret = np.array(at_point, dtype=float) - best
    # the optimisers stop within a relative tolerance: a regret inside it is zero, not a saving
    regret = np.where(regret < 0.0, np.where(regret > -_NOISE * np.abs(best), 0.0, regret), regret)
    mean_best = float(best.mean())
    return {**out, "cost_rate_at_point_optimum": _range(at_point), "expected_regret": float(regret.mean()),
            "expected_regret_share": float(regret.mean()) / mean_best if mean_best > 0 else None,
            "regret_note": None}


def _interval_near(life: Lifetime, target: float, start: float, u_start: float) -> float:
    """The draw's interval meeting `target` availability, by Newton's method on ln T from the point
    estimate's interval (dU/d ln T = F(T) − U(T) > 0), each step the calculator's own U(T); the
    calculator's bracketed search where Newton does not settle."""
    u_target = 1.0 - target
    t, u = start, u_start
    for _ in range(_NEWTON):
        slope = float(life.cdf(t)) - u
        if not slope > 0.0:
            break
        step = max(-1.0, min(1.0, (u - u_target) / slope))
        t *= math.exp(-step)
        # Newton squares the error: after a step below 1e-7 the root is within ~1e-14 of ln T, under
        # the quadrature's own 1e-11, so a further evaluation would change nothing that counts
        if abs(step) < 1e-7:
            return t
        u = mean_unavailability(life, t)
    return float(_failure_finding(lifetime=life, target_availability=target)["interval"])


@answered
def failure_finding_over_draws(point: Mapping[str, Any], lives: Sequence[Lifetime], *, target_availability: float,
                               seed: int = 0) -> dict[str, Any]:
    """`parameter_uncertainty` of a failure-finding interval: `point` is
    `failure_finding_interval`'s answer on the point estimate, `lives` the draws' laws."""
    t_hat, u_target = float(point["interval"]), 1.0 - target_availability
    at_point = _each(lives, lambda life, _: mean_unavailability(life, t_hat))
    own = _each(lives, lambda life, i: _interval_near(life, target_availability, t_hat, at_point[i]))
    u = np.array(at_point, dtype=float)
    return {"draws": len(lives), "seed": seed, "confidence": CONFIDENCE, "interval": _range(own),
            "mean_unavailability_at_interval": _range(at_point),
            "chance_target_missed": float(np.mean(u > u_target)),
            "expected_shortfall": float(np.maximum(u - u_target, 0.0).mean())}


def optimal_replacement_uncertain(record: Mapping[str, Any], draws: int, seed: int, *, model_id: str = "",
                                  covariates: Mapping[str, Any] | None = None, **calculator: Any) -> dict[str, Any]:
    """`optimal_replacement(**calculator)` on the saved model's point estimate (its `lifetime`),
    with `parameter_uncertainty` over `draws` parameter draws of its `record` made from `seed`
    (a regression's at the unit's `covariates`)."""
    point = optimal_replacement(**calculator)
    lives = draw_lives(record, draws, seed, model_id, covariates=covariates, policy=point["policy"])
    return {**point, "parameter_uncertainty": replacement_over_draws(
        point, lives, planned_cost=point["planned_cost"], unplanned_cost=point["unplanned_cost"],
        policy=point["policy"], seed=seed)}


def failure_finding_uncertain(record: Mapping[str, Any], draws: int, seed: int, *, model_id: str = "",
                              covariates: Mapping[str, Any] | None = None, **calculator: Any) -> dict[str, Any]:
    """`failure_finding_interval(**calculator)` on the saved model's point estimate, with
    `parameter_uncertainty` over `draws` parameter draws of its `record` made from `seed`."""
    point = failure_finding_interval(**calculator)
    lives = draw_lives(record, draws, seed, model_id, covariates=covariates)
    return {**point, "parameter_uncertainty": failure_finding_over_draws(
        point, lives, target_availability=point["target_availability"], seed=seed)}
