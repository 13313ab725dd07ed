"""Constant-rate (exponential, χ²/Poisson) demonstration tests, solved for any one unknown.

With N ~ Poisson(T/θ) failures in a total time on test T, the one-sided lower confidence bound
on the MTBF θ after r failures is (MIL-HDBK-781; Epstein–Sobel):

- time-terminated (the test stops at T):        θ_L = 2T / χ²(C; 2r + 2)
- failure-terminated (the test stops at the r-th failure, at T): θ_L = 2T / χ²(C; 2r)

and the two-sided interval at level C is [2T/χ²((1+C)/2; ν_L), 2T/χ²((1−C)/2; 2r)] with ν_L the
lower bound's degrees of freedom. Every solve below is that identity read another way round:
the test time, the MTBF shown, the confidence reached, or the failures allowed. A two-sided
requirement is a one-sided one at level (1 + C)/2, so each solve maps C through `one_sided`.

The plan meeting both risks and the operating characteristic use the Poisson law exactly:
P(pass | θ) = P(N ≤ r | T/θ).
"""

from __future__ import annotations

import sys
from typing import Literal

import numpy as np
from scipy import special

from bathtub.errors import InputError
from bathtub.strategy.guard import checkpoint
from bathtub.strategy.inputs import MAX_FAILURES, SCANNED_FAILURES, boundary

Sided = Literal["one", "two"]
Termination = Literal["time", "failure"]


def chi2_ppf(q: float, df: float) -> float:
    """Quantile of the chi-squared law: 2·P⁻¹(df/2, q), P the regularised lower gamma.

    scipy.special's ufunc is the same function as scipy.stats.chi2.ppf without the distribution
    object's per-call overhead (about 100x)."""
    return 2.0 * float(special.gammaincinv(df / 2.0, q))


def chi2_cdf(x: float, df: float) -> float:
    return float(special.gammainc(df / 2.0, x / 2.0))


def poisson_cdf(k: int, mean: float) -> float:
    """P(N <= k) for N ~ Poisson(mean)."""
    return float(special.pdtr(k, mean))


def one_sided(confidence: float, sided: Sided) -> float:
    """The one-sided level whose lower bound is the lower end of a `sided` interval at `confidence`."""
    return confidence if sided == "one" else (1.0 + confidence) / 2.0


def lower_dof(failures: int, termination: Termination) -> int:
    """Degrees of freedom of the lower bound's χ² quantile."""
    if termination == "failure":
        if failures < 1:
            raise InputError("failures", "a failure-terminated test ends at a failure: at least 1")
        return 2 * failures
    return 2 * failures + 2


def mtbf_bounds(total_time: float, failures: int, confidence: float, termination: Termination = "time",
                sided: Sided = "one") -> tuple[float, float | None]:
    """(lower, upper) confidence bounds on the MTBF after `failures` in `total_time`.

    The upper bound is given only for a two-sided interval and needs at least one failure
    (with none, the data put no upper limit on the MTBF)."""
    lower = 2.0 * total_time / chi2_ppf(one_sided(confidence, sided), lower_dof(failures, termination))
    upper = None
    if sided == "two" and failures >= 1:
        upper = 2.0 * total_time / chi2_ppf((1.0 - confidence) / 2.0, 2 * failures)
    return lower, upper


def test_time(mtbf: float, confidence: float, failures: int, termination: Termination = "time",
              sided: Sided = "one") -> float:
    """Total time on test T that shows `mtbf` at `confidence` with `failures` (allowed, or at which
    a failure-terminated test stops): T = θ·χ²(C'; ν)/2."""
    return mtbf * chi2_ppf(one_sided(confidence, sided), lower_dof(failures, termination)) / 2.0


def confidence_reached(mtbf: float, total_time: float, failures: int, termination: Termination = "time",
                       sided: Sided = "one") -> float:
    """The confidence at which a test of `total_time` with `failures` shows `mtbf`.

    One-sided: C = P(χ²_ν ≤ 2T/θ) (= P(N ≥ r + 1 | T/θ) time-terminated). Two-sided: 2C₁ − 1,
    refused when the one-sided level is below 1/2 (no two-sided interval then has θ as its
    lower end)."""
    c1 = chi2_cdf(2.0 * total_time / mtbf, lower_dof(failures, termination))
    if sided == "one":
        return c1
    if c1 <= 0.5:
        raise InputError("sided", f"the test shows mtbf only at one-sided confidence {c1:.4g} (< 0.5): no two-sided "
                                  "interval at positive confidence has it as its lower end; use sided one")
    return 2.0 * c1 - 1.0


