"""Strategy calculators against reliability (the peer with the same calculators), same inputs.

Run: python bench/strategy_calculators.py [--repeat 7]
Prints each case's median wall time for us and the peer, the ratio peer/ours, and how far the
answers are apart. Where the peer is a grid search (optimal_replacement_time), its error is the
grid step; our answer is checked in tests/strategy against the optimality condition.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

from reliability.Reliability_testing import reliability_test_duration, sample_size_no_failures
from reliability.Repairable_systems import optimal_replacement_time

from bathtub.strategy import demonstration_test, failure_finding_interval, mtbf_test_plan, optimal_replacement


def median_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def row(name: str, ours: float, peer: float | None, gap: str) -> None:
    if peer is None:
        print(f"{name:<44} ours {ours * 1e3:9.2f} ms   peer       n/a            {gap}")
    else:
        print(f"{name:<44} ours {ours * 1e3:9.2f} ms   peer {peer * 1e3:9.2f} ms  x{peer / ours:7.1f}  {gap}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    n = ap.parse_args().repeat
    warnings.simplefilter("ignore")

    for alpha, beta, cp, cu in [(1000.0, 2.5, 100.0, 1000.0), (50.0, 4.0, 1.0, 3.0)]:
        t_o, o = median_time(lambda a=alpha, b=beta, p=cp, u=cu: optimal_replacement("weibull", [a, b], p, u), n)
        t_p, p = median_time(lambda a=alpha, b=beta, p=cp, u=cu: optimal_replacement_time(
            p, u, a, b, show_time_plot=False, show_ratio_plot=False, print_results=False), max(1, n // 3))
        gap = (f"T* {o['optimal_time']:.6g} vs {p.ORT:.6g}; "
               f"cost rate rel. diff {abs(o['optimal_cost_rate'] / p.min_cost - 1):.1e}")
        row(f"age replacement Weibull({alpha:g}, {beta:g})", t_o, t_p, gap)

    t_o, o = median_time(lambda: optimal_replacement("weibull", [1000.0, 2.5], 100.0, 1000.0, policy="block"), n)
    row("block replacement Weibull(1000, 2.5)", t_o, None, f"T* {o['optimal_time']:.6g}")
    mix = {"alpha1": 100.0, "beta1": 4.0, "weight1": 0.7, "alpha2": 300.0, "beta2": 3.0, "weight2": 0.3}
    t_o, o = median_time(lambda: optimal_replacement("mixture", mix, 10.0, 100.0, base_distribution_id="weibull"), n)
    row("age replacement, 2-mode Weibull mixture", t_o, None, f"T* {o['optimal_time']:.6g}")
    t_o, o = median_time(lambda: failure_finding_interval("weibull", [1000.0, 2.0], 0.999), n)
    row("failure-finding interval Weibull", t_o, None, f"T {o['interval']:.6g}")

    t_o, o = median_time(lambda: demonstration_test(0.95, 0.9, mission_time=100.0, test_multiple=2.0, shape=2.0), n)
    t_p, p = median_time(lambda: sample_size_no_failures(0.95, 0.9, 2.0, 2.0, print_results=False), n)
    row("zero-failure Weibayes units", t_o, t_p, f"units {o['units']} vs {p}")

    args = (500.0, 1500.0, 0.05, 0.10)
    t_o, o = median_time(lambda: mtbf_test_plan(*args), n)
    t_p, p = median_time(lambda: reliability_test_duration(*args, show_plot=False, print_results=False), n)
    row("MTBF test meeting both risks", t_o, t_p,
        f"T {o['total_test_time']:.6g} (producer risk {o['producer_risk']:.3f}) vs peer {p:.6g} "
        "(producer risk above target: see tests)")


if __name__ == "__main__":
    main()
