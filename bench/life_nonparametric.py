"""Non-parametric estimates against the peers: Kaplan–Meier at 10^3..10^6 rows, Turnbull on
interval data.

Run: python bench/life_nonparametric.py [--sizes 1000,10000,1000000] [--repeat 5]
     [--turnbull-sizes 300,3000]

Kaplan–Meier: ours (estimate, Greenwood variance, log-log bounds, at-risk table, metrics)
against lifelines' KaplanMeierFitter (estimate, bounds, median) and reliability's
KaplanMeier (estimate, bounds). Each row prints the median wall time, the ratio to ours and
the largest difference of the survival estimate from ours. reliability's KaplanMeier sums
Greenwood's terms afresh at every row (quadratic in n), so it is skipped beyond 10^4 rows;
its ~1e-5 gap comes from its unstable sort, which may put a suspension before a failure at
the same time (the usual convention, ours and lifelines', puts failures first).

Turnbull: ours (EM-ICM to 1e-12, no bootstrap) against surpyval's Turnbull (its EM-ICM,
Kaplan–Meier estimator) and lifelines' interval-censored NPMLE (plain EM, tol 1e-7; skipped
beyond 1000 rows, where it takes minutes). The difference column is the largest gap in S at
surpyval's grid, and for lifelines in the masses.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from bathtub.life.nonparametric import kaplan_meier, turnbull


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


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


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
    if not np.array_equal(ours[0][idx], t):
        return float("nan")
    return float(np.max(np.abs(ours[1][idx] - s)))


def bench_km(sizes: list[int], repeat: int) -> None:
    print("Kaplan–Meier (estimate, Greenwood, bounds, median), ~30% right-censored, ties at 0.01")
    print(f"{'n':>9} {'library':<12} {'median s':>10} {'x ours':>8} {'max |dS|':>10}")
    for n in sizes:
        x, c = km_data(n)
        base, mine = timed(lambda x=x, c=c: km_ours(x, c), repeat)
        print(f"{n:>9} {'bathtub':<12} {base:>10.4f} {1.0:>8.1f} {0.0:>10.1e}")
        peers: list[tuple[str, Callable, int]] = [("lifelines", km_lifelines, repeat)]
        if n <= 10_000:
            peers.append(("reliability", km_reliability, 1 if n > 1000 else repeat))
        for name, fn, reps in peers:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t, out = timed(lambda fn=fn, x=x, c=c: fn(x, c), reps)
            print(f"{n:>9} {name:<12} {t:>10.4f} {t / base:>8.1f} {sf_gap(out, mine):>10.1e}")
        if n > 10_000:
            print(f"{n:>9} {'reliability':<12} {'skipped: quadratic in n':>31}")


def bench_turnbull(sizes: list[int], repeat: int) -> None:
    from lifelines.fitters.npmle import npmle
    from surpyval.univariate.nonparametric import turnbull as surpyval_turnbull
    from surpyval.utils.data_formats import xcnt_handler

    print("\nTurnbull NPMLE on two-inspection interval data (left/interval/right-censored)")
    print(f"{'n':>9} {'library':<12} {'median s':>10} {'x ours':>8} {'max diff':>10}")
    for n in sizes:
        xl, xr = interval_data(n)
        base, fit = timed(lambda xl=xl, xr=xr: turnbull(xl, xr, bootstrap=0), repeat)
        print(f"{n:>9} {'bathtub':<12} {base:>10.4f} {1.0:>8.1f} {0.0:>10.1e}")

        def run_surpyval(xl=xl, xr=xr):
            x, c, k, t = xcnt_handler(xl=xl, xr=xr)
            return surpyval_turnbull(x, c, k, t, estimator="Kaplan-Meier", tol=1e-12, max_iter=100_000)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t, out = timed(run_surpyval, repeat)
        gap = sf_gap((out["x"], out["R"]), (fit.time, fit.sf))
        print(f"{n:>9} {'surpyval':<12} {t:>10.4f} {t / base:>8.1f} {gap:>10.1e}")
        if n <= 1000:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t, (p, _) = timed(lambda xl=xl, xr=xr: npmle(xl, xr, tol=1e-7), 1)
            gap = float(np.max(np.abs(np.asarray(p) - fit.mass))) if len(p) == fit.mass.size else float("nan")
            print(f"{n:>9} {'lifelines':<12} {t:>10.4f} {t / base:>8.1f} {gap:>10.1e}")
        else:
            print(f"{n:>9} {'lifelines':<12} {'skipped: plain EM, minutes':>31}")
    xl, xr = interval_data(sizes[0])
    t, _ = timed(lambda: turnbull(xl, xr, bootstrap=200), 1)
    print(f"(ours with 200 bootstrap resamples for bounds at n = {sizes[0]}: {t:.3f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,1000000")
    parser.add_argument("--turnbull-sizes", default="300,3000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    bench_km([int(s) for s in args.sizes.split(",")], args.repeat)
    bench_turnbull([int(s) for s in args.turnbull_sizes.split(",")], args.repeat)


if __name__ == "__main__":
    main()