def failures_allowed(mtbf: float, total_time: float, confidence: float, termination: Termination = "time",
                     sided: Sided = "one", max_failures: int = 1_000_000) -> int:
    """The most failures a test of `total_time` may see and still show `mtbf` at `confidence`.

    χ²(C; ν) grows with ν, so the set of passing failure counts is {0..r_max} (time-terminated)
    or {1..r_max} (failure-terminated); r_max is found by bisection on the monotone condition."""
    c = one_sided(confidence, sided)
    x = 2.0 * total_time / mtbf
    first = 1 if termination == "failure" else 0
    if chi2_ppf(c, lower_dof(first, termination)) > x:
        needed = test_time(mtbf, confidence, first, termination, sided)
        raise InputError("total_test_time", f"too short for any plan: showing mtbf {mtbf:.6g} at this confidence "
                                            f"needs at least {needed:.6g} even with {first} failure(s)")
    lo, hi = first, first + 1
    while chi2_ppf(c, lower_dof(hi, termination)) <= x:
        lo, hi = hi, hi * 2
        if hi > max_failures:
            raise InputError("total_test_time", f"allows more than {max_failures} failures; check the units")
    return boundary(lo, hi, lambda r: chi2_ppf(c, lower_dof(r, termination)) <= x)


def pass_probability(failures: int, total_time: float, true_mtbf: float) -> float:
    """Chance that a time-terminated test of `total_time` allowing `failures` is passed by a
    population of MTBF `true_mtbf` (exact Poisson law)."""
    return poisson_cdf(failures, total_time / true_mtbf)


def both_risks_plan(mtbf_required: float, mtbf_design: float, consumer_risk: float, producer_risk: float,
                    max_failures: int = MAX_FAILURES) -> tuple[int, float]:
    """The shortest fixed-length, time-terminated plan (r, T) meeting both risks exactly.

    For each r the least T meeting the consumer's risk is T_r = θ_req·χ²(1 − β; 2r + 2)/2 (any
    longer test only raises the producer's risk), so the plan is the first r whose
    P(N > r | T_r/θ_design) ≤ α: the smallest failures allowed, then the shortest time. The
    first SCANNED_FAILURES counts are tried one by one; past them the producer's risk along T_r
    falls as r grows (a longer test tells the two MTBFs apart better), so bisection brackets
    the answer and a plan needing more than `max_failures` is refused in a few dozen steps. The
    risk is the Poisson upper tail computed directly: 1 − P(N ≤ r) cannot resolve one below 1e-16."""
    if mtbf_design <= mtbf_required:
        raise InputError("design_mtbf", "must exceed the required mtbf (discrimination ratio above 1)")

    def meets(r: int) -> bool:
        checkpoint()
        t = test_time(mtbf_required, 1.0 - consumer_risk, r)
        return float(special.pdtrc(r, t / mtbf_design)) <= producer_risk

    start = 0
    while start <= max_failures:
        for r in range(start, min(start + SCANNED_FAILURES, max_failures + 1)):
            if meets(r):
                return r, test_time(mtbf_required, 1.0 - consumer_risk, r)
        start += SCANNED_FAILURES
        if start > max_failures:
            break
        if not meets(max_failures):
            start = max_failures + 1
        elif not meets(start):
            start = boundary(start, max_failures, lambda r: not meets(r))  # the scan confirms the next count
    raise InputError("design_mtbf", f"too close to the required mtbf: more than {max_failures} failures needed")


def oc_grid(mtbf_required: float, mtbf_design: float | None, points: int = 25) -> list[float]:
    """True MTBFs for an operating-characteristic curve: log-spaced from θ_req/4 to 4·max(θ_req,
    θ_design), with θ_req and θ_design themselves among them."""
    # kept within normal floats: an MTBF of 5e-324 would put θ/4 at 0, one of 1e308 puts 4θ at inf
    low = max(mtbf_required / 4.0, sys.float_info.min)
    top = min(4.0 * max(mtbf_required, mtbf_design or mtbf_required), sys.float_info.max)
    grid = set(np.geomspace(low, max(top, low), points).tolist())
    grid.add(mtbf_required)
    if mtbf_design is not None:
        grid.add(mtbf_design)
    return sorted(grid)


def operating_characteristic(failures: int, total_time: float, true_mtbfs: list[float]) -> dict[str, list[float]]:
    """Chance of passing against the true MTBF: {true_mtbf, pass_probability}."""
    return {"true_mtbf": list(true_mtbfs),
            "pass_probability": [pass_probability(failures, total_time, th) for th in true_mtbfs]}
