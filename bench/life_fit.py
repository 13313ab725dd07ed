"""Weibull 2P with ~30% right censoring: a full fit (parameters, bounds, gof, B-lives) vs peers.

Run: python bench/life_fit.py [--sizes 100,10000,1000000] [--repeat 5]
Prints the median wall time of each library on the same data, the ratio to ours, and the
largest relative difference of (alpha, beta) from ours. Peers at 10^6 run once (each takes
seconds); a peer is skipped at a size where one run would exceed 30 s.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

from bathtub.life import LifeData, fit


def data(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    t = 100.0 * rng.weibull(1.8, n)
    c = rng.uniform(0, 300.0, n)  # about 30% censored
    return np.minimum(t, c), (c < t).astype(int)


def ours(x, c):
    rec = fit(LifeData.from_arrays(x, c), "weibull").to_record()
    return rec["params"][0]["value"], rec["params"][1]["value"]


def lifelines_fit(x, c):
    import lifelines

    m = lifelines.WeibullFitter().fit(x, 1 - c)
    _ = m.summary, m.percentile(0.9)  # bounds and B10
    return m.lambda_, m.rho_


def reliability_fit(x, c):
    from reliability.Fitters import Fit_Weibull_2P

    m = Fit_Weibull_2P(failures=x[c == 0], right_censored=x[c == 1], show_probability_plot=False,
                       print_results=False, CI_type="time")
    return m.alpha, m.beta


def surpyval_fit(x, c):
    import surpyval

    m = surpyval.Weibull.fit(x, c=c)
    _ = m.qf(0.1), m.hess_inv
    return tuple(m.params)


def timed(fn, x, c, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(x, c)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,10000,1000000")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    peers = {"surpyval": surpyval_fit, "reliability": reliability_fit, "lifelines": lifelines_fit}
    for n in map(int, args.sizes.split(",")):
        x, c = data(n)
        ours(x, c)  # warm imports
        t_ours, p_ours = timed(ours, x, c, args.repeat)
        print(f"n={n:>8}  censored {c.mean():.1%}  bathtub {t_ours * 1e3:9.1f} ms  "
              f"alpha={p_ours[0]:.8g} beta={p_ours[1]:.8g}")
        for name, fn in peers.items():
            reps = 1 if n >= 1_000_000 else args.repeat
            t_peer, p_peer = timed(fn, x, c, reps)
            if t_peer > 30:
                print(f"            {name:<11} skipped: one run took {t_peer:.0f} s")
                continue
            d = max(abs(p_peer[0] / p_ours[0] - 1), abs(p_peer[1] / p_ours[1] - 1))
            print(f"            {name:<11} {t_peer * 1e3:9.1f} ms  ratio {t_peer / t_ours:7.1f}x  "
                  f"max rel diff {d:.1e}  (median of {reps})")


if __name__ == "__main__":
    main()
