"""Sequential probability-ratio test of an MTBF (Wald; MIL-HDBK-781's PRST), truncated.

Hypotheses: H₀ θ = θ₀ (the design MTBF, accept) against H₁ θ = θ₁ (the required, lower MTBF,
reject), discrimination ratio d = θ₀/θ₁ > 1, producer's risk α = P(reject | θ₀), consumer's
risk β = P(accept | θ₁). After a time on test t with r failures the log likelihood ratio is
r·ln d − t·(1/θ₁ − 1/θ₀), and Wald's boundaries A = (1 − β)/α, B = β/(1 − α) give two lines
in the (t, r) plane with slope s = (1/θ₁ − 1/θ₀)/ln d:

- reject when r ≥ ln A/ln d + s·t (at the moment of a failure),
- accept when r ≤ ln B/ln d + s·t (when time reaches that line with no new failure).

Truncation (the rule MIL-HDBK-781 uses for its PRST plans): at the fixed-length plan of the
same risks, (r₀ − 1 failures allowed, T₀): reject at the r₀-th failure, accept at T₀.

Truncation and the overshoot of a failure past the reject line make the real risks differ
from the nominal α and β, so the risks and the expected test times reported are exact for the
truncated test: the chance of still testing with k failures is propagated failure by failure
(the k-th failure's time has density λe^{−λt}·G_{k−1}(t) inside the continuation region, with
G_k(t) = λ∫ G_{k−1}), then E[T] = ∫ P(undecided at t) dt. Nothing is simulated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from bathtub.strategy.constant_rate import both_risks_plan
from bathtub.strategy.guard import checkpoint
from bathtub.strategy.inputs import MAX_FAILURES

GRID = 20_001  # quadrature points on [0, T₀]; the cumulative integral is interpolated linearly


@dataclass(frozen=True)
class SequentialPlan:
    mtbf_required: float  # θ₁
    mtbf_design: float  # θ₀
    consumer_risk: float  # β, nominal
    producer_risk: float  # α, nominal
    accept_intercept: float  # ln B / ln d (negative)
    reject_intercept: float  # ln A / ln d (positive)
    slope: float  # failures per unit time of both lines
    truncation_time: float  # T₀
    truncation_failures: int  # r₀: reject at this many failures

    def accept_time(self, failures: int) -> float:
        """Time on test at which the test accepts with `failures` so far (truncated at T₀)."""
        return min((failures - self.accept_intercept) / self.slope, self.truncation_time)

    def reject_time(self, failures: int) -> float | None:
        """A failure numbered `failures` at or before this time rejects (None: never by the line;
        the r₀-th failure always rejects)."""
        t = (failures - self.reject_intercept) / self.slope
        return t if t >= 0.0 else None


def plan(mtbf_required: float, mtbf_design: float, consumer_risk: float, producer_risk: float) -> SequentialPlan:
    """Wald's lines for the given risks, truncated at the fixed-length plan of the same risks."""
    d = mtbf_design / mtbf_required
    log_d = math.log(d)
    # truncation_failures sets how long exact_performance loops and how long the boundary table is
    r_fixed, t_fixed = both_risks_plan(mtbf_required, mtbf_design, consumer_risk, producer_risk, MAX_FAILURES)
    return SequentialPlan(
        mtbf_required=mtbf_required, mtbf_design=mtbf_design, consumer_risk=consumer_risk,
        producer_risk=producer_risk,
        accept_intercept=math.log(consumer_risk / (1.0 - producer_risk)) / log_d,
        reject_intercept=math.log((1.0 - consumer_risk) / producer_risk) / log_d,
        slope=(1.0 / mtbf_required - 1.0 / mtbf_design) / log_d,
        truncation_time=t_fixed, truncation_failures=r_fixed + 1,
    )


def exact_performance(p: SequentialPlan, true_mtbf: float) -> tuple[float, float]:
    """(chance of accepting, expected time on test) of the truncated test at a true MTBF."""
    lam = 1.0 / true_mtbf
    t = np.linspace(0.0, p.truncation_time, GRID)
    g = np.ones_like(t)  # G₀: the test starts at t = 0 with no failure
    undecided = np.zeros_like(t)
    accept = 0.0
    for k in range(p.truncation_failures):
        checkpoint()  # each failure count costs a few passes over the grid: up to MAX_FAILURES of them
        end = p.accept_time(k)
        undecided += np.where(t < end, np.exp(-lam * t) * g, 0.0)
        accept += math.exp(-lam * end) * float(np.interp(end, t, g))
        if k + 1 == p.truncation_failures:
            break
        # G_{k+1}(t) = λ ∫ G_k(u) du over u in (reject time of failure k+1, min(t, end)).
        cum = np.concatenate(([0.0], np.cumsum((g[1:] + g[:-1]) * 0.5 * np.diff(t)))) * lam
        start = max(p.reject_time(k + 1) or 0.0, 0.0)
        base = float(np.interp(start, t, cum))
        g = np.where(t > start, np.interp(np.minimum(t, end), t, cum) - base, 0.0)
        g = np.maximum(g, 0.0)
    expected = float(np.sum((undecided[1:] + undecided[:-1]) * 0.5 * np.diff(t)))
    return accept, expected


def boundary_table(p: SequentialPlan) -> list[dict[str, Any]]:
    """Per failure count: the latest time at which that failure rejects and the time that accepts."""
    rows = []
    for k in range(p.truncation_failures + 1):
        rows.append({
            "failures": k,
            "reject_if_reached_by": (p.truncation_time if k == p.truncation_failures else p.reject_time(k)),
            "accept_at": None if k >= p.truncation_failures else p.accept_time(k),
        })
    return rows
