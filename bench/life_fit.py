"""Weibull 2P with ~30% right censoring: a full fit (parameters, Fisher bounds, gof, B-lives) vs peers.

    python bench/life_fit.py [--sizes 1000000] [--repeats 5] [--peers surpyval,reliability,lifelines]

Ours is the whole path from the raw columns: `LifeData.from_arrays(x, c)` (checks, collapse to
distinct times, the sort) and `fit(...).to_record()` (estimates, standard errors and 95%
intervals, log-likelihood, AIC/AICc/BIC, Anderson–Darling, B1..B50 and MTTF with their 90%
lower bounds). Each peer is asked for its estimates with their covariance and a B-life.
Rounds are interleaved by the shared harness (bench/harness.py): ours, then each peer, in
every round, and each figure is the per-round ratio of CPU seconds (time.process_time: the
bench machine is shared, and CPU time is what a neighbour's load disturbs least). The peers'
estimates are checked against ours in every round (largest relative difference printed).
Results: bench/results/life_fit.json; `python bench/summarise.py --readme` puts them in the README.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Bench

from bathtub.life import LifeData, fit

Params = tuple[float, float]  # (alpha, beta)


def data(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    t = 100.0 * rng.weibull(1.8, n)
    c = rng.uniform(0, 300.0, n)  # about 30% censored
    return np.minimum(t, c), (c < t).astype(int)


def ours(x: np.ndarray, c: np.ndarray) -> Params:
    rec = fit(LifeData.from_arrays(x, c), "weibull").to_record()
    return rec["params"][0]["value"], rec["params"][1]["value"]


def lifelines_fit(x: np.ndarray, c: np.ndarray) -> Params:
    import lifelines

    m = lifelines.WeibullFitter().fit(x, 1 - c)  # lifelines: 1 = event
    _ = m.summary, m.percentile(0.9)  # bounds and B10
    return m.lambda_, m.rho_


def reliability_fit(x: np.ndarray, c: np.ndarray) -> Params:
    from reliability.Fitters import Fit_Weibull_2P

    m = Fit_Weibull_2P(failures=x[c == 0], right_censored=x[c == 1], show_probability_plot=False,
                       print_results=False, CI_type="time")
    return m.alpha, m.beta


def surpyval_fit(x: np.ndarray, c: np.ndarray) -> Params:
    import surpyval

    m = surpyval.Weibull.fit(x, c=c)
    _ = m.qf(0.1), m.hess_inv
    return float(m.params[0]), float(m.params[1])


PEERS: dict[str, Callable[[np.ndarray, np.ndarray], Params]] = {
    "surpyval": surpyval_fit, "reliability": reliability_fit, "lifelines": lifelines_fit}


def case(fn: Callable[[np.ndarray, np.ndarray], Params], x: np.ndarray, c: np.ndarray):
    """A harness case: wall and CPU seconds of one fit, and its (alpha, beta)."""

    def run() -> dict[str, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        alpha, beta = fn(x, c)
        return {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
                "alpha": float(alpha), "beta": float(beta)}

    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000000")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--peers", default=",".join(PEERS))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    peers = [p for p in args.peers.split(",") if p]
    command = "python bench/life_fit.py" + ("" if args.sizes == "1000000" else f" --sizes {args.sizes}")
    bench = Bench("life_fit", command)
    for n in map(int, args.sizes.split(",")):
        x, c = data(n)
        cases = {"bathtub": case(ours, x, c)} | {p: case(PEERS[p], x, c) for p in peers}
        print(f"n = {n:,} rows, {c.mean():.1%} censored: {args.repeats} interleaved rounds of "
              f"{', '.join(cases)} (after one warm-up round)", flush=True)
        rounds = bench.interleave(cases, repeats=args.repeats)
        a0, b0 = rounds["bathtub"][-1]["alpha"], rounds["bathtub"][-1]["beta"]
        print(f"  bathtub alpha = {a0:.10g}, beta = {b0:.10g}")
        for p in peers:
            diff = max(max(abs(r["alpha"] / a0 - 1), abs(r["beta"] / b0 - 1)) for r in rounds[p])
            print(f"  {p}: largest relative difference of (alpha, beta) from ours {diff:.1e}")
            bench.figure(f"Weibull 2P full fit (estimates, Fisher bounds, gof, B-lives), {n:,} rows, 30% "
                         "censored, CPU seconds", rounds, "bathtub", p, key="cpu_seconds", unit="CPU s",
                         higher_is_better=False, note=f"{p} estimates within {diff:.0e} of ours")
    bench.write()


if __name__ == "__main__":
    main()
