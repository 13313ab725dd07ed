"""Non-parametric estimates against the peers, interleaved in the same run by the shared harness
(bench/harness.py): Kaplan–Meier at 10^3..10^6 rows, Turnbull on interval data.

    python bench/life_nonparametric.py [--sizes 1000,10000,1000000] [--turnbull-sizes 300,3000]
        [--repeats 5] [--slow-repeats 3]
    python bench/life_nonparametric.py --quick      # 10^3 rows, Turnbull at 300, few rounds

Kaplan–Meier: ours (estimate, Greenwood variance, log-log bounds, at-risk table, metrics)
against lifelines' KaplanMeierFitter (estimate, bounds, median) and reliability's
KaplanMeier (estimate, bounds). reliability's KaplanMeier sums Greenwood's terms afresh at
every row (quadratic in n: ~5 s at 10^4 rows), so it runs at n <= 10^4 only, in its own
`--slow-repeats` rounds beyond 10^3 rows; its ~1e-5 gap comes from its unstable sort, which
may put a suspension before a failure at the same time (the usual convention, ours and
lifelines', puts failures first).

Turnbull: ours (EM-ICM to 1e-12, no bootstrap) against surpyval's Turnbull (its EM-ICM,
Kaplan–Meier estimator) and, at n <= 1000, lifelines' interval-censored NPMLE (plain EM, tol
1e-7: ~10 s at 300 rows, minutes beyond 1000, so `--slow-repeats` rounds). The gap is the
largest difference in S at surpyval's grid, and for lifelines in the masses.

Every figure is the per-round ratio of the peer's wall time to ours. The run exits non-zero
if an estimate differs from a peer's by more than TOLERANCE (below).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Bench, kept, timed

from bathtub.life.nonparametric import kaplan_meier, turnbull

# Largest difference from ours each peer's estimate may show: lifelines' KM and surpyval's
# Turnbull compute the same numbers; reliability's unstable sort at tied times moves S by ~1e-5;
# lifelines' plain EM stops at a likelihood change of 1e-7, leaving masses ~5e-4 off the NPMLE.
TOLERANCE = {"KM lifelines": 1e-9, "KM reliability": 1e-4, "Turnbull surpyval": 1e-9, "Turnbull lifelines": 2e-3}


def km_data(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Weibull lives, ~30% right-censored, times to 0.01 (ties, as real logs have)."""
    rng = np.random.default_rng(seed)
    t = np.round(100.0 * rng.weibull(1.8, n), 2)
    c = np.round(rng.uniform(0.0, 300.0, n), 2)
    return np.minimum(t, c), (c < t).astype(int)


