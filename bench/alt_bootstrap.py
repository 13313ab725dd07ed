"""2,000 bootstrap refits of a 3-level Weibull-Arrhenius ALT with 60 units (20 a level, Type I
censored) in the engine on 2 threads, beside one reliability ALT fit (Fit_Weibull_Exponential,
the same model) x 2,000 measured in the same run.

Run: PYTHONPATH=python python bench/alt_bootstrap.py [--repeat 7] [--threads 2]
Repeats are interleaved (ours, then theirs, in turn); prints medians, the spread (min..max) and
the load average, since the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

import numpy as np

from bathtub.alt import AltModel, parse_model
from bathtub.alt.bootstrap import replicates
from bathtub.alt.fit import alt_data, fit_internal

SPEC = parse_model("weibull_arrhenius")


def data(seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    s = np.repeat([350.0, 380.0, 410.0], 20)
    t = np.exp(-8.0 + 6000.0 / s) * rng.weibull(2.0, s.size)
    return np.minimum(t, 3000.0), t <= 3000.0, s


def reliability_fit(t: np.ndarray, c: np.ndarray, s: np.ndarray) -> None:
    from reliability.ALT_fitters import Fit_Weibull_Exponential

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Fit_Weibull_Exponential(failures=t[c], failure_stress=s[c], right_censored=t[~c],
                                right_censored_stress=s[~c], show_probability_plot=False,
                                show_life_stress_plot=False, print_results=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--replicates", type=int, default=2000)
    args = ap.parse_args()
    t, c, s = data()
    d = alt_data(SPEC, t, c, s)
    theta, cov, _ = fit_internal(SPEC, d)
    model = AltModel(SPEC, theta, cov)
    replicates(model, d, count=50, threads=args.threads)  # warm the thread pool
    ours, theirs = [], []
    for r in range(args.repeat):
        t0 = time.perf_counter()
        reps = replicates(model, d, count=args.replicates, seed=r, threads=args.threads)
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        reliability_fit(t, c, s)
        theirs.append((time.perf_counter() - t0) * args.replicates)
    print(f"units {t.size}, failures {int(c.sum())}, replicates {args.replicates}, threads {args.threads}, "
          f"repeats {args.repeat}; last run: {reps.failed} refits without a finite maximum")
    print(f"ours (engine, {args.replicates} refits): median {statistics.median(ours):.3f} s "
          f"(spread {min(ours):.3f}..{max(ours):.3f})")
    print(f"reliability Fit_Weibull_Exponential x {args.replicates}: median {statistics.median(theirs):.1f} s "
          f"(spread {min(theirs):.1f}..{max(theirs):.1f})")
    print(f"ratio {statistics.median(theirs) / statistics.median(ours):.0f}x; load average "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
