"""Strategy calculators against reliability (the peer with the same calculators), same inputs,
interleaved in the same run by the shared harness (bench/harness.py).

    python bench/strategy_calculators.py [--repeats 7]
    python bench/strategy_calculators.py --quick       # 2 rounds (a smoke run)

Each figure is the per-round ratio of the peer's wall time to ours on one case (per call; the
calculators of a millisecond or less are called in batches of at least 0.2 s a round). The answers are
checked first and the run exits non-zero beyond the stated tolerance:
- age replacement: reliability's optimal_replacement_time is a grid search (10,000 points on
  [1, 3α], each with a quadrature of S), so its T* may be off ours by one grid step and its cost
  rate by the grid's second-order error (our T* is checked in tests/strategy against the
  optimality condition);
- zero-failure Weibayes test: the same number of units;
- MTBF test meeting both risks: reliability_test_duration returns the length for one failure
  fewer than needed (its producer's risk then exceeds the target: see tests/strategy), so the
  check is that its length is the textbook T = θ_req·χ²_{1−β, 2f}/2 at our f − 1.
Calculators without a peer (block replacement, mixtures, failure-finding intervals) are checked
in tests/strategy and not timed here: a time without a same-run baseline is not a figure.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from reliability.Reliability_testing import reliability_test_duration, sample_size_no_failures
from reliability.Repairable_systems import optimal_replacement_time
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Bench, kept, timed

from bathtub.strategy import demonstration_test, mtbf_test_plan, optimal_replacement

GRID = 10_000  # optimal_replacement_time's points on [1, 3α] (q = 0)
COST_RATE_TOLERANCE = 1e-6  # relative: a grid minimum within one step of the optimum, (step/T*)² ≈ 1e-6


def age_replacement(bench: Bench, alpha: float, beta: float, cp: float, cu: float, repeats: int) -> None:
    out: dict = {}
    rounds = bench.interleave({
        "bathtub": timed(kept(out, "ours", lambda: optimal_replacement("weibull", [alpha, beta], cp, cu)),
                         calls=None),
        "reliability": timed(kept(out, "peer", lambda: optimal_replacement_time(
            cp, cu, alpha, beta, show_time_plot=False, show_ratio_plot=False, print_results=False)), calls=None)},
        repeats)
    o, p = out["ours"], out["peer"]
    case = f"Weibull({alpha:g}, {beta:g}), costs {cp:g}/{cu:g}"
    bench.check(f"age replacement {case}: |T* - peer's| in grid steps",
                abs(o["optimal_time"] - p.ORT) / ((3 * alpha - 1) / (GRID - 1)), 1.0)
    bench.check(f"age replacement {case}: cost rate relative difference",
                abs(o["optimal_cost_rate"] / p.min_cost - 1), COST_RATE_TOLERANCE)
    bench.figure(f"age replacement, {case}, wall s", rounds, "bathtub", "reliability", key="seconds", unit="s",
                 higher_is_better=False, note="ours solves the optimality condition; the peer searches a "
                                              f"{GRID:,}-point grid")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="2 rounds (a smoke run)")
    args = ap.parse_args()
    repeats = 2 if args.quick else args.repeats
    bench = Bench("strategy_calculators")
    warnings.simplefilter("ignore")  # the peer's warnings and deprecation chatter

    for alpha, beta, cp, cu in [(1000.0, 2.5, 100.0, 1000.0), (50.0, 4.0, 1.0, 3.0)]:
        age_replacement(bench, alpha, beta, cp, cu, repeats)

    out: dict = {}
    rounds = bench.interleave({
        "bathtub": timed(kept(out, "ours", lambda: demonstration_test(0.95, 0.9, mission_time=100.0,
                                                                         test_multiple=2.0, shape=2.0)), calls=None),
        "reliability": timed(kept(out, "peer", lambda: sample_size_no_failures(0.95, 0.9, 2.0, 2.0,
                                                                                  print_results=False)), calls=None)},
        repeats)
    bench.check("zero-failure Weibayes: units differ by", abs(out["ours"]["units"] - out["peer"]), 0)
    bench.figure("zero-failure Weibayes test, units for R 0.95 at 90%, wall s", rounds, "bathtub",
                 "reliability", key="seconds", unit="s", higher_is_better=False,
                 note="test 2 mission lengths, shape 2; ours returns the full plan "
                      "(risks, summary, trade-off)")

    th_r, th_d, consumer, producer = 500.0, 1500.0, 0.05, 0.10
    rounds = bench.interleave({
        "bathtub": timed(kept(out, "ours", lambda: mtbf_test_plan(th_r, th_d, consumer, producer)), calls=None),
        "reliability": timed(kept(out, "peer", lambda: reliability_test_duration(
            th_r, th_d, consumer, producer, show_plot=False, print_results=False)), calls=None)}, repeats)
    peer_f = out["ours"]["failures"] - 1  # the peer's known off-by-one (see the docstring)
    textbook = th_r * stats.chi2.ppf(1 - consumer, 2 * peer_f + 2) / 2
    bench.check("MTBF test: peer's length against the textbook at our f - 1, relative", abs(out["peer"] / textbook - 1),
                1e-9)
    bench.figure("MTBF test meeting both risks, wall s", rounds, "bathtub", "reliability", key="seconds",
                 unit="s", higher_is_better=False,
                 note=f"θ_req {th_r:g}, θ_design {th_d:g}, risks {consumer:g}/{producer:g}; "
                      "the peer stops one failure short (its producer's risk above target)")
    bench.write()


if __name__ == "__main__":
    main()