def interval_data(n: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Two inspections per unit at random times: left-, interval- and right-censored rows."""
    rng = np.random.default_rng(seed)
    life = rng.weibull(2.0, n) * 10.0
    a = rng.uniform(0.0, 8.0, n)
    b = a + rng.uniform(0.5, 6.0, n)
    xl = np.where(life <= a, 0.0, np.where(life <= b, a, b))
    xr = np.where(life <= a, a, np.where(life <= b, b, np.inf))
    return xl, xr


def km_ours(x: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    km = kaplan_meier(x, c)
    _ = km.median, km.b10, km.mttf
    return km.time, km.sf


def km_lifelines(x: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from lifelines import KaplanMeierFitter

    k = KaplanMeierFitter().fit(x, 1 - c)
    _ = k.confidence_interval_, k.median_survival_time_
    sf = k.survival_function_
    return sf.index.to_numpy()[1:], sf.to_numpy()[1:, 0]


def km_reliability(x: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from reliability.Nonparametric import KaplanMeier

    r = KaplanMeier(failures=x[c == 0], right_censored=x[c == 1], show_plot=False, print_results=False)
    # Row by row: the last row at each distinct time carries that time's estimate.
    t = r.results["Failure times"].to_numpy()
    last = np.r_[np.flatnonzero(np.diff(t)), t.size - 1]
    return t[last], r.results["Kaplan-Meier Estimate"].to_numpy()[last]


def sf_gap(ref: tuple[np.ndarray, np.ndarray], ours: tuple[np.ndarray, np.ndarray]) -> float:
    t, s = ref
    idx = np.searchsorted(ours[0], t)
    if np.any(idx >= ours[0].size) or not np.array_equal(ours[0][idx], t):
        return float("nan")
    return float(np.max(np.abs(ours[1][idx] - s)))


def bench_km(bench: Bench, sizes: list[int], repeats: int, slow_repeats: int) -> None:
    for n in sizes:
        x, c = km_data(n)
        out: dict = {}
        note = f"n = {n:,}, ~30% right-censored, ties at 0.01; ours with Greenwood bounds, at-risk table and metrics"
        cases = {"bathtub": timed(kept(out, "bathtub", lambda x=x, c=c: km_ours(x, c)), calls=None),
                 "lifelines": timed(kept(out, "lifelines", lambda x=x, c=c: km_lifelines(x, c)), calls=None)}
        if n <= 1000:
            cases["reliability"] = timed(kept(out, "reliability", lambda x=x, c=c: km_reliability(x, c)), calls=None)
        rounds = bench.interleave(cases, repeats)
        if n > 1000 and n <= 10_000:  # quadratic peer: its own, shorter interleaved rounds
            slow = bench.interleave({"bathtub": cases["bathtub"], "reliability": timed(kept(
                out, "reliability", lambda x=x, c=c: km_reliability(x, c)), calls=None)}, slow_repeats, warmup=0)
            rounds["bathtub, beside reliability"], rounds["reliability"] = slow["bathtub"], slow["reliability"]
        for peer in ("lifelines", "reliability"):
            if peer in rounds:
                bench.check(f"KM n={n} max |dS| to {peer}", sf_gap(out[peer], out["bathtub"]),
                            TOLERANCE[f"KM {peer}"])
        bench.figure(f"Kaplan–Meier, {n:,} rows, wall s", rounds, "bathtub", "lifelines", key="seconds", unit="s",
                     higher_is_better=False, note=note)
        if "reliability" in rounds:
            ours = "bathtub" if n <= 1000 else "bathtub, beside reliability"
            bench.figure(f"Kaplan–Meier, {n:,} rows, wall s", rounds, ours, "reliability", key="seconds", unit="s",
                         higher_is_better=False, note=note)


def bench_turnbull(bench: Bench, sizes: list[int], repeats: int, slow_repeats: int) -> None:
    from lifelines.fitters.npmle import npmle
    from surpyval.univariate.nonparametric import turnbull as surpyval_turnbull
    from surpyval.utils.data_formats import xcnt_handler

    for n in sizes:
        xl, xr = interval_data(n)
        out: dict = {}

        def run_surpyval(xl=xl, xr=xr):
            x, c, k, t = xcnt_handler(xl=xl, xr=xr)
            return surpyval_turnbull(x, c, k, t, estimator="Kaplan-Meier", tol=1e-12, max_iter=100_000)

        ours = timed(kept(out, "bathtub", lambda xl=xl, xr=xr: turnbull(xl, xr, bootstrap=0)), calls=None)
        rounds = bench.interleave({"bathtub": ours, "surpyval": timed(kept(out, "surpyval", run_surpyval),
                                                                      calls=None)}, repeats)
        fit = out["bathtub"]
        bench.check(f"Turnbull n={n} max |dS| to surpyval", sf_gap((out["surpyval"]["x"], out["surpyval"]["R"]),
                                                                   (fit.time, fit.sf)), TOLERANCE["Turnbull surpyval"])
        note = f"n = {n:,} two-inspection rows (left/interval/right-censored); ours EM-ICM to 1e-12, no bootstrap"
        bench.figure(f"Turnbull NPMLE, {n:,} rows, wall s", rounds, "bathtub", "surpyval", key="seconds", unit="s",
                     higher_is_better=False, note=note)
        if n <= 1000:
            slow = bench.interleave({"bathtub": ours, "lifelines": timed(kept(
                out, "lifelines", lambda xl=xl, xr=xr: npmle(xl, xr, tol=1e-7)), calls=None)}, slow_repeats, warmup=0)
            p = np.asarray(out["lifelines"][0])
            gap = float(np.max(np.abs(p - fit.mass))) if p.size == fit.mass.size else float("nan")
            bench.check(f"Turnbull n={n} max |d mass| to lifelines", gap, TOLERANCE["Turnbull lifelines"])
            bench.figure(f"Turnbull NPMLE, {n:,} rows, wall s", slow, "bathtub", "lifelines", key="seconds",
                         unit="s", higher_is_better=False, note=note + "; lifelines' plain EM to tol 1e-7")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,1000000")
    parser.add_argument("--turnbull-sizes", default="300,3000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--slow-repeats", type=int, default=3, help="rounds beside the slowest peers")
    parser.add_argument("--quick", action="store_true", help="10^3 rows, Turnbull at 300, 2 rounds (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.turnbull_sizes, args.repeats, args.slow_repeats = "1000", "300", 2, 1
    bench = Bench("life_nonparametric")
    warnings.simplefilter("ignore")  # the peers' deprecation and convergence chatter
    bench_km(bench, [int(s) for s in args.sizes.split(",")], args.repeats, args.slow_repeats)
    bench_turnbull(bench, [int(s) for s in args.turnbull_sizes.split(",")], args.repeats, args.slow_repeats)
    bench.write()


if __name__ == "__main__":
    main()
